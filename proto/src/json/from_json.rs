//! JSON object text to protobuf `Struct` bytes, written straight from the
//! parser.
//!
//! Protobuf puts each nested message's length before it, so the text is
//! parsed twice: the first pass ([`measure`]) checks it and measures every
//! object and list (in the order they open), the second ([`write`]) writes
//! the bytes straight into the encoder's buffer when the message is
//! encoded. Nothing is parsed into a tree, and no copy of the encoded
//! Struct is kept.

use std::borrow::Cow;
use std::fmt;

use bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::JsonError;
use super::to_json::{STACK_GROWTH, STACK_RED_ZONE};

/// The deepest JSON nesting encoded as a Struct: the Struct must stay
/// within [`MAX_MESSAGE_DEPTH`](crate::MAX_MESSAGE_DEPTH) inside a request
/// or response, and each JSON level costs 3 message levels (Struct, map
/// entry, Value).
pub const MAX_JSON_DEPTH: usize = (crate::MAX_MESSAGE_DEPTH - 8) / 3;

/// `google.protobuf.Value` fields.
const NULL: u32 = 1;
const NUMBER: u32 = 2;
const STRING: u32 = 3;
const BOOL: u32 = 4;
const STRUCT: u32 = 5;
const LIST: u32 = 6;

/// Checks JSON object text and measures it for [`write`]: the body length
/// of every object and list in the order they open, the Struct's first.
pub(super) fn measure(text: &str) -> Result<Vec<usize>, JsonError> {
    let mut sizes = Vec::new();
    let measure = Measure {
        sizes: &mut sizes,
        depth: 0,
    };
    parse(text, measure).map_err(|e| JsonError::new(e.to_string()))?;
    if sizes.is_empty() {
        return Err(JsonError::new("expected a JSON object"));
    }
    Ok(sizes)
}

/// Writes the body of the `google.protobuf.Struct` of text that
/// [`measure`] measured as `sizes`.
pub(super) fn write<B: BufMut>(text: &str, sizes: &[usize], out: &mut B) -> Result<(), JsonError> {
    let mut next = 0;
    parse(
        text,
        Write {
            out,
            sizes,
            next: &mut next,
            prefix: Prefix::Root,
        },
    )
    .map_err(|e| JsonError::new(e.to_string()))
}

/// Parses one JSON object with `visitor`, which sees the whole text.
fn parse<'de, V: Visitor<'de>>(text: &'de str, visitor: V) -> serde_json::Result<V::Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    // `Measure` bounds the depth (`write` runs only on measured text), and
    // each level grows the stack as needed.
    de.disable_recursion_limit();
    let value = de::Deserializer::deserialize_map(&mut de, visitor)?;
    de.end()?;
    Ok(value)
}

fn len_delimited(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

/// The length of a map entry's body: its key and its value.
fn entry_len(key_len: usize, value_len: usize) -> usize {
    len_delimited(key_len) + len_delimited(value_len)
}

const NULL_LEN: usize = 2;
const BOOL_LEN: usize = 2;
const NUMBER_LEN: usize = 9;

fn string_len(s: &str) -> usize {
    len_delimited(s.len())
}

/// First pass: the length of each value's `google.protobuf.Value` body;
/// pushes the body length of each object and list, in the order they open.
/// Refuses objects and lists nested deeper than [`MAX_JSON_DEPTH`] before
/// parsing further into them.
struct Measure<'s> {
    sizes: &'s mut Vec<usize>,
    /// Objects and lists open around the value.
    depth: usize,
}

impl Measure<'_> {
    /// Fails if the object or list being visited is a level too many.
    fn open<E: de::Error>(&self) -> Result<(), E> {
        if self.depth >= MAX_JSON_DEPTH {
            return Err(E::custom(format!(
                "JSON nests deeper than the limit of {MAX_JSON_DEPTH} levels"
            )));
        }
        Ok(())
    }

    /// The measure of a value inside the object or list being visited.
    fn child(&mut self) -> Measure<'_> {
        Measure {
            sizes: &mut *self.sizes,
            depth: self.depth + 1,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Measure<'_> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || d.deserialize_any(self))
    }
}

