//! function-auto-ready
