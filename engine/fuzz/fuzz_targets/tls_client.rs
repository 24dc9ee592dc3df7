#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gauntlet_engine::fuzzing::tls_client(data));
