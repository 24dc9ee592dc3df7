#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gauntlet_engine::fuzzing::http1_response(data));
