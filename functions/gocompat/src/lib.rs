//! Go behaviour that xfn's ports of Go functions share, with Go's output
//! and error messages:
//!
//! * [`gofmt`]: `fmt.Sprintf` and `strconv` for the values the ports
//!   handle; [`gojson`]: `encoding/json`; [`value`]: the dynamic values
//!   they work on;
//! * [`goregex`]: Go's `regexp` syntax on the `regex` crate;
//! * [`duration`]: `time.ParseDuration`; [`conv`]: `int64(float64)` as on
//!   amd64; [`sort`]: `sort.Slice`'s order.
//!
//! The modules came from function-patch-and-transform and
//! function-auto-ready, which re-export them under their old paths, and
//! are shared with function-go-templating and the function library (a wasm
//! component cannot link another component's crate, which exports its own
//! bindings).

pub mod conv;
pub mod duration;
pub mod gofmt;
pub mod gojson;
pub mod goregex;
pub mod sort;
pub mod value;
