//! Protobuf `Struct` bytes to JSON object text, read straight off the wire.
//!
//! Each object's entries are collected as slices of the bytes, sorted by
//! key and written; nested objects and lists are read the same way when
//! their turn comes. Nothing is decoded into a tree.

use bytes::Buf as _;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};

use super::{JsonError, MAX_JSON_DEPTH};

/// Largest magnitude up to which every integer is exactly an `f64` (2^53).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Stack kept free below each level of nesting; the stack grows by
/// [`STACK_GROWTH`] when less is left.
pub(super) const STACK_RED_ZONE: usize = 64 << 10;
pub(super) const STACK_GROWTH: usize = 1 << 20;

/// Writes the object whose map entries are `entries` (each an entry
/// message's bytes).
pub(super) fn write(entries: &[bytes::Bytes]) -> Result<String, JsonError> {
    let size: usize = entries.iter().map(|e| e.len()).sum();
    // JSON text is about as long as the protobuf bytes it comes from.
    let mut writer = Writer {
        out: Vec::with_capacity(size + size / 8 + 2),
        depth: 0,
        entries: Vec::with_capacity(entries.len()),
    };
    for entry in entries {
        writer.entries.push(Entry::read(entry)?);
    }
    writer.object(0)?;
    // Every string written was checked to be UTF-8.
    String::from_utf8(writer.out).map_err(|e| JsonError::new(e.to_string()))
}

/// A message's bytes, possibly in several parts: protobuf merges a message
/// field that occurs more than once as if its bytes were concatenated.
#[derive(Default)]
struct Parts<'a> {
    first: Option<&'a [u8]>,
    rest: Vec<&'a [u8]>,
}

impl<'a> Parts<'a> {
    fn one(part: &'a [u8]) -> Self {
        Parts {
            first: Some(part),
            rest: Vec::new(),
        }
    }

    fn push(&mut self, part: &'a [u8]) {
        if self.first.is_none() {
            self.first = Some(part);
        } else {
            self.rest.push(part);
        }
    }

    fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.first.into_iter().chain(self.rest.iter().copied())
    }
}

/// One field's payload.
enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

fn malformed(e: impl std::fmt::Display) -> JsonError {
    JsonError::new(format!("malformed google.protobuf.Struct: {e}"))
}

fn wrong_wire_type(message: &str, tag: u32) -> JsonError {
    malformed(format!("field {tag} of {message} has the wrong wire type"))
}

/// Calls `f` with each field of a message's bytes; fields of wire types
/// that no Struct message uses are skipped.
fn for_each_field<'a>(
    mut bytes: &'a [u8],
    mut f: impl FnMut(u32, Field<'a>) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    while !bytes.is_empty() {
        let (tag, wire_type) = decode_key(&mut bytes).map_err(malformed)?;
        let field = match wire_type {
            WireType::Varint => Field::Varint(decode_varint(&mut bytes).map_err(malformed)?),
            WireType::SixtyFourBit => {
                if bytes.len() < 8 {
                    return Err(malformed("a 64-bit field is cut short"));
                }
                Field::Fixed64(bytes.get_u64_le())
            }
            WireType::LengthDelimited => {
                let len = decode_varint(&mut bytes).map_err(malformed)?;
                let len = usize::try_from(len)
                    .ok()
                    .filter(|len| *len <= bytes.len())
                    .ok_or_else(|| malformed("a length-delimited field is cut short"))?;
                let (payload, rest) = bytes.split_at(len);
                bytes = rest;
                Field::Bytes(payload)
            }
            other => {
                skip_field(other, tag, &mut bytes, DecodeContext::default()).map_err(malformed)?;
                continue;
            }
        };
        f(tag, field)?;
    }
    Ok(())
}

/// A map entry: its key, and its bytes for the value to be read from.
#[derive(Clone, Copy)]
struct Entry<'a> {
    key: &'a str,
    bytes: &'a [u8],
}

impl<'a> Entry<'a> {
    /// Reads the key of an entry message.
    fn read(bytes: &'a [u8]) -> Result<Self, JsonError> {
        let mut key: &[u8] = b"";
        for_each_field(bytes, |tag, field| {
            match (tag, field) {
                (1, Field::Bytes(k)) => key = k,
                (2, Field::Bytes(_)) => {}
                (1 | 2, _) => return Err(wrong_wire_type("a Struct map entry", tag)),
                _ => {}
            }
            Ok(())
        })?;
        let key = std::str::from_utf8(key).map_err(|_| malformed("a key is not UTF-8"))?;
        Ok(Entry { key, bytes })
    }

    /// The value's bytes: every `value` field, merged.
    fn value(&self) -> Result<Parts<'a>, JsonError> {
        let mut value = Parts::default();
        for_each_field(self.bytes, |tag, field| {
            if let (2, Field::Bytes(v)) = (tag, field) {
                value.push(v);
            }
            Ok(())
        })?;
        Ok(value)
    }
}

/// Calls `f` with each map entry's bytes in a Struct's parts.
fn for_each_entry<'a>(
    parts: &Parts<'a>,
    mut f: impl FnMut(&'a [u8]) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    for part in parts.iter() {
        for_each_field(part, |tag, field| match (tag, field) {
            (1, Field::Bytes(entry)) => f(entry),
            (1, _) => Err(wrong_wire_type("google.protobuf.Struct", tag)),
            _ => Ok(()),
        })?;
    }
    Ok(())
}

