//! The handshake two processes of a run go through on every connection,
//! before any data moves: who they are, which job they run, and proof that
//! each knows the run's secret (a challenge-response with HMAC-SHA256).
//!
//! The process with the higher index dials; the other accepts:
//!
//! 1. dialer → acceptor: its [`Hello`] (a fresh random challenge in it);
//! 2. acceptor → dialer: its own [`Hello`] (with its own challenge) and its
//!    proof: the HMAC, keyed by the secret, of its direction tag, the
//!    dialer's challenge, its own hello and the dialer's index;
//! 3. the dialer checks that proof; only then does it send its own proof,
//!    the same over the acceptor's challenge with the other direction tag;
//! 4. the acceptor checks it and answers one [`Verdict`] byte.
//!
//! Each side checks the other's proof against the claims in the other's
//! hello, so a process that knows the secret but runs another job is told
//! so in words, and a stranger is told nothing but "wrong secret". The
//! secret itself never travels.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::HandshakeProblem;

/// Tells a connection from a process of a run from anything else; the last
/// two bytes are the protocol's version.
const MAGIC: &[u8; 8] = b"tgraph02";

/// The bytes of a [`Hello`] on the wire.
pub(crate) const HELLO_LEN: usize = 88;

/// The bytes of a proof (HMAC-SHA256).
const PROOF_LEN: usize = 32;

/// The direction tags of the two proofs: an acceptor's proof cannot be
/// reflected back as a dialer's.
const ACCEPTOR_TAG: &[u8] = b"taskgraph/2 acceptor proof";
const DIALER_TAG: &[u8] = b"taskgraph/2 dialer proof";

/// Which of the connections between a pair of processes this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Channel {
    /// timely dataflow's messages.
    Data = 0,
    /// Heartbeats, on a connection of their own so that they do not wait
    /// behind data.
    Beat = 1,
    /// After a loss, a survivor joining the one that gathers the others
    /// (not one of a run's pair of connections).
    Regroup = 2,
}

impl Channel {
    pub(crate) const ALL: [Channel; 2] = [Channel::Data, Channel::Beat];

    fn from_u32(value: u32) -> Option<Channel> {
        match value {
            0 => Some(Channel::Data),
            1 => Some(Channel::Beat),
            2 => Some(Channel::Regroup),
            _ => None,
        }
    }
}

/// What a process says first on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    pub(crate) channel: u32,
    pub(crate) process: u32,
    pub(crate) processes: u32,
    pub(crate) threads: u32,
    pub(crate) fingerprint: [u8; 32],
    /// A fresh random challenge for the other side to prove with.
    pub(crate) nonce: [u8; 32],
}

impl Hello {
    pub(crate) fn channel(&self) -> Option<Channel> {
        Channel::from_u32(self.channel)
    }

    pub(crate) fn to_bytes(self) -> [u8; HELLO_LEN] {
        let mut bytes = [0_u8; HELLO_LEN];
        bytes[..8].copy_from_slice(MAGIC);
        bytes[8..12].copy_from_slice(&self.channel.to_le_bytes());
        bytes[12..16].copy_from_slice(&self.process.to_le_bytes());
        bytes[16..20].copy_from_slice(&self.processes.to_le_bytes());
        bytes[20..24].copy_from_slice(&self.threads.to_le_bytes());
        bytes[24..56].copy_from_slice(&self.fingerprint);
        bytes[56..].copy_from_slice(&self.nonce);
        bytes
    }

    pub(crate) fn from_bytes(bytes: &[u8; HELLO_LEN]) -> Result<Hello, HandshakeProblem> {
        if &bytes[..8] != MAGIC {
            return Err(if bytes[..6] == MAGIC[..6] {
                HandshakeProblem::OtherVersion
            } else {
                HandshakeProblem::WrongGreeting
            });
        }
        let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        Ok(Hello {
            channel: word(8),
            process: word(12),
            processes: word(16),
            threads: word(20),
            fingerprint: bytes[24..56].try_into().expect("32 bytes"),
            nonce: bytes[56..].try_into().expect("32 bytes"),
        })
    }
}

/// The acceptor's last word: whether it takes the connection, and if not,
/// why. Only this byte is sent to a dialer whose proof failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Welcome = 0,
    WrongSecret = 1,
    DifferentJob = 2,
    DifferentCluster = 3,
    Duplicate = 4,
}

impl Verdict {
    fn from_u8(byte: u8) -> Option<Verdict> {
        Some(match byte {
            0 => Verdict::Welcome,
            1 => Verdict::WrongSecret,
            2 => Verdict::DifferentJob,
            3 => Verdict::DifferentCluster,
            4 => Verdict::Duplicate,
            _ => return None,
        })
    }
}

/// The key proofs are made with: the run's secret, or no key at all for an
/// insecure run (then a proof only shows the other side speaks the
/// protocol).
#[derive(Clone, Copy)]
pub(crate) struct Key<'a>(pub(crate) &'a [u8]);

