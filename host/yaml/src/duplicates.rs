//! Finding keys repeated in a YAML mapping.
//!
//! Crossplane loads its inputs with `sigs.k8s.io/yaml` (go-yaml v2, not
//! strict): a repeated key is no error and its last value wins. xfn keeps
//! that, and uses [`duplicate_keys`] to say where it happened.
//!
//! The parser only tells where it is through an error, so each duplicate
//! found ends a pass with an error at the repeated key; the next pass skips
//! the duplicates already found. At most [`MAX_REPORTED`] are listed, so a
//! text is parsed at most that many times plus one. Run it on a text that
//! passed [`crate::check`].

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

/// The most duplicates [`duplicate_keys`] lists.
pub const MAX_REPORTED: usize = 10;

/// A key repeated in a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The repeated key's path, as `spec.items[0].name`.
    pub path: String,
    /// The 1-based document of the stream.
    pub document: usize,
    /// The 1-based line of the repetition.
    pub line: usize,
}

/// The duplicates of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Duplicates {
    /// The first [`MAX_REPORTED`] repeated keys, in the order they appear.
    pub found: Vec<DuplicateKey>,
    /// Whether there are more than those.
    pub more: bool,
}

/// Every key repeated in a mapping of `text` (up to [`MAX_REPORTED`]).
/// A text that does not parse has none: its error is the real parse's to
/// report.
pub fn duplicate_keys(text: &str) -> Duplicates {
    let mut duplicates = Duplicates::default();
    let mut known = 0;
    loop {
        match pass(text, known) {
            None => return duplicates,
            Some(_) if duplicates.found.len() == MAX_REPORTED => {
                duplicates.more = true;
                return duplicates;
            }
            Some(found) => {
                duplicates.found.push(found);
                known += 1;
            }
        }
    }
}

/// One pass over `text`: the first duplicate after the `known` first ones.
fn pass(text: &str, known: usize) -> Option<DuplicateKey> {
    let state = State {
        duplicates_seen: Cell::new(0),
        known,
        path: RefCell::new(Vec::new()),
        found: RefCell::new(None),
    };
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let Err(error) = Walk(&state).deserialize(document) else {
            continue;
        };
        let path = state.found.borrow_mut().take()?;
        return Some(DuplicateKey {
            path,
            document: index + 1,
            line: error.location().map_or(0, |l| l.line()),
        });
    }
    None
}

/// What a pass knows.
struct State {
    /// Duplicates met so far in this pass.
    duplicates_seen: Cell<usize>,
    /// How many duplicates earlier passes found (and this one skips).
    known: usize,
    /// The keys and indexes down to the node being walked.
    path: RefCell<Vec<String>>,
    /// The path of the duplicate that ended this pass.
    found: RefCell<Option<String>>,
}

impl State {
    fn path_with(&self, last: &str) -> String {
        let path = self.path.borrow();
        let mut out = String::new();
        for segment in path.iter().map(String::as_str).chain([last]) {
            if !out.is_empty() && !segment.starts_with('[') {
                out.push('.');
            }
            out.push_str(segment);
        }
        out
    }
}

/// Walks any node.
#[derive(Clone, Copy)]
struct Walk<'a>(&'a State);

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            self.0.path.borrow_mut().push(format!("[{index}]"));
            let next = seq.next_element_seed(self);
            self.0.path.borrow_mut().pop();
            if next?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key_seed(Key {
            state: self.0,
            seen: &mut seen,
        })? {
            self.0
                .path
                .borrow_mut()
                .push(key.unwrap_or_else(|| "?".into()));
            let value = map.next_value_seed(self);
            self.0.path.borrow_mut().pop();
            value?;
        }
        Ok(())
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged node (`!tag value`): the tag, then the value.
        let ((), variant) = data.variant_seed(self)?;
        variant.newtype_variant_seed(self)
    }
}

/// Reads a mapping key; a repeated one that no earlier pass found ends the
/// pass with an error, which the parser places at the key.
struct Key<'a, 'b> {
    state: &'a State,
    seen: &'b mut HashSet<String>,
}

impl Key<'_, '_> {
    fn scalar<E: de::Error>(self, key: String) -> Result<Option<String>, E> {
        if self.seen.insert(key.clone()) {
            return Ok(Some(key));
        }
        let nth = self.state.duplicates_seen.get();
        self.state.duplicates_seen.set(nth + 1);
        if nth < self.state.known {
            return Ok(Some(key));
        }
        *self.state.found.borrow_mut() = Some(self.state.path_with(&key));
        Err(E::custom("duplicate key"))
    }
}

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = Option<String>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<String>, E> {
        self.scalar(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<String>, E> {
        self.scalar(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<String>, E> {
        self.scalar(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<String>, E> {
        self.scalar(v.to_string())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<String>, E> {
        self.scalar(v.to_owned())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        self.scalar(String::from("null"))
    }

    // A collection as a key: walked, never compared.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        Walk(self.state).visit_seq(seq).map(|()| None)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        Walk(self.state).visit_map(map).map(|()| None)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Option<String>, A::Error> {
        Walk(self.state).visit_enum(data).map(|()| None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, usize, usize)> {
        duplicate_keys(text)
            .found
            .into_iter()
            .map(|d| (d.path, d.document, d.line))
            .collect()
    }

    #[test]
    fn a_text_without_duplicates_has_none() {
        assert_eq!(
            duplicate_keys("a: 1\nb: {a: 1, b: [x, {a: 2}]}\n"),
            Duplicates::default()
        );
    }

    #[test]
    fn names_path_document_and_line_of_each_duplicate() {
        let text =
            "a: 1\nspec:\n  x: 1\n  items:\n  - name: a\n    name: b\n  x: 2\n---\nk: 1\nk: 2\n";
        assert_eq!(
            found(text),
            [
                ("spec.items[0].name".to_owned(), 1, 6),
                ("spec.x".to_owned(), 1, 7),
                ("k".to_owned(), 2, 10),
            ]
        );
    }

    #[test]
    fn lists_at_most_a_bounded_number() {
        let text = "k: 1\n".repeat(MAX_REPORTED + 5);
        let duplicates = duplicate_keys(&text);
        assert_eq!(duplicates.found.len(), MAX_REPORTED);
        assert!(duplicates.more);
        assert_eq!(duplicates.found[0].line, 2);
        assert_eq!(duplicates.found[MAX_REPORTED - 1].line, MAX_REPORTED + 1);
    }

    #[test]
    fn malformed_text_is_left_to_the_parser() {
        assert_eq!(duplicate_keys("a: [\n"), Duplicates::default());
    }
}