/// What a `google.protobuf.Value` holds: the last of its `kind` fields.
enum Kind<'a> {
    Null,
    Number(f64),
    String(&'a [u8]),
    Bool(bool),
    Struct(Parts<'a>),
    List(Parts<'a>),
}

fn read_value<'a>(parts: &Parts<'a>) -> Result<Kind<'a>, JsonError> {
    let mut kind = Kind::Null;
    for part in parts.iter() {
        for_each_field(part, |tag, field| {
            match (tag, field) {
                (1, Field::Varint(_)) => kind = Kind::Null,
                (2, Field::Fixed64(bits)) => kind = Kind::Number(f64::from_bits(bits)),
                (3, Field::Bytes(s)) => kind = Kind::String(s),
                (4, Field::Varint(b)) => kind = Kind::Bool(b != 0),
                // The same message field again merges into it; a
                // different one replaces it.
                (5, Field::Bytes(s)) => match &mut kind {
                    Kind::Struct(struct_parts) => struct_parts.push(s),
                    _ => kind = Kind::Struct(Parts::one(s)),
                },
                (6, Field::Bytes(l)) => match &mut kind {
                    Kind::List(list_parts) => list_parts.push(l),
                    _ => kind = Kind::List(Parts::one(l)),
                },
                (1..=6, _) => return Err(wrong_wire_type("google.protobuf.Value", tag)),
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(kind)
}

struct Writer<'a> {
    out: Vec<u8>,
    depth: usize,
    /// The entries of the objects being written, outermost first: each
    /// object's entries are pushed, sorted and written, then popped.
    entries: Vec<Entry<'a>>,
}

impl<'a> Writer<'a> {
    fn enter(&mut self) -> Result<(), JsonError> {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            return Err(JsonError::new(format!(
                "the Struct nests deeper than the limit of {MAX_JSON_DEPTH} levels"
            )));
        }
        Ok(())
    }

    /// Writes the object whose entries are `self.entries[base..]`, and
    /// pops them.
    fn object(&mut self, base: usize) -> Result<(), JsonError> {
        self.enter()?;
        let end = self.entries.len();
        // Entries with the same key stay in the order they came in (their
        // bytes' order in the message), so the last can win.
        self.entries[base..end].sort_unstable_by(|a, b| {
            a.key
                .cmp(b.key)
                .then_with(|| a.bytes.as_ptr().cmp(&b.bytes.as_ptr()))
        });
        self.out.push(b'{');
        let mut first = true;
        for i in base..end {
            let entry = self.entries[i];
            if i + 1 < end && self.entries[i + 1].key == entry.key {
                continue; // a later entry with this key wins
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.string(entry.key);
            self.out.push(b':');
            self.value(&entry.value()?)?;
        }
        self.out.push(b'}');
        self.entries.truncate(base);
        self.depth -= 1;
        Ok(())
    }

    fn list(&mut self, parts: &Parts<'a>) -> Result<(), JsonError> {
        self.enter()?;
        self.out.push(b'[');
        let mut first = true;
        for part in parts.iter() {
            for_each_field(part, |tag, field| {
                match (tag, field) {
                    (1, Field::Bytes(item)) => {
                        if !first {
                            self.out.push(b',');
                        }
                        first = false;
                        self.value(&Parts::one(item))?;
                    }
                    (1, _) => return Err(wrong_wire_type("google.protobuf.ListValue", tag)),
                    _ => {}
                }
                Ok(())
            })?;
        }
        self.out.push(b']');
        self.depth -= 1;
        Ok(())
    }

    fn value(&mut self, parts: &Parts<'a>) -> Result<(), JsonError> {
        match read_value(parts)? {
            Kind::Null => self.out.extend_from_slice(b"null"),
            Kind::Number(n) => self.number(n)?,
            Kind::String(s) => {
                let s = std::str::from_utf8(s).map_err(|_| malformed("a string is not UTF-8"))?;
                self.string(s);
            }
            Kind::Bool(b) => self
                .out
                .extend_from_slice(if b { b"true" } else { b"false" }),
            Kind::Struct(parts) => {
                let base = self.entries.len();
                let mut count = 0;
                for_each_entry(&parts, |_| {
                    count += 1;
                    Ok(())
                })?;
                self.entries.reserve(count);
                for_each_entry(&parts, |bytes| {
                    self.entries.push(Entry::read(bytes)?);
                    Ok(())
                })?;
                stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.object(base))?;
            }
            Kind::List(parts) => {
                stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.list(&parts))?;
            }
        }
        Ok(())
    }

    fn string(&mut self, s: &str) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, s);
    }

    fn number(&mut self, n: f64) -> Result<(), JsonError> {
        if !n.is_finite() {
            return Err(JsonError::new(format!(
                "the number {n} has no JSON representation"
            )));
        }
        if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
            // Exact: |n| <= 2^53 fits an i64 with no rounding.
            #[allow(clippy::cast_possible_truncation)]
            let _ = serde_json::to_writer(&mut self.out, &(n as i64));
        } else {
            let _ = serde_json::to_writer(&mut self.out, &n);
        }
        Ok(())
    }
}
