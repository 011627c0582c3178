//! JSON text from a function as a `serde_json::Value`, as deep as a
//! served call may carry it.
//!
//! `serde_json` refuses text nested past 128 levels, while a served call
//! carries up to [`MAX_JSON_DEPTH`] levels in its Structs. A host that
//! reads a function's JSON itself (render) parses it here, so it accepts
//! and refuses what a served call does, with the same words.

use serde::de::DeserializeOwned;

use super::{JsonError, MAX_JSON_DEPTH};
use crate::depth::with_stack_for;

/// Parses `text` as `T` (a `serde_json::Value`, or a map of them), nested
/// at most [`MAX_JSON_DEPTH`] levels, on a stack with room for that.
pub fn parse_value<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let depth = nesting(text);
    if depth > MAX_JSON_DEPTH {
        return Err(JsonError::new(format!(
            "JSON nests deeper than the limit of {MAX_JSON_DEPTH} levels"
        )));
    }
    with_stack_for(depth.saturating_mul(3), || {
        let mut de = serde_json::Deserializer::from_str(text);
        // The depth was checked above.
        de.disable_recursion_limit();
        let value = T::deserialize(&mut de).map_err(|e| JsonError::new(e.to_string()))?;
        de.end().map_err(|e| JsonError::new(e.to_string()))?;
        Ok(value)
    })
}

/// How deep objects and arrays nest in `text`, brackets inside strings
/// aside. Text that is not JSON gets a number too; the parse then says
/// what is wrong with it.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn parses_as_deep_as_a_served_call_carries() {
        let value: serde_json::Value = parse_value(&nested(MAX_JSON_DEPTH)).expect("parses");
        let mut level = &value;
        let mut depth = 0;
        while let Some(inner) = level.get(0) {
            level = inner;
            depth += 1;
        }
        assert_eq!(depth, MAX_JSON_DEPTH);
        crate::depth::with_deep_stack(move || drop(value));
        let err =
            parse_value::<serde_json::Value>(&nested(MAX_JSON_DEPTH + 1)).expect_err("too deep");
        assert_eq!(
            err.to_string(),
            format!("JSON nests deeper than the limit of {MAX_JSON_DEPTH} levels")
        );
    }

    #[test]
    fn brackets_in_strings_do_not_count() {
        assert_eq!(nesting(r#"{"a": "[[[{{\"[[", "b": [1]}"#), 2);
        let value: serde_json::Value = parse_value(r#"{"a": "]]]"}"#).expect("parses");
        assert_eq!(value["a"], "]]]");
        assert!(parse_value::<serde_json::Value>("{").is_err());
        assert!(parse_value::<serde_json::Value>("{} x").is_err());
    }
}
