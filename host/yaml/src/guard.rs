//! Refusing hostile YAML before it is parsed for real: flow nesting so deep
//! that the parser (libyaml's scanner, under `serde_yaml_ng`) would take
//! quadratic time to reach its own depth refusal, texts of so many nodes
//! that loading them takes gigabytes, and aliases that expand a small text
//! into gigabytes.
//!
//! [`check`] runs in time linear in the text and in memory bounded by its
//! nesting and anchors (it streams parse events and keeps none), and lets
//! through every text whose refusal is not its business: a syntax error
//! is left for the real parse to report. It also bounds the number of
//! parse events ([`MAX_EVENTS`]), which is what the real parse costs in
//! memory before any value is built.

use std::collections::HashMap;
use std::ops::ControlFlow;

use libyaml_safer::EventData;

/// The deepest nesting of flow collections (`[` and `{`) accepted. The
/// parser refuses anything nested over 128 levels anyway; this only keeps
/// it from spending quadratic time before it does.
pub const MAX_FLOW_DEPTH: usize = 256;

/// The most parse events (nodes, aliases, and the ends of collections and
/// documents) a text may have: 2,097,152. YAML's loader keeps every event
/// of a document before it builds a value, at up to 130 times the bytes of
/// the text for one-letter flow-list items, so this bounds the memory a
/// text can cost whatever its shape (about 300 MiB at worst); a real
/// Kubernetes object takes 10 to 20 bytes of text a node.
pub const MAX_EVENTS: u64 = 1 << 21;

/// The expanded size, through aliases, that any text may reach: 64 MiB.
pub const MIN_EXPANDED_BUDGET: u64 = 64 << 20;

/// The expanded size no text may pass, however long: 512 MiB.
pub const MAX_EXPANDED_BUDGET: u64 = 512 << 20;

/// How many times its own length a text may expand to, if that is more
/// than [`MIN_EXPANDED_BUDGET`] (and at most [`MAX_EXPANDED_BUDGET`]).
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
    /// The text has more parse events than [`MAX_EVENTS`].
    #[error(
        "YAML text has more than {limit} nodes (scalars, collections and aliases); \
         refusing it before it is loaded"
    )]
    TooManyNodes {
        /// The limit.
        limit: u64,
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
        .clamp(MIN_EXPANDED_BUDGET, MAX_EXPANDED_BUDGET)
}

/// Checks `text` for excessive flow nesting, then for more than
/// [`MAX_EVENTS`] parse events or alias expansion past [`expanded_budget`].
pub fn check(text: &str) -> Result<(), Refusal> {
    check_flow_depth(text, MAX_FLOW_DEPTH)?;
    check_events(text, MAX_EVENTS, expanded_budget(text.len()))
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
    check_events(text, u64::MAX, budget)
}

/// Refuses a text of more than `max_events` parse events, or whose
/// documents, with every alias expanded, count more than `budget` bytes
/// ([`NODE_COST`] a node plus its scalar's bytes).
///
/// The events are streamed from a port of libyaml, the parser
/// `serde_yaml_ng` runs, one at a time: the check keeps only the open
/// collections and the expanded size of each anchor, so it runs in time
/// linear in the text and in memory bounded by its nesting and anchors.
/// A text the parser refuses is let through at its first error: the real
/// parse, with the same grammar, stops there too and reports it in its own
/// words, having loaded no more events than were counted.
pub fn check_events(text: &str, max_events: u64, budget: u64) -> Result<(), Refusal> {
    // Read through a small buffer: the parser's reader keeps what it was
    // handed as characters, so a whole text at once would cost six times
    // its size.
    //
    // The port panics where a block scalar's last line ends the text (C
    // libyaml pads its buffer at the end; the port does not), so the text
    // is read with a final line break: that changes no event, and at most
    // one byte of a kept (`|+`) scalar's size.
    let ending: &[u8] = if text.ends_with('\n') { b"" } else { b"\n" };
    let mut parser = libyaml_safer::Parser::new();
    parser.set_input(std::io::BufReader::new(std::io::Read::chain(
        text.as_bytes(),
        ending,
    )));
    let mut tally = Tally::new(max_events, budget);
    for event in parser {
        let Ok(event) = event else {
            return Ok(());
        };
        if tally.add(event.data)?.is_break() {
            return Ok(());
        }
    }
    Ok(())
}

/// The running count of [`check_events`].
struct Tally {
    events: u64,
    max_events: u64,
    /// The expanded size so far, in the text's order.
    expanded: u64,
    budget: u64,
    /// The open collections: each one's anchor and the expanded size when
    /// it opened.
    open: Vec<(Option<String>, u64)>,
    /// The expanded size of each anchored node, by anchor (a later
    /// anchor of the same name replaces it, as in YAML).
    anchors: HashMap<String, u64>,
}

impl Tally {
    fn new(max_events: u64, budget: u64) -> Tally {
        Tally {
            events: 0,
            max_events,
            expanded: 0,
            budget,
            open: Vec::new(),
            anchors: HashMap::new(),
        }
    }