impl<'de> Visitor<'de> for Measure<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(NULL_LEN)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<usize, E> {
        Ok(BOOL_LEN)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<usize, E> {
        Ok(string_len(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<usize, A::Error> {
        self.open()?;
        let slot = self.sizes.len();
        self.sizes.push(0);
        let mut body = 0;
        while let Some(item) = seq.next_element_seed(self.child())? {
            body += len_delimited(item);
        }
        self.sizes[slot] = body;
        Ok(len_delimited(body))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<usize, A::Error> {
        self.open()?;
        let slot = self.sizes.len();
        self.sizes.push(0);
        let mut body = 0;
        while let Some(key) = map.next_key_seed(Key)? {
            let value = map.next_value_seed(self.child())?;
            body += len_delimited(entry_len(key.len(), value));
        }
        self.sizes[slot] = body;
        Ok(len_delimited(body))
    }
}

/// What goes before a value's body.
#[derive(Clone, Copy)]
enum Prefix<'k> {
    /// Nothing: the value is the Struct itself.
    Root,
    /// The map entry holding it, and the entry's key.
    Entry(&'k str),
    /// A `ListValue` item's tag and length.
    Item,
}

/// Second pass: writes each value as its [`Prefix`] and its body.
struct Write<'s, 'k, B> {
    out: &'s mut B,
    sizes: &'s [usize],
    next: &'s mut usize,
    prefix: Prefix<'k>,
}

impl<B: BufMut> Write<'_, '_, B> {
    /// Writes the prefix for a value whose `Value` body is `len` long.
    fn prefix(&mut self, len: usize) {
        match self.prefix {
            Prefix::Root => {}
            Prefix::Entry(key) => {
                put_len(self.out, 1, entry_len(key.len(), len));
                put_bytes(self.out, 1, key.as_bytes());
                put_len(self.out, 2, len);
            }
            Prefix::Item => put_len(self.out, 1, len),
        }
    }

    /// The measured body length of the next object or list.
    fn next_size<E: de::Error>(&mut self) -> Result<usize, E> {
        let size = self.sizes.get(*self.next).copied();
        *self.next += 1;
        size.ok_or_else(|| E::custom("the JSON text changed between passes"))
    }

    fn child<'c, 'k2>(&'c mut self, prefix: Prefix<'k2>) -> Write<'c, 'k2, B> {
        Write {
            out: &mut *self.out,
            sizes: self.sizes,
            next: &mut *self.next,
            prefix,
        }
    }
}

fn put_len(out: &mut impl BufMut, field: u32, len: usize) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(len as u64, out);
}

fn put_bytes(out: &mut impl BufMut, field: u32, bytes: &[u8]) {
    put_len(out, field, bytes.len());
    out.put_slice(bytes);
}

fn put_varint(out: &mut impl BufMut, field: u32, value: u64) {
    encode_key(field, WireType::Varint, out);
    encode_varint(value, out);
}

impl<'de, B: BufMut> DeserializeSeed<'de> for Write<'_, '_, B> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || d.deserialize_any(self))
    }
}

impl<'de, B: BufMut> Visitor<'de> for Write<'_, '_, B> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.prefix(NULL_LEN);
        put_varint(self.out, NULL, 0);
        Ok(())
    }

    fn visit_bool<E: de::Error>(mut self, b: bool) -> Result<(), E> {
        self.prefix(BOOL_LEN);
        put_varint(self.out, BOOL, u64::from(b));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        // The nearest f64, as Go's protobuf has it.
        #[allow(clippy::cast_precision_loss)]
        self.visit_f64(n as f64)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        #[allow(clippy::cast_precision_loss)]
        self.visit_f64(n as f64)
    }

    fn visit_f64<E: de::Error>(mut self, n: f64) -> Result<(), E> {
        self.prefix(NUMBER_LEN);
        encode_key(NUMBER, WireType::SixtyFourBit, self.out);
        self.out.put_f64_le(n);
        Ok(())
    }

    fn visit_str<E: de::Error>(mut self, s: &str) -> Result<(), E> {
        self.prefix(string_len(s));
        put_bytes(self.out, STRING, s.as_bytes());
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let body = self.next_size()?;
        self.prefix(len_delimited(body));
        put_len(self.out, LIST, body);
        while seq.next_element_seed(self.child(Prefix::Item))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let body = self.next_size()?;
        if !matches!(self.prefix, Prefix::Root) {
            self.prefix(len_delimited(body));
            put_len(self.out, STRUCT, body);
        }
        while let Some(key) = map.next_key_seed(Key)? {
            map.next_value_seed(self.child(Prefix::Entry(&key)))?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the text unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
}
