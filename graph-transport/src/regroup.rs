//! Regrouping after a loss without a supervisor: the processes of a run
//! across hosts that are still alive agree on who goes on, and each learns
//! what the others hold.
//!
//! Every survivor keeps its heartbeats going ([`Watch`]), so that a process
//! counts as lost by one measure throughout: its heartbeat connection
//! closed, or it was silent past the heartbeat timeout. The survivor of the
//! lowest number gathers the others. Each survivor looks for it by dialling
//! the processes below its own number in turn, passing over those its watch
//! counts as lost and those that do not answer within the heartbeat
//! timeout. The first that answers gathers: the survivor sends it its
//! report and waits for the decision. A survivor that finds no one below
//! gathers itself: it listens on its own address, takes every survivor's
//! report until each process of the run has either joined or been counted
//! lost (or the heartbeat timeout has passed), then sends everyone the
//! same decision: the survivors, in order, and every report.
//!
//! The survivors go on only when they are a majority of the run's
//! processes, or exactly half with its process 0: a cut network leaves
//! every side alive, and no more than one side may finish the run.
//!
//! Every connection is authenticated by the run's handshake, on a channel
//! of its own, with a fingerprint of the regroup's round: a process of an
//! earlier round, or of another run, is not taken in.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::cluster::{Auth, Cluster};
use crate::handshake::{self, Channel, HANDSHAKE_TIMEOUT, Hello, Key};
use crate::heartbeat::Watch;
use crate::{Error, RegroupProblem};

/// A survivor's report, to the one that gathers.
const JOIN: u8 = b'J';
/// "Not me: join process P", from a survivor that found one below it.
const FOLLOW: u8 = b'F';
/// The survivors and their reports.
const DECISION: u8 = b'D';
/// "Process P stopped with an error of its own": the run ends.
const FAILED: u8 = b'X';

/// The longest report taken, in bytes.
const MAX_REPORT: u64 = 1 << 30;

/// How often a survivor looks again for one below it that does not
/// listen yet, and the one that gathers for who has joined.
const LOOK_AGAIN: Duration = Duration::from_millis(10);

/// The processes that go on after a loss, as [`regroup`] found them.
#[derive(Debug)]
pub struct Regrouped {
    /// The cluster of the next attempt: the survivors' addresses, in order,
    /// and this process's number among them.
    pub cluster: Cluster,
    /// The survivors, by their numbers in the run that lost the others,
    /// ascending.
    pub survivors: Vec<usize>,
    /// The processes lost, by those numbers, ascending.
    pub lost: Vec<usize>,
    /// Each survivor's report, in the order of `survivors`.
    pub reports: Vec<Vec<u8>>,
}

/// After the loss of other processes of `cluster`'s run, finds the
/// processes still alive and agrees with them on who goes on: every
/// survivor gets the same [`Regrouped`], with the next attempt's cluster
/// and every survivor's `report` (any bytes: what it holds). `watch` is
/// the stopped run's ([`Monitor::watch`](crate::Monitor::watch)), and
/// `round` counts the regroups of the run (the same on every process), so
/// that a process of another round is not taken in.
///
/// It takes at most about twice the heartbeat timeout, and much less when
/// the lost processes are known to be gone (their connections closed).
///
/// # Errors
///
/// [`Error::NoMajority`] when the survivors are too few to be sure no
/// other group of the run goes on; [`Error::PeerFailed`] when a process
/// stopped with an error of its own; [`Error::Regroup`] when the one that
/// gathers went away or could not be read; [`Error::Listen`] when this
/// process must gather and cannot listen; [`Error::Interrupted`] on the
/// cluster's cancel; [`Error::NoSecret`] for a cluster of several processes
/// with neither a secret nor `insecure`.
///
/// # Examples
///
/// ```no_run
/// use graph_transport::{Cluster, connect, regroup};
///
/// let cluster = Cluster::from_hostfile("hosts".as_ref(), 1, 2)?.with_secret("a secret of 16 bytes+")?;
/// let connected = connect(&cluster, [0; 32], None)?;
/// // The run, on `connected.builders`, until a loss stops it; then:
/// if let Some(monitor) = &connected.monitor {
///     let watch = monitor.watch();
///     let regrouped = regroup(&cluster, &watch, 1, b"what this process holds")?;
///     println!("going on with processes {:?}", regrouped.survivors);
/// }
/// # Ok::<(), graph_transport::Error>(())
/// ```
pub fn regroup(
    cluster: &Cluster,
    watch: &Watch,
    round: u32,
    report: &[u8],
) -> Result<Regrouped, Error> {
    let key: Arc<[u8]> = match cluster.auth() {
        Auth::Secret(secret) => Arc::clone(secret),
        Auth::Insecure => Arc::from(&[][..]),
        Auth::Unset => return Err(Error::NoSecret),
    };
    let me = cluster.process();
    let hello = Hello {
        channel: Channel::Regroup as u32,
        process: me as u32,
        processes: cluster.processes() as u32,
        threads: cluster.threads() as u32,
        fingerprint: fingerprint(round),
        nonce: [0; 32],
    };
    let deadline = Instant::now() + cluster.heartbeat_timeout();
    let peers = Peers {
        cluster,
        watch,
        key: &key,
        hello,
        deadline,
    };
    // Listening from the start, so that those above find this process
    // while it looks for one below (it matters only if this one gathers).
    let gathering = Gathering::open(cluster, Arc::clone(&key), hello);
    let mut candidate = 0;
    while candidate < me {
        peers.check()?;
        if watch.lost().contains(&candidate) {
            candidate += 1;
            continue;
        }
        match peers.reach(candidate)? {
            Some(stream) => {
                if let Ok(gathering) = gathering {
                    gathering.redirect(candidate);
                }
                return peers.follow(candidate, stream, report);
            }
            None => candidate += 1,
        }
    }
    peers.gather(gathering?, report)
}

