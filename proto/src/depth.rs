//! How deeply a protobuf message nests, measured on its wire bytes without
//! recursion, so a message can be refused before prost's recursive decoder
//! sees it.
//!
//! The scan follows the schema in [`FILE_DESCRIPTOR_SET`](crate::FILE_DESCRIPTOR_SET):
//! a length-delimited field counts as a level only if the schema says it
//! holds a message (map entries included, as prost decodes them as
//! messages). Groups, which prost skips recursively even in unknown
//! fields, count as levels too.

use std::collections::HashMap;
use std::sync::OnceLock;

use prost::Message as _;
use prost_types::FileDescriptorSet;
use prost_types::field_descriptor_proto::Type;
use smallvec::SmallVec;

/// The deepest message nesting accepted, counting the outermost message as
/// level 1. Go's protobuf allows 10,000; a JSON object inside a
/// `google.protobuf.Struct` costs 3 levels (Struct, its map entry, Value),
/// so this lets a request carry objects about 6,600 deep.
pub const MAX_MESSAGE_DEPTH: usize = 20_000;

/// Stack reserved per message level for recursive work on a message
/// (decode, encode, conversion, drop); generous for unoptimised builds.
const STACK_PER_LEVEL: usize = 8 << 10;

/// Stack reserved besides the levels.
const STACK_BASE: usize = 1 << 20;

/// Why a message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DepthError {
    /// The message nests deeper than the limit.
    #[error("message nests more than {limit} levels deep (the limit is {limit})")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The bytes are not protobuf wire format.
    #[error("malformed protobuf at byte {offset}: {reason}")]
    Malformed {
        /// Where the problem is.
        offset: usize,
        /// What it is.
        reason: &'static str,
    },
}

/// A message type whose depth can be checked: names its schema entry.
pub trait Checked {
    /// The fully qualified protobuf name, e.g. `apiextensions.fn.proto.v1.RunFunctionRequest`.
    const PROTO_NAME: &'static str;

    /// Whether decoding, encoding and dropping the message recurse once per
    /// level of nesting, and so need a stack as deep as the message. True
    /// of `prost_types::Struct` trees, false of [`JsonStruct`](crate::json::JsonStruct)s.
    const RECURSES: bool = true;
}

/// The message types of the schema, each field that holds a message
/// resolved to its type's index, so the scan looks nothing up by name.
struct Schema {
    types: Vec<MessageType>,
    by_name: HashMap<String, usize>,
}

/// One message type: its fields that hold messages (or groups), sorted by
/// field number, each with its type's index in [`Schema::types`], or
/// `None` for a type outside the schema.
struct MessageType {
    fields: Vec<(u32, Option<usize>)>,
}

impl Schema {
    fn get(&self, name: &str) -> Option<&MessageType> {
        self.by_name.get(name).map(|&i| &self.types[i])
    }

    /// Whether field `number` of `parent` holds a message, and if so the
    /// message's type, when the schema has it.
    fn field(&self, parent: &MessageType, number: u32) -> Option<Option<&MessageType>> {
        let i = parent
            .fields
            .binary_search_by_key(&number, |(n, _)| *n)
            .ok()?;
        Some(parent.fields[i].1.map(|t| &self.types[t]))
    }
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        // The set is built by build.rs; a broken one leaves the schema
        // empty, which only makes the scan count fewer levels.
        let set = FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET).unwrap_or_default();
        // Every message type by its full name, then its fields' types.
        let mut named: Vec<(String, &prost_types::DescriptorProto)> = Vec::new();
        for file in &set.file {
            let package = file.package();
            let mut todo: Vec<(String, &prost_types::DescriptorProto)> = file
                .message_type
                .iter()
                .map(|m| (format!("{package}.{}", m.name()), m))
                .collect();
            while let Some((name, message)) = todo.pop() {
                todo.extend(
                    message
                        .nested_type
                        .iter()
                        .map(|n| (format!("{name}.{}", n.name()), n)),
                );
                named.push((name, message));
            }
        }
        let by_name: HashMap<String, usize> = named
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), i))
            .collect();
        let types = named
            .iter()
            .map(|(_, message)| {
                let mut fields: Vec<(u32, Option<usize>)> = message
                    .field
                    .iter()
                    .filter(|f| matches!(f.r#type(), Type::Message | Type::Group))
                    .map(|f| {
                        let ty = f.type_name().trim_start_matches('.');
                        (
                            u32::try_from(f.number()).unwrap_or(0),
                            by_name.get(ty).copied(),
                        )
                    })
                    .collect();
                fields.sort_unstable_by_key(|(n, _)| *n);
                MessageType { fields }
            })
            .collect();
        Schema { types, by_name }
    })
}

/// Levels the scan keeps on the thread's stack before it moves them to the
/// heap: a request's resources nest about 15–30 levels deep (three per
/// JSON level), so a typical scan allocates nothing.
const TYPICAL_LEVELS: usize = 32;

/// One open level: where it ends, its type (if known), and the group's
/// field number if it is a group.
struct Level<'a> {
    end: usize,
    fields: Option<&'a MessageType>,
    group: Option<u32>,
}

fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, DepthError> {
    let start = *pos;
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = buf.get(*pos) else {
            break;
        };
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DepthError::Malformed {
        offset: start,
        reason: "bad varint",
    })
}

