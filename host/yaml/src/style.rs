//! Scalar analysis and style choice, after go-yaml's
//! `yaml_emitter_analyze_scalar` and `yaml_emitter_select_scalar_style`.

use crate::chars::{is_blank, is_blankz, is_break, is_printable};
use crate::resolve::needs_quotes;

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What the content of a scalar allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// Holds a line break.
    pub multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// Indicators that make a scalar unsafe to write plain in block context.
fn has_block_indicator(value: &str) -> bool {
    if value.starts_with("---") || value.starts_with("...") {
        return true;
    }
    let mut preceded_by_whitespace = true;
    let mut chars = value.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let followed_by_whitespace = chars.peek().is_none_or(|&n| is_blank(n));
        let indicator = if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => true,
                '?' | ':' | '-' => followed_by_whitespace,
                _ => false,
            }
        } else {
            match c {
                ':' => followed_by_whitespace,
                '#' => preceded_by_whitespace,
                _ => false,
            }
        };
        if indicator {
            return true;
        }
        preceded_by_whitespace = is_blankz(c);
        first = false;
    }
    false
}

/// Analyses the content of a scalar.
pub(crate) fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut line_breaks = false;
    let mut special_characters = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut chars = value.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let last = chars.peek().is_none();
        special_characters |= !is_printable(c);
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        first = false;
    }
    let block_indicators = has_block_indicator(value);
    let edge = leading_space || leading_break || trailing_space || trailing_break;
    let unsafe_chars = space_break || special_characters;
    Analysis {
        multiline: line_breaks,
        block_plain_allowed: !(edge
            || break_space
            || unsafe_chars
            || line_breaks
            || block_indicators),
        single_quoted_allowed: !(break_space || unsafe_chars),
        block_allowed: !(trailing_space || unsafe_chars),
    }
}

/// The style go-yaml's encoder asks for when it marshals a Go string.
pub(crate) fn requested_string_style(value: &str) -> Style {
    if value.contains('\n') {
        Style::Literal
    } else if needs_quotes(value) {
        Style::DoubleQuoted
    } else {
        Style::Plain
    }
}

/// The style the emitter settles on for a block-context scalar.
pub(crate) fn select_style(requested: Style, analysis: &Analysis, simple_key: bool) -> Style {
    let mut style = requested;
    if simple_key && analysis.multiline {
        style = Style::DoubleQuoted;
    }
    if style == Style::Plain && !analysis.block_plain_allowed {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!analysis.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style_of(s: &str) -> Style {
        select_style(requested_string_style(s), &analyze(s), false)
    }

    #[test]
    fn styles() {
        assert_eq!(style_of("hello world"), Style::Plain);
        assert_eq!(style_of("a:b"), Style::Plain);
        assert_eq!(style_of("-a"), Style::Plain);
        assert_eq!(style_of("a #b"), Style::SingleQuoted);
        assert_eq!(style_of("a: b"), Style::SingleQuoted);
        assert_eq!(style_of("- a"), Style::SingleQuoted);
        assert_eq!(style_of("*a"), Style::SingleQuoted);
        assert_eq!(style_of(" a"), Style::SingleQuoted);
        assert_eq!(style_of("---x"), Style::SingleQuoted);
        assert_eq!(style_of("true"), Style::DoubleQuoted);
        assert_eq!(style_of(""), Style::DoubleQuoted);
        assert_eq!(style_of("a\tb"), Style::DoubleQuoted);
        assert_eq!(style_of("a\nb"), Style::Literal);
        assert_eq!(style_of("a \nb"), Style::DoubleQuoted);
        assert_eq!(style_of("a\n b"), Style::Literal);
        assert_eq!(style_of("a\nb "), Style::DoubleQuoted);
        assert_eq!(style_of("a\r\nb"), Style::DoubleQuoted);
    }

    #[test]
    fn keys_never_use_literal_in_simple_context() {
        let s = "a\nb";
        assert_eq!(
            select_style(Style::Literal, &analyze(s), true),
            Style::DoubleQuoted
        );
    }
}
