//! Go `regexp` (RE2 syntax, Perl flags) on top of the `regex` crate.
//!
//! Both engines are RE2-like and use leftmost-first matching, but their
//! syntax and character classes differ. So patterns are parsed here with the
//! rules of Go's `regexp/syntax` (same accepted language, same error
//! messages, e.g. ``error parsing regexp: missing closing ]: `[a-z` ``) and
//! rewritten for the `regex` crate:
//!
//! * `\d \s \w \b` and their negations are ASCII-only in Go: they become
//!   explicit ASCII classes (`regex` makes them Unicode-aware by default);
//! * octal (`\012`), hex (`\x41`, `\x{263a}`), `\Q…\E` and literal `{` become
//!   escaped literals; named groups become plain groups (only numbers are used);
//! * Go's limits apply: repeat counts up to 1000, nested repeats up to 1000 copies.
//!
//! Known gaps: Unicode class names are checked by the `regex` crate, which
//! accepts more names (and spellings) than Go.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;

/// A compiled Go regular expression.
#[derive(Debug, Clone)]
pub struct GoRegex {
    re: Regex,
}

impl GoRegex {
    /// Compiles `pattern` with Go's syntax; the error is Go's
    /// `error parsing regexp: ...` text. Results are cached per thread
    /// (validation and the transforms compile the same patterns).
    pub fn compile(pattern: &str) -> Result<GoRegex, String> {
        thread_local! {
            static CACHE: RefCell<HashMap<String, Result<GoRegex, String>>> = RefCell::new(HashMap::new());
        }
        if let Some(hit) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
            return hit;
        }
        let compiled = Self::compile_uncached(pattern);
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= 256 {
                c.clear();
            }
            c.insert(pattern.to_owned(), compiled.clone());
        });
        compiled
    }

    fn compile_uncached(pattern: &str) -> Result<GoRegex, String> {
        let translated = translate(pattern)?;
        let re = Regex::new(&translated).map_err(|e| {
            let code = if matches!(e, regex::Error::CompiledTooBig(_)) {
                "expression too large"
            } else {
                "invalid or unsupported Perl syntax"
            };
            format!("error parsing regexp: {code}: `{pattern}`")
        })?;
        Ok(GoRegex { re })
    }

    /// The translated `regex` crate expression.
    pub fn regex(&self) -> &Regex {
        &self.re
    }

    /// Go's `MatchString` (unanchored).
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// Go's `FindStringSubmatch`: the leftmost-first match and its groups
    /// (a group that did not take part is `""`), or `None`.
    pub fn find_submatch(&self, s: &str) -> Option<Vec<String>> {
        let caps = self.re.captures(s)?;
        Some(
            (0..caps.len())
                .map(|i| {
                    caps.get(i)
                        .map_or_else(String::new, |m| m.as_str().to_owned())
                })
                .collect(),
        )
    }
}

