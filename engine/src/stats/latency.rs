//! Latency histograms: 1 µs to 1 h at 3 significant digits, merged losslessly, and exchanged in
//! HdrHistogram's standard compressed encoding (V2 + deflate, base64), as HdrHistogram logs are.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const LOWEST_US: u64 = 1;
pub const HIGHEST_US: u64 = 3_600_000_000;
pub const SIGNIFICANT_DIGITS: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS).expect("valid histogram bounds")
}

/// Record one latency; values beyond an hour count as an hour, zero as one microsecond.
pub fn record(histogram: &mut Histogram<u64>, latency_us: u64) {
    histogram.saturating_record(latency_us.max(LOWEST_US));
}

pub fn encode(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut bytes).expect("serialising into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode(encoded: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("the histogram is not base64 ({e})"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("the histogram is not an HdrHistogram encoding ({e:?})"))
}

/// One histogram holding every sample of the given ones (the engine's own, all with its bounds).
pub fn merge<'a>(histograms: impl IntoIterator<Item = &'a Histogram<u64>>) -> Histogram<u64> {
    try_merge(histograms).expect("histograms with the engine's bounds")
}

/// Merge at the precision of the first histogram (a timeline second's 2 digits stay 2 digits, so its
/// percentiles read as those of one second fed every sample); none gives an empty engine histogram.
pub fn try_merge<'a>(histograms: impl IntoIterator<Item = &'a Histogram<u64>>) -> Result<Histogram<u64>, String> {
    let mut histograms = histograms.into_iter().peekable();
    let mut merged = histograms.peek().map_or_else(new_histogram, |first| Histogram::new_from(first));
    for histogram in histograms {
        merged.add(histogram).map_err(|e| format!("the histograms have different ranges ({e:?})"))?;
    }
    Ok(merged)
}

/// Merge encoded histograms (from agents, or stored), as `try_merge` does.
pub fn merge_encoded(encoded: &[String]) -> Result<String, String> {
    let histograms = encoded.iter().map(|e| decode(e)).collect::<Result<Vec<_>, _>>()?;
    Ok(encode(&try_merge(&histograms)?))
}

/// The latency figures every result reports, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LatencySummary {
    /// Count of samples.
    pub count: u64,
    /// Lowest sample.
    pub min: u64,
    /// Mean of the samples.
    pub mean: f64,
    /// Standard deviation of the samples.
    pub stdev: f64,
    /// 50th percentile (median).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// Highest sample.
    pub max: u64,
}

impl LatencySummary {
    pub fn of(histogram: &Histogram<u64>) -> LatencySummary {
        if histogram.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: histogram.len(),
            min: histogram.min(),
            mean: histogram.mean(),
            stdev: histogram.stdev(),
            p50: histogram.value_at_quantile(0.5),
            p90: histogram.value_at_quantile(0.9),
            p99: histogram.value_at_quantile(0.99),
            p99_9: histogram.value_at_quantile(0.999),
            max: histogram.max(),
        }
    }
}

/// A histogram's percentile distribution, as HdrHistogram's `outputPercentileDistribution` (and
/// wrk2's `--latency`) prints it: a step at each percentile level, the levels `ticks_per_half_distance`
/// to each halving of the distance to 100 %, then one at 100 %; and the figures of its footer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// (the highest value equivalent to the one the level is reached at (µs), the level (0..1),
    /// the samples up to and including that value).
    pub steps: Vec<(u64, f64, u64)>,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub max_us: u64,
    pub count: u64,
    pub buckets: u8,
    pub sub_buckets: u32,
    pub significant_digits: u8,
}

impl Distribution {
    pub fn of(histogram: &Histogram<u64>, ticks_per_half_distance: u32) -> Distribution {
        let mut below = 0;
        let steps = if histogram.is_empty() {
            Vec::new()
        } else {
            histogram
                .iter_quantiles(ticks_per_half_distance)
                .map(|step| {
                    below += step.count_since_last_iteration();
                    (step.value_iterated_to(), step.quantile_iterated_to(), below)
                })
                .collect()
        };
        // HdrHistogram's sub-bucket count: the power of two that holds 2 x 10^digits values at unit resolution.
        let sub_buckets = (2 * 10_u32.pow(u32::from(histogram.sigfig()))).next_power_of_two();
        Distribution {
            steps,
            mean_us: histogram.mean(),
            stdev_us: histogram.stdev(),
            max_us: histogram.max(),
            count: histogram.len(),
            buckets: histogram.buckets(),
            sub_buckets,
            significant_digits: histogram.sigfig(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_steps_reach_the_quantiles_and_end_at_the_max() {
        let mut h = new_histogram();
        for v in 1..=1_000 {
            record(&mut h, v);
        }
        let found = Distribution::of(&h, 5);
        let half = found.steps.iter().find(|s| s.1 >= 0.5 - 1e-12).unwrap();
        assert_eq!((half.0, half.2), (h.value_at_quantile(0.5), 500));
        assert_eq!(found.steps.first().unwrap().2, 1);
        assert_eq!(*found.steps.last().unwrap(), (h.max(), 1.0, 1_000));
        assert_eq!((found.count, found.sub_buckets, found.significant_digits), (1_000, 2_048, 3));
        assert!(Distribution::of(&new_histogram(), 5).steps.is_empty());
    }

    #[test]
    fn encoding_round_trips() {
        let mut h = new_histogram();
        for v in [1, 7, 1_000, 123_456, HIGHEST_US * 2] {
            record(&mut h, v);
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn zero_counts_as_one_microsecond() {
        let mut h = new_histogram();
        record(&mut h, 0);
        assert_eq!(h.min(), 1);
    }

    #[test]
    fn merge_keeps_the_precision_of_its_inputs() {
        let two_digits = || Histogram::<u64>::new_with_bounds(LOWEST_US, HIGHEST_US, 2).unwrap();
        let (mut a, mut b, mut whole) = (two_digits(), two_digits(), two_digits());
        for v in [1_003, 1_017, 55_555, 3] {
            record(&mut a, v);
            record(&mut whole, v);
        }
        for v in [1_009, 999_999] {
            record(&mut b, v);
            record(&mut whole, v);
        }
        let merged = decode(&merge_encoded(&[encode(&a), encode(&b)]).unwrap()).unwrap();
        assert_eq!(merged.sigfig(), 2);
        assert_eq!(merged, whole);
        assert!(decode(&merge_encoded(&[]).unwrap()).unwrap().is_empty());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode("not base64!").is_err());
        assert!(decode("aGVsbG8=").is_err());
    }
}
