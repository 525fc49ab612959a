//! Heartbeats: each process of a run tells every other, on a connection of
//! their own, that it is alive, and notices when another falls silent or
//! goes away, whatever its worker threads are doing.
//!
//! One thread per process writes a beat (`.`) to every other process every
//! [`interval`] and checks how long each has been silent; one thread per
//! other process reads its beats. A process whose workers have all finished
//! their share says goodbye (`G`) before it closes: a process that said
//! goodbye is never taken for a silent or dead one; one that stops with an
//! error of its own (a task failed) says so (`E`), so that the others stop
//! too rather than take it for lost. When another process is silent past
//! the timeout, or its connection closes without a goodbye, the monitor
//! *trips*: it records which process, tells the others which (`L` and the
//! process's number), and shuts the run's data connections down so that no
//! thread of timely's waits on them for ever. A process that goes away
//! after naming a lost one is not taken for the loss itself: the others
//! name the one it named, whichever of the two they hear of first.
//!
//! Given the tasks this process runs as it runs them (a [`Progress`]), the
//! beating thread also tells the others, every 50 ms at most, which tasks
//! it has run since it last told (`R`, a count, and as many task numbers),
//! so that the survivors of a loss know what the lost process had done.
//! Everything a process writes to another goes through one queue per
//! connection, so that a frame a full buffer cut short is finished before
//! anything else is sent, and the reader never loses its place.
//!
//! After a loss the heartbeats can outlive the run ([`Watch`]): the
//! survivors go on beating while they regroup, so that which processes are
//! lost stays known, by the same measure, until the next attempt begins.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use graph_core::NodeId;

use crate::{Error, FrameProblem, Progress};

const BEAT: u8 = b'.';
const GOODBYE: u8 = b'G';
const FAILED: u8 = b'E';
const RAN: u8 = b'R';
const LOST_ONE: u8 = b'L';

/// What [`Peer::named_lost`] holds while a peer has named no process.
const NAMED_NONE: usize = usize::MAX;

/// The most task numbers in one `R` frame; a frame saying more is not
/// from a process of this run, and what follows it is not read.
const RAN_FRAME: usize = 1 << 14;

/// How often a reader looks whether the monitor stops.
const READ_SLICE: Duration = Duration::from_millis(200);

/// How often beats go out: four times a timeout, at most every second and
/// at least every 25 ms.
pub(crate) fn interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(25), Duration::from_secs(1))
}

/// Why the monitor tripped.
#[derive(Clone, Debug)]
enum Trip {
    Silent {
        process: usize,
        waited: Duration,
    },
    Lost {
        process: usize,
    },
    Malformed {
        process: usize,
        problem: FrameProblem,
    },
    Stalled {
        process: usize,
        waited: Duration,
    },
    Failed {
        process: usize,
    },
}

impl Trip {
    /// The process taken for lost: silent, gone or stalled.
    fn lost(&self) -> Option<usize> {
        match *self {
            Trip::Silent { process, .. }
            | Trip::Lost { process }
            | Trip::Stalled { process, .. } => Some(process),
            Trip::Malformed { .. } | Trip::Failed { .. } => None,
        }
    }
}

/// The heartbeats of one process of a run, and what they tell.
pub struct Monitor {
    shared: Arc<Shared>,
    /// Empty once handed to a [`Watch`].
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    started: Instant,
    timeout: Duration,
    addresses: Vec<String>,
    /// Per process (`None` for this one): its heartbeat connection and what
    /// it said.
    peers: Vec<Option<Peer>>,
    /// The run's data connections, to shut down when the monitor trips.
    data: Vec<TcpStream>,
    tripped: AtomicBool,
    trip: Mutex<Option<Trip>>,
    stop: AtomicBool,
    /// The tasks this process runs, to tell the others.
    progress: Option<Progress>,
}

struct Peer {
    stream: TcpStream,
    /// Milliseconds after `started` of its last beat.
    last_beat: AtomicU64,
    said_goodbye: AtomicBool,
    /// It said it stopped with an error of its own.
    said_failed: AtomicBool,
    /// The process it said it stopped for the loss of ([`NAMED_NONE`]
    /// until it says one).
    named_lost: AtomicUsize,
    /// Its connection closed (or broke).
    closed: AtomicBool,
    /// What is still to be written to it, in order.
    out: Mutex<Vec<u8>>,
    /// The tasks it said it ran.
    heard: Mutex<Vec<NodeId>>,
}