/// A regroup's view of the other processes.
struct Peers<'a> {
    cluster: &'a Cluster,
    watch: &'a Watch,
    key: &'a [u8],
    hello: Hello,
    /// When to stop waiting for a process that does not answer.
    deadline: Instant,
}

impl Peers<'_> {
    /// Stops on the cluster's cancel, or when a process has failed.
    fn check(&self) -> Result<(), Error> {
        if self.cluster.cancel().is_some_and(|c| c.is_cancelled()) {
            return Err(Error::Interrupted);
        }
        match self.watch.failed() {
            Some(process) => Err(self.failed(process)),
            None => Ok(()),
        }
    }

    fn failed(&self, process: usize) -> Error {
        Error::PeerFailed {
            process,
            address: self.address(process).to_string(),
        }
    }

    fn address(&self, process: usize) -> &str {
        self.cluster
            .addresses()
            .get(process)
            .map_or("?", String::as_str)
    }

    /// An authenticated connection to `process`, which listens once it
    /// regroups too; `None` once it is counted lost or the deadline has
    /// passed.
    fn reach(&self, process: usize) -> Result<Option<TcpStream>, Error> {
        let address = self.address(process);
        loop {
            self.check()?;
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.watch.lost().contains(&process) {
                return Ok(None);
            }
            let connected = crate::connect::resolve(address)
                .and_then(|socket| TcpStream::connect_timeout(&socket, left.min(LOOK_AGAIN * 10)));
            if let Ok(mut stream) = connected {
                let hello = Hello {
                    nonce: handshake::nonce().map_err(|problem| Error::Handshake {
                        peer: address.to_string(),
                        process: Some(process),
                        problem,
                    })?,
                    ..self.hello
                };
                let by = self.deadline.min(Instant::now() + HANDSHAKE_TIMEOUT);
                if handshake::dial(&mut stream, Key(self.key), &hello, process as u32, by).is_ok() {
                    return Ok(Some(stream));
                }
            }
            std::thread::sleep(LOOK_AGAIN);
        }
    }

    /// Joins `leader` (reached on `stream`) with `report`, and takes its
    /// decision; follows it to one below if it says so.
    fn follow(
        &self,
        mut leader: usize,
        mut stream: TcpStream,
        report: &[u8],
    ) -> Result<Regrouped, Error> {
        loop {
            let gone = |error: std::io::Error| Error::Regroup {
                problem: RegroupProblem::LeaderGone {
                    process: leader,
                    address: self.address(leader).to_owned(),
                    error,
                },
            };
            // The one that gathers waits at most the heartbeat timeout for
            // the others, after looking as long for one below it.
            let patience = self.cluster.heartbeat_timeout() * 2 + HANDSHAKE_TIMEOUT;
            stream
                .set_read_timeout(Some(patience))
                .and_then(|()| stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT)))
                .map_err(gone)?;
            let mut message = vec![JOIN];
            message.extend_from_slice(&(report.len() as u64).to_le_bytes());
            message.extend_from_slice(report);
            stream.write_all(&message).map_err(gone)?;
            let mut word = [0_u8; 1];
            stream.read_exact(&mut word).map_err(gone)?;
            match word[0] {
                FOLLOW => {
                    let next = read_u32(&mut stream).map_err(gone)? as usize;
                    if next >= leader {
                        return Err(self.unreadable(leader, "it named no process below it"));
                    }
                    leader = next;
                    stream = self.reach(leader)?.ok_or_else(|| Error::Regroup {
                        problem: RegroupProblem::LeaderSilent {
                            process: leader,
                            address: self.address(leader).to_owned(),
                        },
                    })?;
                }
                FAILED => {
                    let process = read_u32(&mut stream).map_err(gone)? as usize;
                    return Err(self.failed(process));
                }
                DECISION => {
                    let decision =
                        read_decision(&mut stream, self.cluster.processes()).map_err(|err| {
                            match err {
                                Unreadable::Io(err) => gone(err),
                                Unreadable::Bad(what) => self.unreadable(leader, what),
                            }
                        })?;
                    let Decision { survivors, reports } = decision;
                    return self.conclude(survivors, reports);
                }
                _ => return Err(self.unreadable(leader, "an unknown message")),
            }
        }
    }

    fn unreadable(&self, leader: usize, what: &'static str) -> Error {
        Error::Regroup {
            problem: RegroupProblem::Unreadable {
                process: leader,
                address: self.address(leader).to_owned(),
                what,
            },
        }
    }

    /// Gathers the survivors: waits until every process has joined or is
    /// counted lost, or the deadline, then tells every survivor the
    /// decision.
    fn gather(&self, gathering: Gathering, report: &[u8]) -> Result<Regrouped, Error> {
        let me = self.cluster.process();
        let n = self.cluster.processes();
        let mut joined: Vec<Joiner> = Vec::new();
        loop {
            if let Err(err) = self.check() {
                if let Error::PeerFailed { process, .. } = &err {
                    for joiner in &mut joined {
                        let mut message = vec![FAILED];
                        message.extend_from_slice(&(*process as u32).to_le_bytes());
                        let _ = joiner.stream.write_all(&message);
                    }
                }
                return Err(err);
            }
            while let Ok(joiner) = gathering.joiners.try_recv() {
                joined.push(joiner);
            }
            let lost = self.watch.lost();
            let waiting = (0..n)
                .filter(|&p| p != me && !lost.contains(&p))
                .any(|p| !joined.iter().any(|j| j.process == p));
            if !waiting || Instant::now() >= self.deadline {
                break;
            }
            std::thread::sleep(LOOK_AGAIN);
        }
        // Those whose reports came while the listener closed are taken too.
        joined.extend(gathering.close());
        joined.sort_by_key(|j| j.process);
        joined.dedup_by_key(|j| j.process);
        let mut survivors = vec![me];
        let mut reports = vec![report.to_vec()];
        for joiner in &joined {
            survivors.push(joiner.process);
            reports.push(joiner.report.clone());
        }
        // Ascending: every joiner dialled from above.
        let mut message = vec![DECISION];
        message.extend_from_slice(&(survivors.len() as u32).to_le_bytes());
        for (process, report) in survivors.iter().zip(&reports) {
            message.extend_from_slice(&(*process as u32).to_le_bytes());
            message.extend_from_slice(&(report.len() as u64).to_le_bytes());
            message.extend_from_slice(report);
        }
        for joiner in &mut joined {
            // One that went away meanwhile fails the next attempt's
            // connecting, which says so.
            let _ = joiner
                .stream
                .set_write_timeout(Some(self.cluster.heartbeat_timeout()))
                .and_then(|()| joiner.stream.write_all(&message));
        }
        self.conclude(survivors, reports)
    }

    /// The decision, from this process's side: the next attempt's cluster,
    /// or why the run cannot go on.
    fn conclude(&self, survivors: Vec<usize>, reports: Vec<Vec<u8>>) -> Result<Regrouped, Error> {
        let n = self.cluster.processes();
        let me = self.cluster.process();
        let lost: Vec<usize> = (0..n).filter(|p| !survivors.contains(p)).collect();
        let majority = 2 * survivors.len() > n || (2 * survivors.len() == n && survivors[0] == 0);
        if !majority {
            return Err(Error::NoMajority {
                survivors,
                lost,
                processes: n,
            });
        }
        let Some(process) = survivors.iter().position(|&p| p == me) else {
            return Err(Error::Regroup {
                problem: RegroupProblem::LeftOut,
            });
        };
        Ok(Regrouped {
            cluster: self.cluster.shrunk(&survivors, process),
            survivors,
            lost,
            reports,
        })
    }
}

