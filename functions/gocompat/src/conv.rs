//! Go's numeric conversions whose result depends on the platform.

/// Go's `int64(f)` as the amd64 build computes it: truncation toward zero,
/// and `math.MinInt64` (the CPU's "integer indefinite") for NaN and for
/// values outside the `int64` range. The arm64 build saturates instead
/// (`MaxInt64`/`MinInt64`, and 0 for NaN); xfn's ports follow amd64.
///
/// ```
/// use xfn_gocompat::conv::float_to_int64;
/// assert_eq!(float_to_int64(-2.9), -2);
/// assert_eq!(float_to_int64(1e19), i64::MIN);
/// assert_eq!(float_to_int64(f64::NAN), i64::MIN);
/// ```
pub fn float_to_int64(f: f64) -> i64 {
    if f.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}
