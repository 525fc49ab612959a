//! Connecting the processes of a cluster: two connections per pair of
//! processes (timely's data, and heartbeats), each authenticated by the
//! handshake before it is used, then timely's allocators over the data
//! connections.
//!
//! Each process listens on its own address from the start and, at the same
//! time, dials every process of a lower index (twice: data, heartbeat). It
//! hands every connection it accepts to a thread of its own for the
//! handshake, so an idle or slow connection holds up nobody; a connection
//! that fails its handshake without proving it knows the secret is
//! dropped, and the process goes on waiting for the real one.

use std::any::Any;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Config as Communication, Hooks};

use crate::cluster::{Auth, Cluster};
use crate::error::{HandshakeProblem, Stray};
use crate::frames::{Checked, Peers};
use crate::handshake::{self, Channel, Failed, HANDSHAKE_TIMEOUT, Hello, Key};
use crate::heartbeat::Monitor;

use crate::Error;

/// The most handshakes an accepting process runs at once; connections past
/// that are closed at once.
const MAX_PENDING: usize = 64;

/// How many dropped connections an error lists (it counts them all).
const STRAYS_LISTED: usize = 3;

/// What a process needs to run once connected.
pub struct Connected {
    /// timely's allocators, one per worker thread of this process.
    pub builders: Vec<AllocatorBuilder>,
    /// What must outlive them (timely's communication threads).
    pub comms: Box<dyn Any + Send>,
    /// The heartbeats, across processes.
    pub monitor: Option<Monitor>,
}

