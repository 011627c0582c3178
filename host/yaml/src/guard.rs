//! Refusing hostile YAML before it is parsed for real: flow nesting so deep
//! that the parser (libyaml's scanner, under `serde_yaml_ng`) would take
//! quadratic time to reach its own depth refusal, and aliases that expand a
//! small text into gigabytes.
//!
//! [`check`] runs in time linear in the text (the alias budget bounds the
//! work of its counting pass too), allocates nothing per node, and lets
//! through every text whose refusal is not its business: a syntax error
//! is left for the real parse to report.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

/// The deepest nesting of flow collections (`[` and `{`) accepted. The
/// parser refuses anything nested over 128 levels anyway; this only keeps
/// it from spending quadratic time before it does.
pub const MAX_FLOW_DEPTH: usize = 256;

/// The expanded size, through aliases, that any text may reach: 64 MiB.
pub const MIN_EXPANDED_BUDGET: u64 = 64 << 20;

/// How many times its own length a text may expand to, if that is more
/// than [`MIN_EXPANDED_BUDGET`].
pub const EXPANSION_FACTOR: u64 = 40;

/// What each node counts for in the expanded size, besides its scalar's
/// bytes (roughly what a parsed node takes in memory).
pub const NODE_COST: u64 = 32;

/// Why a YAML text is refused before parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Flow collections nested deeper than [`MAX_FLOW_DEPTH`].
    #[error("YAML flow collections ([ or {{) nested more than {limit} levels deep at line {line}")]
    TooDeep {
        /// The 1-based line where the limit was passed.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// Aliases expand the text past its budget.
    #[error(
        "YAML aliases expand the document to more than {limit} bytes \
         (a node counts {NODE_COST} bytes plus its scalar); refusing it"
    )]
    TooLarge {
        /// The budget, in bytes.
        limit: u64,
    },
}

/// The expanded-size budget of a text of `len` bytes.
pub fn expanded_budget(len: usize) -> u64 {
    (len as u64)
        .saturating_mul(EXPANSION_FACTOR)
        .max(MIN_EXPANDED_BUDGET)
}

/// Checks `text` for excessive flow nesting, then for alias expansion past
/// [`expanded_budget`].
pub fn check(text: &str) -> Result<(), Refusal> {
    check_flow_depth(text, MAX_FLOW_DEPTH)?;
    check_expansion(text, expanded_budget(text.len()))
}

/// Refuses flow collections nested deeper than `limit`, in one pass.
///
/// The scan follows YAML's tokens closely enough for real documents: it
/// skips comments and block scalars, and brackets in quoted scalars. A
/// closing bracket never counts below zero, so closing brackets in strings
/// cannot hide nesting from it. A quote that may be the middle of a plain
/// scalar instead (one begun on a less indented line, or earlier on its
/// own line) may not start a string at all: its opening brackets count
/// until it closes, so that a misread quote hides no nesting.
pub fn check_flow_depth(text: &str, limit: usize) -> Result<(), Refusal> {
    let mut scan = Scan::default();
    for (line_index, line) in text.split('\n').enumerate() {
        scan.line(
            line,
            || Refusal::TooDeep {
                line: line_index + 1,
                limit,
            },
            limit,
        )?;
    }
    Ok(())
}

/// Where the depth scan is, across lines.
#[derive(Default)]
struct Scan {
    depth: usize,
    quote: Option<u8>,
    /// Whether the current quote surely starts a string: no plain scalar
    /// was open where it appeared.
    quote_is_sure: bool,
    /// Opening brackets seen inside the current quoted scalar.
    quoted_opens: usize,
    /// While a plain scalar may be open: the indentation of the line it
    /// began on (deeper lines may continue it).
    plain: Option<usize>,
    /// The indentation of the line that opened a block scalar, while in one.
    block_scalar: Option<usize>,
}

impl Scan {
    fn line(
        &mut self,
        line: &str,
        refusal: impl Fn() -> Refusal,
        limit: usize,
    ) -> Result<(), Refusal> {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = self.block_scalar {
            let blank = bytes.iter().all(|b| b.is_ascii_whitespace());
            if blank || indent > parent {
                return Ok(());
            }
            self.block_scalar = None;
        }
        if self.quote.is_none() && self.plain.is_some_and(|began| indent <= began) {
            let blank = bytes.iter().all(|b| b.is_ascii_whitespace());
            if !blank {
                self.plain = None;
            }
        }
        // Whether the next byte starts a token (and not the middle of a
        // plain scalar).
        let mut token_start = self.quote.is_none();
        let mut prev = b' ';
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if let Some(q) = self.quote {
                match b {
                    b'\\' if q == b'"' => i += 1,
                    b'[' | b'{' if !self.quote_is_sure => {
                        self.quoted_opens += 1;
                        if self.depth + self.quoted_opens > limit {
                            return Err(refusal());
                        }
                    }
                    _ if b == q => {
                        if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            self.quote = None;
                            self.quoted_opens = 0;
                            self.plain = None;
                            token_start = false;
                        }
                    }
                    _ => {}
                }
                prev = b;
                i += 1;
                continue;
            }
            match b {
                b'#' if prev == b' ' || prev == b'\t' => return Ok(()),
                b' ' | b'\t' | b'\r' => {}
                b'[' | b'{' if token_start || self.depth > 0 => {
                    self.open(&refusal, limit)?;
                    self.plain = None;
                    token_start = true;
                }
                b']' | b'}' if self.depth > 0 => {
                    self.depth -= 1;
                    self.plain = None;
                }
                b',' if self.depth > 0 => {
                    self.plain = None;
                    token_start = true;
                }
                b'"' | b'\'' if token_start => {
                    self.quote = Some(b);
                    self.quote_is_sure = self.plain.is_none();
                }
                b'|' | b'>' if token_start && self.depth == 0 => {
                    let rest = &bytes[i + 1..];
                    let header = rest
                        .iter()
                        .take_while(|c| matches!(c, b'-' | b'+' | b'0'..=b'9'))
                        .count();
                    let after = rest.get(header).copied();
                    if matches!(after, None | Some(b' ' | b'\t' | b'\r')) {
                        self.block_scalar = Some(indent);
                        self.plain = None;
                        return Ok(());
                    }
                    token_start = false;
                }
                b':' | b'-' | b'?'
                    if matches!(bytes.get(i + 1), None | Some(b' ' | b'\t' | b'\r')) =>
                {
                    // `- ` and `? ` may be the middle of a plain scalar.
                    if b == b':' {
                        self.plain = None;
                    }
                    token_start = true;
                }
                b':' if self.depth > 0 => {
                    self.plain = None;
                    token_start = true;
                }
                _ => {
                    if token_start && self.plain.is_none() {
                        self.plain = Some(indent);
                    }
                    token_start = false;
                }
            }
            prev = b;
            i += 1;
        }
        Ok(())
    }

    fn open(&mut self, refusal: &impl Fn() -> Refusal, limit: usize) -> Result<(), Refusal> {
        self.depth += 1;
        if self.depth > limit {
            return Err(refusal());
        }
        Ok(())
    }
}

