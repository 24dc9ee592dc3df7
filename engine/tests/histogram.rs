//! Merging encoded per-thread histograms equals one histogram fed every sample.

use gauntlet_engine::stats::latency::{decode, encode, merge_encoded, new_histogram, record};

#[test]
fn merge_of_encoded_parts_equals_the_whole() {
    let mut whole = new_histogram();
    let mut parts = [new_histogram(), new_histogram(), new_histogram()];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let latency_us = 1 + x % 5_000_000 / (1 + i % 100);
        record(&mut whole, latency_us);
        record(&mut parts[i as usize % 3], latency_us);
    }
    let encoded: Vec<String> = parts.iter().map(encode).collect();
    let merged = decode(&merge_encoded(&encoded).unwrap()).unwrap();
    assert_eq!(merged, whole);
    for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(merged.value_at_quantile(q), whole.value_at_quantile(q));
    }
}

#[test]
fn merging_garbage_is_an_error() {
    assert!(merge_encoded(&["%%%".to_string()]).is_err());
}
