//! The lexer: KCL source to tokens.
//!
//! Indentation is not turned into INDENT/DEDENT tokens: every token carries
//! its line, its column and whether it is the first of its line, and the
//! parser delimits blocks by column (a block is the run of lines indented
//! deeper than its header). Inside brackets that is also how KCL's
//! `if` entries of config and list literals and lambda bodies are read.

use crate::error::Error;

/// A part of a string literal: text, or a `${...}` interpolation.
#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    /// Literal text (escapes resolved).
    Lit(String),
    /// The source of an interpolated expression, its line, and its format
    /// spec (`#json`, `#yaml`), if any.
    Expr(String, u32, Option<String>),
}

/// A token's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword.
    Name(String),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// A string literal.
    Str(Vec<StrPart>),
    /// A number with a unit suffix (`1Ki`, `2M`).
    Unit(i64, String),
    /// An operator or punctuation.
    Op(&'static str),
    /// The end of the source.
    Eof,
}

/// A token with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Its line (1-based).
    pub line: u32,
    /// Its column (0-based, in characters).
    pub col: u32,
    /// Whether it is the first token of its logical line.
    pub first: bool,
}

const OPS: &[&str] = &[
    "**=", "//=", "<<=", ">>=", "...", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=",
    "*=", "/=", "%=", "&=", "|=", "^=", "->", "?.", "?[", "+", "-", "*", "/", "%", "&", "|", "^",
    "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=", "@", "!", "?",
];

/// KCL's number multipliers: the suffix and its factor.
pub const MULTIPLIERS: &[(&str, f64)] = &[
    ("n", 1e-9),
    ("u", 1e-6),
    ("m", 1e-3),
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("P", 1e15),
    ("Ki", 1024.0),
    ("Mi", 1048576.0),
    ("Gi", 1073741824.0),
    ("Ti", 1099511627776.0),
    ("Pi", 1125899906842624.0),
];

/// The longest source the lexer accepts, in bytes.
pub const MAX_SOURCE: usize = 4 << 20;

/// Splits `src` into tokens, the last one `Eof`.
pub fn lex(src: &str, first_line: u32) -> Result<Vec<Token>, Error> {
    if src.len() > MAX_SOURCE {
        return Err(Error::Limit {
            line: first_line,
            msg: format!("the program is longer than {MAX_SOURCE} bytes"),
        });
    }
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = first_line;
    let mut col: u32 = 0;
    let mut at_line_start = true;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            i += 1;
            line += 1;
            col = 0;
            at_line_start = true;
            continue;
        }
        if c == ' ' || c == '\t' || c == '\r' || c == '\x0c' {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\\' && chars.get(i + 1) == Some(&'\n') {
            i += 2;
            line += 1;
            col = 0;
            continue;
        }
        let start_line = line;
        let start_col = col;
        let first = at_line_start;
        at_line_start = false;
        let tok;
        // A number starts with a digit (KCL has no `.5`).
        if c.is_ascii_digit() {
            let (t, n) = number(&chars[i..], line)?;
            tok = t;
            i += n;
            col += n as u32;
        } else if is_string_start(&chars[i..]) {
            let (t, n, lines, last_col) = string(&chars[i..], line, col)?;
            tok = t;
            i += n;
            if lines > 0 {
                line += lines;
                col = last_col;
            } else {
                col += n as u32;
            }
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let s = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            col += (i - s) as u32;
            // `$name` stays marked here (`$if` is a name, not a keyword);
            // the parser drops the `$` where it reads a name.
            tok = Tok::Name(chars[s..i].iter().collect());
        } else {
            let mut found = None;
            for op in OPS {
                let n = op.chars().count();
                if i + n <= chars.len() && chars[i..i + n].iter().copied().eq(op.chars()) {
                    found = Some(*op);
                    break;
                }
            }
            let Some(op) = found else {
                return Err(Error::Syntax {
                    line,
                    msg: format!("unexpected character {c:?}"),
                });
            };
            let n = op.chars().count();
            i += n;
            col += n as u32;
            tok = Tok::Op(op);
        }
        out.push(Token {
            tok,
            line: start_line,
            col: start_col,
            first,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        line,
        col: 0,
        first: true,
    });
    Ok(out)
}

fn is_string_start(c: &[char]) -> bool {
    matches!(c, ['"' | '\'', ..] | ['r' | 'R', '"' | '\'', ..])
}