/// Go's `SubexpNames` of a pattern that compiles: the name of every
/// capturing group in order, `""` for an unnamed one, after a `""` for the
/// whole match.
///
/// ```
/// use xfn_gocompat::goregex::subexp_names;
/// assert_eq!(subexp_names(r"(?P<a>x)(y)(?:z)[(](?<b>w)\("), ["", "a", "", "b"]);
/// ```
pub fn subexp_names(pattern: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if chars.get(i + 1) == Some(&'Q') {
                    // \Q...\E: literal text.
                    i += 2;
                    while i < chars.len() && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E')) {
                        i += 1;
                    }
                }
                i += 2;
            }
            '[' => {
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while i < chars.len() && chars[i] != ']' {
                    if chars[i] == '\\' {
                        i += 1;
                    } else if chars[i] == '[' && chars.get(i + 1) == Some(&':') {
                        // [:alpha:]
                        while i < chars.len()
                            && !(chars[i] == ':' && chars.get(i + 1) == Some(&']'))
                        {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    let rest: String = chars[i + 2..].iter().collect();
                    let named = rest
                        .strip_prefix("P<")
                        .or_else(|| rest.strip_prefix('<'))
                        .and_then(|r| r.split_once('>'))
                        .map(|(name, _)| name.to_owned());
                    if let Some(name) = named {
                        names.push(name);
                    }
                } else {
                    names.push(String::new());
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    names
}

fn err(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_PAREN: &str = "missing closing )";
const UNEXPECTED_PAREN: &str = "unexpected )";
const MISSING_REPEAT_ARG: &str = "missing argument to repetition operator";
const INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const INVALID_ESCAPE: &str = "invalid escape sequence";
const INVALID_CHAR_RANGE: &str = "invalid character class range";
const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";

/// The repetition structure of a node, for Go's `repeatIsValid`.
#[derive(Debug, Clone, Default)]
struct RepeatTree {
    /// For a repeat node: its max (or min if unbounded); `None` otherwise.
    m: Option<i64>,
    kids: Vec<RepeatTree>,
}

fn repeat_is_valid(t: &RepeatTree, mut n: i64) -> bool {
    if let Some(m) = t.m {
        if m == 0 {
            return true;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    t.kids.iter().all(|k| repeat_is_valid(k, n))
}

#[derive(Debug)]
enum Item {
    /// Something a repetition can apply to.
    Operand { text: String, tree: RepeatTree },
    /// A flag change such as `(?i)`; not an operand.
    Flags(String),
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

/// Translates a Go pattern into `regex` crate syntax.
pub fn translate(pattern: &str) -> Result<String, String> {
    let mut p = Parser { s: pattern, pos: 0 };
    let (text, _) = p.alternation(0)?;
    if p.pos < p.s.len() {
        // Only a ')' stops the top level early.
        return Err(err(UNEXPECTED_PAREN, pattern));
    }
    Ok(text)
}

fn escape_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && !c.is_control()) || c == ' ' {
        out.push(c);
    } else if c.is_ascii_punctuation() {
        out.push('\\');
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:x}}}", c as u32));
    }
}

fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "0-9",
        's' => "\\t\\n\\x0C\\r ",
        'w' => "0-9A-Za-z_",
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn alternation(&mut self, depth: usize) -> Result<(String, RepeatTree), String> {
        let mut branches = Vec::new();
        let mut tree = RepeatTree::default();
        loop {
            let (text, t) = self.concat(depth)?;
            branches.push(text);
            tree.kids.push(t);
            match self.peek() {
                Some('|') => self.pos += 1,
                _ => break,
            }
        }
        Ok((branches.join("|"), tree))
    }

    fn concat(&mut self, depth: usize) -> Result<(String, RepeatTree), String> {
        let mut items: Vec<Item> = Vec::new();
        // Start of the previous token if it was a repetition operator.
        let mut last_repeat: Option<usize> = None;
        while let Some(c) = self.peek() {
            let start = self.pos;
            let mut repeat_start = None;
            match c {
                '|' => break,
                ')' => {
                    if depth == 0 {
                        return Err(err(UNEXPECTED_PAREN, self.s));
                    }
                    break;
                }
                '(' => {
                    let item = self.group(depth)?;
                    items.push(item);
                }
                '[' => {
                    let text = self.class()?;
                    items.push(Item::Operand {
                        text,
                        tree: RepeatTree::default(),
                    });
                }
                '*' | '+' | '?' => {
                    self.pos += 1;
                    let (min, max) = match c {
                        '*' => (0, -1),
                        '+' => (1, -1),
                        _ => (0, 1),
                    };
                    self.apply_repeat(&mut items, c.to_string(), min, max, start, last_repeat)?;
                    repeat_start = Some(start);
                }
                '{' => match self.parse_repeat() {
                    Some((min, max, end)) => {
                        let op = self.s[start..end].to_owned();
                        self.pos = end;
                        if !(0..=1000).contains(&min) || max > 1000 || (max >= 0 && min > max) {
                            return Err(err(INVALID_REPEAT_SIZE, &op));
                        }
                        self.apply_repeat(&mut items, op, min, max, start, last_repeat)?;
                        repeat_start = Some(start);
                    }
                    None => {
                        self.pos += 1;
                        items.push(Item::Operand {
                            text: "\\{".into(),
                            tree: RepeatTree::default(),
                        });
                    }
                },
                '^' | '$' | '.' => {
                    self.pos += 1;
                    items.push(Item::Operand {
                        text: c.to_string(),
                        tree: RepeatTree::default(),
                    });
                }
                '\\' => {
                    if let Some(text) = self.escape_atom()? {
                        items.push(Item::Operand {
                            text,
                            tree: RepeatTree::default(),
                        });
                    }
                }
                c => {
                    self.pos += c.len_utf8();
                    let mut text = String::new();
                    escape_char(&mut text, c);
                    items.push(Item::Operand {
                        text,
                        tree: RepeatTree::default(),
                    });
                }
            }
            last_repeat = repeat_start;
        }
        let mut text = String::new();
        let mut tree = RepeatTree::default();
        for item in items {
            match item {
                Item::Operand { text: t, tree: rt } => {
                    text.push_str(&t);
                    tree.kids.push(rt);
                }
                Item::Flags(f) => text.push_str(&f),
            }
        }
        Ok((text, tree))
    }

    fn apply_repeat(
        &mut self,
        items: &mut [Item],
        op: String,
        min: i64,
        max: i64,
        start: usize,
        last_repeat: Option<usize>,
    ) -> Result<(), String> {
        let mut op = op;
        if self.peek() == Some('?') {
            self.pos += 1;
            op.push('?');
        }
        if let Some(prev) = last_repeat {
            return Err(err(INVALID_REPEAT_OP, &self.s[prev..self.pos]));
        }
        let target = items
            .iter_mut()
            .rev()
            .find(|i| matches!(i, Item::Operand { .. }));
        let Some(Item::Operand { text, tree }) = target else {
            return Err(err(MISSING_REPEAT_ARG, &self.s[start..self.pos]));
        };
        let m = if max == 0 {
            0
        } else if max < 0 {
            min
        } else {
            max
        };
        let new_tree = RepeatTree {
            m: Some(m),
            kids: vec![std::mem::take(tree)],
        };
        if (min >= 2 || max >= 2) && !repeat_is_valid(&new_tree, 1000) {
            return Err(err(INVALID_REPEAT_SIZE, &self.s[start..self.pos]));
        }
        *tree = new_tree;
        *text = format!("(?:{text}){op}");
        Ok(())
    }

    /// `{n}`, `{n,}`, `{n,m}`: (min, max (-1: none), end) or `None` for a literal `{`.
    fn parse_repeat(&self) -> Option<(i64, i64, usize)> {
        let b = self.s.as_bytes();
        let mut i = self.pos + 1;
        let num = |i: &mut usize| -> Option<i64> {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            if *i == start {
                return None;
            }
            // Go disallows leading zeros.
            if *i - start >= 2 && b[start] == b'0' {
                return None;
            }
            let text = &self.s[start..*i];
            if text.len() > 8 {
                return Some(-1);
            }
            text.parse::<i64>()
                .ok()
                .map(|n| if n >= 100_000_000 { -1 } else { n })
        };
        let min = num(&mut i)?;
        let max;
        if i < b.len() && b[i] == b',' {
            i += 1;
            if i < b.len() && b[i] == b'}' {
                max = -1;
            } else {
                let m = num(&mut i)?;
                max = m;
            }
        } else {
            max = min;
        }
        if i < b.len() && b[i] == b'}' {
            Some((min, max, i + 1))
        } else {
            None
        }
    }

    fn group(&mut self, depth: usize) -> Result<Item, String> {
        let open = self.pos;
        let rest = self.rest();
        if rest.starts_with("(?") {
            let b = rest.as_bytes();
            if (b.len() > 4 && b[2] == b'P' && b[3] == b'<') || (b.len() > 3 && b[2] == b'<') {
                let begin = if b[2] == b'<' { 3 } else { 4 };
                let Some(end) = rest.find('>') else {
                    return Err(err(INVALID_NAMED_CAPTURE, rest));
                };
                let name = &rest[begin..end];
                if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                    return Err(err(INVALID_NAMED_CAPTURE, &rest[..=end]));
                }
                self.pos += end + 1;
                return self.group_body(depth, open, "(".into());
            }
            // Flags, possibly opening a non-capturing group.
            let mut i = 2;
            let mut sign_neg = false;
            let mut saw_flag = false;
            let mut on = String::new();
            let mut off = String::new();
            let chars: Vec<(usize, char)> = rest.char_indices().collect();
            let mut k = 2;
            while k < chars.len() {
                let (idx, c) = chars[k];
                i = idx + c.len_utf8();
                match c {
                    'i' | 'm' | 's' | 'U' => {
                        if sign_neg {
                            off.push(c);
                        } else {
                            on.push(c);
                        }
                        saw_flag = true;
                    }
                    '-' => {
                        if sign_neg {
                            break;
                        }
                        sign_neg = true;
                        saw_flag = false;
                    }
                    ':' | ')' => {
                        if sign_neg && !saw_flag {
                            break;
                        }
                        let mut flags = on.clone();
                        if !off.is_empty() {
                            flags.push('-');
                            flags.push_str(&off);
                        }
                        self.pos += i;
                        if c == ':' {
                            let prefix = if flags.is_empty() {
                                "(?:".to_owned()
                            } else {
                                format!("(?{flags}:")
                            };
                            return self.group_body(depth, open, prefix);
                        }
                        return Ok(Item::Flags(if flags.is_empty() {
                            String::new()
                        } else {
                            format!("(?{flags})")
                        }));
                    }
                    _ => break,
                }
                k += 1;
            }
            if k >= chars.len() {
                i = rest.len();
            }
            return Err(err(INVALID_PERL_OP, &rest[..i]));
        }
        self.pos += 1;
        self.group_body(depth, open, "(".into())
    }

    fn group_body(&mut self, depth: usize, _open: usize, prefix: String) -> Result<Item, String> {
        let (inner, tree) = self.alternation(depth + 1)?;
        if self.peek() != Some(')') {
            return Err(err(MISSING_PAREN, self.s));
        }
        self.pos += 1;
        Ok(Item::Operand {
            text: format!("{prefix}{inner})"),
            tree,
        })
    }

    /// An escape outside a class: an operand text, or `None` for `\Q\E`-like nothing.
    fn escape_atom(&mut self) -> Result<Option<String>, String> {
        let rest = self.rest();
        let mut chars = rest.chars();
        chars.next(); // backslash
        let Some(c) = chars.next() else {
            return Err(err(TRAILING_BACKSLASH, ""));
        };
        match c {
            'A' => {
                self.pos += 2;
                return Ok(Some("\\A".into()));
            }
            'z' => {
                self.pos += 2;
                return Ok(Some("\\z".into()));
            }
            'b' => {
                self.pos += 2;
                return Ok(Some("(?-u:\\b)".into()));
            }
            'B' => {
                self.pos += 2;
                return Ok(Some("(?-u:\\B)".into()));
            }
            'C' => return Err(err(INVALID_ESCAPE, "\\C")),
            'Q' => {
                let body = &rest[2..];
                let (lit, consumed) = match body.find("\\E") {
                    Some(i) => (&body[..i], 2 + i + 2),
                    None => (body, rest.len()),
                };
                self.pos += consumed;
                if lit.is_empty() {
                    return Ok(None);
                }
                let mut text = String::from("(?:");
                for ch in lit.chars() {
                    escape_char(&mut text, ch);
                }
                text.push(')');
                return Ok(Some(text));
            }
            'p' | 'P' => {
                let (text, len) = self.unicode_class(rest)?;
                self.pos += len;
                return Ok(Some(text));
            }
            _ => {}
        }
        if let Some(cls) = perl_class(c.to_ascii_lowercase()).filter(|_| "dswDSW".contains(c)) {
            self.pos += 2;
            let neg = c.is_ascii_uppercase();
            return Ok(Some(format!("[{}{cls}]", if neg { "^" } else { "" })));
        }
        let (ch, len) = parse_escape(rest)?;
        self.pos += len;
        let mut text = String::new();
        escape_char(&mut text, ch);
        Ok(Some(text))
    }

    /// `\pL`, `\p{Greek}`, `\P{^Greek}` at the start of `s`: (rust text, bytes).
    fn unicode_class(&self, s: &str) -> Result<(String, usize), String> {
        let mut neg = s.as_bytes()[1] == b'P';
        let after = &s[2..];
        let (seq_len, mut name) = match after.chars().next() {
            Some('{') => {
                let Some(end) = s.find('}') else {
                    return Err(err(INVALID_CHAR_RANGE, s));
                };
                (end + 1, &s[3..end])
            }
            Some(c) => (2 + c.len_utf8(), &after[..c.len_utf8()]),
            None => (2, ""),
        };
        if let Some(n) = name.strip_prefix('^') {
            neg = !neg;
            name = n;
        }
        let seq = &s[..seq_len];
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        if !valid {
            return Err(err(INVALID_CHAR_RANGE, seq));
        }
        let text = format!("\\{}{{{name}}}", if neg { 'P' } else { 'p' });
        if Regex::new(&text).is_err() {
            return Err(err(INVALID_CHAR_RANGE, seq));
        }
        Ok((text, seq_len))
    }

    fn class(&mut self) -> Result<String, String> {
        let whole = self.rest();
        let mut t = &whole[1..];
        let mut out = String::from("[");
        if t.starts_with('^') {
            out.push('^');
            t = &t[1..];
        }
        let mut first = true;
        let mut any = false;
        loop {
            if !first && t.starts_with(']') {
                break;
            }
            first = false;
            if t.is_empty() {
                return Err(err(MISSING_BRACKET, whole));
            }
            // POSIX classes.
            if t.len() > 2
                && t.starts_with("[:")
                && let Some(i) = t[2..].find(":]")
            {
                let name = &t[..i + 4];
                let inner = &name[2..name.len() - 2];
                let base = inner.strip_prefix('^').unwrap_or(inner);
                const POSIX: [&str; 14] = [
                    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower",
                    "print", "punct", "space", "upper", "word", "xdigit",
                ];
                if !POSIX.contains(&base) {
                    return Err(err(INVALID_CHAR_RANGE, name));
                }
                out.push_str(name);
                any = true;
                t = &t[i + 4..];
                continue;
            }
            // Unicode classes.
            if t.starts_with("\\p") || t.starts_with("\\P") {
                let (text, len) = self.unicode_class(t)?;
                out.push_str(&text);
                any = true;
                t = &t[len..];
                continue;
            }
            // Perl classes.
            if t.len() >= 2 && t.starts_with('\\') {
                let c = t.as_bytes()[1] as char;
                if "dswDSW".contains(c) {
                    let cls = perl_class(c.to_ascii_lowercase()).unwrap_or("");
                    if c.is_ascii_uppercase() {
                        out.push_str(&format!("[^{cls}]"));
                    } else {
                        out.push_str(cls);
                    }
                    any = true;
                    t = &t[2..];
                    continue;
                }
            }
            // A character or a range.
            let rng = t;
            let (lo, len) = class_char(t, whole)?;
            t = &t[len..];
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                t = &t[1..];
                let (h, len) = class_char(t, whole)?;
                t = &t[len..];
                hi = h;
                if hi < lo {
                    let used = rng.len() - t.len();
                    return Err(err(INVALID_CHAR_RANGE, &rng[..used]));
                }
            }
            escape_class_char(&mut out, lo);
            if hi != lo {
                out.push('-');
                escape_class_char(&mut out, hi);
            }
            any = true;
        }
        // Chop ']'.
        t = &t[1..];
        self.pos += whole.len() - t.len();
        if !any {
            // Unreachable: Go needs at least one item ("[]" is a missing bracket).
            return Err(err(MISSING_BRACKET, whole));
        }
        out.push(']');
        Ok(out)
    }
}

