//! The streaming JSON reader and the serde reader of record agree on any bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graph_core::fuzz::json_readers_agree(data));
