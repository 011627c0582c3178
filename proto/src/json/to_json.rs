//! Protobuf `Struct` bytes to JSON object text, read straight off the wire.
//!
//! Each object's entries are collected as slices of the bytes, sorted by
//! key and written; nested objects and lists are read the same way when
//! their turn comes. Nothing is decoded into a tree.

use bytes::Buf as _;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};

use super::{JsonError, MAX_JSON_DEPTH, TextPool};

/// Largest magnitude up to which every integer is exactly an `f64` (2^53).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Stack kept free below each level of nesting; the stack grows by
/// [`STACK_GROWTH`] when less is left.
pub(super) const STACK_RED_ZONE: usize = 64 << 10;
pub(super) const STACK_GROWTH: usize = 1 << 20;

/// Writes the object whose map entries are `entries` (each an entry
/// message's bytes), into a buffer of `pool`'s if one is given. The sort
/// index is the one this thread keeps (see [`super::reuse`]).
pub(super) fn write(
    entries: &[bytes::Bytes],
    pool: Option<&TextPool>,
) -> Result<String, JsonError> {
    let size: usize = entries.iter().map(|e| e.len()).sum();
    // JSON text is about as long as the protobuf bytes it comes from.
    let capacity = size + size / 8 + 2;
    let mut writer = Writer {
        sources: entries,
        out: match pool {
            Some(pool) => pool.take(capacity),
            None => Vec::with_capacity(capacity),
        },
        depth: 0,
        entries: super::reuse::take_index(),
    };
    let written = writer.top();
    super::reuse::keep_index(std::mem::take(&mut writer.entries));
    written?;
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

/// A map entry, by where it lies: which of the Struct's top-level entries
/// holds it ([`Writer::sources`]), and the offsets of its bytes and its
/// key's in that entry's buffer. Plain numbers, with no borrow, so that a
/// thread's index outlives one conversion (see [`super::reuse`]).
#[derive(Clone, Copy)]
pub(super) struct Entry {
    source: u32,
    start: u32,
    len: u32,
    key_start: u32,
    key_len: u32,
}

/// An offset or length as an [`Entry`] holds it. A gRPC message is under
/// 4 GiB (its length prefix has 32 bits), so every Struct it carries fits.
fn narrow(n: usize) -> Result<u32, JsonError> {
    u32::try_from(n).map_err(|_| malformed("a map entry lies past 4 GiB"))
}

/// Where `inner`, a slice of `outer`, starts in it.
fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    let offset = (inner.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
    debug_assert!(
        offset + inner.len() <= outer.len(),
        "a slice of another buffer"
    );
    offset
}

impl Entry {
    /// Reads the key of the entry message `bytes`, a slice of the
    /// top-level entry `source`'s buffer `outer`.
    fn read(source: u32, outer: &[u8], bytes: &[u8]) -> Result<Self, JsonError> {
        // No key field: the empty key, at the entry's start.
        let mut key = &bytes[..0];
        for_each_field(bytes, |tag, field| {
            match (tag, field) {
                (1, Field::Bytes(k)) => key = k,
                (2, Field::Bytes(_)) => {}
                (1 | 2, _) => return Err(wrong_wire_type("a Struct map entry", tag)),
                _ => {}
            }
            Ok(())
        })?;
        Ok(Entry {
            source,
            start: narrow(offset_in(outer, bytes))?,
            len: narrow(bytes.len())?,
            key_start: narrow(offset_in(outer, key))?,
            key_len: narrow(key.len())?,
        })
    }

    /// The entry message's bytes, in `sources`, the Struct's top-level
    /// entries it was read from.
    fn bytes<'a>(&self, sources: &'a [bytes::Bytes]) -> &'a [u8] {
        &sources[self.source as usize][self.start as usize..][..self.len as usize]
    }

    /// The entry's key, in `sources`.
    fn key<'a>(&self, sources: &'a [bytes::Bytes]) -> &'a [u8] {
        &sources[self.source as usize][self.key_start as usize..][..self.key_len as usize]
    }

    /// The entry's value, in `sources`: every `value` field, merged.
    fn value<'a>(&self, sources: &'a [bytes::Bytes]) -> Result<Parts<'a>, JsonError> {
        let mut value = Parts::default();
        for_each_field(self.bytes(sources), |tag, field| {
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
    /// The Struct's top-level entries, which every [`Entry`] points into.
    sources: &'a [bytes::Bytes],
    out: Vec<u8>,
    depth: usize,
    /// The entries of the objects being written, outermost first: each
    /// object's entries are pushed, sorted and written, then popped.
    entries: Vec<Entry>,
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

    /// Writes the object of the top-level entries.
    fn top(&mut self) -> Result<(), JsonError> {
        let sources = self.sources;
        self.entries.reserve(sources.len());
        for (source, bytes) in sources.iter().enumerate() {
            self.entries
                .push(Entry::read(narrow(source)?, bytes, bytes)?);
        }
        self.object(0)
    }

    /// Writes the object whose entries are `self.entries[base..]`, and
    /// pops them.
    fn object(&mut self, base: usize) -> Result<(), JsonError> {
        self.enter()?;
        let end = self.entries.len();
        // Entries with the same key stay in the order they came in (their
        // bytes' order in the message), so the last can win.
        let sources = self.sources;
        self.entries[base..end].sort_unstable_by(|a, b| {
            a.key(sources)
                .cmp(b.key(sources))
                .then_with(|| (a.source, a.start).cmp(&(b.source, b.start)))
        });
        self.out.push(b'{');
        let mut first = true;
        for i in base..end {
            let entry = self.entries[i];
            let key = entry.key(sources);
            if i + 1 < end && self.entries[i + 1].key(sources) == key {
                continue; // a later entry with this key wins
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            let key = std::str::from_utf8(key).map_err(|_| malformed("a key is not UTF-8"))?;
            self.string(key);
            self.out.push(b':');
            self.value(entry.source, &entry.value(sources)?)?;
        }
        self.out.push(b'}');
        self.entries.truncate(base);
        self.depth -= 1;
        Ok(())
    }

    /// Writes a list whose bytes lie in the top-level entry `source`.
    fn list(&mut self, source: u32, parts: &Parts<'a>) -> Result<(), JsonError> {
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
                        self.value(source, &Parts::one(item))?;
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

    /// Writes a value whose bytes lie in the top-level entry `source`.
    fn value(&mut self, source: u32, parts: &Parts<'a>) -> Result<(), JsonError> {
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
                // The index is kept from call to call, so it seldom grows.
                let base = self.entries.len();
                let outer: &'a [u8] = &self.sources[source as usize];
                for_each_entry(&parts, |bytes| {
                    self.entries.push(Entry::read(source, outer, bytes)?);
                    Ok(())
                })?;
                stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.object(base))?;
            }
            Kind::List(parts) => {
                stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.list(source, &parts))?;
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
