//! Golden test: every document of `golden/cases.jsonl` must print exactly as
//! the reference emitter (go-yaml v2 via `JSONToYAML`) printed it into
//! `golden/expected.yaml`. See `golden/regenerate.sh` to rebuild the latter.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Number, Value};

const CASES: &str = include_str!("golden/cases.jsonl");
const EXPECTED: &str = include_str!("golden/expected.yaml");

/// Splits the reference stream into documents at its `---` lines.
fn expected_documents() -> Vec<String> {
    let mut docs: Vec<String> = Vec::new();
    for line in EXPECTED.split_inclusive('\n') {
        if line == "---\n" {
            docs.push(String::new());
        } else if let Some(doc) = docs.last_mut() {
            doc.push_str(line);
        } else {
            panic!("expected.yaml must start with ---");
        }
    }
    docs
}

/// Number literals of a JSON text, in order (string contents skipped).
fn number_literals(json: &str) -> Vec<&str> {
    let bytes = json.as_bytes();
    let mut literals = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            literals.push(&json[start..i]);
        } else {
            i += 1;
        }
    }
    literals
}

/// Parses a case. serde_json's default float parser is not always correctly
/// rounded (it is with its `float_roundtrip` feature), Go's is: floats are
/// re-read with Rust's correctly rounded parser, so that the test compares
/// the emitters and not the JSON parsers.
fn parse_case(line: &str) -> Value {
    let mut value: Value = serde_json::from_str(line).expect("case is JSON");
    let mut exact = HashMap::new();
    for literal in number_literals(line) {
        if let (Ok(rough), Ok(precise)) =
            (serde_json::from_str::<f64>(literal), literal.parse::<f64>())
        {
            exact.insert(rough.to_bits(), precise);
        }
    }
    let mut stack = vec![&mut value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Number(n) if n.is_f64() => {
                let fixed = n.as_f64().and_then(|f| exact.get(&f.to_bits())).copied();
                if let Some(number) = fixed.and_then(Number::from_f64) {
                    *n = number;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    value
}

/// The first line where two texts differ, for the failure message.
fn first_difference(got: &str, want: &str) -> String {
    let mut want_lines = want.split_inclusive('\n');
    for (n, got_line) in got.split_inclusive('\n').enumerate() {
        match want_lines.next() {
            Some(want_line) if want_line == got_line => {}
            want_line => {
                return format!(
                    "line {}:\n  got:  {got_line:?}\n  want: {want_line:?}",
                    n + 1
                );
            }
        }
    }
    match want_lines.next() {
        Some(line) => format!("missing line: {line:?}"),
        None => "texts are equal".to_owned(),
    }
}

#[test]
fn matches_reference_emitter() {
    let cases: Vec<&str> = CASES.lines().filter(|l| !l.is_empty()).collect();
    let expected = expected_documents();
    assert_eq!(
        cases.len(),
        expected.len(),
        "cases.jsonl and expected.yaml disagree on the count"
    );
    let mut failures = String::new();
    let mut failed = 0;
    for (i, (case, want)) in cases.iter().zip(&expected).enumerate() {
        let value = parse_case(case);
        let got = xfn_yaml::to_yaml(&value);
        if &got != want {
            failed += 1;
            if failed <= 5 {
                let _ = writeln!(
                    failures,
                    "case {} (line {} of cases.jsonl): {}\n  input: {}\n",
                    i + 1,
                    i + 1,
                    first_difference(&got, want),
                    case.chars().take(300).collect::<String>(),
                );
            }
        }
    }
    assert!(
        failed == 0,
        "{failed} of {} cases differ; first ones:\n{failures}",
        cases.len()
    );
}

#[test]
fn stream_matches_reference_framing() {
    let values: Vec<Value> = CASES
        .lines()
        .filter(|l| !l.is_empty())
        .take(50)
        .map(parse_case)
        .collect();
    let want: String = expected_documents()
        .iter()
        .take(50)
        .map(|doc| format!("---\n{doc}"))
        .collect();
    assert_eq!(xfn_yaml::to_yaml_stream(&values), want);
}
