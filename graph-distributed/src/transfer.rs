//! Large results travel between workers in pieces, within credit the
//! receiver grants.
//!
//! timely's channels give every message a buffer that fits it and keep that
//! buffer's size for the rest of the run, on the sending and the receiving
//! side; a 30 MB result sent whole leaves two 64 MB buffers behind in each
//! process, and a sender that runs ahead fills the receiver's memory with
//! results it has no room for. So a result of [`LARGE`] bytes or more is
//! encoded once and sent in pieces of [`PIECE`] bytes, and a sender spends
//! credit on each: it starts with a window of bytes towards each worker
//! (from [`MIN_WINDOW`] to [`MAX_WINDOW`], smaller under a tighter memory
//! limit), and the receiver gives it back as it takes pieces in, making
//! room for the whole result under its own limit at the first. So no more
//! than a window is ever on its way between two workers, in timely's
//! buffers on either side, and those buffers stay small. Without a memory
//! limit, results go whole, in one message (fewer copies and no round
//! trips), up to [`WHOLE_MAX`]: larger ones go in pieces within the largest
//! window, so that no frame between two processes comes near
//! [`MAX_FRAME`](crate::MAX_FRAME), past which a receiver refuses it.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A result the runner measures at this many bytes or more travels in
/// pieces.
pub(crate) const LARGE: u64 = 64 * 1024;

/// Without a memory limit, a result of this many bytes or more travels in
/// pieces (smaller ones go whole, in one message: fewer copies, no round
/// trips), and whole results go out, in one frame, before they add up to
/// more than this: every frame stays well under [`MAX_FRAME`](crate::MAX_FRAME).
pub(crate) const WHOLE_MAX: u64 = 64 * 1024 * 1024;

/// The bytes of one piece: small enough that timely's channel buffers keep
/// their first size (1 MiB).
pub(crate) const PIECE: usize = 256 * 1024;

/// The most bytes of pieces one worker has out to another before it hears
/// that they were taken in.
/// The smallest window: the bytes a worker may have on their way to
/// another that the receiver has not yet taken in.
pub(crate) const MIN_WINDOW: u64 = 4 * PIECE as u64;

/// The largest window.
pub(crate) const MAX_WINDOW: u64 = 64 * PIECE as u64;

/// The window for a worker under `memory_limit` bytes: a sixteenth of it,
/// within [`MIN_WINDOW`] and [`MAX_WINDOW`]. A wider window moves a result
/// in fewer round trips; what is on its way is in neither side's count of
/// results until the receiver takes it in.
pub(crate) fn window(memory_limit: u64) -> u64 {
    (memory_limit / 16).clamp(MIN_WINDOW, MAX_WINDOW)
}

/// Part of an encoded result: a range of the sender's encoding, which all
/// of its pieces share, or the bytes as they were received.
#[derive(Clone)]
pub(crate) enum Chunk {
    Shared {
        encoded: Arc<Vec<u8>>,
        start: usize,
        end: usize,
    },
    Received(Vec<u8>),
}

impl Chunk {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Chunk::Shared {
                encoded,
                start,
                end,
            } => &encoded[*start..*end],
            Chunk::Received(bytes) => bytes,
        }
    }
}

impl fmt::Debug for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chunk({} bytes)", self.as_slice().len())
    }
}

impl Serialize for Chunk {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_slice())
    }
}

impl<'de> Deserialize<'de> for Chunk {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Chunk, D::Error> {
        struct Bytes;

        impl<'de> Visitor<'de> for Bytes {
            type Value = Chunk;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the bytes of a piece of a result")
            }

            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Chunk, E> {
                Ok(Chunk::Received(bytes.to_vec()))
            }

            fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Chunk, E> {
                Ok(Chunk::Received(bytes))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Chunk, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(PIECE));
                while let Some(byte) = seq.next_element::<u8>()? {
                    bytes.push(byte);
                }
                Ok(Chunk::Received(bytes))
            }
        }

        deserializer.deserialize_bytes(Bytes)
    }
}

/// One piece of a result: the worker that sent it, which result (for the
/// receiver's tasks, or requested of the run), its whole encoded length,
/// and the bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Piece {
    pub(crate) from: u32,
    pub(crate) node: u32,
    pub(crate) output: bool,
    pub(crate) total: u64,
    pub(crate) chunk: Chunk,
}