impl Key<'_> {
    /// The proof of `prover`'s hello against `challenge`, for the process
    /// `verifier`.
    fn proof(
        &self,
        tag: &[u8],
        challenge: &[u8; 32],
        prover: &Hello,
        verifier: u32,
    ) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(self.0).expect("HMAC takes keys of any size");
        mac.update(&(tag.len() as u32).to_le_bytes());
        mac.update(tag);
        mac.update(challenge);
        mac.update(&prover.to_bytes());
        mac.update(&verifier.to_le_bytes());
        mac
    }

    fn prove(&self, tag: &[u8], challenge: &[u8; 32], prover: &Hello, verifier: u32) -> [u8; 32] {
        let mut bytes = [0_u8; PROOF_LEN];
        bytes.copy_from_slice(
            &self
                .proof(tag, challenge, prover, verifier)
                .finalize()
                .into_bytes(),
        );
        bytes
    }

    /// Whether `proof` is right, compared in constant time.
    fn verify(
        &self,
        proof: &[u8],
        tag: &[u8],
        challenge: &[u8; 32],
        prover: &Hello,
        verifier: u32,
    ) -> bool {
        self.proof(tag, challenge, prover, verifier)
            .verify_slice(proof)
            .is_ok()
    }
}

/// A fresh random challenge.
pub(crate) fn nonce() -> Result<[u8; 32], HandshakeProblem> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| HandshakeProblem::Random {
        message: err.to_string(),
    })?;
    Ok(bytes)
}

/// What can go wrong in a handshake: a problem, and whether the other side
/// proved it knows the secret (then it is a process of this run, and the
/// problem is the run's; else it is a stranger's).
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) problem: HandshakeProblem,
    /// The process index the other side proved, if it did.
    pub(crate) proven: Option<u32>,
}

impl From<HandshakeProblem> for Failed {
    fn from(problem: HandshakeProblem) -> Failed {
        Failed {
            problem,
            proven: None,
        }
    }
}

/// The dialer's side on `stream`, to the process it expects to be
/// `expected`, all by `deadline`.
pub(crate) fn dial(
    stream: &mut TcpStream,
    key: Key<'_>,
    ours: &Hello,
    expected: u32,
    deadline: Instant,
) -> Result<(), Failed> {
    let started = Instant::now();
    write_all(stream, &ours.to_bytes(), deadline, started)?;
    let mut theirs = [0_u8; HELLO_LEN];
    read_exact(stream, &mut theirs, deadline, started, true)?;
    let theirs = Hello::from_bytes(&theirs)?;
    let mut proof = [0_u8; PROOF_LEN];
    read_exact(stream, &mut proof, deadline, started, false)?;
    if !key.verify(&proof, ACCEPTOR_TAG, &ours.nonce, &theirs, ours.process) {
        return Err(HandshakeProblem::WrongSecret.into());
    }
    let proven = Some(theirs.process);
    if theirs.process != expected || theirs.channel != ours.channel {
        return Err(Failed {
            problem: HandshakeProblem::WrongProcess {
                process: theirs.process,
            },
            proven,
        });
    }
    // The other side is a process of this run: our proof lets it report a
    // difference between the two in words too.
    let our_proof = key.prove(DIALER_TAG, &theirs.nonce, ours, theirs.process);
    write_all(stream, &our_proof, deadline, started)?;
    let mut verdict = [0_u8; 1];
    let answered = read_exact(stream, &mut verdict, deadline, started, false);
    if let Some(problem) = mismatch(ours, &theirs) {
        return Err(Failed { problem, proven });
    }
    answered?;
    let problem = match Verdict::from_u8(verdict[0]) {
        Some(Verdict::Welcome) => return Ok(()),
        Some(Verdict::Duplicate) => HandshakeProblem::AlreadyConnected {
            process: ours.process,
        },
        Some(_) | None => HandshakeProblem::Refused,
    };
    Err(Failed { problem, proven })
}

/// What an acceptor learnt from a dialer that proved itself.
#[derive(Debug)]
pub(crate) struct Dialer {
    pub(crate) process: u32,
    pub(crate) channel: Channel,
}

