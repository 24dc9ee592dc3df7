#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gauntlet_engine::fuzzing::h2_frames(data));
