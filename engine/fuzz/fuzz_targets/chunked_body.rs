#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gauntlet_engine::fuzzing::chunked_body(data));