impl Monitor {
    /// Starts the heartbeats over `beats` (one connection per other
    /// process, `None` at this process's index); `data` are clones of the
    /// run's data connections. The tasks recorded in `progress` are told to
    /// the others as they run.
    pub(crate) fn start(
        beats: Vec<Option<TcpStream>>,
        data: Vec<TcpStream>,
        addresses: &[String],
        timeout: Duration,
        progress: Option<Progress>,
    ) -> Result<Monitor, std::io::Error> {
        let mut peers = Vec::with_capacity(beats.len());
        let mut readers = Vec::new();
        for stream in beats {
            let Some(stream) = stream else {
                peers.push(None);
                continue;
            };
            stream.set_nodelay(true)?;
            stream.set_write_timeout(Some(interval(timeout)))?;
            readers.push(stream.try_clone()?);
            peers.push(Some(Peer {
                stream,
                last_beat: AtomicU64::new(0),
                said_goodbye: AtomicBool::new(false),
                said_failed: AtomicBool::new(false),
                named_lost: AtomicUsize::new(NAMED_NONE),
                closed: AtomicBool::new(false),
                out: Mutex::new(Vec::new()),
                heard: Mutex::new(Vec::new()),
            }));
        }
        let shared = Arc::new(Shared {
            started: Instant::now(),
            timeout,
            addresses: addresses.to_vec(),
            peers,
            data,
            tripped: AtomicBool::new(false),
            trip: Mutex::new(None),
            stop: AtomicBool::new(false),
            progress,
        });
        let mut threads = Vec::new();
        let beating = Arc::clone(&shared);
        threads.push(
            std::thread::Builder::new()
                .name("taskgraph-heartbeat".to_string())
                .spawn(move || beating.beat())?,
        );
        let processes = shared.peers.iter().enumerate().filter(|(_, p)| p.is_some());
        for ((process, _), stream) in processes.zip(readers) {
            let reading = Arc::clone(&shared);
            threads.push(
                std::thread::Builder::new()
                    .name(format!("taskgraph-heartbeat-{process}"))
                    .spawn(move || reading.read(process, stream))?,
            );
        }
        Ok(Monitor {
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// Why the run must stop, once another process is silent or gone.
    pub fn problem(&self) -> Option<Error> {
        self.shared.problem()
    }

    /// What the run's data connections trip the monitor with.
    pub(crate) fn tripwire(&self) -> Tripwire {
        Tripwire(Arc::clone(&self.shared))
    }

    /// Whether the monitor tripped; cheap enough for every turn of a
    /// worker's loop.
    pub fn tripped(&self) -> bool {
        self.shared.tripped.load(Ordering::Relaxed)
    }

    /// Shuts the run's data connections down, so that timely's threads stop
    /// waiting on them: for a process whose workers stopped early.
    pub fn shut_data(&self) {
        self.shared.shut_data();
    }

    /// Tells every other process that this one has finished its share.
    pub fn goodbye(&self) {
        self.shared.say(GOODBYE);
    }

    /// Tells every other process that this one stopped with an error of its
    /// own, which ends the run for all.
    pub fn failing(&self) {
        self.shared.say(FAILED);
    }

    /// The heartbeats, going on after the run: this process keeps beating,
    /// and the watch keeps telling which others are lost, until it drops.
    pub fn watch(&self) -> Watch {
        let threads =
            std::mem::take(&mut *self.threads.lock().unwrap_or_else(PoisonError::into_inner));
        Watch(Box::new(Kept {
            shared: Arc::clone(&self.shared),
            threads,
        }))
    }
}

/// The heartbeats of a run that stopped for the loss of another process,
/// still going: this process goes on beating, so that the survivors take it
/// for alive while they regroup ([`regroup`](crate::regroup)), and the
/// watch tells which processes are lost by then. Dropping it stops the
/// heartbeats.
pub struct Watch(Box<Kept>);

/// What a [`Watch`] keeps going (boxed: a run's error stays small).
struct Kept {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Watch {
    /// The processes of the run known to be lost now, ascending: each
    /// connection closed without a goodbye, or silent past the heartbeat
    /// timeout.
    pub fn lost(&self) -> Vec<usize> {
        let now_ms = self.0.shared.now_ms();
        let timeout = self.0.shared.timeout.as_millis() as u64;
        (self.0.shared.peers.iter().enumerate())
            .filter_map(|(process, peer)| {
                let peer = peer.as_ref()?;
                let gone = peer.closed.load(Ordering::Acquire)
                    || now_ms.saturating_sub(peer.last_beat.load(Ordering::Relaxed)) > timeout;
                (gone && !peer.said_goodbye.load(Ordering::Relaxed)).then_some(process)
            })
            .collect()
    }

    /// A process that said it stopped with an error of its own, if any:
    /// then the run ends, for every process.
    pub fn failed(&self) -> Option<usize> {
        (self.0.shared.peers.iter().enumerate())
            .find(|(_, peer)| {
                peer.as_ref()
                    .is_some_and(|peer| peer.said_failed.load(Ordering::Acquire))
            })
            .map(|(process, _)| process)
    }

    /// The tasks `process` said it ran (all but those of its last 50 ms or
    /// so), in the order it said; none for this process or one out of
    /// range.
    pub fn heard(&self, process: usize) -> Vec<NodeId> {
        let Some(Some(peer)) = self.0.shared.peers.get(process) else {
            return Vec::new();
        };
        peer.heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The processes of the run, this one included.
    pub fn processes(&self) -> usize {
        self.0.shared.peers.len()
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("lost", &self.lost())
            .field("failed", &self.failed())
            .finish()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let kept = &mut *self.0;
        kept.shared.halt(&mut kept.threads);
    }
}

/// Trips a process's monitor from one of its data connections: what came
/// on it could not have come from the peer, or stopped in the middle of a
/// frame.
#[derive(Clone)]
pub(crate) struct Tripwire(Arc<Shared>);

impl Tripwire {
    /// `process` sent what is described by `problem`.
    pub(crate) fn malformed(&self, process: usize, problem: FrameProblem) {
        self.0.trip(Trip::Malformed { process, problem });
    }

    /// `process`'s data stopped inside a frame for `waited`.
    pub(crate) fn stalled(&self, process: usize, waited: Duration) {
        self.0.trip(Trip::Stalled { process, waited });
    }

    /// Whether the monitor tripped.
    pub(crate) fn tripped(&self) -> bool {
        self.0.tripped.load(Ordering::Relaxed)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let threads = self
            .threads
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // Handed to a watch, the heartbeats go on.
        if !threads.is_empty() {
            self.shared.halt(threads);
        }
    }
}

impl Shared {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Sends `word` to every other process.
    fn say(&self, word: u8) {
        for peer in self.peers.iter().flatten() {
            send(peer, &[word]);
        }
    }

    /// Tells every other process the tasks this one has run since it last
    /// told.
    fn tell_progress(&self) {
        let Some(progress) = &self.progress else {
            return;
        };
        let ran = progress.take();
        for chunk in ran.chunks(RAN_FRAME) {
            let mut frame = Vec::with_capacity(5 + 4 * chunk.len());
            frame.push(RAN);
            frame.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
            for node in chunk {
                frame.extend_from_slice(&node.as_u32().to_le_bytes());
            }
            for peer in self.peers.iter().flatten() {
                if !peer.said_goodbye.load(Ordering::Relaxed) {
                    send(peer, &frame);
                }
            }
        }
    }

    /// Stops the heartbeats and waits for their `threads`. Closing the
    /// connections wakes the readers from their reads, and the beating
    /// thread is woken from its wait: a run ends without waiting out
    /// either.
    fn halt(&self, threads: &mut Vec<JoinHandle<()>>) {
        self.stop.store(true, Ordering::SeqCst);
        for peer in self.peers.iter().flatten() {
            let _ = peer.stream.shutdown(Shutdown::Both);
        }
        for handle in threads.iter() {
            handle.thread().unpark();
        }
        for handle in threads.drain(..) {
            let _ = handle.join();
        }
    }

    fn problem(&self) -> Option<Error> {
        if !self.tripped.load(Ordering::Acquire) {
            return None;
        }
        let trip = self.trip.lock().unwrap_or_else(PoisonError::into_inner);
        Some(match trip.clone()? {
            Trip::Silent { process, waited } => Error::Silent {
                process,
                address: self.addresses[process].clone(),
                waited,
            },
            Trip::Lost { process } => Error::Lost {
                process,
                address: self.addresses[process].clone(),
            },
            Trip::Malformed { process, problem } => Error::Malformed {
                process,
                address: self.addresses[process].clone(),
                problem,
            },
            Trip::Stalled { process, waited } => Error::Stalled {
                process,
                address: self.addresses[process].clone(),
                waited,
            },
            Trip::Failed { process } => Error::PeerFailed {
                process,
                address: self.addresses[process].clone(),
            },
        })
    }

    /// Records the first reason to stop, tells the others which process is
    /// lost where it is one, and unblocks timely's threads.
    fn trip(&self, trip: Trip) {
        let lost = trip.lost();
        {
            let mut slot = self.trip.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_some() {
                return;
            }
            *slot = Some(trip);
        }
        // Outside the lock: a write to a frozen peer may wait out its
        // timeout. Before the trip shows: the run ends, and the connections
        // close, only after that.
        if let Some(lost) = lost {
            let mut frame = vec![LOST_ONE];
            frame.extend_from_slice(&(lost as u32).to_le_bytes());
            for peer in self.peers.iter().flatten() {
                send(peer, &frame);
            }
        }
        self.tripped.store(true, Ordering::Release);
        self.shut_data();
    }

    fn shut_data(&self) {
        for stream in &self.data {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The beating thread: beats, and checks for silence.
    fn beat(&self) {
        let interval = interval(self.timeout);
        let mut next = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= next {
                next = now + interval;
                for peer in self.peers.iter().flatten() {
                    if !peer.said_goodbye.load(Ordering::Relaxed) {
                        send(peer, &[BEAT]);
                    }
                }
            }
            self.tell_progress();
            let now_ms = self.now_ms();
            for (process, peer) in self.peers.iter().enumerate() {
                let Some(peer) = peer else { continue };
                let silent = Duration::from_millis(
                    now_ms.saturating_sub(peer.last_beat.load(Ordering::Relaxed)),
                );
                if silent > self.timeout && !peer.said_goodbye.load(Ordering::Relaxed) {
                    self.trip(Trip::Silent {
                        process,
                        waited: silent,
                    });
                }
            }
            // Woken early when the monitor stops.
            std::thread::park_timeout(interval.min(Duration::from_millis(50)));
        }
    }

    /// The thread reading `process`'s beats.
    fn read(&self, process: usize, mut stream: TcpStream) {
        let peer = self.peers[process].as_ref().expect("a reader per peer");
        let _ = stream.set_read_timeout(Some(READ_SLICE));
        let mut buf = [0_u8; 4096];
        let mut words = Words::default();
        while !self.stop.load(Ordering::Relaxed) {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    peer.last_beat.store(self.now_ms(), Ordering::Relaxed);
                    words.take(&buf[..n], peer);
                }
                Err(err) if crate::handshake::is_timeout(&err) => {}
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        peer.closed.store(true, Ordering::Release);
        if !self.stop.load(Ordering::Relaxed) && !peer.said_goodbye.load(Ordering::Relaxed) {
            // One that failed says why itself (its failure reaches the
            // others through the run too); it is not lost. One that
            // stopped for the loss of another went because of that loss.
            let named = peer.named_lost.load(Ordering::Acquire);
            self.trip(if peer.said_failed.load(Ordering::Acquire) {
                Trip::Failed { process }
            } else if self.peers.get(named).is_some_and(Option::is_some) {
                Trip::Lost { process: named }
            } else {
                Trip::Lost { process }
            });
        }
    }
}

/// Writes what is queued for `peer` and then `bytes`, as far as its
/// connection takes them before the write timeout; the rest waits for the
/// next send. A frozen peer's full buffer makes this time out, never block
/// for long: its silence is what counts.
fn send(peer: &Peer, bytes: &[u8]) {
    let mut out = peer.out.lock().unwrap_or_else(PoisonError::into_inner);
    out.extend_from_slice(bytes);
    let mut sent = 0;
    while sent < out.len() {
        match (&peer.stream).write(&out[sent..]) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    out.drain(..sent);
}

/// The little-endian `u32` at `at` in `bytes`, if they go that far.
fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let word: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(word))
}

/// What a reader has read of another process's words, across reads.
#[derive(Default)]
struct Words {
    /// Bytes of a frame not yet whole.
    partial: Vec<u8>,
    /// Set once a frame was not from a process of this run: then nothing
    /// more is made of what comes but that it comes.
    lost_place: bool,
}

impl Words {
    /// Takes in `bytes`, recording in `peer` what they say.
    fn take(&mut self, bytes: &[u8], peer: &Peer) {
        if self.lost_place {
            return;
        }
        self.partial.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(&word) = self.partial.get(at) {
            match word {
                RAN => {
                    let Some(count) = u32_at(&self.partial, at + 1) else {
                        break;
                    };
                    let count = count as usize;
                    if count > RAN_FRAME {
                        self.lost_place = true;
                        self.partial = Vec::new();
                        return;
                    }
                    let end = at + 5 + 4 * count;
                    if self.partial.len() < end {
                        break;
                    }
                    let mut heard = peer.heard.lock().unwrap_or_else(PoisonError::into_inner);
                    heard.extend(
                        (at + 5..end)
                            .step_by(4)
                            .filter_map(|i| u32_at(&self.partial, i))
                            .map(NodeId::from_u32),
                    );
                    at = end;
                }
                GOODBYE => {
                    peer.said_goodbye.store(true, Ordering::Relaxed);
                    at += 1;
                }
                FAILED => {
                    peer.said_failed.store(true, Ordering::Release);
                    at += 1;
                }
                LOST_ONE => {
                    let Some(process) = u32_at(&self.partial, at + 1) else {
                        break;
                    };
                    peer.named_lost.store(process as usize, Ordering::Release);
                    at += 5;
                }
                _ => at += 1,
            }
        }
        self.partial.drain(..at);
    }
}

#[cfg(test)]
mod tests;