    /// Counts one event; `Break` when the rest is the real parser's to
    /// report (an alias to no anchor).
    fn add(&mut self, event: EventData) -> Result<ControlFlow<()>, Refusal> {
        self.events += 1;
        if self.events > self.max_events {
            return Err(Refusal::TooManyNodes {
                limit: self.max_events,
            });
        }
        match event {
            EventData::Scalar { anchor, value, .. } => {
                let start = self.expanded;
                self.charge(NODE_COST.saturating_add(value.len() as u64))?;
                if let Some(anchor) = anchor {
                    self.anchors.insert(anchor, self.expanded - start);
                }
            }
            EventData::SequenceStart { anchor, .. } | EventData::MappingStart { anchor, .. } => {
                self.open.push((anchor, self.expanded));
                self.charge(NODE_COST)?;
            }
            EventData::SequenceEnd | EventData::MappingEnd => {
                if let Some((Some(anchor), start)) = self.open.pop() {
                    self.anchors.insert(anchor, self.expanded - start);
                }
            }
            EventData::Alias { anchor } => match self.anchors.get(&anchor) {
                Some(&size) => self.charge(size)?,
                None => return Ok(ControlFlow::Break(())),
            },
            EventData::StreamStart { .. }
            | EventData::StreamEnd
            | EventData::DocumentStart { .. }
            | EventData::DocumentEnd { .. } => {}
        }
        Ok(ControlFlow::Continue(()))
    }

    fn charge(&mut self, cost: u64) -> Result<(), Refusal> {
        self.expanded = self.expanded.saturating_add(cost);
        if self.expanded > self.budget {
            return Err(Refusal::TooLarge { limit: self.budget });
        }
        Ok(())
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
    fn a_text_ending_without_a_line_break_is_checked_without_a_panic() {
        // The scanner libyaml-safer ports panics ("unexpected end of input")
        // on a block scalar's last line when no line break follows it, as in
        // function-go-templating's own examples.
        for text in [
            "a: |\n  x",
            "a: |\n  x\n\n  y",
            "t: |\n  k:\n    v: {{ x }}\n\n  p:\n    n: m",
            "a: >-\n  x",
            "- |+\n  x",
            "a: b",
            "",
        ] {
            assert!(check_expansion(text, 1000).is_ok(), "{text:?}");
            assert!(check_events(text, 1000, 1000).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn every_prefix_of_a_text_is_checked_without_a_panic() {
        let text = "a: |\n  x: {{ y }}\n\n  z\nb: >-\n  w\nc: [d, 'e', \"f\"]\n\
                    g: &h {i: j}\nk: *h\n- l\n? m\n: n\n'o': |+\n  p\n\n---\nq\n...\n";
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let prefix = &text[..end];
            assert!(check_events(prefix, 1000, 100_000).is_ok(), "{prefix:?}");
        }
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
    fn node_count_is_bounded() {
        let items = |n: usize| format!("[{}]\n", vec!["a"; n].join(","));
        // n scalars, the sequence's start and end, and the stream's and
        // document's start and end.
        assert!(check_events(&items(10), 16, u64::MAX).is_ok());
        assert_eq!(
            check_events(&items(11), 16, u64::MAX),
            Err(Refusal::TooManyNodes { limit: 16 })
        );
        // Block sequences count alike.
        let block = "- a\n".repeat(20);
        assert!(check_events(&block, 16, u64::MAX).is_err());
    }

    #[test]
    fn anchors_are_charged_at_their_expanded_size() {
        // Each level doubles the one before: 2^20 nodes from 21 lines.
        let mut text = String::from("a0: &a0 [x, y]\n");
        for i in 1..=20 {
            text.push_str(&format!("a{i}: &a{i} [*a{}, *a{}]\n", i - 1, i - 1));
        }
        assert_eq!(
            check_expansion(&text, 1 << 20),
            Err(Refusal::TooLarge { limit: 1 << 20 })
        );
        assert!(check_expansion(&text, 1 << 30).is_ok());
        // A redefined anchor counts at its latest size.
        let redefined = "a: &x [1, 2, 3, 4, 5, 6, 7, 8]\nb: &x 1\nc: [*x, *x, *x, *x, *x, *x]\n";
        assert!(check_expansion(redefined, 800).is_ok());
        assert!(check_expansion(redefined, 600).is_err());
        // An alias to no anchor is the real parser's to report.
        assert!(check_expansion("a: *nowhere\n", 100).is_ok());
    }

    #[test]
    fn the_expanded_budget_is_clamped() {
        assert_eq!(expanded_budget(0), MIN_EXPANDED_BUDGET);
        assert_eq!(expanded_budget(4 << 20), 160 << 20);
        assert_eq!(expanded_budget(64 << 20), MAX_EXPANDED_BUDGET);
    }

    #[test]
    fn tagged_nodes_are_counted() {
        let text = "a: !custom &a [x, y]\nb: [*a, *a, *a]\n";
        assert!(check_expansion(text, 10_000).is_ok());
        assert!(check_expansion(text, 100).is_err());
    }
}
