//! [`JsonStruct`]: a `google.protobuf.Struct` as the bytes of its map entries.

use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint};

/// The field number of `Struct.fields`.
const FIELDS: u32 = 1;

/// A `google.protobuf.Struct` held either as the bytes of its map entries
/// (when decoded) or as checked JSON object text (when made with
/// [`JsonStruct::from_json`]); either way it is encoded, cloned and dropped
/// without recursion.
#[derive(Clone, Default)]
pub struct JsonStruct {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    /// One buffer per map entry: the entry message's bytes, without its
    /// tag and length, in the order they came. What decoding produces.
    Entries(Vec<Bytes>),
    /// Checked JSON object text and the measured body length of each of
    /// its objects and lists (the Struct's first), to be encoded straight
    /// into the encoder's buffer.
    Json { text: String, sizes: Vec<usize> },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Entries(Vec::new())
    }
}

/// JSON text or protobuf bytes that cannot become the other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(String);

impl JsonError {
    pub(super) fn new(reason: impl Into<String>) -> Self {
        JsonError(reason.into())
    }
}

impl JsonStruct {
    /// Takes JSON object text to be encoded as a Struct. The text is
    /// checked and measured now, and written as protobuf when the message
    /// is encoded.
    ///
    /// Fails if the text is not one JSON object, or nests deeper than
    /// [`MAX_JSON_DEPTH`](super::MAX_JSON_DEPTH).
    pub fn from_json(text: impl Into<String>) -> Result<JsonStruct, JsonError> {
        let text = text.into();
        let sizes = super::from_json::measure(&text)?;
        Ok(JsonStruct {
            repr: Repr::Json { text, sizes },
        })
    }

    /// Writes the Struct as JSON object text.
    ///
    /// Fails if the bytes are not a valid Struct, or hold a number with no
    /// JSON form (NaN, ±infinity).
    pub fn to_json(&self) -> Result<String, JsonError> {
        match &self.repr {
            Repr::Entries(entries) => super::to_json::write(entries, None),
            Repr::Json { text, .. } => Ok(text.clone()),
        }
    }

    /// [`to_json`](Self::to_json), without copying text it already holds.
    pub fn into_json(self) -> Result<String, JsonError> {
        self.into_json_in(None)
    }

    /// [`into_json`](Self::into_json), writing into one of `pool`'s spare
    /// buffers if there is one.
    pub fn into_json_in(self, pool: Option<&super::TextPool>) -> Result<String, JsonError> {
        match self.repr {
            Repr::Entries(entries) => super::to_json::write(&entries, pool),
            Repr::Json { text, .. } => Ok(text),
        }
    }

    /// Adds one map entry, turning JSON text into entries first.
    fn push_entry(&mut self, entry: Bytes) {
        let mut entries = match std::mem::take(&mut self.repr) {
            Repr::Entries(entries) => entries,
            json @ Repr::Json { .. } => split_entries(&JsonStruct { repr: json }.body()),
        };
        entries.push(entry);
        self.repr = Repr::Entries(entries);
    }

    /// The encoded body, for comparisons.
    fn body(&self) -> Bytes {
        let mut body = Vec::with_capacity(prost::Message::encoded_len(self));
        prost::Message::encode_raw(self, &mut body);
        Bytes::from(body)
    }
}

/// The entries of a body written from JSON, which is well formed: every
/// field is `fields`, length-delimited.
fn split_entries(body: &Bytes) -> Vec<Bytes> {
    let mut entries = Vec::new();
    let mut rest = &body[..];
    while let Ok((_, WireType::LengthDelimited)) = prost::encoding::decode_key(&mut rest) {
        let Ok(len) = prost::encoding::decode_varint(&mut rest) else {
            break;
        };
        let Ok(len) = usize::try_from(len) else {
            break;
        };
        if len > rest.len() {
            break;
        }
        let start = body.len() - rest.len();
        entries.push(body.slice(start..start + len));
        rest.advance(len);
    }
    entries
}

impl PartialEq for JsonStruct {
    /// Equal when the encoded bytes are equal.
    fn eq(&self, other: &Self) -> bool {
        self.body() == other.body()
    }
}

impl std::fmt::Debug for JsonStruct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.to_json() {
            Ok(text) => write!(f, "JsonStruct({text})"),
            Err(e) => write!(f, "JsonStruct(<{e}>)"),
        }
    }
}

impl prost::Message for JsonStruct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match &self.repr {
            Repr::Entries(entries) => {
                for entry in entries {
                    encode_key(FIELDS, WireType::LengthDelimited, buf);
                    encode_varint(entry.len() as u64, buf);
                    buf.put_slice(entry);
                }
            }
            Repr::Json { text, sizes } => {
                let written = super::from_json::write(text, sizes, buf);
                // The text was checked and measured when it was taken.
                debug_assert!(
                    written.is_ok(),
                    "checked JSON failed to encode: {written:?}"
                );
            }
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        if tag != FIELDS {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        // From a `Bytes` buffer (as tonic decodes) this is a slice, not a copy.
        let mut entry = Bytes::new();
        prost::encoding::bytes::merge(wire_type, &mut entry, buf, ctx)?;
        self.push_entry(entry);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        match &self.repr {
            Repr::Entries(entries) => entries
                .iter()
                .map(|e| 1 + encoded_len_varint(e.len() as u64) + e.len())
                .sum(),
            Repr::Json { sizes, .. } => sizes.first().copied().unwrap_or(0),
        }
    }

    fn clear(&mut self) {
        self.repr = Repr::default();
    }
}
