//! The random numbers of a run and the weighted choice that the paths mix and the session mix
//! share: reproducible from a seed, no allocation per draw.

/// splitmix64: small, fast, and reproducible from the plan's seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }
}

/// Picks an index with probability proportional to its weight: a binary search over cumulative
/// weights summed once, no allocation per pick.
#[derive(Debug, Clone)]
pub struct WeightedChoice {
    cumulative: Box<[f64]>,
}

impl WeightedChoice {
    pub fn new(weights: impl Iterator<Item = f64>) -> WeightedChoice {
        let mut total = 0.0;
        let cumulative = weights
            .map(|w| {
                total += w;
                total
            })
            .collect();
        WeightedChoice { cumulative }
    }

    /// The index whose share of the cumulative weight holds `unit` (in [0, 1)).
    pub fn pick(&self, unit: f64) -> usize {
        let point = unit * self.cumulative[self.cumulative.len() - 1];
        self.cumulative.partition_point(|&c| c <= point).min(self.cumulative.len() - 1)
    }
}

/// Which request each send of the closed loop or the constant rate makes: the plan's one, or
/// one drawn from its paths mix (reproducible: seeded by the thread's index).
#[derive(Debug, Clone)]
pub struct PathMix {
    choice: Option<WeightedChoice>,
    rng: Rng,
}

impl PathMix {
    pub fn new(choice: Option<WeightedChoice>, seed: u64) -> PathMix {
        PathMix { choice, rng: Rng::new(seed) }
    }

    /// The index of the request to send.
    #[inline]
    pub fn pick(&mut self) -> usize {
        match &self.choice {
            None => 0,
            Some(choice) => choice.pick(self.rng.unit()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_pick_in_proportion() {
        // Cumulative 1, 1.0001, 4.0001: the middle index owns only the sliver [1, 1.0001).
        let mix = WeightedChoice::new([1.0, 0.0001, 3.0].into_iter());
        let picks = (mix.pick(0.0), mix.pick(0.2499), mix.pick(0.25), mix.pick(0.2501), mix.pick(0.99999));
        assert_eq!(picks, (0, 0, 1, 2, 2));
        let mix = WeightedChoice::new([2.0, 6.0].into_iter());
        let picks: Vec<usize> = (0..8).map(|i| mix.pick(i as f64 / 8.0)).collect();
        assert_eq!(picks, [0, 0, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn the_same_seed_draws_the_same_numbers() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let draws: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(draws, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert!((0..1000).map(|_| a.unit()).all(|u| (0.0..1.0).contains(&u)));
    }
}