/// The fingerprint a regroup's handshakes agree on.
fn fingerprint(round: u32) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"taskgraph regroup/1")
        .chain_update(round.to_le_bytes())
        .finalize()
        .into()
}

/// A survivor that joined, with its report.
struct Joiner {
    process: usize,
    stream: TcpStream,
    report: Vec<u8>,
}

/// This process's listener while it regroups, and the survivors that join
/// it.
struct Gathering {
    stop: Arc<AtomicBool>,
    /// The accepting thread, and its listener with it.
    accepting: Option<JoinHandle<()>>,
    joiners: mpsc::Receiver<Joiner>,
}

impl Gathering {
    /// Listens on this process's address, and takes every survivor that
    /// joins (authenticated, its report read) on a thread of its own.
    fn open(cluster: &Cluster, key: Arc<[u8]>, hello: Hello) -> Result<Gathering, Error> {
        let me = cluster.process();
        let address = &cluster.addresses()[me];
        let listen_error = |error| Error::Listen {
            process: me,
            address: address.clone(),
            error,
        };
        let listener = TcpListener::bind(address.as_str())
            .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
            .map_err(listen_error)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (send, joiners) = mpsc::channel();
        let stopping = Arc::clone(&stop);
        let processes = cluster.processes();
        let accepting = std::thread::Builder::new()
            .name("taskgraph-regroup".to_string())
            .spawn(move || accept(listener, &key, hello, processes, &stopping, &send))
            .map_err(listen_error)?;
        Ok(Gathering {
            stop,
            accepting: Some(accepting),
            joiners,
        })
    }

