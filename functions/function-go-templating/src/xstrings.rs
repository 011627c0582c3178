//! huandu/xstrings' case conversions as sprig calls them (`camelcase`,
//! `snakecase`, `kebabcase`, `swapcase`), following the word splitting of
//! xstrings 1.3.3 (Debian's, which the differential test runs).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// Go's `unicode.IsPunct` (category P): ASCII exactly, the common
/// punctuation blocks beyond it.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return matches!(
            c,
            '!' | '"'
                | '#'
                | '%'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | ','
                | '-'
                | '.'
                | '/'
                | ':'
                | ';'
                | '?'
                | '@'
                | '['
                | '\\'
                | ']'
                | '_'
                | '{'
                | '}'
        );
    }
    matches!(c, '¡' | '§' | '«' | '¶' | '·' | '»' | '¿')
        || ('\u{2010}'..='\u{2027}').contains(&c)
        || ('\u{2030}'..='\u{205e}').contains(&c)
        || ('\u{3001}'..='\u{3003}').contains(&c)
}

/// xstrings' `isAlphabet`: a letter outside the CJK ideographs.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !(('\u{3400}'..='\u{9fff}').contains(&c) || ('\u{20000}'..='\u{2fa1f}').contains(&c))
}

fn go_upper(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

fn go_lower(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// xstrings' `nextWord`: the kind and length of the word at the start.
fn next_word(s: &[char]) -> (Word, usize) {
    if s.is_empty() {
        return (Word::Invalid, 0);
    }
    let r = s[0];
    let mut off = 1;
    let run = |off: &mut usize, pred: &dyn Fn(char) -> bool| {
        while *off < s.len() && pred(s[*off]) {
            *off += 1;
        }
    };
    let wt = if is_connector(r) {
        run(&mut off, &is_connector);
        Word::Connector
    } else if is_punct(r) {
        run(&mut off, &is_punct);
        Word::Punct
    } else if r.is_uppercase() {
        if off < s.len() {
            let c = s[off];
            if c.is_uppercase() {
                let mut last = off;
                while off < s.len() && s[off].is_uppercase() {
                    last = off;
                    off += 1;
                }
                if off < s.len() && is_alphabet(s[off]) {
                    off = last;
                }
            } else if is_alphabet(c) {
                run(&mut off, &|c| is_alphabet(c) && !c.is_uppercase());
            }
        }
        Word::Upper
    } else if is_alphabet(r) {
        run(&mut off, &|c| is_alphabet(c) && !c.is_uppercase());
        Word::Alphabet
    } else if r.is_numeric() {
        run(&mut off, &char::is_numeric);
        Word::Number
    } else {
        run(&mut off, &|c| {
            !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c))
        });
        Word::Other
    };
    (wt, off)
}

fn to_lower(out: &mut String, wt: Word, word: &[char], connector: char) {
    if wt != Word::Upper && wt != Word::Connector {
        out.extend(word);
        return;
    }
    for &c in word {
        if is_connector(c) {
            out.push(connector);
        } else if c.is_uppercase() {
            out.push(go_lower(c));
        } else {
            out.push(c);
        }
    }
}

/// xstrings' `camelCaseToLowerCase` (`snakecase` with `_`, `kebabcase`
/// with `-`).
pub fn to_lower_case(s: &str, connector: char) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut pos = 0;
    let take = |pos: &mut usize| -> (Word, &[char]) {
        let (wt, n) = next_word(&chars[*pos..]);
        let w = &chars[*pos..*pos + n];
        *pos += n;
        (wt, w)
    };
    let (mut wt, mut word) = take(&mut pos);
    while pos < chars.len() {
        if wt != Word::Connector {
            to_lower(&mut out, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word) = take(&mut pos);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut out, wt, word, connector);
                    (wt, word) = take(&mut pos);
                }
                if !matches!(wt, Word::Invalid | Word::Punct | Word::Connector) {
                    out.push(connector);
                }
            }
            Word::Connector => to_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if pos >= chars.len() {
                    continue;
                }
                let last = word;
                (wt, word) = take(&mut pos);
                if wt != Word::Alphabet {
                    to_lower(&mut out, Word::Number, last, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                to_lower(&mut out, Word::Number, last, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut out, wt, word, connector);
                    (wt, word) = take(&mut pos);
                }
                if !matches!(wt, Word::Invalid | Word::Connector | Word::Punct) {
                    out.push(connector);
                }
            }
        }
    }
    to_lower(&mut out, wt, word, connector);
    out
}

/// xstrings' `ToCamelCase`.
pub fn to_camel_case(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut i = 0;
    let mut r0 = '\0';
    while i < chars.len() {
        r0 = chars[i];
        i += 1;
        if !is_connector(r0) {
            r0 = go_upper(r0);
            break;
        }
        out.push(r0);
    }
    if i >= chars.len() {
        // xstrings writes the last rune again here, connector or not.
        out.push(r0);
        return out;
    }
    while i < chars.len() {
        let r1 = r0;
        r0 = chars[i];
        i += 1;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            r0 = go_upper(r0);
        } else {
            r0 = go_lower(r0);
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

/// xstrings' `SwapCase`.
pub fn swap_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                go_lower(c)
            } else if c.is_lowercase() {
                go_upper(c)
            } else {
                c
            }
        })
        .collect()
}
