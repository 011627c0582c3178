//! Sprig's float arithmetic (`addf add1f subf mulf divf`), which runs on
//! shopspring/decimal: each operand becomes the shortest decimal that reads
//! back as its float64, the operation is exact (division rounds half away
//! from zero at 16 places), and the result is the float64 nearest to it.
//! Numbers whose exact arithmetic outgrows 128 bits are refused by name.

use crate::sprig::to_float64;
use crate::template::func::{Func, FuncMap, Param};
use crate::template::value::Value;

/// A decimal: `mantissa * 10^exp`.
#[derive(Debug, Clone, Copy)]
struct Dec {
    m: i128,
    e: i32,
}

const TOO_BIG: &str = "a number too large for xfn's port of sprig's decimal arithmetic";

fn from_f64(f: f64) -> Result<Dec, String> {
    if f.is_nan() {
        return Err("Cannot create a Decimal from NaN".into());
    }
    if f.is_infinite() {
        return Err(if f > 0.0 {
            "Cannot create a Decimal from +Inf"
        } else {
            "Cannot create a Decimal from -Inf"
        }
        .into());
    }
    // Rust's `{:e}` is the shortest round-trip form, as Go's is.
    let s = format!("{f:e}");
    let (mant, exp) = s.split_once('e').ok_or(TOO_BIG)?;
    let exp: i32 = exp.parse().map_err(|_| TOO_BIG)?;
    let neg = mant.starts_with('-');
    let mant = mant.trim_start_matches('-');
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    let m: i128 = digits.parse().map_err(|_| TOO_BIG)?;
    Ok(Dec {
        m: if neg { -m } else { m },
        e: exp - frac.len() as i32,
    })
}

fn pow10(n: u32) -> Result<i128, String> {
    10i128.checked_pow(n).ok_or_else(|| TOO_BIG.to_string())
}

fn align(a: Dec, b: Dec) -> Result<(i128, i128, i32), String> {
    let e = a.e.min(b.e);
    let am = a.m.checked_mul(pow10((a.e - e) as u32)?).ok_or(TOO_BIG)?;
    let bm = b.m.checked_mul(pow10((b.e - e) as u32)?).ok_or(TOO_BIG)?;
    Ok((am, bm, e))
}

fn add(a: Dec, b: Dec) -> Result<Dec, String> {
    let (am, bm, e) = align(a, b)?;
    Ok(Dec {
        m: am.checked_add(bm).ok_or(TOO_BIG)?,
        e,
    })
}

fn sub(a: Dec, b: Dec) -> Result<Dec, String> {
    let (am, bm, e) = align(a, b)?;
    Ok(Dec {
        m: am.checked_sub(bm).ok_or(TOO_BIG)?,
        e,
    })
}

fn mul(a: Dec, b: Dec) -> Result<Dec, String> {
    Ok(Dec {
        m: a.m.checked_mul(b.m).ok_or(TOO_BIG)?,
        e: a.e.checked_add(b.e).ok_or(TOO_BIG)?,
    })
}

/// `DivRound(b, 16)`: truncated quotient at 16 places, then half away from
/// zero on the remainder.
fn div(a: Dec, b: Dec) -> Result<Dec, String> {
    if b.m == 0 {
        return Err("decimal division by 0".into());
    }
    const PREC: i32 = 16;
    // q = a / b at exponent -PREC: a.m * 10^(a.e + PREC - b.e) / b.m
    let shift = a.e + PREC - b.e;
    let (num, den) = if shift >= 0 {
        (a.m.checked_mul(pow10(shift as u32)?).ok_or(TOO_BIG)?, b.m)
    } else {
        (
            a.m,
            b.m.checked_mul(pow10((-shift) as u32)?).ok_or(TOO_BIG)?,
        )
    };
    let q = num / den;
    let r = num % den;
    let twice = r.unsigned_abs().checked_mul(2).ok_or(TOO_BIG)?;
    let q = if twice >= den.unsigned_abs() {
        if (a.m < 0) != (b.m < 0) { q - 1 } else { q + 1 }
    } else {
        q
    };
    Ok(Dec { m: q, e: -PREC })
}

fn to_f64(d: Dec) -> f64 {
    format!("{}e{}", d.m, d.e).parse().unwrap_or(f64::NAN)
}

fn fold(
    first: &Value,
    rest: &[Value],
    op: fn(Dec, Dec) -> Result<Dec, String>,
) -> Result<Value, String> {
    let mut acc = from_f64(to_float64(first))?;
    for x in rest {
        acc = op(acc, from_f64(to_float64(x))?)?;
    }
    Ok(Value::Float(to_f64(acc)))
}

/// Adds the functions to `m`.
pub fn add_functions(m: &mut FuncMap) {
    use Param::Any;
    m.insert(
        "add1f",
        Func::new(&[Any], |_, a| fold(&a[0], &[Value::int(1)], add)),
    );
    m.insert(
        "addf",
        Func::variadic(&[], Any, |_, a| fold(&Value::Float(0.0), &a, add)),
    );
    m.insert(
        "subf",
        Func::variadic(&[Any], Any, |_, a| fold(&a[0], &a[1..], sub)),
    );
    m.insert(
        "mulf",
        Func::variadic(&[Any], Any, |_, a| fold(&a[0], &a[1..], mul)),
    );
    m.insert(
        "divf",
        Func::variadic(&[Any], Any, |_, a| fold(&a[0], &a[1..], div)),
    );
}