/// Returns how many levels deep `buf`, a message of type `root`, nests, or
/// an error once it passes `limit`. Linear in `buf`, constant stack.
pub fn message_depth(buf: &[u8], root: &str, limit: usize) -> Result<usize, DepthError> {
    let schema = schema();
    let mut stack = SmallVec::<[Level<'_>; TYPICAL_LEVELS]>::new();
    stack.push(Level {
        end: buf.len(),
        fields: schema.get(root),
        group: None,
    });
    let mut deepest = 1;
    let mut pos = 0;
    let malformed = |offset, reason| DepthError::Malformed { offset, reason };
    loop {
        let Some(top) = stack.last() else {
            return Ok(deepest);
        };
        if pos == top.end {
            if top.group.is_some() {
                return Err(malformed(pos, "unterminated group"));
            }
            stack.pop();
            continue;
        }
        let fields = top.fields;
        let end = top.end;
        let tag_at = pos;
        let tag = varint(buf, &mut pos)?;
        let number = u32::try_from(tag >> 3).map_err(|_| malformed(tag_at, "bad tag"))?;
        if number == 0 {
            return Err(malformed(tag_at, "field number 0"));
        }
        let skip = |pos: &mut usize, n: u64| -> Result<(), DepthError> {
            let next = usize::try_from(n)
                .ok()
                .and_then(|n| pos.checked_add(n))
                .filter(|next| *next <= end)
                .ok_or(malformed(*pos, "field runs past its message"))?;
            *pos = next;
            Ok(())
        };
        // Some if the field holds a message, with its type if known.
        let field = |number| fields.and_then(|parent| schema.field(parent, number));
        match tag & 7 {
            0 => {
                varint(buf, &mut pos)?;
            }
            1 => skip(&mut pos, 8)?,
            5 => skip(&mut pos, 4)?,
            2 => {
                let len = varint(buf, &mut pos)?;
                let start = pos;
                skip(&mut pos, len)?;
                if let Some(child) = field(number) {
                    stack.push(Level {
                        end: pos,
                        fields: child,
                        group: None,
                    });
                    pos = start;
                }
            }
            3 => stack.push(Level {
                end,
                fields: field(number).flatten(),
                group: Some(number),
            }),
            4 => {
                if top_group(&stack) != Some(number) {
                    return Err(malformed(tag_at, "unexpected end of group"));
                }
                stack.pop();
            }
            _ => return Err(malformed(tag_at, "bad wire type")),
        }
        deepest = deepest.max(stack.len());
        if deepest > limit {
            return Err(DepthError::TooDeep { limit });
        }
    }
}

fn top_group(stack: &[Level<'_>]) -> Option<u32> {
    stack.last().and_then(|l| l.group)
}

/// Runs `f` on a stack with room for recursive work on a message
/// `depth` levels deep, growing the stack only if the current one is
/// too small.
pub fn with_stack_for<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    let need = STACK_BASE + depth.saturating_mul(STACK_PER_LEVEL);
    stacker::maybe_grow(need, need, f)
}

/// Runs `f` on a stack with room for a message as deep as
/// [`MAX_MESSAGE_DEPTH`] if `recurses` (the work recurses once per level,
/// see [`Checked::RECURSES`]), else on the current stack.
pub fn with_stack_if<R>(recurses: bool, f: impl FnOnce() -> R) -> R {
    if recurses { with_deep_stack(f) } else { f() }
}

/// Runs `f` on a stack with room for a message as deep as
/// [`MAX_MESSAGE_DEPTH`]: for work on messages of unknown depth.
pub fn with_deep_stack<R>(f: impl FnOnce() -> R) -> R {
    with_stack_for(MAX_MESSAGE_DEPTH, f)
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::{Struct, Value, value::Kind};

    use super::*;
    use crate::v1;

    const ROOT: &str = "apiextensions.fn.proto.v1.RunFunctionRequest";

    /// A request whose input nests `objects` JSON objects, each in the last.
    fn nested_input(objects: usize) -> v1::RunFunctionRequest {
        let mut input = Struct::default();
        for _ in 0..objects {
            let value = Value {
                kind: Some(Kind::StructValue(input)),
            };
            input = Struct {
                fields: [("n".to_owned(), value)].into_iter().collect(),
            };
        }
        v1::RunFunctionRequest {
            input: Some(input),
            ..Default::default()
        }
    }

    #[test]
    fn message_fields_count_as_levels_by_the_schema() {
        // The request, its input Struct, then a map entry, a Value and a
        // Struct per object inside.
        for objects in [0, 1, 7, 300] {
            let wire = nested_input(objects).encode_to_vec();
            assert_eq!(message_depth(&wire, ROOT, 10_000), Ok(2 + 3 * objects));
        }
        // A string field is not a level, though its bytes parse as a
        // message; a message field is one.
        let meta = v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "\x0a\x02\x0a\x00".to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(message_depth(&meta.encode_to_vec(), ROOT, 100), Ok(2));
        // A field the schema does not know is not a level either.
        let mut unknown = v1::RunFunctionRequest::default().encode_to_vec();
        unknown.extend([0xfa, 0x06, 0x02, 0x0a, 0x00]); // field 111: bytes 0a 00
        assert_eq!(message_depth(&unknown, ROOT, 100), Ok(1));
        // The limit counts the same levels.
        let wire = nested_input(10).encode_to_vec();
        assert_eq!(message_depth(&wire, ROOT, 32), Ok(32));
        assert_eq!(
            message_depth(&wire, ROOT, 31),
            Err(DepthError::TooDeep { limit: 31 })
        );
    }

    fn nested_groups(n: usize) -> Vec<u8> {
        let mut buf = vec![0x0b; n];
        buf.extend(std::iter::repeat_n(0x0c, n));
        buf
    }

    #[test]
    fn groups_count_as_levels_and_the_limit_holds() {
        assert_eq!(message_depth(&nested_groups(10), ROOT, 100), Ok(11));
        assert_eq!(
            message_depth(&nested_groups(200), ROOT, 100),
            Err(DepthError::TooDeep { limit: 100 })
        );
        assert!(matches!(
            message_depth(&[0x0b], ROOT, 100),
            Err(DepthError::Malformed { .. })
        ));
    }
}
