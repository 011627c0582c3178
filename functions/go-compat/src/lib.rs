//! Go-compatible formatting and encoding for xfn's ported functions:
//! `fmt.Sprintf` and `strconv` ([`gofmt`]), `encoding/json` ([`gojson`]), `regexp` syntax ([`goregex`]) and
//! the dynamic values they work on ([`value`]). Moved out of
//! function-patch-and-transform so that function-go-templating shares it
//! (a wasm component cannot link another component's crate, which exports
//! its own bindings).

pub mod gofmt;
pub mod gojson;
pub mod goregex;
pub mod value;
