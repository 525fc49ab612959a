//! Any bytes are read as a rules file or refused with a one-line error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| graph_rewrite::fuzz::rules_file(data));
