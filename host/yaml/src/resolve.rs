//! YAML 1.1 implicit resolution as go-yaml does it: whether a string,
//! written plain, would read back as something other than a string.

use crate::strconv::{parse_dot_float_ok, parse_int, parse_uint, yaml_float_ok};
use crate::timestamp::is_timestamp;

/// Plain words go-yaml reads as booleans, null or special floats. (Its merge
/// key `<<` never applies: go-yaml does not look up words starting with `<`.)
const SPECIAL_WORDS: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", //
    "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", //
    "", "~", "null", "Null", "NULL", //
    ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", //
    "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
];

/// Whether go-yaml must quote `s` so that it reads back as a string: it
/// resolves to a non-string when plain, or is a YAML 1.1 base-60 float.
pub(crate) fn needs_quotes(s: &str) -> bool {
    resolves_to_non_string(s) || is_base60_float(s)
}

/// go-yaml's `resolve("", s)` returning a tag other than `!!str`.
fn resolves_to_non_string(s: &str) -> bool {
    // go-yaml only looks further when the first byte hints at a non-string.
    let Some(&first) = s.as_bytes().first() else {
        return true; // The empty string is null.
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            SPECIAL_WORDS.contains(&s)
        }
        b'.' => SPECIAL_WORDS.contains(&s) || parse_dot_float_ok(s),
        b'+' | b'-' | b'0'..=b'9' => SPECIAL_WORDS.contains(&s) || is_number_or_timestamp(s),
        _ => false,
    }
}

/// The digit-or-sign branch of go-yaml's resolver.
fn is_number_or_timestamp(s: &str) -> bool {
    if is_timestamp(s) {
        return true;
    }
    let plain = s.replace('_', "");
    if parse_int(&plain, 0).is_some() || parse_uint(&plain, 0).is_some() || yaml_float_ok(&plain) {
        return true;
    }
    if let Some(binary) = plain.strip_prefix("0b") {
        return parse_int(binary, 2).is_some() || parse_uint(binary, 2).is_some();
    }
    if let Some(binary) = plain.strip_prefix("-0b") {
        return parse_int(&format!("-{binary}"), 2).is_some();
    }
    false
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        let digits = b[i + 1..]
            .iter()
            .take(2)
            .take_while(|c| c.is_ascii_digit())
            .count();
        // Each group is ':' and one digit, or two digits starting with 0-5;
        // anything longer cannot match as the regex needs ':', '.' or the end
        // after a group.
        let ok = match &b[i + 1..i + 1 + digits] {
            [_] => true,
            [first, _] => (b'0'..=b'5').contains(first),
            _ => false,
        };
        if !ok {
            return false;
        }
        i += 1 + digits;
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::needs_quotes;

    #[test]
    fn quoted() {
        for s in [
            "",
            "true",
            "True",
            "null",
            "~",
            "y",
            "n",
            "yes",
            "on",
            "OFF",
            "1e3",
            "0x1F",
            "0o17",
            "0b101",
            "0b-1",
            "123",
            "-1",
            "+1",
            "1_000",
            "1.",
            ".5",
            ".5_5",
            "+.5",
            "-.inf",
            ".NaN",
            "08",
            "1:20",
            "190:20:30.15",
            "-1:59",
            "2024-01-01T00:00:00Z",
            "2024-01-01",
            "99999999999999999999999",
            "1__",
        ] {
            assert!(needs_quotes(s), "{s:?}");
        }
    }

    #[test]
    fn plain() {
        for s in [
            "abc",
            "yES",
            "nULL",
            "<<",
            "1e",
            "0x",
            "0xG",
            "1:60",
            "1:2:",
            "-",
            "+",
            "._5",
            ".",
            "1e400",
            "2024-01-01T00:00:00",
            "Infinity",
            "-inf",
            "1.2.3",
            "v1",
            "_1",
        ] {
            assert!(!needs_quotes(s), "{s:?}");
        }
    }
}
