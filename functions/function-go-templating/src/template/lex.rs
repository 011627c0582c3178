//! The lexer of Go's `text/template/parse` (Go 1.19): items with their byte
//! positions and lines, trim markers, comments and custom delimiters. The
//! whole input is lexed up front; a lexing error becomes the last item, as
//! Go's parser meets it where its lexer stopped.

/// What kind of token an [`Item`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemType {
    /// A lexing error; the value is its text.
    Error,
    /// `true` or `false`.
    Bool,
    /// A printable ASCII character such as `,`.
    Char,
    /// A character constant such as `'a'`.
    CharConstant,
    /// A complex constant such as `1+2i`.
    Complex,
    /// `=`
    Assign,
    /// `:=`
    Declare,
    /// The end of the input.
    Eof,
    /// `.Field`
    Field,
    /// A function name.
    Identifier,
    /// The left delimiter.
    LeftDelim,
    /// `(`
    LeftParen,
    /// A number.
    Number,
    /// `|`
    Pipe,
    /// A raw string with its backquotes.
    RawString,
    /// The right delimiter.
    RightDelim,
    /// `)`
    RightParen,
    /// Spaces between operands.
    Space,
    /// A quoted string with its quotes.
    String,
    /// Text outside actions.
    Text,
    /// `$`, `$x`.
    Variable,
    /// The keyword `block`.
    Block,
    /// The keyword `break`.
    Break,
    /// The keyword `continue`.
    Continue,
    /// `.`
    Dot,
    /// The keyword `define`.
    Define,
    /// The keyword `else`.
    Else,
    /// The keyword `end`.
    End,
    /// The keyword `if`.
    If,
    /// The keyword `nil`.
    Nil,
    /// The keyword `range`.
    Range,
    /// The keyword `template`.
    Template,
    /// The keyword `with`.
    With,
}

impl ItemType {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            ItemType::Block
                | ItemType::Break
                | ItemType::Continue
                | ItemType::Dot
                | ItemType::Define
                | ItemType::Else
                | ItemType::End
                | ItemType::If
                | ItemType::Nil
                | ItemType::Range
                | ItemType::Template
                | ItemType::With
        )
    }
}

/// One token.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its kind.
    pub typ: ItemType,
    /// Its byte offset in the input.
    pub pos: usize,
    /// Its text.
    pub val: String,
    /// The line it starts on (1-based).
    pub line: usize,
}

impl std::fmt::Display for Item {
    /// As Go's `item.String()` prints it in parse errors.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.typ {
            ItemType::Eof => write!(f, "EOF"),
            ItemType::Error => write!(f, "{}", self.val),
            t if t.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                let short: String = self.val.chars().take(10).collect();
                write!(f, "{}...", go_quote(&short))
            }
            _ => write!(f, "{}", go_quote(&self.val)),
        }
    }
}

fn go_quote(s: &str) -> String {
    xfn_gocompat::gofmt::quote(s)
}

const SPACE_CHARS: &[char] = &[' ', '\t', '\r', '\n'];
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";

fn is_space(c: Option<char>) -> bool {
    matches!(c, Some(' ' | '\t' | '\r' | '\n'))
}

fn is_alnum(c: Option<char>) -> bool {
    matches!(c, Some(c) if c == '_' || c.is_alphabetic() || is_go_digit(c))
}

/// Go's `unicode.IsDigit`: decimal digits of any script (category Nd).
fn is_go_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && is_nd(c))
}

fn is_nd(c: char) -> bool {
    // Rust has no category table; the Nd blocks are runs of ten digits whose
    // first code point ends in 0 in hex for nearly every script. Numeric
    // characters outside such runs (fractions, Roman numerals) are not Nd.
    let u = c as u32;
    const ND_STARTS: &[u32] = &[
        0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
        0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
        0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
        0xFF10,
    ];
    ND_STARTS.iter().any(|&s| (s..s + 10).contains(&u))
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && matches!(b[1], b' ' | b'\t' | b'\r' | b'\n')
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && matches!(b[0], b' ' | b'\t' | b'\r' | b'\n') && b[1] == b'-'
}

