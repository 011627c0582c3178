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

/// Per message type: field number to the message type it holds.
type Schema = HashMap<String, HashMap<u32, String>>;

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema = Schema::new();
        // The set is built by build.rs; a broken one leaves the schema
        // empty, which only makes the scan count fewer levels.
        let Ok(set) = FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET) else {
            return schema;
        };
        for file in &set.file {
            let package = file.package();
            let mut todo: Vec<(String, &prost_types::DescriptorProto)> = file
                .message_type
                .iter()
                .map(|m| (format!("{package}.{}", m.name()), m))
                .collect();
            while let Some((name, message)) = todo.pop() {
                let fields = message
                    .field
                    .iter()
                    .filter(|f| matches!(f.r#type(), Type::Message | Type::Group))
                    .map(|f| {
                        let ty = f.type_name().trim_start_matches('.').to_string();
                        (u32::try_from(f.number()).unwrap_or(0), ty)
                    })
                    .collect();
                todo.extend(
                    message
                        .nested_type
                        .iter()
                        .map(|n| (format!("{name}.{}", n.name()), n)),
                );
                schema.insert(name, fields);
            }
        }
        schema
    })
}

/// One open level: where it ends, its type (if known), and the group's
/// field number if it is a group.
struct Level<'a> {
    end: usize,
    fields: Option<&'a HashMap<u32, String>>,
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
    let mut stack = vec![Level {
        end: buf.len(),
        fields: schema.get(root),
        group: None,
    }];
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
        let child = |number| {
            fields
                .and_then(|f| f.get(&number))
                .and_then(|t| schema.get(t))
        };
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
                if fields.is_some_and(|f| f.contains_key(&number)) {
                    stack.push(Level {
                        end: pos,
                        fields: child(number),
                        group: None,
                    });
                    pos = start;
                }
            }
            3 => stack.push(Level {
                end,
                fields: child(number),
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
    use super::*;

    fn nested_groups(n: usize) -> Vec<u8> {
        let mut buf = vec![0x0b; n];
        buf.extend(std::iter::repeat_n(0x0c, n));
        buf
    }

    #[test]
    fn groups_count_as_levels_and_the_limit_holds() {
        let root = "apiextensions.fn.proto.v1.RunFunctionRequest";
        assert_eq!(message_depth(&nested_groups(10), root, 100), Ok(11));
        assert_eq!(
            message_depth(&nested_groups(200), root, 100),
            Err(DepthError::TooDeep { limit: 100 })
        );
        assert!(matches!(
            message_depth(&[0x0b], root, 100),
            Err(DepthError::Malformed { .. })
        ));
    }
}
