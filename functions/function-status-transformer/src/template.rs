//! The part of Go's `text/template` that messages use: text and
//! `{{ .Name }}` actions over the captured groups (a `map[string]string`).
//!
//! Supported: text, `{{ .Name }}` (a missing key prints `<no value>`),
//! `{{ . }}` (the map, as Go prints it), trim markers `{{-` and `-}}`, and
//! comments `{{/* ... */}}`. Go's messages for an unclosed action and for a
//! stray character in an action are reproduced. Anything else Go's
//! templates can do (pipelines, functions, `if`, `range`, variables,
//! literals) is refused with an error that names it, not rendered wrongly.

use std::collections::BTreeMap;

/// One piece of a parsed template.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    Text(String),
    /// `.` followed by field names (empty: the dot itself), with the line
    /// and the column (byte offset in the line) of the last field.
    Field(Vec<String>, usize, usize),
}

fn line_at(src: &str, at: usize) -> usize {
    src[..at.min(src.len())].matches('\n').count() + 1
}

fn parse(src: &str) -> Result<Vec<Node>, String> {
    let fail = |at: usize, msg: String| format!("template: :{}: {msg}", line_at(src, at));
    let mut nodes = Vec::new();
    let mut rest = 0;
    let mut text = String::new();
    while let Some(open) = src[rest..].find("{{").map(|i| i + rest) {
        text.push_str(&src[rest..open]);
        let mut i = open + 2;
        let trim_left = src[i..].starts_with("- ")
            || src[i..].starts_with("-\t")
            || src[i..].starts_with("-\n");
        if trim_left {
            i += 1;
            let trimmed = text.trim_end_matches([' ', '\t', '\r', '\n']).len();
            text.truncate(trimmed);
        }
        if !text.is_empty() {
            nodes.push(Node::Text(std::mem::take(&mut text)));
        }
        // A comment: {{/* ... */}}, possibly with trim markers.
        let after_space = src[i..].trim_start_matches([' ', '\t', '\r', '\n']);
        if after_space.starts_with("/*") {
            let start = src.len() - after_space.len();
            let Some(end) = src[start..].find("*/").map(|e| e + start + 2) else {
                return Err(fail(open, "unclosed comment".to_owned()));
            };
            let tail = src[end..].trim_start_matches([' ', '\t', '\r', '\n']);
            let (close, trim_right) = if let Some(t) = tail.strip_prefix("-}}") {
                (src.len() - t.len(), true)
            } else if let Some(t) = tail.strip_prefix("}}") {
                (src.len() - t.len(), false)
            } else {
                return Err(fail(
                    end,
                    "comment ends before closing delimiter".to_owned(),
                ));
            };
            rest = close;
            if trim_right {
                rest = src.len()
                    - src[rest..]
                        .trim_start_matches([' ', '\t', '\r', '\n'])
                        .len();
            }
            continue;
        }
        let mut field: Option<(Vec<String>, usize)> = None;
        loop {
            let c = src[i..].chars().next();
            match c {
                None => return Err(fail(src.len(), "unclosed action".to_owned())),
                Some(' ' | '\t' | '\r' | '\n') => i += 1,
                Some('-')
                    if src[i..].starts_with("-}}")
                        && src[..i].ends_with([' ', '\t', '\r', '\n']) =>
                {
                    i += 3;
                    i = src.len() - src[i..].trim_start_matches([' ', '\t', '\r', '\n']).len();
                    break;
                }
                Some('}') if src[i..].starts_with("}}") => {
                    i += 2;
                    break;
                }
                Some('.') if field.is_none() => {
                    let mut names = Vec::new();
                    let mut j = i;
                    let mut last = i;
                    while src[j..].starts_with('.') {
                        last = j;
                        let name: String = src[j + 1..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if name.is_empty() {
                            j += 1;
                            break;
                        }
                        j += 1 + name.len();
                        names.push(name);
                    }
                    i = j;
                    field = Some((names, last));
                }
                Some(c)
                    if c.is_ascii_punctuation()
                        && !matches!(c, '$' | '"' | '\'' | '`' | '(' | '|') =>
                {
                    return Err(fail(i, format!("unexpected \"{c}\" in operand")));
                }
                Some(_) => {
                    let end = src[i..].find("}}").map_or(src.len(), |e| e + i);
                    let what = src[i..end].trim();
                    return Err(format!(
                        "template action {:?} is not supported by xfn's port of \
                         function-status-transformer (only {{{{ .Name }}}} is)",
                        what
                    ));
                }
            }
        }
        match field {
            Some((names, at)) => {
                let line_start = src[..at].rfind('\n').map_or(0, |n| n + 1);
                nodes.push(Node::Field(names, line_at(src, at), at - line_start));
            }
            None => return Err(fail(open, "missing value for command".to_owned())),
        }
        rest = i;
    }
    text.push_str(&src[rest..]);
    if !text.is_empty() {
        nodes.push(Node::Text(text));
    }
    Ok(nodes)
}

/// Renders `src` with the captured groups (Go's `template.Parse` then
/// `Execute` on a `map[string]string`). Errors are Go's text where Go has
/// one, after `cannot parse template: ` or `cannot execute template: `.
///
/// ```
/// use std::collections::BTreeMap;
/// let values = BTreeMap::from([("Error".to_owned(), "boom".to_owned())]);
/// let out = function_status_transformer::template::render("failed: {{ .Error }}", &values).unwrap();
/// assert_eq!(out, "failed: boom");
/// ```
pub fn render(src: &str, values: &BTreeMap<String, String>) -> Result<String, String> {
    let nodes = parse(src).map_err(|e| format!("cannot parse template: {e}"))?;
    let mut out = String::new();
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(&t),
            Node::Field(names, line, col) => match names.as_slice() {
                [] => {
                    let entries: Vec<String> =
                        values.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    out.push_str(&format!("map[{}]", entries.join(" ")));
                }
                [name] => match values.get(name) {
                    Some(v) => out.push_str(v),
                    None => out.push_str("<no value>"),
                },
                [_, second, ..] => {
                    return Err(format!(
                        "cannot execute template: template: :{line}:{col}: executing \"\" at <.{}>: \
                         can't evaluate field {second} in type string",
                        names.join(".")
                    ));
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> BTreeMap<String, String> {
        BTreeMap::from([
            ("a".to_owned(), "1".to_owned()),
            ("b".to_owned(), "2".to_owned()),
        ])
    }

    #[test]
    fn fields_text_trim_and_comments() {
        let v = values();
        assert_eq!(render("x{{.a}}y{{ .b }}", &v).unwrap(), "x1y2");
        assert_eq!(render("x {{- .a -}} y", &v).unwrap(), "x1y");
        assert_eq!(render("{{ .missing }}", &v).unwrap(), "<no value>");
        assert_eq!(render("{{ . }}", &v).unwrap(), "map[a:1 b:2]");
        assert_eq!(render("a{{/* note */}}b", &v).unwrap(), "ab");
    }

    #[test]
    fn go_parse_errors() {
        let v = values();
        assert_eq!(
            render("{{ .Error }", &v).unwrap_err(),
            "cannot parse template: template: :1: unexpected \"}\" in operand"
        );
        assert_eq!(
            render("x\n{{ .a ", &v).unwrap_err(),
            "cannot parse template: template: :2: unclosed action"
        );
    }

    #[test]
    fn unsupported_actions_are_named() {
        let err = render("{{ if .a }}x{{ end }}", &values()).unwrap_err();
        assert!(err.contains("\"if .a\" is not supported"), "{err}");
        let err = render("{{ .a | printf \"%s\" }}", &values()).unwrap_err();
        assert!(err.contains("not supported"), "{err}");
    }
}
