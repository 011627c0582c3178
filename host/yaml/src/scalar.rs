//! Scalar writers, after go-yaml's `yaml_emitter_write_*_scalar`: plain,
//! single-quoted and double-quoted scalars fold at spaces once past
//! [`BEST_WIDTH`]; literal blocks keep their lines.

use crate::chars::{is_break, is_printable};
use crate::emitter::{BEST_WIDTH, Emitter};
use crate::style::Style;

/// Writes `value` in `style` at the current position.
pub(crate) fn write_scalar(e: &mut Emitter, value: &str, style: Style, allow_breaks: bool) {
    match style {
        Style::Plain => write_plain(e, value, allow_breaks),
        Style::SingleQuoted => write_single_quoted(e, value, allow_breaks),
        Style::DoubleQuoted => write_double_quoted(e, value, allow_breaks),
        Style::Literal => write_literal(e, value),
    }
}

/// Characters of `value` with their byte offsets and the next character.
fn chars_with_next(value: &str) -> impl Iterator<Item = (usize, char, Option<char>)> + '_ {
    let mut iter = value.char_indices().peekable();
    std::iter::from_fn(move || {
        let (i, c) = iter.next()?;
        Some((i, c, iter.peek().map(|&(_, n)| n)))
    })
}

/// Whether a quoted scalar may fold at the space at byte `i`.
fn may_fold_quoted(e: &Emitter, allow_breaks: bool, spaces: bool, i: usize, len: usize) -> bool {
    allow_breaks && !spaces && e.column > BEST_WIDTH && i > 0 && i + 1 < len
}

fn write_plain(e: &mut Emitter, value: &str, allow_breaks: bool) {
    if !e.whitespace {
        e.put(' ');
    }
    let (mut spaces, mut breaks) = (false, false);
    for (_, c, next) in chars_with_next(value) {
        if c == ' ' {
            if allow_breaks && !spaces && e.column > BEST_WIDTH && next != Some(' ') {
                e.write_indent();
            } else {
                e.put(c);
            }
            spaces = true;
        } else if is_break(c) {
            if !breaks && c == '\n' {
                e.put_break();
            }
            e.write_break(c);
            e.indention = true;
            breaks = true;
        } else {
            if breaks {
                e.write_indent();
            }
            e.put(c);
            e.indention = false;
            spaces = false;
            breaks = false;
        }
    }
    e.whitespace = false;
    e.indention = false;
}

fn write_single_quoted(e: &mut Emitter, value: &str, allow_breaks: bool) {
    e.write_indicator("'", true, false, false);
    let (mut spaces, mut breaks) = (false, false);
    for (i, c, next) in chars_with_next(value) {
        if c == ' ' {
            if may_fold_quoted(e, allow_breaks, spaces, i, value.len()) && next != Some(' ') {
                e.write_indent();
            } else {
                e.put(c);
            }
            spaces = true;
        } else if is_break(c) {
            if !breaks && c == '\n' {
                e.put_break();
            }
            e.write_break(c);
            e.indention = true;
            breaks = true;
        } else {
            if breaks {
                e.write_indent();
            }
            if c == '\'' {
                e.put('\'');
            }
            e.put(c);
            e.indention = false;
            spaces = false;
            breaks = false;
        }
    }
    e.write_indicator("'", false, false, false);
    e.whitespace = false;
    e.indention = false;
}

/// The escape letter go-yaml uses for `c`, if it has one.
fn short_escape(c: char) -> Option<char> {
    Some(match c {
        '\0' => '0',
        '\u{07}' => 'a',
        '\u{08}' => 'b',
        '\t' => 't',
        '\n' => 'n',
        '\u{0B}' => 'v',
        '\u{0C}' => 'f',
        '\r' => 'r',
        '\u{1B}' => 'e',
        '"' => '"',
        '\\' => '\\',
        '\u{85}' => 'N',
        '\u{A0}' => '_',
        '\u{2028}' => 'L',
        '\u{2029}' => 'P',
        _ => return None,
    })
}