/// Refuses a text whose documents, with every alias expanded, count more
/// than `budget` bytes. The count stops as soon as the budget is spent.
pub fn check_expansion(text: &str, budget: u64) -> Result<(), Refusal> {
    let left = Cell::new(budget);
    let exceeded = Cell::new(false);
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let counted = Count {
            left: &left,
            exceeded: &exceeded,
        }
        .deserialize(document);
        if exceeded.get() {
            return Err(Refusal::TooLarge { limit: budget });
        }
        if counted.is_err() {
            // Malformed: the real parse reports it, with its own words.
            return Ok(());
        }
    }
    Ok(())
}

/// Walks a document as a value would be built, charging each node.
#[derive(Clone, Copy)]
struct Count<'a> {
    left: &'a Cell<u64>,
    exceeded: &'a Cell<bool>,
}

impl Count<'_> {
    fn charge<E: de::Error>(self, scalar: usize) -> Result<(), E> {
        let cost = NODE_COST.saturating_add(scalar as u64);
        match self.left.get().checked_sub(cost) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exceeded.set(true);
                Err(E::custom("the expanded-size budget is spent"))
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.charge(s.len())
    }

    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<(), E> {
        self.charge(b.len())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.charge(0)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.charge(0)?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.charge(0)?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged node (`!tag value`): the tag, then the value.
        let ((), variant) = data.variant_seed(self)?;
        variant.newtype_variant_seed(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> Result<(), Refusal> {
        check_flow_depth(text, 3)
    }

    #[test]
    fn counts_flow_nesting() {
        assert!(depth("a: [[[x]]]\n").is_ok());
        assert_eq!(
            depth("a: 1\nb: [[[[x]]]]\n"),
            Err(Refusal::TooDeep { line: 2, limit: 3 })
        );
        assert!(depth("[[[x]]]\n[[[y]]]\n{a: {b: {c: 1}}}\n").is_ok());
    }

    #[test]
    fn ignores_brackets_in_scalars_and_comments() {
        assert!(depth("a: foo[[[[bar\n").is_ok());
        assert!(depth("a: \"]]]]\" # [[[[\nb: '[['\n").is_ok());
        assert!(depth("a: |\n  [[[[\n  {{{{\nb: >-\n  [[[[\n").is_ok());
        assert!(depth("a: it's [[[[ fine\n").is_ok());
        assert!(depth("a: [it's, 'don''t', \"\\\"\"]\n").is_ok());
    }

    #[test]
    fn closing_brackets_in_quotes_hide_nothing() {
        assert!(depth("[[\"]]]]\" [[[x]]]]]\n").is_err());
        // A quote that may be the middle of a plain scalar (continued on a
        // deeper line, or after `- ` on its line) hides no nesting.
        assert!(depth("a: foo\n  'x\n[[[[\n'\n").is_err());
        assert!(depth("a: foo - 'x\n[[[[\n'\n").is_err());
        assert!(depth("[foo\n 'x [[[[[\n").is_err());
        assert!(depth("[foo\n - 'x [[[[[\n").is_err());
    }

    #[test]
    fn quoted_scalars_full_of_brackets_load() {
        assert!(depth("a: 'x[[[[[[[[[[{{{{{'\n").is_ok());
        assert!(depth("a: 'x\n  [[[[[[[[[[\n  {{{{{'\n").is_ok());
        assert!(depth("- foo\n- \"[[[[[[[[[[\n  [[[[\"\n").is_ok());
        assert!(depth("\"[[[[[[[[\n  [[[[[[\"\n").is_ok());
        assert!(depth("a: [x, '[[[[[[[[', {b: \"{{{{{{{{{\"}]\n").is_ok());
    }

    #[test]
    fn expansion_is_budgeted() {
        let text = "a: &a [x, y, z]\nb: [*a, *a, *a, *a]\n";
        assert!(check_expansion(text, 1000).is_ok());
        assert_eq!(
            check_expansion(text, 200),
            Err(Refusal::TooLarge { limit: 200 })
        );
        // A syntax error is the real parser's to report.
        assert!(check_expansion("a: [\n", 1000).is_ok());
    }

    #[test]
    fn tagged_nodes_are_counted() {
        let text = "a: !custom &a [x, y]\nb: [*a, *a, *a]\n";
        assert!(check_expansion(text, 10_000).is_ok());
        assert!(check_expansion(text, 100).is_err());
    }
}