/// A worker's results on their way out, per receiving worker.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    /// The sending worker.
    me: u32,
    peers: Vec<Lane>,
    /// Results queued in all lanes: while none is, the worker's every look
    /// here costs nothing however many workers there are.
    queued: usize,
}

/// A result on its way out.
#[derive(Debug)]
struct Queued {
    node: u32,
    output: bool,
    encoded: Arc<Vec<u8>>,
    /// How many of its bytes went out.
    sent: usize,
}

/// What one worker has to send another.
#[derive(Debug)]
struct Lane {
    /// Encoded results and how many of their bytes went out, oldest first.
    queue: VecDeque<Queued>,
    /// Bytes that may go: the window, less what was sent, plus what the
    /// receiver gave back.
    credit: i64,
}

impl Outgoing {
    /// Nothing for worker `me` to send yet, with `window` bytes of credit
    /// towards each of `peers` workers.
    pub(crate) fn new(me: u32, peers: usize, window: u64) -> Outgoing {
        let window = i64::try_from(window).unwrap_or(i64::MAX);
        Outgoing {
            me,
            queued: 0,
            peers: (0..peers)
                .map(|_| Lane {
                    queue: VecDeque::new(),
                    credit: window,
                })
                .collect(),
        }
    }

    /// Queues `node`'s encoded result for worker `to`: for its tasks, or
    /// with `output` as a requested result.
    pub(crate) fn push(&mut self, to: u32, node: u32, output: bool, encoded: Arc<Vec<u8>>) {
        self.peers[to as usize].queue.push_back(Queued {
            node,
            output,
            encoded,
            sent: 0,
        });
        self.queued += 1;
    }

    /// The next piece the credit lets out, and the worker it is for.
    pub(crate) fn next_piece(&mut self) -> Option<(u32, Piece)> {
        if self.queued == 0 {
            return None;
        }
        for (to, lane) in self.peers.iter_mut().enumerate() {
            if lane.credit <= 0 {
                continue;
            }
            let Some(queued) = lane.queue.front_mut() else {
                continue;
            };
            let start = queued.sent;
            let len = queued.encoded.len();
            let end = len.min(start + PIECE);
            let piece = Piece {
                from: self.me,
                node: queued.node,
                output: queued.output,
                total: len as u64,
                chunk: Chunk::Shared {
                    encoded: Arc::clone(&queued.encoded),
                    start,
                    end,
                },
            };
            queued.sent = end;
            lane.credit -= (end - start) as i64;
            if end == len {
                lane.queue.pop_front();
                self.queued -= 1;
            }
            return Some((to as u32, piece));
        }
        None
    }

    /// Worker `from` took in `bytes` more: they may go again.
    pub(crate) fn granted(&mut self, from: u32, bytes: u64) {
        if let Some(lane) = self.peers.get_mut(from as usize) {
            lane.credit = lane
                .credit
                .saturating_add(i64::try_from(bytes).unwrap_or(i64::MAX));
        }
    }

    /// The bytes of the encodings still queued (each until its last piece
    /// is out, and once however many workers it goes to).
    pub(crate) fn queued_bytes(&self) -> u64 {
        if self.queued == 0 {
            return 0;
        }
        let mut seen: Vec<*const Vec<u8>> = Vec::new();
        let mut bytes = 0;
        for queued in self.peers.iter().flat_map(|lane| &lane.queue) {
            let encoding = Arc::as_ptr(&queued.encoded);
            if !seen.contains(&encoding) {
                seen.push(encoding);
                bytes += queued.encoded.len() as u64;
            }
        }
        bytes
    }

    /// Whether every queued result has gone out whole.
    pub(crate) fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// Drops everything queued (the run stops).
    pub(crate) fn clear(&mut self) {
        for lane in &mut self.peers {
            lane.queue.clear();
        }
        self.queued = 0;
    }
}

/// The results a worker is receiving in pieces, and the credit it has yet
/// to give back to each sender.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    /// By node and whether it is a requested result: the bytes so far.
    partial: HashMap<(u32, bool), Vec<u8>>,
    /// Per worker: the bytes of its pieces taken in since it was last told.
    owed: Vec<u64>,
    /// Whether any of `owed` is not 0.
    owing: bool,
}

/// What one piece completed.
pub(crate) enum Received {
    /// The first piece of a result: room for `total` bytes is to be made.
    Started,
    /// A later piece, not the last.
    More,
    /// The last piece: the whole encoding.
    Whole(Vec<u8>),
}

