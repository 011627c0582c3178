//! function-patch-and-transform
