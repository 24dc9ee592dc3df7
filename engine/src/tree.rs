//! The WebBench-like workload tree: many files of a realistic size distribution, requested by a
//! weighted mix. The file set is SPECweb99's: directories of 36 files in four size classes
//! (about 0.1-0.9 kB, 1-9 kB, 10-90 kB, 100-900 kB); a request picks a directory by a Zipf
//! law, a class by its share (35, 50, 14 and 1 %) and a file within the class by SPECweb99's
//! per-file frequencies. Ten directories make 51 MB; the mean response is about 14.7 kB.

use crate::workload::Filler;

/// Where the tree lives on every server: `/tree/dir00/class1_4.bin`.
pub const TREE_PREFIX: &str = "/tree/";
pub const DIRECTORIES: usize = 10;
const CLASS_BASE_BYTES: [usize; 4] = [102, 1_024, 10_240, 102_400];
const CLASS_SHARE: [f64; 4] = [0.35, 0.50, 0.14, 0.01];
/// SPECweb99's frequencies of the nine files within a class (file 5 the most requested).
const FILE_SHARE: [f64; 9] = [0.039, 0.059, 0.088, 0.177, 0.353, 0.118, 0.071, 0.050, 0.044];

/// One file of the tree: its path below the server's root, its size, and its share of requests.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeFile {
    pub path: String,
    pub bytes: usize,
    pub weight: f64,
}

/// Every file of the tree, with its size and request weight (the weights sum to 1).
pub fn tree_index() -> Vec<TreeFile> {
    let zipf_total: f64 = (1..=DIRECTORIES).map(|d| 1.0 / d as f64).sum();
    let file_total: f64 = FILE_SHARE.iter().sum();
    let mut files = Vec::with_capacity(DIRECTORIES * 36);
    for directory in 0..DIRECTORIES {
        let directory_share = 1.0 / (directory + 1) as f64 / zipf_total;
        for (class, (&base_bytes, &class_share)) in CLASS_BASE_BYTES.iter().zip(&CLASS_SHARE).enumerate() {
            for (file, &file_share) in FILE_SHARE.iter().enumerate() {
                files.push(TreeFile {
                    path: format!("{TREE_PREFIX}dir{directory:02}/class{class}_{}.bin", file + 1),
                    bytes: base_bytes * (file + 1),
                    weight: directory_share * class_share * file_share / file_total,
                });
            }
        }
    }
    files
}

/// A file's content: bytes from a generator seeded by its path, so that every server serves the
/// same bytes and no compression or deduplication can flatter one.
pub fn tree_body(file: &TreeFile) -> Vec<u8> {
    let seed = file
        .path
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3));
    Filler(seed).bytes(file.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_set_has_specweb99_sizes_and_shares() {
        let files = tree_index();
        assert_eq!(files.len(), DIRECTORIES * 36);
        let total_bytes: usize = files.iter().map(|f| f.bytes).sum();
        assert_eq!(total_bytes, DIRECTORIES * 45 * (102 + 1_024 + 10_240 + 102_400));
        assert!((files.iter().map(|f| f.weight).sum::<f64>() - 1.0).abs() < 1e-9);
        let mean_bytes: f64 = files.iter().map(|f| f.weight * f.bytes as f64).sum();
        assert!((14_000.0..15_500.0).contains(&mean_bytes), "{mean_bytes}");
        let class_share = |class: usize| -> f64 {
            files.iter().filter(|f| f.path.contains(&format!("/class{class}_"))).map(|f| f.weight).sum()
        };
        for (class, expected) in CLASS_SHARE.iter().enumerate() {
            assert!((class_share(class) - expected).abs() < 1e-9);
        }
        assert_eq!(files[4].path, "/tree/dir00/class0_5.bin");
        assert!(files[4].weight > files[4 + 36].weight, "directories follow a Zipf law");
    }

    #[test]
    fn bodies_are_deterministic_and_distinct() {
        let files = tree_index();
        let body = tree_body(&files[40]);
        assert_eq!(body.len(), files[40].bytes);
        assert_eq!(body, tree_body(&files[40]));
        assert_ne!(tree_body(&files[0])[..102], tree_body(&files[36])[..102]);
    }
}