struct Lexer<'a> {
    input: &'a str,
    left: &'a str,
    right: &'a str,
    pos: usize,
    start: usize,
    at_eof: bool,
    paren_depth: i32,
    line: usize,
    start_line: usize,
    items: Vec<Item>,
}

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
}

/// Lexes `input` with the given delimiters (empty means `{{` / `}}`).
pub fn lex(input: &str, left: &str, right: &str) -> Vec<Item> {
    let mut l = Lexer {
        input,
        left: if left.is_empty() { "{{" } else { left },
        right: if right.is_empty() { "}}" } else { right },
        pos: 0,
        start: 0,
        at_eof: false,
        paren_depth: 0,
        line: 1,
        start_line: 1,
        items: Vec::new(),
    };
    let mut state = Some(State::Text);
    while let Some(s) = state {
        state = l.step(s);
    }
    l.items
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        match self.rest().chars().next() {
            None => {
                self.at_eof = true;
                None
            }
            Some(c) => {
                self.pos += c.len_utf8();
                if c == '\n' {
                    self.line += 1;
                }
                Some(c)
            }
        }
    }

    fn backup(&mut self) {
        if !self.at_eof
            && self.pos > 0
            && let Some(c) = self.input[..self.pos].chars().next_back()
        {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn emit(&mut self, typ: ItemType) {
        self.items.push(Item {
            typ,
            pos: self.start,
            val: self.input[self.start..self.pos].to_string(),
            line: self.start_line,
        });
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn ignore(&mut self) {
        self.line += self.input[self.start..self.pos].matches('\n').count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.next() {
            Some(c) if valid.contains(c) => true,
            _ => {
                self.backup();
                false
            }
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while matches!(self.next(), Some(c) if valid.contains(c)) {}
        self.backup();
    }

    fn errorf(&mut self, msg: String) -> Option<State> {
        self.items.push(Item {
            typ: ItemType::Error,
            pos: self.start,
            val: msg,
            line: self.start_line,
        });
        None
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest[2..].starts_with(self.right) {
            return (true, true);
        }
        (rest.starts_with(self.right), false)
    }

    fn at_terminator(&mut self) -> bool {
        let r = self.peek();
        if is_space(r) {
            return true;
        }
        match r {
            None | Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(self.right),
        }
    }

    fn step(&mut self, state: State) -> Option<State> {
        match state {
            State::Text => self.lex_text(),
            State::LeftDelim => self.lex_left_delim(),
            State::Comment => self.lex_comment(),
            State::RightDelim => self.lex_right_delim(),
            State::InsideAction => self.lex_inside_action(),
            State::Space => self.lex_space(),
            State::Identifier => self.lex_identifier(),
            State::Field => self.lex_field_or_variable(ItemType::Field),
            State::Variable => {
                if self.at_terminator() {
                    self.emit(ItemType::Variable);
                    return Some(State::InsideAction);
                }
                self.lex_field_or_variable(ItemType::Variable)
            }
            State::Char => self.lex_quoted(
                '\'',
                "unterminated character constant",
                ItemType::CharConstant,
            ),
            State::Number => self.lex_number(),
            State::Quote => self.lex_quoted('"', "unterminated quoted string", ItemType::String),
            State::RawQuote => self.lex_raw_quote(),
        }
    }

    fn lex_text(&mut self) -> Option<State> {
        if let Some(x) = self.rest().find(self.left) {
            let ldn = self.left.len();
            self.pos += x;
            let mut trim = 0;
            if has_left_trim_marker(&self.input[self.pos + ldn..]) {
                let text = &self.input[self.start..self.pos];
                trim = text.len() - text.trim_end_matches(SPACE_CHARS).len();
            }
            self.pos -= trim;
            if self.pos > self.start {
                self.line += self.input[self.start..self.pos].matches('\n').count();
                self.emit(ItemType::Text);
            }
            self.pos += trim;
            self.ignore();
            return Some(State::LeftDelim);
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += self.input[self.start..self.pos].matches('\n').count();
            self.emit(ItemType::Text);
        }
        self.emit(ItemType::Eof);
        None
    }

    fn lex_left_delim(&mut self) -> Option<State> {
        self.pos += self.left.len();
        let trim = has_left_trim_marker(self.rest());
        let after = if trim { 2 } else { 0 };
        if self.input[self.pos + after..].starts_with(LEFT_COMMENT) {
            self.pos += after;
            self.ignore();
            return Some(State::Comment);
        }
        self.emit(ItemType::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        Some(State::InsideAction)
    }

    fn lex_comment(&mut self) -> Option<State> {
        self.pos += LEFT_COMMENT.len();
        let Some(i) = self.rest().find(RIGHT_COMMENT) else {
            return self.errorf("unclosed comment".into());
        };
        self.pos += i + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.errorf("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += 2;
        }
        self.pos += self.right.len();
        if trim {
            let rest = self.rest();
            self.pos += rest.len() - rest.trim_start_matches(SPACE_CHARS).len();
        }
        self.ignore();
        Some(State::Text)
    }

    fn lex_right_delim(&mut self) -> Option<State> {
        let trim = has_right_trim_marker(self.rest());
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += self.right.len();
        self.emit(ItemType::RightDelim);
        if trim {
            let rest = self.rest();
            self.pos += rest.len() - rest.trim_start_matches(SPACE_CHARS).len();
            self.ignore();
        }
        Some(State::Text)
    }

    fn lex_inside_action(&mut self) -> Option<State> {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return Some(State::RightDelim);
            }
            return self.errorf("unclosed left paren".into());
        }
        let r = self.next();
        match r {
            None => return self.errorf("unclosed action".into()),
            Some(' ' | '\t' | '\r' | '\n') => {
                self.backup();
                return Some(State::Space);
            }
            Some('=') => self.emit(ItemType::Assign),
            Some(':') => {
                if self.next() != Some('=') {
                    return self.errorf("expected :=".into());
                }
                self.emit(ItemType::Declare);
            }
            Some('|') => self.emit(ItemType::Pipe),
            Some('"') => return Some(State::Quote),
            Some('`') => return Some(State::RawQuote),
            Some('$') => return Some(State::Variable),
            Some('\'') => return Some(State::Char),
            Some('.') => {
                let b = self.input.as_bytes().get(self.pos).copied();
                if !matches!(b, Some(b'0'..=b'9')) {
                    return Some(State::Field);
                }
                self.backup();
                return Some(State::Number);
            }
            Some('+' | '-' | '0'..='9') => {
                self.backup();
                return Some(State::Number);
            }
            Some(c) if is_alnum(Some(c)) => {
                self.backup();
                return Some(State::Identifier);
            }
            Some('(') => {
                self.emit(ItemType::LeftParen);
                self.paren_depth += 1;
            }
            Some(')') => {
                self.emit(ItemType::RightParen);
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.errorf(format!("unexpected right paren {}", sharp_u(')')));
                }
            }
            Some(c) if c.is_ascii() && !c.is_ascii_control() => self.emit(ItemType::Char),
            Some(c) => {
                return self.errorf(format!("unrecognized character in action: {}", sharp_u(c)));
            }
        }
        Some(State::InsideAction)
    }

    fn lex_space(&mut self) -> Option<State> {
        let mut n = 0;
        while is_space(self.peek()) {
            self.next();
            n += 1;
        }
        let before = &self.input[self.pos - 1..];
        if has_right_trim_marker(before) && before[2..].starts_with(self.right) {
            self.backup();
            if n == 1 {
                return Some(State::RightDelim);
            }
        }
        self.emit(ItemType::Space);
        Some(State::InsideAction)
    }

    fn lex_identifier(&mut self) -> Option<State> {
        loop {
            let r = self.next();
            if is_alnum(r) {
                continue;
            }
            self.backup();
            let word = &self.input[self.start..self.pos];
            if !self.at_terminator() {
                return self.errorf(format!("bad character {}", sharp_u_opt(r)));
            }
            let typ = match word {
                "block" => ItemType::Block,
                "break" => ItemType::Break,
                "continue" => ItemType::Continue,
                "define" => ItemType::Define,
                "else" => ItemType::Else,
                "end" => ItemType::End,
                "if" => ItemType::If,
                "range" => ItemType::Range,
                "nil" => ItemType::Nil,
                "template" => ItemType::Template,
                "with" => ItemType::With,
                "true" | "false" => ItemType::Bool,
                _ => ItemType::Identifier,
            };
            self.emit(typ);
            return Some(State::InsideAction);
        }
    }

    fn lex_field_or_variable(&mut self, typ: ItemType) -> Option<State> {
        if self.at_terminator() {
            self.emit(if typ == ItemType::Variable {
                ItemType::Variable
            } else {
                ItemType::Dot
            });
            return Some(State::InsideAction);
        }
        let mut r;
        loop {
            r = self.next();
            if !is_alnum(r) {
                self.backup();
                break;
            }
        }
        if !self.at_terminator() {
            return self.errorf(format!("bad character {}", sharp_u_opt(r)));
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    fn lex_quoted(&mut self, quote: char, unterminated: &str, typ: ItemType) -> Option<State> {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    None | Some('\n') => return self.errorf(unterminated.into()),
                    Some(_) => {}
                },
                None | Some('\n') => return self.errorf(unterminated.into()),
                Some(c) if c == quote => break,
                Some(_) => {}
            }
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    fn lex_raw_quote(&mut self) -> Option<State> {
        loop {
            match self.next() {
                None => return self.errorf("unterminated raw quoted string".into()),
                Some('`') => break,
                Some(_) => {}
            }
        }
        self.emit(ItemType::RawString);
        Some(State::InsideAction)
    }

    fn lex_number(&mut self) -> Option<State> {
        if !self.scan_number() {
            let bad = self.input[self.start..self.pos].to_string();
            return self.errorf(format!("bad number syntax: {}", go_quote(&bad)));
        }
        if let Some('+' | '-') = self.peek() {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let bad = self.input[self.start..self.pos].to_string();
                return self.errorf(format!("bad number syntax: {}", go_quote(&bad)));
            }
            self.emit(ItemType::Complex);
        } else {
            self.emit(ItemType::Number);
        }
        Some(State::InsideAction)
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if is_alnum(self.peek()) {
            self.next();
            return false;
        }
        true
    }
}

/// Go's `%#U`: `U+0029 ')'`.
fn sharp_u(c: char) -> String {
    if xfn_gocompat::gofmt::is_print(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

fn sharp_u_opt(c: Option<char>) -> String {
    match c {
        Some(c) => sharp_u(c),
        None => "U+FFFFFFFFFFFFFFFF".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(ItemType, String)> {
        lex(s, "", "").into_iter().map(|i| (i.typ, i.val)).collect()
    }

    #[test]
    fn trims_and_comments() {
        let items = kinds("a  {{- /* c */ -}}  b {{ .x -}} \n c");
        let texts: Vec<_> = items
            .iter()
            .filter(|(t, _)| *t == ItemType::Text)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(texts, ["a", "b ", "c"]);
    }

    #[test]
    fn errors() {
        let last = |s: &str| lex(s, "", "").pop().map(|i| i.val).unwrap_or_default();
        assert_eq!(last("{{ .x "), "unclosed action");
        assert_eq!(last("{{ ( .x }}"), "unclosed left paren");
        assert_eq!(last("{{ \"abc }}"), "unterminated quoted string");
        assert_eq!(last("{{ 3x }}"), "bad number syntax: \"3x\"");
        assert_eq!(last("{{ ) }}"), "unexpected right paren U+0029 ')'");
        assert_eq!(last("{{ .a# }}"), "bad character U+0023 '#'");
    }

    #[test]
    fn custom_delimiters() {
        let items = lex("x [[ .a ]] y", "[[", "]]");
        let types: Vec<_> = items.iter().map(|i| i.typ).collect();
        assert_eq!(
            types,
            [
                ItemType::Text,
                ItemType::LeftDelim,
                ItemType::Space,
                ItemType::Field,
                ItemType::Space,
                ItemType::RightDelim,
                ItemType::Text,
                ItemType::Eof
            ]
        );
    }
}
