//! Where the fast reader's text comes from, a chunk at a time; and reading
//! it on a second thread while the first parses, so that decompressing gzip,
//! or copying a file out of the page cache, overlaps with parsing.

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// The size of a chunk, and how many may wait to be parsed.
pub(crate) const CHUNK: usize = 1 << 20;
const IN_FLIGHT: usize = 2;

/// The text of a document, a chunk at a time.
pub(crate) trait Source {
    /// Replaces `chunk` with the next bytes of the text: empty at its end.
    fn next_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()>;
}

impl<S: Source + ?Sized> Source for &mut S {
    fn next_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        (**self).next_chunk(chunk)
    }
}

/// The [`Source`] of a reader, read on the parsing thread.
pub(crate) struct Chunked<R>(pub(crate) R);

impl<R: Read> Source for Chunked<R> {
    fn next_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        read_chunk(&mut self.0, chunk)
    }
}

/// Fills `chunk` with up to [`CHUNK`] bytes of `source`: fewer only at the
/// end of `source`.
fn read_chunk(source: &mut impl Read, chunk: &mut Vec<u8>) -> io::Result<()> {
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
    read
}

/// Runs `parse` on the text of `source`, `source` being read on a thread of
/// its own a few chunks ahead. When `parse` returns early, the thread stops
/// at its next chunk.
pub(crate) fn prefetched<T>(
    source: impl Read + Send,
    parse: impl FnOnce(&mut dyn Source) -> T,
) -> T {
    std::thread::scope(|scope| {
        let (full, chunks) = sync_channel(IN_FLIGHT);
        let (recycle, spare) = channel();
        scope.spawn(move || fill(source, &full, &spare));
        let mut reader = Chunks { chunks, recycle };
        parse(&mut reader)
        // `reader` drops here, so a blocked `fill` wakes to a closed channel.
    })
}

/// Reads `source` into chunks (spare ones reused) until its end, an error,
/// or the reader going away.
fn fill(mut source: impl Read, full: &SyncSender<io::Result<Vec<u8>>>, spare: &Receiver<Vec<u8>>) {
    loop {
        let mut chunk = spare.try_recv().unwrap_or_default();
        let read = read_chunk(&mut source, &mut chunk);
        let last = chunk.is_empty() || read.is_err();
        if full.send(read.map(|()| chunk)).is_err() || last {
            return;
        }
    }
}

/// The chunks the filling thread sends.
struct Chunks {
    chunks: Receiver<io::Result<Vec<u8>>>,
    recycle: Sender<Vec<u8>>,
}

impl Source for Chunks {
    fn next_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        // The thread gone without an empty chunk: the end all the same.
        let next = self.chunks.recv().unwrap_or_else(|_| Ok(Vec::new()))?;
        let used = std::mem::replace(chunk, next);
        // The filler may have stopped; the chunk is then just dropped.
        let _ = self.recycle.send(used);
        Ok(())
    }
}

/// All the text of a source.
#[cfg(test)]
fn read_all(source: &mut dyn Source) -> io::Result<Vec<u8>> {
    let (mut all, mut chunk) = (Vec::new(), Vec::new());
    loop {
        source.next_chunk(&mut chunk)?;
        if chunk.is_empty() {
            return Ok(all);
        }
        all.extend_from_slice(&chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_arrives_in_order() {
        let text: Vec<u8> = (0..3 * CHUNK + 12_345).map(|i| (i % 251) as u8).collect();
        assert_eq!(prefetched(&text[..], read_all).unwrap(), text);
        assert_eq!(read_all(&mut Chunked(&text[..])).unwrap(), text);
    }

    #[test]
    fn a_parser_that_stops_early_stops_the_reader() {
        let text = vec![7_u8; 10 * CHUNK];
        let first = prefetched(&text[..], |source| {
            let mut chunk = Vec::new();
            source.next_chunk(&mut chunk).map(|()| chunk[0])
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
        let err = prefetched(Failing, read_all).unwrap_err();
        assert_eq!(err.to_string(), "disk on fire");
    }
}
