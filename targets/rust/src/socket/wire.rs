//! What travels on a socket and how long a socket may stand still.
//!
//! Framing: a 4-byte big-endian length, then `size` payload bytes all of one value.
//! The frames a client sends are built once, before the timed section, header
//! included, so each message is one `write_all` of one contiguous buffer (4 + size
//! bytes): one `write` system call unless the kernel takes it in parts. Consecutive
//! messages carry different values (message i carries the value of frame i mod K),
//! so an echo that returns a stale message is caught.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;
use tokio::time::{Instant, Sleep, sleep};

/// Bytes in a frame's length prefix.
pub const HEADER_BYTES: usize = 4;
/// The byte a flow server sends back once it has read a socket to its end.
pub const ACK: u8 = 0x06;
/// At most this much memory goes into prepared frames (at least two frames, at most
/// 251 values: a prime, the seed's "message index mod 251").
const FRAME_TABLE_BYTES: usize = 1 << 20;
const MAX_DISTINCT_FRAMES: usize = 251;

/// The frames a client sends, prepared outside the timed section and shared
/// (read-only) by every socket's task.
#[derive(Debug)]
pub struct Frames {
    frames: Vec<Box<[u8]>>,
}

/// `len` bytes of `value`, written now: `vec![0; len]` of a large size is fresh
/// zeroed pages that the kernel maps one by one on first use, which would happen
/// inside the timed loop (the C target fills its buffers before the start too).
pub fn touched(len: usize, value: u8) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(len);
    bytes.resize(len, value); // writes every byte: with_capacity's memory is not known to be zero
    bytes
}

impl Frames {
    /// Frames of `size` payload bytes for a sequence of `messages` messages.
    pub fn new(size: usize, messages: u64) -> Self {
        let count = frame_count(size, messages);
        let header = (size as u32).to_be_bytes();
        let frames = (0..count)
            .map(|k| {
                let mut frame = touched(HEADER_BYTES + size, k as u8).into_boxed_slice();
                frame[..HEADER_BYTES].copy_from_slice(&header);
                frame
            })
            .collect();
        Self { frames }
    }

    /// Message `index` as it goes on the wire: header and payload.
    pub fn frame(&self, index: u64) -> &[u8] {
        &self.frames[(index % self.frames.len() as u64) as usize]
    }

    /// Message `index`'s payload.
    pub fn payload(&self, index: u64) -> &[u8] {
        &self.frame(index)[HEADER_BYTES..]
    }
}

#[cfg(test)]
impl Frames {
    /// Distinct frames prepared.
    pub fn count(&self) -> usize {
        self.frames.len()
    }

    /// Bytes the prepared frames hold.
    pub fn bytes(&self) -> usize {
        self.frames.iter().map(|frame| frame.len()).sum()
    }
}

/// How many distinct frames to prepare: up to 251 values, within ~1 MiB, at least
/// two (so consecutive messages differ) unless the sequence has one message.
pub fn frame_count(size: usize, messages: u64) -> usize {
    let fit = FRAME_TABLE_BYTES / (HEADER_BYTES + size);
    let count = fit.clamp(2, MAX_DISTINCT_FRAMES);
    count
        .min(usize::try_from(messages).unwrap_or(usize::MAX))
        .max(1)
}

/// The bytes a frame's prepared table holds for `size` and `messages`, without
/// building it (the memory check).
pub fn frame_table_bytes(size: usize, messages: u64) -> u64 {
    frame_count(size, messages) as u64 * (HEADER_BYTES + size) as u64
}

/// The payload length a header announces.
pub fn announced_length(header: [u8; HEADER_BYTES]) -> usize {
    u32::from_be_bytes(header) as usize
}

/// Whether an echoed payload equals what was sent: every byte when `full`, else
/// the first and the last byte (the length was checked from the header).
pub fn echo_matches(sent: &[u8], echoed: &[u8], full: bool) -> bool {
    if full {
        sent == echoed
    } else {
        sent.len() == echoed.len() && sent.first() == echoed.first() && sent.last() == echoed.last()
    }
}

/// Why a socket operation did not complete.
#[derive(Debug)]
pub enum Failure {
    Io(io::Error),
    /// No operation on this socket completed for a whole idle limit.
    Stalled(Duration),
}

impl Failure {
    pub fn describe(&self) -> String {
        match self {
            Failure::Io(err) if err.kind() == io::ErrorKind::UnexpectedEof => {
                "end of stream".to_string()
            }
            Failure::Io(err) => err.to_string(),
            Failure::Stalled(limit) => format!("no progress for {} s", limit.as_secs_f64()),
        }
    }
}

