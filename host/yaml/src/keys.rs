//! Map key order: go-yaml's `keyList.Less` for string keys, a "natural"
//! order where runs of digits compare by numeric value and letters sort
//! before other characters.

use std::cmp::Ordering;

/// Unicode decimal digits (general category Nd) outside ASCII, as
/// `(first, last)` code points.
#[rustfmt::skip]
const NON_ASCII_DIGITS: &[(u32, u32)] = &[
    (0x0660, 0x0669), (0x06F0, 0x06F9), (0x07C0, 0x07C9), (0x0966, 0x096F),
    (0x09E6, 0x09EF), (0x0A66, 0x0A6F), (0x0AE6, 0x0AEF), (0x0B66, 0x0B6F),
    (0x0BE6, 0x0BEF), (0x0C66, 0x0C6F), (0x0CE6, 0x0CEF), (0x0D66, 0x0D6F),
    (0x0DE6, 0x0DEF), (0x0E50, 0x0E59), (0x0ED0, 0x0ED9), (0x0F20, 0x0F29),
    (0x1040, 0x1049), (0x1090, 0x1099), (0x17E0, 0x17E9), (0x1810, 0x1819),
    (0x1946, 0x194F), (0x19D0, 0x19D9), (0x1A80, 0x1A89), (0x1A90, 0x1A99),
    (0x1B50, 0x1B59), (0x1BB0, 0x1BB9), (0x1C40, 0x1C49), (0x1C50, 0x1C59),
    (0xA620, 0xA629), (0xA8D0, 0xA8D9), (0xA900, 0xA909), (0xA9D0, 0xA9D9),
    (0xA9F0, 0xA9F9), (0xAA50, 0xAA59), (0xABF0, 0xABF9), (0xFF10, 0xFF19),
    (0x104A0, 0x104A9), (0x10D30, 0x10D39), (0x11066, 0x1106F), (0x110F0, 0x110F9),
    (0x11136, 0x1113F), (0x111D0, 0x111D9), (0x112F0, 0x112F9), (0x11450, 0x11459),
    (0x114D0, 0x114D9), (0x11650, 0x11659), (0x116C0, 0x116C9), (0x11730, 0x11739),
    (0x118E0, 0x118E9), (0x11950, 0x11959), (0x11C50, 0x11C59), (0x11D50, 0x11D59),
    (0x11DA0, 0x11DA9), (0x11F50, 0x11F59), (0x16A60, 0x16A69), (0x16AC0, 0x16AC9),
    (0x16B50, 0x16B59), (0x1D7CE, 0x1D7FF), (0x1E140, 0x1E149), (0x1E2F0, 0x1E2F9),
    (0x1E4F0, 0x1E4F9), (0x1E950, 0x1E959), (0x1FBF0, 0x1FBF9),
];

/// Go's `unicode.IsDigit`.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
        || (!c.is_ascii()
            && NON_ASCII_DIGITS
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&u32::from(c))))
}

/// Go's `unicode.IsLetter`, approximated outside ASCII by Rust's alphabetic
/// property without the letter-like numerals.
fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        c.is_alphabetic() && !c.is_numeric()
    }
}

/// The value Go adds for a digit rune: `rune - '0'`.
fn digit_value(c: char) -> i64 {
    i64::from(u32::from(c)) - i64::from(b'0')
}

/// Reads the run of digits starting at `i`, Go style (wrapping on overflow).
fn digit_run(s: &[char], i: usize, mut n: i64) -> (usize, i64) {
    let mut end = i;
    while end < s.len() && is_digit(s[end]) {
        n = n.wrapping_mul(10).wrapping_add(digit_value(s[end]));
        end += 1;
    }
    (end, n)
}

/// go-yaml's `keyList.Less` for two strings.
fn less(a: &[char], b: &[char]) -> bool {
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (al, bl) = (is_letter(a[i]), is_letter(b[i]));
        if al && bl {
            return a[i] < b[i];
        }
        if al || bl {
            return bl;
        }
        // Inside a number with a non-zero digit before this position, a
        // zero is not leading: start both values at one.
        let mut seed = 0;
        if a[i] == '0' || b[i] == '0' {
            for &c in a[..i].iter().rev().take_while(|c| is_digit(**c)) {
                if c != '0' {
                    seed = 1;
                    break;
                }
            }
        }
        let (ai, an) = digit_run(a, i, seed);
        let (bi, bn) = digit_run(b, i, seed);
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

/// Orders two keys as go-yaml sorts them.
fn compare(a: &[char], b: &[char]) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// Sorts map entries by key in go-yaml's order. A merge sort that tolerates
/// any comparison outcome, so odd keys can never make it panic.
pub(crate) fn sort_entries<'a, V>(entries: Vec<(&'a String, V)>) -> Vec<(&'a String, V)> {
    let keyed: Vec<(Vec<char>, (&'a String, V))> = entries
        .into_iter()
        .map(|entry| (entry.0.chars().collect(), entry))
        .collect();
    merge_sort(keyed)
        .into_iter()
        .map(|(_, entry)| entry)
        .collect()
}

fn merge_sort<T>(mut items: Vec<(Vec<char>, T)>) -> Vec<(Vec<char>, T)> {
    if items.len() <= 1 {
        return items;
    }
    let right = items.split_off(items.len() / 2);
    let (left, right) = (merge_sort(items), merge_sort(right));
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        let take_right = match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => compare(&r.0, &l.0) == Ordering::Less,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => break,
        };
        let next = if take_right {
            right.next()
        } else {
            left.next()
        };
        merged.extend(next);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(keys: &[&str]) -> Vec<String> {
        let owned: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        let entries = owned.iter().map(|k| (k, ())).collect();
        sort_entries(entries)
            .into_iter()
            .map(|(k, ())| k.clone())
            .collect()
    }

    #[test]
    fn natural_order() {
        assert_eq!(
            sorted(&["a10", "a2", "a1", "b", "A", "_x", "1", "01", "10", "2"]),
            ["_x", "1", "01", "2", "10", "A", "a1", "a2", "a10", "b"]
        );
    }

    #[test]
    fn kubernetes_keys() {
        assert_eq!(
            sorted(&["spec", "apiVersion", "metadata", "kind", "status"]),
            ["apiVersion", "kind", "metadata", "spec", "status"]
        );
    }

    #[test]
    fn symbols_before_letters() {
        assert_eq!(
            sorted(&["ab", "a_b", "a.b", "a-b"]),
            ["a-b", "a.b", "a_b", "ab"]
        );
    }
}
