//! The requests of one HTTP/2 connection still to be answered, read off
//! the frames that cross it.
//!
//! [`OpenCalls`](super::open_calls::OpenCalls) counts a call once tonic's
//! service is called, which hyper-util does in the stream's own task when
//! that task first runs. Under load a connection reads a dozen requests at
//! once and their tasks wait in the run queue, uncounted, while the first
//! one's response is flushed; so each response went out in a write of its
//! own (17,236 writes for 20,000 calls at 64 streams, against grpc-go's
//! 492). [`OpenStreams`] counts a request as soon as its HEADERS frame is
//! read, and until the server's frame that ends the stream is written, so
//! [`BatchedWrites`](super::batched_writes::BatchedWrites) knows more
//! responses are coming.
//!
//! Only frame headers are read (RFC 9113 §4.1): nine bytes each, then the
//! payload is skipped. The count is a hint for batching and nothing else:
//! a count that is off costs at most one step aside per batch.

/// Frame types and the END_STREAM flag (RFC 9113 §6).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const END_STREAM: u8 = 0x1;

/// The client's connection preface, before its first frame.
const CLIENT_PREFACE: usize = 24;

/// The length of a frame header.
const FRAME_HEADER: usize = 9;

/// The frame headers of one direction of a connection, found in chunks of
/// any size.
#[derive(Debug, Clone)]
struct FrameHeaders {
    /// Bytes of the preface still to skip.
    preface_left: usize,
    header: [u8; FRAME_HEADER],
    have: usize,
    /// Bytes of the current frame's payload still to skip.
    payload_left: usize,
}

impl FrameHeaders {
    fn new(preface: usize) -> FrameHeaders {
        FrameHeaders {
            preface_left: preface,
            header: [0; FRAME_HEADER],
            have: 0,
            payload_left: 0,
        }
    }

    /// Follows `bytes`, calling `frame(type, flags, stream)` for each frame
    /// header they complete.
    fn feed(&mut self, mut bytes: &[u8], mut frame: impl FnMut(u8, u8, u32)) {
        while !bytes.is_empty() {
            let skip = if self.preface_left > 0 {
                &mut self.preface_left
            } else {
                &mut self.payload_left
            };
            if *skip > 0 {
                let n = (*skip).min(bytes.len());
                *skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (FRAME_HEADER - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == FRAME_HEADER {
                let h = &self.header;
                let length = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
                let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                frame(h[3], h[4], stream);
                self.payload_left = length;
                self.have = 0;
            }
        }
    }
}

/// The streams a client opened on a connection that the server has not
/// ended yet.
#[derive(Debug, Clone)]
pub struct OpenStreams {
    reads: FrameHeaders,
    writes: FrameHeaders,
    /// The highest stream the client opened: a HEADERS frame on a stream
    /// above it opens one; one at or below it is trailers.
    highest: u32,
    opened: u64,
    ended: u64,
}

impl Default for OpenStreams {
    fn default() -> Self {
        OpenStreams {
            reads: FrameHeaders::new(CLIENT_PREFACE),
            writes: FrameHeaders::new(0),
            highest: 0,
            opened: 0,
            ended: 0,
        }
    }
}

impl OpenStreams {
    /// Follows bytes the client sent.
    pub fn read(&mut self, bytes: &[u8]) {
        let (highest, opened, ended) = (&mut self.highest, &mut self.opened, &mut self.ended);
        self.reads.feed(bytes, |kind, _, stream| match kind {
            HEADERS if stream % 2 == 1 && stream > *highest => {
                *highest = stream;
                *opened += 1;
            }
            RST_STREAM if stream != 0 => *ended += 1,
            _ => {}
        });
    }

    /// Follows bytes the server wrote.
    pub fn wrote(&mut self, bytes: &[u8]) {
        let ended = &mut self.ended;
        self.writes.feed(bytes, |kind, flags, stream| match kind {
            DATA | HEADERS if flags & END_STREAM != 0 && stream != 0 => *ended += 1,
            RST_STREAM if stream != 0 => *ended += 1,
            _ => {}
        });
    }

    /// How many requests are still to be answered, as far as the frames
    /// tell.
    pub fn open(&self) -> u64 {
        self.opened.saturating_sub(self.ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        bytes.extend([kind, flags]);
        bytes.extend(stream.to_be_bytes());
        bytes.extend(payload);
        bytes
    }

    #[test]
    fn requests_are_open_from_their_headers_to_the_servers_end_of_stream() {
        let mut streams = OpenStreams::default();
        let mut client = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        client.extend(frame(0x4, 0, 0, &[0; 6])); // SETTINGS
        for stream in [1, 3, 5] {
            client.extend(frame(HEADERS, 0x4, stream, b"hpack"));
            client.extend(frame(DATA, END_STREAM, stream, &[0; 300]));
        }
        // Read one byte at a time: frame headers span reads.
        for byte in &client {
            streams.read(std::slice::from_ref(byte));
        }
        assert_eq!(streams.open(), 3);
        // A response: HEADERS, DATA, then trailers that end the stream.
        let mut response = frame(HEADERS, 0x4, 1, b"status");
        response.extend(frame(DATA, 0, 1, &[1; 40]));
        streams.wrote(&response);
        assert_eq!(streams.open(), 3, "not ended before its trailers");
        streams.wrote(&frame(HEADERS, 0x4 | END_STREAM, 1, b"grpc-status"));
        assert_eq!(streams.open(), 2);
        // A reset ends one too; a client's trailers open nothing.
        streams.wrote(&frame(RST_STREAM, 0, 3, &[0; 4]));
        streams.read(&frame(HEADERS, 0x4, 5, b"trailers"));
        assert_eq!(streams.open(), 1);
    }

    #[test]
    fn a_miscount_never_goes_below_zero() {
        let mut streams = OpenStreams::default();
        streams.wrote(&frame(HEADERS, END_STREAM, 1, b""));
        assert_eq!(streams.open(), 0);
    }
}
