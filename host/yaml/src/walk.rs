//! The tree walker: turns a JSON value into go-yaml's block layout, driving
//! the [`Emitter`] as go-yaml's event state machine would. It keeps its own
//! stack, so deep nesting cannot overflow the call stack.

use serde_json::Value;

use crate::emitter::Emitter;
use crate::keys::sort_entries;
use crate::number::number_scalar;
use crate::scalar::write_scalar;
use crate::style::{Style, analyze, requested_string_style, select_style};

/// Longest key, in bytes, that go-yaml writes as a simple `key: value` key.
const MAX_SIMPLE_KEY_LEN: usize = 128;

/// A collection being written.
enum Frame<'a> {
    Sequence(std::slice::Iter<'a, Value>),
    Mapping(std::vec::IntoIter<(&'a String, &'a Value)>),
}

/// Writes one scalar node; `string` tells whether it came from a Go string
/// (other scalars are always asked for plain).
fn emit_scalar(e: &mut Emitter, value: &str, string: bool, simple_key: bool) {
    let requested = if string {
        requested_string_style(value)
    } else {
        Style::Plain
    };
    let style = select_style(requested, &analyze(value), simple_key);
    e.increase_indent(true, false);
    write_scalar(e, value, style, !simple_key);
    e.decrease_indent();
}

/// Writes a node; collections are pushed on `stack` for their entries.
fn emit_node<'a>(e: &mut Emitter, stack: &mut Vec<Frame<'a>>, node: &'a Value, mapping: bool) {
    match node {
        Value::Null => emit_scalar(e, "null", false, false),
        Value::Bool(b) => emit_scalar(e, if *b { "true" } else { "false" }, false, false),
        Value::Number(n) => emit_scalar(e, &number_scalar(n), false, false),
        Value::String(s) => emit_scalar(e, s, true, false),
        Value::Array(items) if items.is_empty() => emit_empty(e, "[", "]"),
        Value::Object(map) if map.is_empty() => emit_empty(e, "{", "}"),
        Value::Array(items) => {
            // A sequence that is a mapping value stays at the key's indentation.
            let indentless = mapping && !e.indention;
            e.increase_indent(false, indentless);
            stack.push(Frame::Sequence(items.iter()));
        }
        Value::Object(map) => {
            e.increase_indent(false, false);
            let entries = sort_entries(map.iter().collect());
            stack.push(Frame::Mapping(entries.into_iter()));
        }
    }
}

/// An empty collection, written in flow style.
fn emit_empty(e: &mut Emitter, open: &str, close: &str) {
    e.write_indicator(open, true, true, false);
    e.write_indicator(close, false, false, false);
}

/// Writes a mapping entry.
fn emit_entry<'a>(e: &mut Emitter, stack: &mut Vec<Frame<'a>>, key: &str, value: &'a Value) {
    e.write_indent();
    let simple = !analyze(key).multiline && key.len() <= MAX_SIMPLE_KEY_LEN;
    if simple {
        emit_scalar(e, key, true, true);
        e.write_indicator(":", false, false, false);
    } else {
        e.write_indicator("?", true, false, true);
        emit_scalar(e, key, true, false);
        e.write_indent();
        e.write_indicator(":", true, false, true);
    }
    emit_node(e, stack, value, true);
}

/// Writes `root` as one YAML document (without `---`), ending with a newline.
pub(crate) fn write_document(out: &mut String, root: &Value) {
    let mut e = Emitter::new();
    let mut stack = Vec::new();
    emit_node(&mut e, &mut stack, root, false);
    while let Some(frame) = stack.last_mut() {
        match frame {
            Frame::Sequence(items) => match items.next() {
                Some(item) => {
                    e.write_indent();
                    e.write_indicator("-", true, false, true);
                    emit_node(&mut e, &mut stack, item, false);
                }
                None => {
                    e.decrease_indent();
                    stack.pop();
                }
            },
            Frame::Mapping(entries) => match entries.next() {
                Some((key, value)) => emit_entry(&mut e, &mut stack, key, value),
                None => {
                    e.decrease_indent();
                    stack.pop();
                }
            },
        }
    }
    // Document end: finish the last line.
    e.write_indent();
    out.push_str(&e.into_output());
}