/// Connects this process to the others of `cluster`, all of them agreeing
/// on the job's `fingerprint`; the heartbeats tell the others the tasks
/// recorded in `told`.
pub fn connect(
    cluster: &Cluster,
    fingerprint: [u8; 32],
    told: Option<crate::Progress>,
) -> Result<Connected, Error> {
    if cluster.addresses().len() <= 1 {
        let (builders, comms) = Communication::Process(cluster.threads())
            .try_build()
            .map_err(|message| Error::Timely { message })?;
        return Ok(Connected {
            builders,
            comms,
            monitor: None,
        });
    }
    let key: Arc<[u8]> = match cluster.auth() {
        Auth::Secret(secret) => Arc::clone(secret),
        Auth::Insecure => Arc::from(&[][..]),
        Auth::Unset => return Err(Error::NoSecret),
    };
    let links = link(cluster, key, fingerprint)?;
    let me = cluster.process();
    let peer_error = |process: usize, err: std::io::Error| Error::Handshake {
        peer: cluster.addresses()[process].clone(),
        process: Some(process),
        problem: HandshakeProblem::Io(err),
    };
    let mut data = Vec::with_capacity(links.len());
    let mut beats = Vec::with_capacity(links.len());
    let mut clones = Vec::new();
    for (process, [stream, beat]) in links.into_iter().enumerate() {
        if let Some(stream) = &stream {
            // timely's threads write with blocking calls and no timeout: a
            // timeout would look to them like a broken connection. (Reads
            // wait in slices inside `Checked`, invisibly to them.)
            stream
                .set_write_timeout(None)
                .and_then(|()| stream.set_nodelay(true))
                .map_err(|err| peer_error(process, err))?;
            clones.push(stream.try_clone().map_err(|err| peer_error(process, err))?);
        }
        debug_assert_eq!(stream.is_none(), process == me);
        data.push(stream);
        beats.push(beat);
    }
    let monitor = Monitor::start(
        beats,
        clones,
        cluster.addresses(),
        cluster.heartbeat_timeout(),
        told,
    )
    .map_err(|err| Error::Timely {
        message: format!("cannot start the heartbeats: {err}"),
    })?;
    let threads = cluster.threads();
    let data = data
        .into_iter()
        .enumerate()
        .map(|(process, stream)| {
            let Some(stream) = stream else {
                return Ok(None);
            };
            let peers = Peers::new(process, me, threads);
            let stall = cluster.heartbeat_timeout();
            Checked::new(stream, process, peers, stall, monitor.tripwire())
                .map(Some)
                .map_err(|err| peer_error(process, err))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut hooks = Hooks::default();
    // timely keeps every empty buffer a channel ever had for reuse; a run
    // that once had many bytes in flight would hold them to its end.
    hooks.refill.limit = Some(SPARE_BUFFERS);
    let process_allocators = ProcessBuilder::new_typed_vector(
        cluster.threads(),
        hooks.refill.clone(),
        hooks.spill.clone(),
    );
    let (builders, guard) =
        initialize_networking_from_sockets(process_allocators, data, me, cluster.threads(), hooks)
            .map_err(|err| Error::Timely {
                message: err.to_string(),
            })?;
    Ok(Connected {
        builders: builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        comms: Box::new(guard),
        monitor: Some(monitor),
    })
}

/// How many empty buffers each of timely's channels keeps for reuse.
const SPARE_BUFFERS: usize = 2;

/// Per process, its two connections (data, heartbeat); none for this one.
type Links = Vec<[Option<TcpStream>; 2]>;

/// The shortest and the longest wait of the accepting loop between two
/// looks for a new connection.
const POLL_MIN: Duration = Duration::from_micros(50);
const POLL_MAX: Duration = Duration::from_millis(2);

/// The first and the longest wait before dialling a process that does not
/// listen yet again.
const REDIAL_MIN: Duration = Duration::from_micros(500);
const REDIAL_MAX: Duration = Duration::from_millis(50);

/// What one side of the connecting ended with: an error, or `None` when it
/// stopped because the other side failed.
type Ended = Option<Error>;

/// Makes and authenticates both connections with every other process,
/// within the connect timeout.
fn link(cluster: &Cluster, key: Arc<[u8]>, fingerprint: [u8; 32]) -> Result<Links, Error> {
    let me = cluster.process();
    let address = &cluster.addresses()[me];
    let deadline = Instant::now() + cluster.connect_timeout();
    let listener = TcpListener::bind(address).map_err(|error| Error::Listen {
        process: me,
        address: address.clone(),
        error,
    })?;
    let template = Hello {
        channel: 0,
        process: me as u32,
        processes: cluster.processes() as u32,
        threads: cluster.threads() as u32,
        fingerprint,
        nonce: [0; 32],
    };
    let stop = AtomicBool::new(false);
    let (accepted, dialled) = std::thread::scope(|scope| {
        let accepting = scope.spawn(|| {
            let accepted = accept_all(cluster, &listener, &key, &template, deadline, &stop);
            if accepted.is_err() {
                stop.store(true, Ordering::SeqCst);
            }
            accepted
        });
        let dialled = dial_all(cluster, &key, &template, deadline, &stop);
        if dialled.is_err() {
            stop.store(true, Ordering::SeqCst);
        }
        let accepted = accepting.join().unwrap_or_else(|_| {
            Err(Some(Error::Timely {
                message: "the thread accepting connections panicked".to_string(),
            }))
        });
        (accepted, dialled)
    });
    match (accepted, dialled) {
        (Ok(mut links), Ok(dialled)) => {
            for (process, pair) in dialled.into_iter().enumerate().take(me) {
                links[process] = pair;
            }
            Ok(links)
        }
        // The side that failed first says why; the other only stopped.
        (Err(Some(err)), _) | (_, Err(Some(err))) => Err(err),
        (Err(None), _) | (_, Err(None)) => Err(Error::Interrupted),
    }
}

/// Dials every process of a lower index, both connections each.
fn dial_all(
    cluster: &Cluster,
    key: &[u8],
    template: &Hello,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<Links, Ended> {
    let me = cluster.process();
    let mut links: Links = (0..cluster.processes()).map(|_| [None, None]).collect();
    for (process, address) in cluster.addresses().iter().enumerate().take(me) {
        for channel in Channel::ALL {
            let stream = dial(
                cluster, process, address, channel, key, template, deadline, stop,
            )?;
            links[process][channel as usize] = Some(stream);
        }
    }
    Ok(links)
}

/// One connection to `process`, retrying until it listens and completes
/// the handshake, or the deadline passes.
#[allow(clippy::too_many_arguments)]
fn dial(
    cluster: &Cluster,
    process: usize,
    address: &str,
    channel: Channel,
    key: &[u8],
    template: &Hello,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<TcpStream, Ended> {
    let failed = |problem| {
        Some(Error::Handshake {
            peer: address.to_string(),
            process: Some(process),
            problem,
        })
    };
    let mut last: Option<HandshakeProblem> = None;
    let mut redial = REDIAL_MIN;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(None);
        }
        if let Some(stop) = cluster.connecting_stops() {
            return Err(Some(stop));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(match last {
                Some(problem) => failed(problem),
                None => Some(Error::ConnectTimeout {
                    process,
                    address: address.to_string(),
                    waited: cluster.connect_timeout(),
                    dropped: Vec::new(),
                    dropped_count: 0,
                }),
            });
        }
        let attempt = resolve(address)
            .and_then(|socket| TcpStream::connect_timeout(&socket, left.min(HANDSHAKE_TIMEOUT)));
        let Ok(mut stream) = attempt else {
            // Not listening yet: try again soon, then less often.
            std::thread::sleep(redial);
            redial = (redial * 2).min(REDIAL_MAX);
            continue;
        };
        let hello = Hello {
            channel: channel as u32,
            nonce: handshake::nonce().map_err(failed)?,
            ..*template
        };
        let handshake_deadline = deadline.min(Instant::now() + HANDSHAKE_TIMEOUT);
        match handshake::dial(
            &mut stream,
            Key(key),
            &hello,
            process as u32,
            handshake_deadline,
        ) {
            Ok(()) => return Ok(stream),
            // Something went wrong on the way, not with who answered: try
            // again while there is time.
            Err(Failed {
                problem:
                    problem @ (HandshakeProblem::Silent { .. }
                    | HandshakeProblem::Slow { .. }
                    | HandshakeProblem::HungUp
                    | HandshakeProblem::Io(_)),
                proven: None,
            }) => {
                last = Some(problem);
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(Failed { problem, .. }) => return Err(failed(problem)),
        }
    }
}

/// Accepts both connections from every process of a higher index.
fn accept_all(
    cluster: &Cluster,
    listener: &TcpListener,
    key: &Arc<[u8]>,
    template: &Hello,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<Links, Ended> {
    let me = cluster.process();
    let n = cluster.processes();
    let mut links: Links = (0..n).map(|_| [None, None]).collect();
    let expected = (n - me - 1) * Channel::ALL.len();
    if expected == 0 {
        return Ok(links);
    }
    let listen_error = |err| {
        Some(Error::Handshake {
            peer: cluster.addresses()[me].clone(),
            process: Some(me),
            problem: HandshakeProblem::Io(err),
        })
    };
    listener.set_nonblocking(true).map_err(listen_error)?;
    let claimed = Arc::new(Mutex::new(vec![false; n * Channel::ALL.len()]));
    let pending = Arc::new(AtomicUsize::new(0));
    let (sender, receiver) =
        mpsc::channel::<(String, Result<(usize, Channel, TcpStream), Failed>)>();
    let mut accepted = 0;
    let mut dropped = Vec::new();
    let mut dropped_count = 0;
    let mut drop_one = |peer: String, problem: HandshakeProblem| {
        dropped_count += 1;
        if dropped.len() < STRAYS_LISTED {
            dropped.push(Stray { peer, problem });
        }
    };
    // How long to wait for a handshake to finish before looking for a new
    // connection again: nothing at first, growing while nothing happens.
    let mut wait = Duration::ZERO;
    loop {
        let mut next = if wait.is_zero() {
            receiver.try_recv().ok()
        } else {
            receiver.recv_timeout(wait).ok()
        };
        while let Some((peer, result)) = next.take() {
            next = receiver.try_recv().ok();
            match result {
                Ok((process, channel, stream)) => {
                    links[process][channel as usize] = Some(stream);
                    accepted += 1;
                }
                // A process of this run that cannot run with this one;
                // after a loss, one of an earlier attempt: dropped below.
                Err(Failed {
                    problem,
                    proven: Some(process),
                }) if !cluster.after_loss() => {
                    return Err(Some(Error::Handshake {
                        peer,
                        process: Some(process as usize),
                        problem,
                    }));
                }
                Err(Failed { problem, .. }) => drop_one(peer, problem),
            }
        }
        if accepted == expected {
            return Ok(links);
        }
        if stop.load(Ordering::Relaxed) {
            return Err(None);
        }
        if let Some(stop) = cluster.connecting_stops() {
            return Err(Some(stop));
        }
        if Instant::now() >= deadline {
            let missing = (me + 1..n)
                .find(|&p| links[p].iter().any(Option::is_none))
                .expect("a connection is missing");
            return Err(Some(Error::ConnectTimeout {
                process: missing,
                address: cluster.addresses()[missing].clone(),
                waited: cluster.connect_timeout(),
                dropped,
                dropped_count,
            }));
        }
        match listener.accept() {
            Ok((stream, from)) => {
                wait = Duration::ZERO;
                let peer = from.to_string();
                if pending.load(Ordering::SeqCst) >= MAX_PENDING {
                    drop(stream);
                    drop_one(peer, HandshakeProblem::Crowded);
                    continue;
                }
                pending.fetch_add(1, Ordering::SeqCst);
                let (key, template) = (Arc::clone(key), *template);
                let (claimed, done, sender) =
                    (Arc::clone(&claimed), Arc::clone(&pending), sender.clone());
                let spawned = std::thread::Builder::new()
                    .name("taskgraph-handshake".to_string())
                    .spawn(move || {
                        let result = accept_one(stream, &key, &template, deadline, &claimed);
                        done.fetch_sub(1, Ordering::SeqCst);
                        let _ = sender.send((peer, result));
                    });
                if let Err(err) = spawned {
                    pending.fetch_sub(1, Ordering::SeqCst);
                    drop_one(from.to_string(), HandshakeProblem::Io(err));
                }
            }
            // Nothing to accept yet: wait for a handshake (or a little
            // while), longer each time up to a few milliseconds, so that
            // connections made together are taken within microseconds
            // and a long wait costs little.
            Err(err) if handshake::is_timeout(&err) => {
                wait = (wait * 2).clamp(POLL_MIN, POLL_MAX);
            }
            // A connection that broke before it was accepted, or a shortage
            // of file descriptors: wait a little, and go on accepting.
            Err(_) => wait = Duration::from_millis(10),
        }
    }
}

/// The handshake of one accepted connection, on a thread of its own.
fn accept_one(
    mut stream: TcpStream,
    key: &[u8],
    template: &Hello,
    deadline: Instant,
    claimed: &Mutex<Vec<bool>>,
) -> Result<(usize, Channel, TcpStream), Failed> {
    stream
        .set_nonblocking(false)
        .map_err(HandshakeProblem::io)?;
    let template = Hello {
        nonce: handshake::nonce()?,
        ..*template
    };
    let handshake_deadline = deadline.min(Instant::now() + HANDSHAKE_TIMEOUT);
    let dialer = handshake::accept(
        &mut stream,
        Key(key),
        &template,
        &Channel::ALL,
        handshake_deadline,
        |process, channel| {
            let mut claimed = claimed.lock().unwrap_or_else(PoisonError::into_inner);
            let slot = &mut claimed[process as usize * Channel::ALL.len() + channel as usize];
            !std::mem::replace(slot, true)
        },
    )?;
    Ok((dialer.process as usize, dialer.channel, stream))
}

pub(crate) fn resolve(address: &str) -> std::io::Result<SocketAddr> {
    address.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{address} resolves to nothing"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_address() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    }

    #[test]
    fn after_a_loss_a_process_of_an_earlier_attempt_is_refused_and_the_attempt_connects() {
        let addresses: Vec<String> = (0..3).map(|_| free_address()).collect();
        let cluster = |process| {
            Cluster::new(addresses.clone(), process, 1)
                .unwrap()
                .with_secret("a secret of the connect tests")
                .unwrap()
        };
        // Process 1 was lost; 0 and 2 go on as 0 and 1 of two.
        let (zero, one) = (cluster(0).shrunk(&[0, 2], 0), cluster(2).shrunk(&[0, 2], 1));
        let Auth::Secret(key) = zero.auth() else {
            panic!("the cluster has a secret");
        };
        let fingerprint = [7; 32];
        std::thread::scope(|scope| {
            let zero_links = scope.spawn(|| link(&zero, Arc::clone(key), fingerprint));
            // Process 1, restarted with the first attempt's hostfile, dials
            // process 0 and proves the secret: a process of 3, not of 2.
            let mut stray = loop {
                match TcpStream::connect(&addresses[0]) {
                    Ok(stream) => break stream,
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            };
            let hello = Hello {
                channel: Channel::ALL[0] as u32,
                process: 1,
                processes: 3,
                threads: 1,
                fingerprint,
                nonce: handshake::nonce().unwrap(),
            };
            let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
            assert!(handshake::dial(&mut stray, Key(key), &hello, 0, deadline).is_err());
            // It used to end process 0's attempt ("it expects 3 processes,
            // this process 2"); now the survivor that comes next is let in.
            let one_links = scope.spawn(|| link(&one, Arc::clone(key), fingerprint));
            assert!(zero_links.join().unwrap().is_ok());
            assert!(one_links.join().unwrap().is_ok());
        });
    }
}
