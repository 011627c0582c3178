//! Odd inputs must never make the emitter panic, and must still produce one
//! newline-terminated document.

use serde_json::{Map, Value, json};
use xfn_yaml::{to_yaml, to_yaml_stream};

/// A small deterministic generator (xorshift), to avoid a test dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}

const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "9",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{0}",
    "\u{7}",
    "\u{1b}",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{fffe}",
    "é",
    "日本",
    "😀",
    "#",
    "- ",
    "? ",
    ": ",
    ":",
    "&",
    "*",
    "!",
    "|",
    ">",
    "%",
    "@",
    "`",
    "'",
    "\"",
    "\\",
    ",",
    "[",
    "]",
    "{",
    "}",
    "~",
    "---",
    "...",
    "true",
    "null",
    "1e3",
    "0x1F",
    "2024-01-01",
    ".5",
    "<<",
];

fn odd_string(rng: &mut Rng, max_pieces: usize) -> String {
    (0..rng.below(max_pieces + 1))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

fn odd_value(rng: &mut Rng, depth: usize) -> Value {
    match if depth == 0 {
        rng.below(4)
    } else {
        rng.below(6)
    } {
        0 | 1 => {
            let max = [2, 10, 60][rng.below(3)];
            Value::String(odd_string(rng, max))
        }
        2 => json!(rng.next() as f64 / 7.0 - 1e9),
        3 => [json!(null), json!(true), json!(-3), json!(u64::MAX)][rng.below(4)].clone(),
        4 => Value::Array(
            (0..rng.below(4))
                .map(|_| odd_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|_| (odd_string(rng, 8), odd_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

fn assert_document(yaml: &str) {
    assert!(yaml.ends_with('\n'), "no final newline: {yaml:?}");
    assert!(
        !yaml.starts_with("---"),
        "document must not start with ---: {yaml:?}"
    );
}

#[test]
fn random_odd_values() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let value = odd_value(&mut rng, 5);
        assert_document(&to_yaml(&value));
    }
}

#[test]
fn odd_keys_and_scalars() {
    let mut map = Map::new();
    for (i, piece) in PIECES.iter().enumerate() {
        map.insert((*piece).to_owned(), json!(i));
        map.insert(piece.repeat(70), json!(piece.repeat(70)));
    }
    map.insert(String::new(), json!(""));
    let yaml = to_yaml(&Value::Object(map));
    assert_document(&yaml);
    assert!(yaml.contains("\"\": \"\"\n"));
}

#[test]
fn long_words_never_fold() {
    let word = "x".repeat(500);
    assert_eq!(to_yaml(&json!({ "k": word })), format!("k: {word}\n"));
    let quoted = format!("'{word}");
    assert_eq!(to_yaml(&json!([quoted])), format!("- '''{word}'\n"));
}

#[test]
fn folds_at_first_space_past_column_80() {
    let value = format!("{} {} {}", "a".repeat(77), "b".repeat(10), "c");
    // "k: " + 77 + " " + 10 puts the second space at column 91.
    assert_eq!(
        to_yaml(&json!({ "k": value })),
        format!("k: {} {}\n  c\n", "a".repeat(77), "b".repeat(10))
    );
}

/// Takes a deep value apart without recursion (serde_json's drop recurses).
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[test]
fn very_deep_nesting() {
    let depth = 4_000;
    let mut value = json!("leaf");
    for i in 0..depth {
        value = if i % 2 == 0 {
            Value::Array(vec![value])
        } else {
            let mut map = Map::new();
            map.insert("k".to_owned(), value);
            Value::Object(map)
        };
    }
    let yaml = to_yaml(&value);
    assert_document(&yaml);
    assert_eq!(
        yaml.lines().filter(|l| l.ends_with("k:")).count(),
        depth / 2
    );
    assert!(yaml.trim_end().ends_with("- leaf"));
    dismantle(value);
}

#[test]
fn lists_of_lists_and_empties() {
    let value = json!([[[]], [{}], {"a": [[], {}], "b": {"c": {}}}]);
    assert_eq!(
        to_yaml(&value),
        "- - []\n- - {}\n- a:\n  - []\n  - {}\n  b:\n    c: {}\n"
    );
}

#[test]
fn stream_of_odd_documents() {
    let docs = [json!(""), json!([]), json!("a\nb\n"), json!({"": null})];
    assert_eq!(
        to_yaml_stream(&docs),
        "---\n\"\"\n---\n[]\n---\n|\n  a\n  b\n---\n\"\": null\n"
    );
}