/// Writes the escape sequence for `c` (after the backslash).
fn write_escape(e: &mut Emitter, c: char) {
    e.put('\\');
    if let Some(letter) = short_escape(c) {
        e.put(letter);
        return;
    }
    let v = u32::from(c);
    let (letter, width) = match v {
        0..=0xFF => ('x', 2),
        0x100..=0xFFFF => ('u', 4),
        _ => ('U', 8),
    };
    e.put(letter);
    for shift in (0..width).rev() {
        let digit = (v >> (shift * 4)) & 0xF;
        e.put(char::from_digit(digit, 16).map_or('0', |d| d.to_ascii_uppercase()));
    }
}

fn write_double_quoted(e: &mut Emitter, value: &str, allow_breaks: bool) {
    e.write_indicator("\"", true, false, false);
    // go-yaml escapes every character of a value that starts with a BOM.
    let bom = value.starts_with('\u{FEFF}');
    let mut spaces = false;
    for (i, c, next) in chars_with_next(value) {
        if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
            write_escape(e, c);
            spaces = false;
        } else if c == ' ' {
            if may_fold_quoted(e, allow_breaks, spaces, i, value.len()) {
                e.write_indent();
                if next == Some(' ') {
                    e.put('\\');
                }
            } else {
                e.put(c);
            }
            spaces = true;
        } else {
            e.put(c);
            spaces = false;
        }
    }
    e.write_indicator("\"", false, false, false);
    e.whitespace = false;
    e.indention = false;
}

/// The `|` header: an indentation hint when the content starts with a space
/// or break, and the chomping indicator.
fn write_block_hints(e: &mut Emitter, value: &str) {
    if value.starts_with(' ') || value.chars().next().is_some_and(is_break) {
        e.write_indicator("2", false, false, false);
    }
    let mut rev = value.chars().rev();
    let chomp = match (rev.next(), rev.next()) {
        (None, _) => Some("-"),
        (Some(last), _) if !is_break(last) => Some("-"),
        (Some(_), None) => Some("+"),
        (Some(_), Some(before)) if is_break(before) => Some("+"),
        _ => None,
    };
    if let Some(chomp) = chomp {
        e.write_indicator(chomp, false, false, false);
    }
}

fn write_literal(e: &mut Emitter, value: &str) {
    e.write_indicator("|", true, false, false);
    write_block_hints(e, value);
    e.put_break();
    e.indention = true;
    e.whitespace = true;
    let mut breaks = true;
    for c in value.chars() {
        if is_break(c) {
            e.write_break(c);
            e.indention = true;
            breaks = true;
        } else {
            if breaks {
                e.write_indent();
            }
            e.put(c);
            e.indention = false;
            breaks = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(value: &str, style: Style) -> String {
        let mut e = Emitter::new();
        e.increase_indent(true, false);
        write_scalar(&mut e, value, style, true);
        e.into_output()
    }

    #[test]
    fn escapes() {
        assert_eq!(written("a\tb\"\\", Style::DoubleQuoted), r#""a\tb\"\\""#);
        assert_eq!(
            written("\u{7F}😀\u{85}", Style::DoubleQuoted),
            r#""\x7F\U0001F600\N""#
        );
        assert_eq!(written("\u{FEFF}a", Style::DoubleQuoted), r#""\uFEFF\x61""#);
    }

    #[test]
    fn single_quotes_double() {
        assert_eq!(written("it's: x", Style::SingleQuoted), "'it''s: x'");
    }

    #[test]
    fn literal_chomping() {
        assert_eq!(written("a\nb", Style::Literal), "|-\n  a\n  b");
        assert_eq!(written("a\n", Style::Literal), "|\n  a\n");
        assert_eq!(written("a\n\n", Style::Literal), "|+\n  a\n\n");
        assert_eq!(written(" a\n", Style::Literal), "|2\n   a\n");
    }

    #[test]
    fn plain_folds_after_column_80() {
        let word = "x".repeat(9);
        let value = [word.as_str(); 10].join(" ");
        let out = written(&value, Style::Plain);
        let first = out.lines().next().unwrap_or_default();
        assert_eq!(first.len(), 89);
        assert_eq!(out.lines().nth(1), Some("  xxxxxxxxx"));
    }
}
