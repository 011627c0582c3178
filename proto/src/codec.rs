//! The tonic codec of the generated clients and servers: prost's, plus a
//! depth check on every decoded message (see [`depth`](crate::depth)) and
//! room on the stack for decoding and encoding deep messages.

use std::marker::PhantomData;

use bytes::Buf as _;
use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::depth::{self, Checked, MAX_MESSAGE_DEPTH};

/// Messages at most this deep decode on the current stack.
const SHALLOW: usize = 64;

/// What tonic allocates up front for each call's encode and decode buffer
/// (its default is 8 KiB each, whatever the message). The decode buffer
/// grows with the frames that arrive and by the length in the message's
/// header; the encode buffer, once, by the encoded length reserved before
/// encoding. Not zero: tonic divides by it when (de)compressing.
const FIRST_BUFFER: usize = 64;

/// Tonic's buffer settings with [`FIRST_BUFFER`].
fn buffer_settings() -> BufferSettings {
    // The yield threshold only matters for streams; tonic's default.
    BufferSettings::new(FIRST_BUFFER, 32 << 10)
}

/// Encodes `T` and decodes `U` with prost, refusing messages deeper than
/// [`MAX_MESSAGE_DEPTH`] with `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct DepthCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for DepthCodec<T, U> {
    fn default() -> Self {
        DepthCodec(PhantomData)
    }
}

impl<T, U> Codec for DepthCodec<T, U>
where
    T: Message + Checked + Send + 'static,
    U: Message + Default + Checked + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = DepthEncoder<T>;
    type Decoder = DepthDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        DepthEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        DepthDecoder(PhantomData)
    }
}

/// Encodes with prost on a stack deep enough for any accepted message.
#[derive(Debug)]
pub struct DepthEncoder<T>(PhantomData<T>);

impl<T: Message + Checked> Encoder for DepthEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // Encoding and dropping a tree recurse once per level.
        depth::with_stack_if(T::RECURSES, move || {
            // One allocation of the whole size, not doubling steps. With
            // the room reserved, `encode_raw` is `encode` without measuring
            // the message a second time.
            buf.reserve(item.encoded_len());
            item.encode_raw(buf);
            Ok(())
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        buffer_settings()
    }
}

/// Checks the depth, then decodes with prost.
#[derive(Debug)]
pub struct DepthDecoder<U>(PhantomData<U>);

impl<U: Message + Default + Checked> Decoder for DepthDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        decode_checked(buf.copy_to_bytes(buf.remaining())).map(Some)
    }

    fn buffer_settings(&self) -> BufferSettings {
        buffer_settings()
    }
}

/// Decodes one message as the server and client do: refuses it with
/// `INVALID_ARGUMENT` if it nests deeper than [`MAX_MESSAGE_DEPTH`], then
/// decodes it with prost on a stack with room for its depth.
pub fn decode_checked<U: Message + Default + Checked>(bytes: bytes::Bytes) -> Result<U, Status> {
    let levels =
        depth::message_depth(&bytes, U::PROTO_NAME, MAX_MESSAGE_DEPTH).map_err(|e| match e {
            depth::DepthError::TooDeep { limit } => Status::invalid_argument(format!(
                "the message nests deeper than the limit of {limit} protobuf message levels"
            )),
            malformed => {
                Status::internal(format!("failed to decode Protobuf message: {malformed}"))
            }
        })?;
    let decode = || {
        U::decode(bytes)
            .map_err(|e| Status::internal(format!("failed to decode Protobuf message: {e}")))
    };
    if levels <= SHALLOW || !U::RECURSES {
        decode()
    } else {
        depth::with_stack_for(levels, decode)
    }
}