fn escape_class_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_control()) {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:x}}}", c as u32));
    }
}

/// One class character (escapes allowed): (char, bytes consumed).
fn class_char(t: &str, whole: &str) -> Result<(char, usize), String> {
    match t.chars().next() {
        None => Err(err(MISSING_BRACKET, whole)),
        Some('\\') => parse_escape(t),
        Some(c) => Ok((c, c.len_utf8())),
    }
}

/// Go's `parseEscape` for a single-character escape at the start of `s`.
fn parse_escape(s: &str) -> Result<(char, usize), String> {
    let t = &s[1..];
    let mut it = t.char_indices();
    let Some((_, c)) = it.next() else {
        return Err(err(TRAILING_BACKSLASH, ""));
    };
    let mut consumed = 1 + c.len_utf8();
    let invalid = |consumed: usize| Err(err(INVALID_ESCAPE, &s[..consumed.min(s.len())]));
    match c {
        '1'..='7' if !t[1..].starts_with(|d: char| ('0'..='7').contains(&d)) => invalid(consumed),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            let bytes = s.as_bytes();
            for _ in 1..3 {
                match bytes.get(consumed) {
                    Some(d @ b'0'..=b'7') => {
                        r = r * 8 + u32::from(d - b'0');
                        consumed += 1;
                    }
                    _ => break,
                }
            }
            Ok((char::from_u32(r).unwrap_or('\u{FFFD}'), consumed))
        }
        'x' => {
            let rest = &t[1..];
            let mut chars = rest.chars();
            let Some(c1) = chars.next() else {
                return invalid(consumed);
            };
            consumed += c1.len_utf8();
            if c1 == '{' {
                let mut r: u32 = 0;
                let mut nhex = 0;
                loop {
                    let Some(d) = chars.next() else {
                        return invalid(consumed);
                    };
                    consumed += d.len_utf8();
                    if d == '}' {
                        break;
                    }
                    let Some(v) = d.to_digit(16) else {
                        return invalid(consumed);
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return invalid(consumed);
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return invalid(consumed);
                }
                return Ok((char::from_u32(r).unwrap_or('\u{FFFD}'), consumed));
            }
            let Some(c2) = chars.next() else {
                return invalid(consumed);
            };
            consumed += c2.len_utf8();
            match (c1.to_digit(16), c2.to_digit(16)) {
                (Some(x), Some(y)) => {
                    Ok((char::from_u32(x * 16 + y).unwrap_or('\u{FFFD}'), consumed))
                }
                _ => invalid(consumed),
            }
        }
        'a' => Ok(('\x07', consumed)),
        'f' => Ok(('\x0c', consumed)),
        'n' => Ok(('\n', consumed)),
        'r' => Ok(('\r', consumed)),
        't' => Ok(('\t', consumed)),
        'v' => Ok(('\x0b', consumed)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, consumed)),
        _ => invalid(consumed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_err(p: &str) -> String {
        GoRegex::compile(p).unwrap_err()
    }

    #[test]
    fn errors_match_go() {
        let cases = [
            ("[a-z", "error parsing regexp: missing closing ]: `[a-z`"),
            ("x[a-z", "error parsing regexp: missing closing ]: `[a-z`"),
            ("[]", "error parsing regexp: missing closing ]: `[]`"),
            ("(abc", "error parsing regexp: missing closing ): `(abc`"),
            ("abc)", "error parsing regexp: unexpected ): `abc)`"),
            (
                "*a",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "(*)",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "a|*",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "a**",
                "error parsing regexp: invalid nested repetition operator: `**`",
            ),
            (
                "a*?*b",
                "error parsing regexp: invalid nested repetition operator: `*?*`",
            ),
            (
                "a{2}{3}",
                "error parsing regexp: invalid nested repetition operator: `{2}{3}`",
            ),
            (
                "a{1001}",
                "error parsing regexp: invalid repeat count: `{1001}`",
            ),
            (
                "a{3,2}",
                "error parsing regexp: invalid repeat count: `{3,2}`",
            ),
            (
                "(a{500}){3}",
                "error parsing regexp: invalid repeat count: `{3}`",
            ),
            (
                "\\q",
                "error parsing regexp: invalid escape sequence: `\\q`",
            ),
            (
                "\\8",
                "error parsing regexp: invalid escape sequence: `\\8`",
            ),
            (
                "\\1",
                "error parsing regexp: invalid escape sequence: `\\1`",
            ),
            (
                "\\xZZ",
                "error parsing regexp: invalid escape sequence: `\\xZZ`",
            ),
            (
                "\\C",
                "error parsing regexp: invalid escape sequence: `\\C`",
            ),
            (
                "\\Z",
                "error parsing regexp: invalid escape sequence: `\\Z`",
            ),
            (
                "a\\",
                "error parsing regexp: trailing backslash at end of expression: ``",
            ),
            (
                "[z-a]",
                "error parsing regexp: invalid character class range: `z-a`",
            ),
            (
                "[[:foo:]]",
                "error parsing regexp: invalid character class range: `[:foo:]`",
            ),
            (
                "\\p{Foo}",
                "error parsing regexp: invalid character class range: `\\p{Foo}`",
            ),
            (
                "(?x)a",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?x`",
            ),
            (
                "(?P<1a-b>x)",
                "error parsing regexp: invalid named capture: `(?P<1a-b>`",
            ),
            (
                "(?P<name",
                "error parsing regexp: invalid named capture: `(?P<name`",
            ),
        ];
        for (p, want) in cases {
            assert_eq!(go_err(p), want, "{p}");
        }
    }

    #[test]
    fn matches_like_go() {
        let re = GoRegex::compile("my-([0-9]+)-string").unwrap();
        assert_eq!(
            re.find_submatch("my-1-string").unwrap(),
            vec!["my-1-string", "1"]
        );
        let re = GoRegex::compile("^foo.*$").unwrap();
        assert!(re.is_match("foobar"));
        assert!(!re.is_match("xfoobar"));
        // ASCII-only \d and \w, as in Go.
        assert!(!GoRegex::compile("^\\d$").unwrap().is_match("٣"));
        assert!(!GoRegex::compile("^\\w$").unwrap().is_match("é"));
        assert!(GoRegex::compile("^[\\w-]+$").unwrap().is_match("a-b_c"));
        assert!(GoRegex::compile("^\\D$").unwrap().is_match("é"));
        // Optional group that did not take part.
        let re = GoRegex::compile("a(b)?(c)").unwrap();
        assert_eq!(re.find_submatch("ac").unwrap(), vec!["ac", "", "c"]);
        // Literal braces, octal, hex, \Q..\E, named groups, flags.
        assert!(GoRegex::compile("^a{,2}$").unwrap().is_match("a{,2}"));
        assert!(
            GoRegex::compile("^\\101\\x42\\x{43}$")
                .unwrap()
                .is_match("ABC")
        );
        assert!(GoRegex::compile("^\\Q.*\\E$").unwrap().is_match(".*"));
        assert!(GoRegex::compile("(?P<x>a)(?<y>b)").unwrap().is_match("ab"));
        assert!(GoRegex::compile("(?i)ABC").unwrap().is_match("abc"));
        assert!(GoRegex::compile("(?i:a)b").unwrap().is_match("Ab"));
        assert!(GoRegex::compile("a(?i)b").unwrap().is_match("aB"));
        assert!(GoRegex::compile("\\bfoo\\b").unwrap().is_match("a foo b"));
        assert!(GoRegex::compile("^[[:alpha:]]+$").unwrap().is_match("abc"));
        assert!(GoRegex::compile("^\\pL+$").unwrap().is_match("héllo"));
        assert!(GoRegex::compile("^[^a]$").unwrap().is_match("\n"));
        assert!(GoRegex::compile("^[]a]+$").unwrap().is_match("]a"));
        assert!(GoRegex::compile("^[a-]+$").unwrap().is_match("a-"));
        assert!(GoRegex::compile("a{2,3}?").unwrap().is_match("aa"));
        assert!(GoRegex::compile("").unwrap().is_match("x"));
        assert!(GoRegex::compile("^(a|)$").unwrap().is_match(""));
        assert!(GoRegex::compile("\\.").unwrap().is_match("."));
        assert!(GoRegex::compile("x{0}").unwrap().is_match(""));
    }
}
