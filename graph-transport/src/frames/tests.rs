//! The frame checker on byte streams: whole frames, a byte at a time,
//! and every kind of header a peer could not have sent.

use super::*;

/// A header of the six words.
fn header(words: [u64; 6]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_be_bytes()).collect()
}

/// Process 1 of two, two threads each, reading from process 0.
fn frames() -> Frames {
    Frames::new(Peers::new(0, 1, 2))
}

#[test]
fn frames_pass_whole_or_a_byte_at_a_time() {
    let mut stream = header([3, 1, 2, 4, 5, 9]);
    stream.extend_from_slice(b"hello");
    stream.extend(header([3, 0, 3, 4, 2, 10]));
    stream.extend_from_slice(b"hi");
    stream.extend(header([0; 6]));
    let mut whole = frames();
    whole.scan(&stream).unwrap();
    assert_eq!(whole.position, Position::Ended);
    let mut bytewise = frames();
    for (i, byte) in stream.iter().enumerate() {
        bytewise.scan(std::slice::from_ref(byte)).unwrap();
        // Inside a frame from its first byte to its last.
        let read = i + 1;
        let boundary = read == 53 || read == 103 || read == stream.len();
        assert_eq!(bytewise.inside(), !boundary, "after byte {i}");
    }
    assert_eq!(bytewise.position, Position::Ended);
}

#[test]
fn a_length_past_the_limit_is_refused_before_its_body() {
    for length in [MAX_FRAME + 1, 1 << 63, u64::MAX] {
        let err = frames().scan(&header([0, 0, 2, 3, length, 0])).unwrap_err();
        assert_eq!(err, FrameProblem::TooLong { length });
        assert!(
            err.to_string()
                .contains(&format!("announces {length} bytes")),
            "{err}"
        );
    }
    // The limit itself is allowed.
    frames().scan(&header([0, 0, 2, 3, MAX_FRAME, 0])).unwrap();
}

#[test]
fn a_source_or_target_outside_the_two_processes_is_refused() {
    // From worker 2 (this process's own), to worker 1 (process 0's), to an
    // empty range, and past the end.
    let (mine, theirs) = ((2, 4), (0, 2));
    let to = |first, end| FrameProblem::ForStrangers {
        first,
        end,
        workers: mine,
    };
    for (words, problem, says) in [
        (
            [0, 2, 2, 3, 8, 0],
            FrameProblem::FromStranger {
                worker: 2,
                workers: theirs,
            },
            "from worker 2, not one of that process's workers (0 to 1)",
        ),
        (
            [0, 0, 1, 2, 8, 0],
            to(1, 2),
            "for workers 1 to 1, not this process's workers (2 to 3)",
        ),
        ([0, 0, 3, 3, 8, 0], to(3, 3), "for workers 3 to 2"),
        ([0, 0, 2, 5, 8, 0], to(2, 5), "for workers 2 to 4"),
        ([0, 0, 0, 0, 8, 0], to(0, 0), "for workers 0 to"),
    ] {
        let err = frames().scan(&header(words)).unwrap_err();
        assert_eq!(err, problem, "{words:?}");
        assert!(err.to_string().contains(says), "{words:?}: {err}");
    }
}

#[test]
fn garbage_is_refused_and_so_is_anything_after_the_end() {
    let err = frames().scan(&[0xA5; 4096]).unwrap_err();
    assert!(matches!(err, FrameProblem::TooLong { .. }), "{err}");
    let err = frames().scan(&[0xFF; 48]).unwrap_err();
    assert_eq!(err, FrameProblem::TooLong { length: u64::MAX });
    let err = frames().scan(&header([7, 0, 0, 0, 0, 0])).unwrap_err();
    assert_eq!(err, FrameProblem::Empty);
    assert_eq!(
        err.to_string(),
        "a frame of no bytes that does not end the connection"
    );
    let mut ended = frames();
    ended.scan(&header([0; 6])).unwrap();
    let err = ended.scan(b"xy").unwrap_err();
    assert_eq!(err, FrameProblem::AfterTheEnd { bytes: 2 });
    assert_eq!(
        err.to_string(),
        "2 bytes after the frame that ends the connection"
    );
}