    /// Stops listening, and gives the survivors that had joined.
    fn close(mut self) -> Vec<Joiner> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
        self.joiners.try_iter().collect()
    }

    /// Stops listening, and sends whoever joined this process to `leader`.
    fn redirect(self, leader: usize) {
        for mut joiner in self.close() {
            let mut message = vec![FOLLOW];
            message.extend_from_slice(&(leader as u32).to_le_bytes());
            let _ = joiner.stream.write_all(&message);
        }
    }
}

impl Drop for Gathering {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// Who joins through a gathering's listener.
struct Admission {
    /// The slots claimed, by process: a process joins once.
    claimed: Vec<bool>,
    /// Whether the gathering has closed: no one is let in after that.
    closed: bool,
    /// How many that proved the secret are still on their way in (their
    /// reports coming).
    joining: usize,
}

/// An [`Admission`] shared by the threads that take joiners, and the
/// condition that `joining` has gone down.
type Admissions = Arc<(Mutex<Admission>, Condvar)>;

fn admit(admissions: &Admissions) -> MutexGuard<'_, Admission> {
    admissions.0.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The accepting thread: each connection's handshake and report on a
/// thread of its own, until `stop`. Then it stops listening (the next
/// attempt may bind the same address) and waits, within the handshake's
/// timeout, for the survivors that have proved the secret and whose
/// reports are on their way; a connection that has proved nothing (a
/// stranger, silent or not) is not waited for, but left to time out on its
/// own thread, so that it never holds up the regroup.
fn accept(
    listener: TcpListener,
    key: &Arc<[u8]>,
    hello: Hello,
    processes: usize,
    stop: &AtomicBool,
    joined: &mpsc::Sender<Joiner>,
) {
    let admissions: Admissions = Arc::new((
        Mutex::new(Admission {
            claimed: vec![false; processes],
            closed: false,
            joining: 0,
        }),
        Condvar::new(),
    ));
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (key, admissions, joined) =
                    (Arc::clone(key), Arc::clone(&admissions), joined.clone());
                // Not joined: see above.
                let _ = std::thread::Builder::new()
                    .name("taskgraph-regroup-join".to_string())
                    .spawn(move || {
                        let mut proved = false;
                        if let Some(joiner) = take(stream, &key, hello, &admissions, &mut proved) {
                            let _ = joined.send(joiner);
                        }
                        if proved {
                            admit(&admissions).joining -= 1;
                            admissions.1.notify_all();
                        }
                    });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    drop(listener);
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    let mut admission = admit(&admissions);
    admission.closed = true;
    while admission.joining > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        admission = admissions
            .1
            .wait_timeout(admission, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// One joining survivor: the handshake, then its report. `proved` is set
/// once it has proved the secret and claimed its slot.
fn take(
    mut stream: TcpStream,
    key: &[u8],
    hello: Hello,
    admissions: &Admissions,
    proved: &mut bool,
) -> Option<Joiner> {
    stream.set_nonblocking(false).ok()?;
    let hello = Hello {
        nonce: handshake::nonce().ok()?,
        ..hello
    };
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    let dialer = handshake::accept(
        &mut stream,
        Key(key),
        &hello,
        &[Channel::Regroup],
        deadline,
        |process, _| {
            let mut admission = admit(admissions);
            if admission.closed {
                return false;
            }
            let claimed = admission
                .claimed
                .get_mut(process as usize)
                .is_some_and(|slot| !std::mem::replace(slot, true));
            if claimed {
                admission.joining += 1;
                *proved = true;
            }
            claimed
        },
    )
    .ok()?;
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).ok()?;
    let mut word = [0_u8; 1];
    stream.read_exact(&mut word).ok()?;
    if word[0] != JOIN {
        return None;
    }
    let report = read_bytes(&mut stream).ok()?;
    Some(Joiner {
        process: dialer.process as usize,
        stream,
        report,
    })
}

/// The survivors and their reports, as the one that gathers sent them.
struct Decision {
    survivors: Vec<usize>,
    reports: Vec<Vec<u8>>,
}

/// Why a message could not be read.
enum Unreadable {
    Io(std::io::Error),
    Bad(&'static str),
}

impl From<std::io::Error> for Unreadable {
    fn from(err: std::io::Error) -> Unreadable {
        match err.kind() {
            std::io::ErrorKind::InvalidData => Unreadable::Bad("a report longer than 1 GiB"),
            _ => Unreadable::Io(err),
        }
    }
}

/// A decision of a run of `processes` processes (after its first byte).
fn read_decision(stream: &mut TcpStream, processes: usize) -> Result<Decision, Unreadable> {
    let count = read_u32(stream)? as usize;
    if count == 0 || count > processes {
        return Err(Unreadable::Bad("a decision with no survivors, or too many"));
    }
    let mut survivors = Vec::with_capacity(count);
    let mut reports = Vec::with_capacity(count);
    for _ in 0..count {
        let process = read_u32(stream)? as usize;
        if process >= processes || survivors.last().is_some_and(|&last| last >= process) {
            return Err(Unreadable::Bad(
                "a decision whose survivors are out of order",
            ));
        }
        survivors.push(process);
        reports.push(read_bytes(stream)?);
    }
    Ok(Decision { survivors, reports })
}

fn read_u32(stream: &mut impl Read) -> std::io::Result<u32> {
    let mut bytes = [0_u8; 4];
    stream.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

/// A length (8 bytes) and as many bytes, at most [`MAX_REPORT`].
fn read_bytes(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut length = [0_u8; 8];
    stream.read_exact(&mut length)?;
    let length = u64::from_le_bytes(length);
    if length > MAX_REPORT {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "a report longer than 1 GiB",
        ));
    }
    let mut bytes = Vec::new();
    stream.take(length).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != length {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_stranger_does_not_hold_up_the_end_of_a_gathering() {
        let free = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = free.local_addr().unwrap().to_string();
        drop(free);
        let cluster = Cluster::new(vec![address.clone(), "127.0.0.1:9".to_owned()], 0, 1)
            .unwrap()
            .with_secret("a secret of the regroup tests")
            .unwrap();
        let hello = Hello {
            channel: Channel::Regroup as u32,
            process: 0,
            processes: 2,
            threads: 1,
            fingerprint: fingerprint(1),
            nonce: [0; 32],
        };
        let gathering = Gathering::open(&cluster, Arc::from(&b"key"[..]), hello).unwrap();
        // Connected, and silent: it proves nothing.
        let _stranger = TcpStream::connect(&address).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let closing = Instant::now();
        assert!(gathering.close().is_empty());
        // It used to be waited for until its handshake timed out (5 s),
        // which made the survivor that closed it miss its own deadline.
        assert!(
            closing.elapsed() < HANDSHAKE_TIMEOUT / 2,
            "{:?}",
            closing.elapsed()
        );
        // The address is free for the next attempt at once.
        TcpListener::bind(&address).unwrap();
    }
}
