//! Text a guest wrote (error messages, logs, stderr), made safe to pass on:
//! bounded in size, and escaped so it cannot forge log lines.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Most bytes of one piece of guest text kept in an error or a log line.
pub const MAX_GUEST_TEXT: usize = 4 << 10;

/// `text` cut to at most `max` bytes on a char boundary; if cut, followed
/// by `… (N bytes more)`.
pub fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    bounded_by(text, max, char::len_utf8)
}

/// `text` cut where the summed `cost` of its chars would pass `budget`;
/// if cut, followed by `… (N bytes more)`, N counting the bytes left out.
pub fn bounded_by(text: &str, budget: usize, cost: impl Fn(char) -> usize) -> Cow<'_, str> {
    let mut spent = 0usize;
    for (at, c) in text.char_indices() {
        spent = spent.saturating_add(cost(c));
        if spent > budget {
            let more = text.len() - at;
            return Cow::Owned(format!("{}… ({more} bytes more)", &text[..at]));
        }
    }
    Cow::Borrowed(text)
}

/// The last `max` bytes of `bytes` or less, from a char boundary, decoded
/// (invalid UTF-8 replaced) and trimmed. If anything is left out, counting
/// `before` bytes already dropped, it is preceded by `(N bytes before) …`.
pub fn tail(bytes: &[u8], max: usize, before: u64) -> String {
    let mut start = bytes.len().saturating_sub(max);
    // Don't start inside a UTF-8 sequence: skip its continuation bytes.
    while start < bytes.len() && start > 0 && bytes[start] & 0xC0 == 0x80 {
        start += 1;
    }
    let text = String::from_utf8_lossy(&bytes[start..]);
    let text = text.trim();
    match before + start as u64 {
        0 => text.to_owned(),
        before => format!("({before} bytes before) …{text}"),
    }
}

/// Whether `c` could end or rewrite a line on a terminal or in a log:
/// control characters, Unicode line separators and bidi overrides.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with control characters (`\n`, `\r`, escape sequences, …)
/// escaped as Rust does in string literals, so it stays on one line.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Guest text for a log line: bounded to [`MAX_GUEST_TEXT`], then escaped.
pub fn for_log(text: &str) -> String {
    escape_control(&bounded(text, MAX_GUEST_TEXT)).into_owned()
}

/// `error` and its causes on one line, joined by `: `, each said once: a
/// cause whose text the message before it already includes (as errors
/// that print their source do) is not repeated.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut next = Some(error);
    while let Some(cause) = next {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&cause_text);
        }
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_as_is() {
        assert!(matches!(bounded("hello", 5), Cow::Borrowed("hello")));
        assert_eq!(tail(b" hello\n", 10, 0), "hello");
        assert!(matches!(escape_control("a b"), Cow::Borrowed("a b")));
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_saying_how_much_is_left_out() {
        // "é" is two bytes: a cut at 3 bytes would split the second one.
        assert_eq!(bounded("ééé", 3), "é… (4 bytes more)");
        assert_eq!(bounded(&"x".repeat(10), 4), "xxxx… (6 bytes more)");
        assert_eq!(tail("ééé".as_bytes(), 3, 0), "(4 bytes before) …é");
        assert_eq!(tail(b"abcdef", 2, 10), "(14 bytes before) …ef");
    }

    #[test]
    fn cost_can_weigh_chars_differently() {
        let three_for_non_ascii = |c: char| if c.is_ascii() { 1 } else { 3 };
        assert_eq!(
            bounded_by("aébc", 4, three_for_non_ascii),
            "aé… (2 bytes more)"
        );
    }

    #[test]
    fn control_characters_are_escaped_onto_one_line() {
        assert_eq!(
            escape_control("one\nERROR forged\r\n\u{1b}[2J\t\u{2028}\u{202e}"),
            "one\\nERROR forged\\r\\n\\u{1b}[2J\\t\\u{2028}\\u{202e}"
        );
        let logged = for_log(&format!("{}\n", "y".repeat(MAX_GUEST_TEXT)));
        assert!(!logged.contains('\n'), "{logged}");
        assert!(logged.ends_with("… (1 bytes more)"), "{logged}");
    }
}
