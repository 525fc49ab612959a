//! Any bytes either fail to parse or round-trip through JSON unchanged.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graph_core::fuzz::json_roundtrip(data));
