//! The fuzz targets' entry points (engine/fuzz/): each takes arbitrary bytes and panics when an
//! invariant breaks, not only when the code under test does. `cargo test` replays the committed
//! corpus (engine/fuzz/corpus/TARGET/) through the same functions.

mod chunked;
mod h2;
mod http1;
mod tls;

pub use chunked::chunked_body;
pub use h2::h2_frames;
pub use http1::http1_response;
pub use tls::tls_client;

/// A target: arbitrary bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every target by the name of its corpus directory.
pub const TARGETS: [(&str, Target); 4] = [
    ("http1_response", http1_response),
    ("chunked_body", chunked_body),
    ("tls_client", tls_client),
    ("h2_frames", h2_frames),
];

/// The first `N` bytes steer the harness (zeros when the input is shorter); the rest is the input.
fn control<const N: usize>(data: &[u8]) -> ([u8; N], &[u8]) {
    let mut control = [0; N];
    let n = data.len().min(N);
    control[..n].copy_from_slice(&data[..n]);
    (control, &data[n..])
}

/// `input` cut where `cuts` say (each a position in 256ths of its length), as reads would return
/// it; no part is empty, since a read of nothing is the end of the stream.
fn split<'a>(input: &'a [u8], cuts: &[u8]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|&cut| usize::from(cut) * input.len() / 256).collect();
    points.push(input.len());
    points.sort_unstable();
    let mut start = 0;
    let mut parts = Vec::new();
    for point in points {
        if point > start {
            parts.push(&input[start..point]);
            start = point;
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    #[test]
    fn the_committed_corpus_replays() {
        for (target, check) in TARGETS {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
            let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let mut replayed = 0;
            for entry in entries {
                let path = entry.unwrap().path();
                let input = fs::read(&path).unwrap();
                let outcome = std::panic::catch_unwind(|| check(&input));
                assert!(outcome.is_ok(), "{target}: {} breaks an invariant", path.display());
                replayed += 1;
            }
            assert!(replayed > 0, "{target}: no corpus in {}", dir.display());
        }
    }

    #[test]
    fn split_cuts_where_told_and_keeps_every_byte() {
        let input = b"0123456789";
        assert_eq!(split(input, &[]), vec![&input[..]]);
        assert_eq!(split(input, &[128, 0, 255]), vec![&input[..5], &input[5..9], &input[9..]]);
        assert_eq!(split(b"", &[7]), Vec::<&[u8]>::new());
    }

    #[test]
    fn control_pads_short_inputs() {
        assert_eq!(control::<3>(b"ab"), ([b'a', b'b', 0], &b""[..]));
        assert_eq!(control::<2>(b"abc"), ([b'a', b'b'], &b"c"[..]));
    }
}