impl Incoming {
    pub(crate) fn new(peers: usize) -> Incoming {
        Incoming {
            partial: HashMap::new(),
            owed: vec![0; peers],
            owing: false,
        }
    }

    /// Takes in `piece`, owing its sender credit for it.
    ///
    /// # Errors
    ///
    /// When the pieces overrun the length they announced, or there is no
    /// memory for the result.
    pub(crate) fn add(&mut self, piece: &Piece) -> Result<Received, String> {
        let Piece {
            from,
            node,
            output,
            total,
            ref chunk,
        } = *piece;
        let chunk = chunk.as_slice();
        let key = (node, output);
        let started = !self.partial.contains_key(&key);
        if let Some(owed) = self.owed.get_mut(from as usize) {
            *owed += chunk.len() as u64;
            self.owing = true;
        }
        let buffer = match self.partial.entry(key) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                let total = usize::try_from(total)
                    .map_err(|_| format!("a result of {total} bytes does not fit in memory"))?;
                let mut buffer = Vec::new();
                buffer
                    .try_reserve_exact(total)
                    .map_err(|_| format!("not enough memory for a result of {total} bytes"))?;
                entry.insert(buffer)
            }
        };
        if (buffer.len() + chunk.len()) as u64 > total {
            return Err(format!(
                "its pieces came to more than the {total} bytes announced"
            ));
        }
        buffer.extend_from_slice(chunk);
        if buffer.len() as u64 == total {
            let whole = self.partial.remove(&key).expect("found above");
            return Ok(Received::Whole(whole));
        }
        Ok(if started {
            Received::Started
        } else {
            Received::More
        })
    }

    /// The credit owed to each worker since it was last told, reset.
    pub(crate) fn take_owed(&mut self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let owed: &mut [u64] = if std::mem::take(&mut self.owing) {
            &mut self.owed
        } else {
            &mut []
        };
        owed.iter_mut()
            .enumerate()
            .filter(|(_, owed)| **owed > 0)
            .map(|(from, owed)| (from as u32, std::mem::take(owed)))
    }

    /// Drops every partial result (the run stops).
    pub(crate) fn clear(&mut self) {
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: u64 = MIN_WINDOW;

    fn encoded(len: usize) -> Arc<Vec<u8>> {
        Arc::new((0..len).map(|i| (i % 251) as u8).collect())
    }

    /// A piece from worker 0 as the receiver has it.
    fn piece(node: u32, output: bool, total: u64, bytes: &[u8]) -> Piece {
        Piece {
            from: 0,
            node,
            output,
            total,
            chunk: Chunk::Received(bytes.to_vec()),
        }
    }

    /// The pieces `out` lets go now, all for worker 1.
    fn drain(out: &mut Outgoing) -> Vec<Piece> {
        std::iter::from_fn(|| out.next_piece())
            .map(|(to, piece)| {
                assert_eq!((to, piece.from), (1, 0));
                assert!(piece.chunk.as_slice().len() <= PIECE);
                piece
            })
            .collect()
    }

    /// Moves pieces from `out` (worker 0) to `into` (worker 1) and credit
    /// back until nothing moves; gives the results received whole. No more
    /// than the window (and the piece that crosses it) is ever on its way.
    fn exchange(out: &mut Outgoing, into: &mut Incoming) -> Vec<Vec<u8>> {
        let mut whole = Vec::new();
        loop {
            let pieces = drain(out);
            if pieces.is_empty() {
                return whole;
            }
            assert!(out.peers[1].credit > -(PIECE as i64));
            for piece in &pieces {
                if let Received::Whole(bytes) = into.add(piece).expect("pieces fit") {
                    whole.push(bytes);
                }
            }
            for (from, bytes) in into.take_owed().collect::<Vec<_>>() {
                assert_eq!(from, 0);
                out.granted(1, bytes);
            }
        }
    }

    #[test]
    fn a_large_result_goes_out_a_window_at_a_time() {
        let total = 3 * WINDOW as usize + 10;
        let mut out = Outgoing::new(0, 2, WINDOW);
        out.push(1, 7, false, encoded(total));
        assert_eq!(out.queued_bytes(), total as u64);
        let first = drain(&mut out);
        let sent: usize = first.iter().map(|p| p.chunk.as_slice().len()).sum();
        assert_eq!(sent as u64, WINDOW, "the window stops the sender");
        assert!(first.iter().all(|p| (p.node, p.total) == (7, total as u64)));

        let mut into = Incoming::new(2);
        for piece in &first {
            into.add(piece).expect("pieces fit");
        }
        let owed: Vec<(u32, u64)> = into.take_owed().collect();
        assert_eq!(owed, [(0, WINDOW)], "what was taken in is owed back");
        assert_eq!(into.take_owed().count(), 0, "and told once");
        out.granted(1, WINDOW / 2);
        let next: usize = drain(&mut out)
            .iter()
            .map(|p| p.chunk.as_slice().len())
            .sum();
        assert_eq!(
            next as u64,
            WINDOW / 2,
            "half the window back lets half a window go"
        );
        assert!(!out.is_empty());
        assert_eq!(
            out.queued_bytes(),
            total as u64,
            "queued until its last piece is out"
        );
    }

    #[test]
    fn one_encoding_for_several_receivers_counts_once() {
        let mut out = Outgoing::new(0, 3, WINDOW);
        let shared = encoded(100);
        out.push(1, 9, false, Arc::clone(&shared));
        out.push(2, 9, false, shared);
        out.push(2, 4, false, encoded(10));
        assert_eq!(out.queued_bytes(), 110);
        let pieces = std::iter::from_fn(|| out.next_piece()).count();
        assert_eq!(pieces, 3);
        assert!(out.is_empty());
        assert_eq!(out.queued_bytes(), 0);
    }

    #[test]
    fn the_window_follows_the_memory_limit() {
        assert_eq!(window(128_000_000), 8_000_000);
        assert_eq!(window(1_000), MIN_WINDOW);
        assert_eq!(window(u64::MAX), MAX_WINDOW);
    }

    #[test]
    fn results_arrive_whole_and_the_credit_comes_back_to_the_window() {
        let sizes = [5 * PIECE + 3, 1, PIECE, 2 * WINDOW as usize];
        let mut out = Outgoing::new(0, 2, WINDOW);
        for (node, &len) in sizes.iter().enumerate() {
            out.push(1, node as u32, node == 2, encoded(len));
        }
        out.push(1, 9, false, encoded(100));
        let queued: usize = sizes.iter().sum::<usize>() + 100;
        assert_eq!(out.queued_bytes(), queued as u64);

        let mut into = Incoming::new(2);
        let whole = exchange(&mut out, &mut into);
        let lens: Vec<usize> = whole.iter().map(Vec::len).collect();
        assert_eq!(lens, [&sizes[..], &[100]].concat());
        for (bytes, &len) in whole.iter().zip(&sizes) {
            assert_eq!(bytes[..], encoded(len)[..]);
        }
        assert!(out.is_empty());
        assert_eq!(out.peers[1].credit, WINDOW as i64);
        assert!(into.partial.is_empty());
    }

    #[test]
    fn the_first_piece_starts_a_result_and_overruns_are_refused() {
        let mut into = Incoming::new(1);
        assert!(matches!(
            into.add(&piece(3, false, 10, &[1; 4])),
            Ok(Received::Started)
        ));
        assert!(matches!(
            into.add(&piece(3, false, 10, &[1; 4])),
            Ok(Received::More)
        ));
        // The same node as a requested result is another transfer.
        assert!(matches!(
            into.add(&piece(3, true, 6, &[1; 4])),
            Ok(Received::Started)
        ));
        let err = into
            .add(&piece(3, false, 10, &[1; 4]))
            .err()
            .expect("12 bytes of 10");
        assert!(err.contains("more than the 10 bytes announced"), "{err}");
        let two = into.add(&piece(4, false, 2, &[1, 2]));
        assert!(matches!(two, Ok(Received::Whole(b)) if b == [1, 2]));
        let err = into
            .add(&piece(5, false, u64::MAX, &[1]))
            .err()
            .expect("too large");
        assert!(err.contains("bytes"), "{err}");
    }

    #[test]
    fn a_piece_round_trips_through_bincode_with_its_bytes() {
        let sent = Piece {
            from: 1,
            node: 2,
            output: true,
            total: 100,
            chunk: Chunk::Shared {
                encoded: encoded(100),
                start: 10,
                end: 60,
            },
        };
        let bytes = bincode::serialize(&sent).unwrap();
        let back: Piece = bincode::deserialize(&bytes).unwrap();
        assert_eq!(
            (back.from, back.node, back.output, back.total),
            (1, 2, true, 100)
        );
        assert_eq!(back.chunk.as_slice(), sent.chunk.as_slice());
    }
}
