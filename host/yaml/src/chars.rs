//! Character classes of go-yaml's emitter.

/// A line break: LF, CR, NEL, LS or PS.
pub(crate) fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// A space or tab.
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t')
}

/// A blank, a break or NUL.
pub(crate) fn is_blankz(c: char) -> bool {
    is_blank(c) || is_break(c) || c == '\0'
}

/// Whether go-yaml may write `c` unescaped. Characters outside the Basic
/// Multilingual Plane count as unprintable, as go-yaml's check only looks at
/// up to three UTF-8 bytes.
pub(crate) fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable() {
        assert!(is_printable('a'));
        assert!(is_printable('\n'));
        assert!(is_printable('é'));
        assert!(is_printable('\u{2028}'));
        assert!(!is_printable('\t'));
        assert!(!is_printable('\r'));
        assert!(!is_printable('\u{7F}'));
        assert!(!is_printable('\u{85}'));
        assert!(!is_printable('\u{FEFF}'));
        assert!(!is_printable('😀'));
    }
}
