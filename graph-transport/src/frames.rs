//! timely's data connections, read through a check of every frame.
//!
//! timely trusts what arrives on a data connection: a frame header that
//! announces more bytes than will ever come keeps it waiting for ever, a
//! length near 2^64 wraps its arithmetic into a loop that never ends, and a
//! target outside this process's workers panics it. The handshake proves
//! who is at the other end when the connection opens; nothing after that
//! protects the bytes (no encryption, no per-frame integrity). So every
//! data connection is read through [`Checked`], which follows the frames as
//! they pass, without copying them, and stops the run, naming the peer,
//! when a header is not one that peer could have sent or when the
//! connection stalls in the middle of a frame.
//!
//! A frame is a header of six big-endian 64-bit words (channel, source
//! worker, first and end target worker, length, sequence number) and
//! `length` bytes; a header with length 0 (and every other word 0) ends the
//! connection.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use crate::FrameProblem;
use crate::heartbeat::Tripwire;

/// The most bytes one frame may announce. No frame of a run comes near it:
/// large results travel in pieces of 256 KiB, and a worker flushes what it
/// sends before whole results add up to 64 MiB.
pub const MAX_FRAME: u64 = 1 << 30;

/// The bytes of a frame header.
const HEADER: usize = 48;

/// How often a read that waits looks whether the connection stalled.
const READ_SLICE: Duration = Duration::from_millis(200);

/// Which frames a connection may carry: those of one peer's workers, to
/// this process's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peers {
    /// The peer's workers.
    pub(crate) sources: (u64, u64),
    /// This process's workers.
    pub(crate) targets: (u64, u64),
}

impl Peers {
    /// The frames process `peer` may send process `me`, each with
    /// `threads` workers.
    pub(crate) fn new(peer: usize, me: usize, threads: usize) -> Peers {
        let range = |process: usize| {
            let first = (process * threads) as u64;
            (first, first + threads as u64)
        };
        Peers {
            sources: range(peer),
            targets: range(me),
        }
    }
}

/// Where a reader is in the stream of frames.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Position {
    /// `have` bytes of a header read.
    Header { have: usize },
    /// `left` bytes of a frame's body still to come.
    Body { left: u64 },
    /// The frame that ends the connection was read.
    Ended,
}

/// Follows the frames of one connection and checks each header.
#[derive(Debug)]
pub(crate) struct Frames {
    peers: Peers,
    position: Position,
    header: [u8; HEADER],
}

impl Frames {
    pub(crate) fn new(peers: Peers) -> Frames {
        Frames {
            peers,
            position: Position::Header { have: 0 },
            header: [0; HEADER],
        }
    }

    /// Whether the reader is inside a frame (a header or a body started
    /// and not finished).
    pub(crate) fn inside(&self) -> bool {
        !matches!(
            self.position,
            Position::Header { have: 0 } | Position::Ended
        )
    }

    /// Follows `bytes`, the next bytes of the connection.
    ///
    /// # Errors
    ///
    /// What is wrong with the first header that could not have come from
    /// the peer, or bytes after the frame that ends the connection.
    pub(crate) fn scan(&mut self, mut bytes: &[u8]) -> Result<(), FrameProblem> {
        while !bytes.is_empty() {
            match &mut self.position {
                Position::Body { left } => {
                    let skipped = (*left).min(bytes.len() as u64);
                    *left -= skipped;
                    bytes = &bytes[skipped as usize..];
                    if *left == 0 {
                        self.position = Position::Header { have: 0 };
                    }
                }
                Position::Header { have } => {
                    let taken = (HEADER - *have).min(bytes.len());
                    self.header[*have..*have + taken].copy_from_slice(&bytes[..taken]);
                    *have += taken;
                    bytes = &bytes[taken..];
                    if *have == HEADER {
                        self.position = self.check()?;
                    }
                }
                Position::Ended => {
                    return Err(FrameProblem::AfterTheEnd { bytes: bytes.len() });
                }
            }
        }
        Ok(())
    }

    /// Checks the header just read, and says what comes after it.
    fn check(&self) -> Result<Position, FrameProblem> {
        let word = |i: usize| {
            let mut bytes = [0; 8];
            bytes.copy_from_slice(&self.header[i * 8..i * 8 + 8]);
            u64::from_be_bytes(bytes)
        };
        let [channel, source, first, end, length, sequence] = std::array::from_fn(word);
        if length == 0 {
            return if [channel, source, first, end, sequence] == [0; 5] {
                Ok(Position::Ended)
            } else {
                Err(FrameProblem::Empty)
            };
        }
        if length > MAX_FRAME {
            return Err(FrameProblem::TooLong { length });
        }
        let (from, to) = self.peers.sources;
        if !(from..to).contains(&source) {
            return Err(FrameProblem::FromStranger {
                worker: source,
                workers: (from, to),
            });
        }
        let (from, to) = self.peers.targets;
        if !(first < end && from <= first && end <= to) {
            return Err(FrameProblem::ForStrangers {
                first,
                end,
                workers: (from, to),
            });
        }
        Ok(Position::Body { left: length })
    }
}

/// A data connection as timely reads and writes it, its frames checked as
/// they are read.
pub(crate) struct Checked {
    stream: TcpStream,
    frames: Frames,
    /// The peer's process index.
    peer: usize,
    /// When the last bytes arrived.
    last: Instant,
    /// How long a frame may stall before the run stops.
    stall: Duration,
    tripwire: Tripwire,
}

impl Checked {
    /// Reads `stream`, the data connection from process `peer`, checking
    /// its frames against `peers`; a bad frame, or a frame that stalls for
    /// `stall`, trips `tripwire`.
    pub(crate) fn new(
        stream: TcpStream,
        peer: usize,
        peers: Peers,
        stall: Duration,
        tripwire: Tripwire,
    ) -> io::Result<Checked> {
        // A read that waits wakes now and then to look for a stall; the
        // waits themselves are invisible to timely.
        stream.set_read_timeout(Some(READ_SLICE.min(stall)))?;
        Ok(Checked {
            stream,
            frames: Frames::new(peers),
            peer,
            last: Instant::now(),
            stall,
            tripwire,
        })
    }
}

impl Read for Checked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.stream.read(buf) {
                Ok(read) => {
                    if let Err(problem) = self.frames.scan(&buf[..read]) {
                        self.tripwire.malformed(self.peer, problem);
                        return Err(io::Error::new(io::ErrorKind::InvalidData, problem));
                    }
                    self.last = Instant::now();
                    return Ok(read);
                }
                Err(err) if crate::handshake::is_timeout(&err) => {
                    let waited = self.last.elapsed();
                    if self.frames.inside() && waited > self.stall {
                        self.tripwire.stalled(self.peer, waited);
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the connection stalled inside a frame",
                        ));
                    }
                    if self.tripwire.tripped() {
                        return Err(err);
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
    }
}

impl Write for Checked {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

impl timely::communication::allocator::zero_copy::stream::Stream for Checked {
    fn try_clone(&self) -> io::Result<Checked> {
        Ok(Checked {
            stream: self.stream.try_clone()?,
            frames: Frames::new(self.frames.peers),
            peer: self.peer,
            last: Instant::now(),
            stall: self.stall,
            tripwire: self.tripwire.clone(),
        })
    }

    fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        self.stream.set_nonblocking(nonblocking)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.stream.shutdown(how)
    }
}

#[cfg(test)]
mod tests;