/// The acceptor's side on `stream`, all by `deadline`: `template` is our
/// hello but for its channel, which is the dialer's, one of `channels`
/// (another is a stranger's, whatever it proves). `claim` is called once
/// the dialer has proved itself and matches this run, and says whether its
/// place (process and channel) was still free.
pub(crate) fn accept(
    stream: &mut TcpStream,
    key: Key<'_>,
    template: &Hello,
    channels: &[Channel],
    deadline: Instant,
    claim: impl FnOnce(u32, Channel) -> bool,
) -> Result<Dialer, Failed> {
    let started = Instant::now();
    let mut theirs = [0_u8; HELLO_LEN];
    read_exact(stream, &mut theirs, deadline, started, true)?;
    let theirs = Hello::from_bytes(&theirs)?;
    if !theirs.channel().is_some_and(|c| channels.contains(&c)) {
        return Err(HandshakeProblem::OtherChannel {
            channel: theirs.channel,
        }
        .into());
    }
    let ours = &Hello {
        channel: theirs.channel,
        ..*template
    };
    let mut first = [0_u8; HELLO_LEN + PROOF_LEN];
    first[..HELLO_LEN].copy_from_slice(&ours.to_bytes());
    first[HELLO_LEN..].copy_from_slice(&key.prove(
        ACCEPTOR_TAG,
        &theirs.nonce,
        ours,
        theirs.process,
    ));
    write_all(stream, &first, deadline, started)?;
    let mut proof = [0_u8; PROOF_LEN];
    read_exact(stream, &mut proof, deadline, started, false).map_err(|failed| {
        match failed.problem {
            // A process that found our proof wrong hangs up here.
            HandshakeProblem::HungUp => HandshakeProblem::HungUpAfterProof.into(),
            _ => failed,
        }
    })?;
    let refuse = |stream: &mut TcpStream, verdict: Verdict| {
        let _ = write_all(stream, &[verdict as u8], deadline, started);
    };
    if !key.verify(&proof, DIALER_TAG, &ours.nonce, &theirs, ours.process) {
        refuse(stream, Verdict::WrongSecret);
        return Err(HandshakeProblem::WrongSecret.into());
    }
    let proven = Some(theirs.process);
    if let Some(problem) = mismatch(ours, &theirs) {
        let verdict = match problem {
            HandshakeProblem::DifferentJob { .. } => Verdict::DifferentJob,
            _ => Verdict::DifferentCluster,
        };
        refuse(stream, verdict);
        return Err(Failed { problem, proven });
    }
    let channel = theirs.channel().expect("checked by mismatch");
    if theirs.process <= ours.process || !claim(theirs.process, channel) {
        refuse(stream, Verdict::Duplicate);
        return Err(Failed {
            problem: HandshakeProblem::Unexpected {
                process: theirs.process as usize,
            },
            proven,
        });
    }
    write_all(stream, &[Verdict::Welcome as u8], deadline, started)?;
    Ok(Dialer {
        process: theirs.process,
        channel,
    })
}

/// How the claims of a process that proved itself differ from ours.
fn mismatch(ours: &Hello, theirs: &Hello) -> Option<HandshakeProblem> {
    if theirs.processes != ours.processes {
        Some(HandshakeProblem::ProcessCount {
            theirs: u64::from(theirs.processes),
            ours: u64::from(ours.processes),
        })
    } else if theirs.process >= ours.processes || theirs.channel().is_none() {
        Some(HandshakeProblem::WrongProcess {
            process: theirs.process,
        })
    } else if theirs.threads != ours.threads {
        Some(HandshakeProblem::ThreadCount {
            process: theirs.process,
            theirs: theirs.threads,
            ours: ours.threads,
        })
    } else if theirs.fingerprint != ours.fingerprint {
        Some(HandshakeProblem::DifferentJob {
            process: theirs.process,
            theirs: theirs.fingerprint,
            ours: ours.fingerprint,
        })
    } else {
        None
    }
}

/// Reads exactly `buf.len()` bytes by `deadline`, however slowly they come.
fn read_exact(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
    started: Instant,
    greeting: bool,
) -> Result<(), Failed> {
    let mut filled = 0;
    while filled < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late(greeting && filled == 0, started).into());
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(HandshakeProblem::io)?;
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(HandshakeProblem::HungUp.into()),
            Ok(n) => filled += n,
            Err(err) if is_timeout(&err) => {
                return Err(late(greeting && filled == 0, started).into());
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(HandshakeProblem::io(err).into()),
        }
    }
    Ok(())
}

fn write_all(
    stream: &mut TcpStream,
    bytes: &[u8],
    deadline: Instant,
    started: Instant,
) -> Result<(), Failed> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(late(false, started).into());
    }
    stream
        .set_write_timeout(Some(left))
        .map_err(HandshakeProblem::io)?;
    stream.write_all(bytes).map_err(|err| {
        if is_timeout(&err) {
            late(false, started).into()
        } else {
            Failed::from(HandshakeProblem::io(err))
        }
    })
}

/// A handshake that ran out of time, after `started`, before the other
/// side said anything (`silent`) or later.
fn late(silent: bool, started: Instant) -> HandshakeProblem {
    let waited = started.elapsed();
    if silent {
        HandshakeProblem::Silent { waited }
    } else {
        HandshakeProblem::Slow { waited }
    }
}

pub(crate) fn is_timeout(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// How long a handshake may take on one connection, at most (and never past
/// the connect deadline).
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests;
