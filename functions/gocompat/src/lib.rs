//! Go behaviour that several of xfn's ports of Go functions need, with Go's
//! error messages: [`goregex`] (Go's `regexp` syntax on the `regex` crate)
//! [`duration`] (`time.ParseDuration`) and [`conv`] (`int64(float64)` as on
//! amd64).
//!
//! The modules came from function-patch-and-transform and
//! function-auto-ready, which re-export them under their old paths.

pub mod conv;
pub mod duration;
pub mod goregex;
pub mod sort;