fn number(c: &[char], line: u32) -> Result<(Tok, usize), Error> {
    let mut i = 0;
    let radix = match (c.first(), c.get(1)) {
        (Some('0'), Some('x' | 'X')) => 16,
        (Some('0'), Some('o' | 'O')) => 8,
        (Some('0'), Some('b' | 'B')) => 2,
        _ => 10,
    };
    if radix != 10 {
        i = 2;
        let s = i;
        while i < c.len() && (c[i].is_digit(radix) || c[i] == '_') {
            i += 1;
        }
        let digits: String = c[s..i].iter().filter(|d| **d != '_').collect();
        let v = i64::from_str_radix(&digits, radix).map_err(|_| Error::Syntax {
            line,
            msg: format!(
                "invalid integer literal {:?}",
                c[..i].iter().collect::<String>()
            ),
        })?;
        return Ok((Tok::Int(v), i));
    }
    let mut is_float = false;
    while i < c.len() && (c[i].is_ascii_digit() || c[i] == '_') {
        i += 1;
    }
    // `1.5`, `1.` (not `1.name`).
    if i < c.len()
        && c[i] == '.'
        && c.get(i + 1)
            .is_none_or(|d| d.is_ascii_digit() || !(d.is_alphabetic() || *d == '_' || *d == '.'))
    {
        is_float = true;
        i += 1;
        while i < c.len() && (c[i].is_ascii_digit() || c[i] == '_') {
            i += 1;
        }
    }
    if i < c.len() && (c[i] == 'e' || c[i] == 'E') {
        let mut j = i + 1;
        if j < c.len() && (c[j] == '+' || c[j] == '-') {
            j += 1;
        }
        if j < c.len() && c[j].is_ascii_digit() {
            is_float = true;
            i = j;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    let text: String = c[..i].iter().filter(|d| **d != '_').collect();
    // A unit suffix (`1Ki`, `2M`): KCL's number multipliers.
    if i < c.len() && c[i].is_alphabetic() {
        let mut j = i;
        while j < c.len() && c[j].is_alphanumeric() {
            j += 1;
        }
        let suffix: String = c[i..j].iter().collect();
        if is_float || !MULTIPLIERS.iter().any(|(s, _)| *s == suffix) {
            return Err(Error::Syntax {
                line,
                msg: format!("invalid number literal {text}{suffix}"),
            });
        }
        let v: i64 = text.parse().map_err(|_| Error::Syntax {
            line,
            msg: format!("integer literal {text} does not fit in 64 bits"),
        })?;
        return Ok((Tok::Unit(v, suffix), j));
    }
    if is_float {
        let v: f64 = text.parse().map_err(|_| Error::Syntax {
            line,
            msg: format!("invalid float literal {text:?}"),
        })?;
        Ok((Tok::Float(v), i))
    } else if text.len() > 1 && text.starts_with('0') {
        // A leading zero makes an octal literal (`010` is 8).
        let v = i64::from_str_radix(&text[1..], 8).map_err(|_| Error::Syntax {
            line,
            msg: format!("invalid octal literal {text}"),
        })?;
        Ok((Tok::Int(v), i))
    } else {
        let v: i64 = text.parse().map_err(|_| Error::Syntax {
            line,
            msg: format!("integer literal {text} does not fit in 64 bits"),
        })?;
        Ok((Tok::Int(v), i))
    }
}

/// Lexes a string literal; returns the token, the characters consumed,
/// the newlines inside, and the column after it when it spans lines.
fn string(c: &[char], line: u32, col: u32) -> Result<(Tok, usize, u32, u32), Error> {
    let mut i = 0;
    let raw = matches!(c[0], 'r' | 'R');
    if raw {
        i += 1;
    }
    let q = c[i];
    let triple = c.get(i + 1) == Some(&q) && c.get(i + 2) == Some(&q);
    i += if triple { 3 } else { 1 };
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut cur_line = line;
    let mut last_nl_at = None;
    loop {
        let Some(&ch) = c.get(i) else {
            return Err(Error::Syntax {
                line,
                msg: "unterminated string literal".into(),
            });
        };
        if triple {
            if ch == q && c.get(i + 1) == Some(&q) && c.get(i + 2) == Some(&q) {
                i += 3;
                break;
            }
        } else if ch == q {
            i += 1;
            break;
        } else if ch == '\n' {
            return Err(Error::Syntax {
                line,
                msg: "unterminated string literal".into(),
            });
        }
        if ch == '\n' {
            cur_line += 1;
            last_nl_at = Some(i);
            lit.push(ch);
            i += 1;
            continue;
        }
        if ch == '\\' && !raw {
            let Some(&e) = c.get(i + 1) else {
                return Err(Error::Syntax {
                    line,
                    msg: "unterminated string literal".into(),
                });
            };
            i += 2;
            match e {
                'n' => lit.push('\n'),
                't' => lit.push('\t'),
                'r' => lit.push('\r'),
                '0' => lit.push('\0'),
                'a' => lit.push('\x07'),
                'b' => lit.push('\x08'),
                'f' => lit.push('\x0c'),
                'v' => lit.push('\x0b'),
                '\\' => lit.push('\\'),
                '\'' => lit.push('\''),
                '"' => lit.push('"'),
                '$' => lit.push('$'),
                '\n' => {
                    cur_line += 1;
                    last_nl_at = Some(i - 1);
                }
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = c.get(i..i + n).unwrap_or(&[]).iter().collect();
                    let code = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    let Some(code) = code.filter(|_| hex.len() == n) else {
                        return Err(Error::Syntax {
                            line: cur_line,
                            msg: format!("invalid \\{e} escape"),
                        });
                    };
                    lit.push(code);
                    i += n;
                }
                other => {
                    lit.push('\\');
                    lit.push(other);
                }
            }
            continue;
        }
        if ch == '$' && c.get(i + 1) == Some(&'{') && !raw {
            // An interpolation: find the matching brace.
            let mut depth = 0;
            let mut j = i + 1;
            let mut expr = String::new();
            loop {
                let Some(&d) = c.get(j) else {
                    return Err(Error::Syntax {
                        line: cur_line,
                        msg: "unterminated ${...} in string".into(),
                    });
                };
                if d == '{' {
                    depth += 1;
                    if depth == 1 {
                        j += 1;
                        continue;
                    }
                } else if d == '}' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                } else if (d == '\n' || d == q) && !triple {
                    // KCL reads a string's end before its interpolations.
                    return Err(Error::Syntax {
                        line: cur_line,
                        msg: "invalid joined string: a ${...} holds the string's quote or a line break".into(),
                    });
                }
                expr.push(d);
                j += 1;
            }
            if !lit.is_empty() {
                parts.push(StrPart::Lit(std::mem::take(&mut lit)));
            }
            let (expr, spec) = split_format_spec(&expr);
            parts.push(StrPart::Expr(expr, cur_line, spec));
            i = j + 1;
            continue;
        }
        lit.push(ch);
        i += 1;
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(StrPart::Lit(lit));
    }
    let lines = cur_line - line;
    let last_col = match last_nl_at {
        Some(p) => (i - p - 1) as u32,
        None => col + i as u32,
    };
    Ok((Tok::Str(parts), i, lines, last_col))
}

