//! Reading a source on a second thread while the first parses: decompressing
//! gzip, or copying a file out of the page cache, overlaps with reading the
//! text.

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// The size of the chunks handed over, and how many may wait to be parsed.
const CHUNK: usize = 1 << 20;
const IN_FLIGHT: usize = 2;

/// Runs `parse` on what `source` reads, `source` being read on a thread of
/// its own a few chunks ahead. When `parse` returns early, the thread stops
/// at its next chunk.
pub(crate) fn prefetched<T>(source: impl Read + Send, parse: impl FnOnce(&mut dyn Read) -> T) -> T {
    std::thread::scope(|scope| {
        let (full, chunks) = sync_channel(IN_FLIGHT);
        let (recycle, spare) = channel();
        scope.spawn(move || fill(source, &full, &spare));
        let mut reader = Chunks {
            chunks,
            recycle,
            chunk: Vec::new(),
            pos: 0,
        };
        parse(&mut reader)
        // `reader` drops here, so a blocked `fill` wakes to a closed channel.
    })
}

/// Reads `source` into chunks (spare ones reused) until its end, an error,
/// or the reader going away.
fn fill(mut source: impl Read, full: &SyncSender<io::Result<Vec<u8>>>, spare: &Receiver<Vec<u8>>) {
    loop {
        let mut chunk = spare.try_recv().unwrap_or_default();
        chunk.resize(CHUNK, 0);
        let mut len = 0;
        let read = loop {
            match source.read(&mut chunk[len..]) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    len += n;
                    if len == CHUNK {
                        break Ok(());
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => break Err(err),
            }
        };
        chunk.truncate(len);
        let last = len == 0 || read.is_err();
        let sent = match read {
            Ok(()) => full.send(Ok(chunk)),
            Err(err) => full.send(Err(err)),
        };
        if last || sent.is_err() {
            return;
        }
    }
}

/// The chunks as one stream.
struct Chunks {
    chunks: Receiver<io::Result<Vec<u8>>>,
    recycle: Sender<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            // The end: an empty chunk was sent, or the thread is gone.
            let Ok(next) = self.chunks.recv() else {
                return Ok(0);
            };
            let next = next?;
            if next.is_empty() {
                return Ok(0);
            }
            let used = std::mem::replace(&mut self.chunk, next);
            // The filler may have stopped; the chunk is then just dropped.
            let _ = self.recycle.send(used);
            self.pos = 0;
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_arrives_in_order() {
        let text: Vec<u8> = (0..3 * CHUNK + 12_345).map(|i| (i % 251) as u8).collect();
        let mut copy = Vec::new();
        prefetched(&text[..], |reader| reader.read_to_end(&mut copy)).unwrap();
        assert_eq!(copy, text);
    }

    #[test]
    fn a_parser_that_stops_early_stops_the_reader() {
        let text = vec![7_u8; 10 * CHUNK];
        let first = prefetched(&text[..], |reader| {
            let mut byte = [0];
            reader.read_exact(&mut byte).map(|()| byte[0])
        });
        assert_eq!(first.unwrap(), 7);
    }

    #[test]
    fn a_read_error_reaches_the_parser() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let err = prefetched(Failing, |reader| reader.read_to_end(&mut Vec::new())).unwrap_err();
        assert_eq!(err.to_string(), "disk on fire");
    }
}