/// A time limit on one socket's waits that costs one timer per socket, not one per
/// read: the timer is armed once; when it fires, the socket fails if no operation
/// completed since it was last armed, and is re-armed otherwise. A socket that
/// stands still therefore fails after one to two limits, and a socket that keeps
/// moving never touches the timer wheel between firings.
pub struct IdleLimit {
    limit: Duration,
    timer: Pin<Box<Sleep>>,
    completed: u64,
    completed_when_armed: u64,
}

impl IdleLimit {
    /// Needs a tokio runtime with timers; the first limit runs from now.
    pub fn new(limit: Duration) -> Self {
        Self {
            limit,
            timer: Box::pin(sleep(limit)),
            completed: 0,
            completed_when_armed: 0,
        }
    }

    /// Runs one socket operation under the limit.
    pub async fn io<T>(
        &mut self,
        operation: impl Future<Output = io::Result<T>>,
    ) -> Result<T, Failure> {
        let mut operation = pin!(operation);
        let outcome = poll_fn(|cx| {
            if let Poll::Ready(result) = operation.as_mut().poll(cx) {
                return Poll::Ready(result.map_err(Failure::Io));
            }
            while self.timer.as_mut().poll(cx).is_ready() {
                if self.completed == self.completed_when_armed {
                    return Poll::Ready(Err(Failure::Stalled(self.limit)));
                }
                self.completed_when_armed = self.completed;
                let deadline = Instant::now() + self.limit;
                self.timer.as_mut().reset(deadline);
            }
            Poll::Pending
        })
        .await;
        if outcome.is_ok() {
            self.completed += 1;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::pending;

    #[test]
    fn frames_carry_their_header_and_differ_from_message_to_message() {
        let frames = Frames::new(16, 1000);
        assert_eq!(frames.count(), MAX_DISTINCT_FRAMES);
        for index in 0..600u64 {
            let frame = frames.frame(index);
            assert_eq!(frame.len(), 20);
            assert_eq!(announced_length(frame[..4].try_into().unwrap()), 16);
            let value = (index % 251) as u8;
            assert!(frames.payload(index).iter().all(|&byte| byte == value));
            assert_ne!(frames.payload(index), frames.payload(index + 1));
        }
    }

    #[test]
    fn the_frame_table_stays_small() {
        assert_eq!(frame_count(65_536, 64), 15);
        assert_eq!(frame_count(1 << 26, 1), 1);
        assert_eq!(frame_count(1 << 22, 4), 2);
        assert_eq!(frame_count(1, 3), 3);
        assert_eq!(frame_table_bytes(1024, 4096), 251 * 1028);
        let frames = Frames::new(1 << 22, 4);
        assert_eq!(frames.count(), 2);
        assert_eq!(frames.bytes() as u64, frame_table_bytes(1 << 22, 4));
        assert_ne!(frames.payload(0), frames.payload(1));
        assert_eq!(frames.payload(0), frames.payload(2));
    }

    #[test]
    fn echo_check_compares_all_or_the_ends() {
        let sent = [1u8, 2, 3, 4];
        assert!(echo_matches(&sent, &[1, 2, 3, 4], true));
        assert!(!echo_matches(&sent, &[1, 9, 3, 4], true));
        assert!(echo_matches(&sent, &[1, 9, 3, 4], false));
        assert!(!echo_matches(&sent, &[0, 2, 3, 4], false));
        assert!(!echo_matches(&sent, &[1, 2, 3, 5], false));
        assert!(!echo_matches(&sent, &[1, 2, 3], false));
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn a_stalled_operation_fails_within_two_limits() {
        runtime().block_on(async {
            let limit = Duration::from_millis(50);
            let mut idle = IdleLimit::new(limit);
            let started = std::time::Instant::now();
            let outcome = idle.io(pending::<io::Result<()>>()).await;
            assert!(matches!(outcome, Err(Failure::Stalled(_))));
            let waited = started.elapsed();
            assert!(waited >= limit && waited < 4 * limit, "{waited:?}");
        });
    }

    #[test]
    fn a_moving_socket_outlives_the_limit() {
        runtime().block_on(async {
            let limit = Duration::from_millis(40);
            let mut idle = IdleLimit::new(limit);
            // 20 operations of 10 ms each: 200 ms in all, 5 limits, never stalled.
            for _ in 0..20 {
                idle.io(async {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Ok(())
                })
                .await
                .unwrap();
            }
            let error = idle
                .io(async { Err::<(), _>(io::Error::from(io::ErrorKind::UnexpectedEof)) })
                .await
                .unwrap_err();
            assert_eq!(error.describe(), "end of stream");
        });
    }
}