/// Splits `expr: #json` into the expression and its format spec.
fn split_format_spec(s: &str) -> (String, Option<String>) {
    if let Some(pos) = s.rfind(':') {
        let spec = s[pos + 1..].trim();
        if spec.starts_with('#') {
            return (s[..pos].to_string(), Some(spec.to_string()));
        }
    }
    (s.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src, 1).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_strings_and_ops() {
        assert_eq!(
            kinds("a = 0x1F + 1.5e2 // 'x\\n'"),
            vec![
                Tok::Name("a".into()),
                Tok::Op("="),
                Tok::Int(31),
                Tok::Op("+"),
                Tok::Float(150.0),
                Tok::Op("//"),
                Tok::Str(vec![StrPart::Lit("x\n".into())]),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn interpolation_and_columns() {
        let toks = lex("x = \"a${b: #json}c\"\n  y", 1).unwrap();
        assert_eq!(
            toks[2].tok,
            Tok::Str(vec![
                StrPart::Lit("a".into()),
                StrPart::Expr("b".into(), 1, Some("#json".into())),
                StrPart::Lit("c".into())
            ])
        );
        assert_eq!((toks[3].line, toks[3].col, toks[3].first), (2, 2, true));
    }

    #[test]
    fn unit_suffixes() {
        assert_eq!(kinds("1Ki")[0], Tok::Unit(1, "Ki".into()));
        assert!(matches!(lex("a = 1Kx", 1), Err(Error::Syntax { .. })));
    }
}
