//! Exact shares: a plan split over the threads of one run, or over agents on several machines.
//! Counts come from cumulative rounding, so they add up exactly; a rate's last share is what the
//! others leave, so the shares add up to the rate asked for.

use crate::plan::idle::IdlePlan;
use crate::plan::{Plan, PlanError};

/// Mixes a share's index into a sessions seed, so that agents draw different users.
pub const SEED_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// `total` in shares proportional to `weights`, each within 1 of its exact share, summing to `total`.
pub fn split_count(total: u64, weights: &[usize]) -> Vec<u64> {
    let weight_sum: u128 = weights.iter().map(|&w| w as u128).sum();
    let mut cumulative: u128 = 0;
    weights
        .iter()
        .map(|&w| {
            let before = (total as u128 * cumulative / weight_sum) as u64;
            cumulative += w as u128;
            (total as u128 * cumulative / weight_sum) as u64 - before
        })
        .collect()
}

/// `total` in `parts` shares as equal as possible, the larger ones first.
pub fn split_even(total: usize, parts: usize) -> Vec<usize> {
    (0..parts).map(|i| total / parts + usize::from(i < total % parts)).collect()
}

/// A rate in shares proportional to `weights`; the last share is the remainder.
pub fn split_rate(rate_per_s: f64, weights: &[usize]) -> Vec<f64> {
    let weight_sum: usize = weights.iter().sum();
    let Some((_, leading)) = weights.split_last() else { return Vec::new() };
    let mut shares: Vec<f64> = leading.iter().map(|&w| rate_per_s * w as f64 / weight_sum as f64).collect();
    shares.push(rate_per_s - exact_sum(&shares));
    shares
}

/// The correctly rounded sum of `values` (Shewchuk's algorithm, as Python's math.fsum), so that
/// a remainder leaves the shares' sum equal to the whole.
pub fn exact_sum(values: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for &value in values {
        let mut x = value;
        let mut kept = 0;
        for i in 0..partials.len() {
            let mut y = partials[i];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    let Some(mut hi) = partials.pop() else { return 0.0 };
    let mut lo = 0.0;
    while let Some(y) = partials.pop() {
        let x = hi;
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    // Round half to even across the remaining partials, as math.fsum does.
    if let Some(&next) = partials.last() {
        if (lo < 0.0 && next < 0.0) || (lo > 0.0 && next > 0.0) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
    }
    hi
}

fn too_few(what: &str, total: usize, parts: usize, fix: &str) -> PlanError {
    PlanError(format!(
        "the plan has {total} {what} for {parts} agents, fewer than one each: {fix}, or use fewer agents"
    ))
}

/// Connections per share: as even as possible, or with a fixed number of session users in
/// proportion to the users, so that every share keeps two connections per user.
fn connection_shares(plan: &Plan, parts: usize) -> Result<Vec<usize>, PlanError> {
    if plan.connections < parts {
        return Err(too_few("connections", plan.connections, parts, &format!("give -c {parts} or more")));
    }
    match plan.sessions.as_ref().and_then(|s| s.users) {
        None => Ok(split_even(plan.connections, parts)),
        Some(users) if users < parts => {
            Err(too_few("session users", users, parts, &format!("give {parts} users or more")))
        }
        Some(users) => {
            let shares = split_count(plan.connections as u64, &split_even(users, parts));
            Ok(shares.into_iter().map(|c| c as usize).collect())
        }
    }
}

/// `parts` plans whose totals are exactly the plan's: connections, requests, rate, session users
/// and arrival rates are shared; every other field (duration, warm-up, timeout, threads as a
/// per-share count lowered to the share's connections) is kept as it is.
pub fn split_plan(plan: &Plan, parts: usize) -> Result<Vec<Plan>, PlanError> {
    if parts == 0 {
        return Err(PlanError("0 agents cannot run a plan: give --agents 1 or more".into()));
    }
    let connections = connection_shares(plan, parts)?;
    if let Some(requests) = plan.requests.filter(|&n| n < parts as u64) {
        return Err(too_few("requests", requests as usize, parts, &format!("give -n {parts} or more")));
    }
    let requests = plan.requests.map(|n| split_count(n, &connections));
    let rates = plan.rate_per_s.map(|rate| split_rate(rate, &connections));
    let users = plan.sessions.as_ref().and_then(|s| s.users).map(|users| split_even(users, parts));
    // Evenly, as the connections are: each share's files are then within 2 of an even share of all.
    let idle = plan.idle.as_ref().map(|idle| split_even(idle.connections, parts));
    let arrivals: Vec<Vec<f64>> = plan
        .sessions
        .iter()
        .flat_map(|s| s.phases.iter().flatten())
        .map(|phase| split_rate(phase.users_per_s, &connections))
        .collect();
    let shares = (0..parts).map(|index| {
        let mut share = plan.clone();
        share.connections = connections[index];
        share.threads = plan.threads.min(connections[index]);
        share.requests = requests.as_ref().map(|shares| shares[index]);
        share.rate_per_s = rates.as_ref().map(|shares| shares[index]);
        share.idle = match (&plan.idle, &idle) {
            (Some(whole), Some(shares)) if shares[index] > 0 => {
                Some(IdlePlan { connections: shares[index], ..whole.clone() })
            }
            _ => None,
        };
        if let Some(sessions) = share.sessions.as_mut() {
            sessions.users = users.as_ref().map(|shares| shares[index]);
            for (phase, shares) in sessions.phases.iter_mut().flatten().zip(&arrivals) {
                phase.users_per_s = shares[index];
            }
            sessions.seed = sessions.seed.wrapping_add((index as u64).wrapping_mul(SEED_STEP));
        }
        share
    });
    Ok(shares.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_split_exactly_and_fairly() {
        let cases: [(u64, &[usize]); 6] = [
            (10, &[1, 1, 1]),
            (7, &[3, 2]),
            (1, &[5, 5]),
            (1_000_003, &[34, 33, 33]),
            (0, &[1, 2]),
            ((1 << 62) + 1, &[3, 5, 7]),
        ];
        for (total, weights) in cases {
            let shares = split_count(total, weights);
            assert_eq!(shares.iter().sum::<u64>(), total, "{total} over {weights:?}");
            let weight_sum: usize = weights.iter().sum();
            for (&share, &w) in shares.iter().zip(weights) {
                let exact = total as u128 * w as u128;
                let scaled = share as u128 * weight_sum as u128;
                assert!(scaled.abs_diff(exact) < weight_sum as u128, "{shares:?}");
            }
        }
    }

    #[test]
    fn even_shares_put_the_remainder_first() {
        assert_eq!(split_even(10, 3), vec![4, 3, 3]);
        assert_eq!(split_even(2, 2), vec![1, 1]);
        assert_eq!(split_even(5, 1), vec![5]);
        assert_eq!(split_even(7, 4), vec![2, 2, 2, 1]);
        // A rate's threads take the slots in turn: of 301 requests over 2 threads, thread 0 takes 151.
        assert_eq!(split_even(301, 2), vec![151, 150]);
        assert_eq!(split_even(1, 3), vec![1, 0, 0]);
    }

    #[test]
    fn rates_add_up_to_the_rate_asked_for() {
        let cases: [(f64, &[usize]); 5] = [
            (3000.0, &[1, 1, 1]),
            (1000.0, &[4, 3, 3]),
            (0.1, &[1, 1, 1]),
            (12_345.678, &[7, 1, 3, 9]),
            (1e9 / 3.0, &[2, 3]),
        ];
        for (rate, weights) in cases {
            let shares = split_rate(rate, weights);
            assert_eq!(exact_sum(&shares), rate, "{rate} over {weights:?}");
            let weight_sum: usize = weights.iter().sum();
            for (share, &w) in shares.iter().zip(weights) {
                let exact = rate * w as f64 / weight_sum as f64;
                assert!(*share > 0.0 && ((share - exact) / exact).abs() < 1e-12, "{shares:?}");
            }
        }
    }

    #[test]
    fn the_exact_sum_is_correctly_rounded() {
        assert_eq!(exact_sum(&[0.1; 10]), 1.0);
        assert_eq!(exact_sum(&[1e100, 1.0, -1e100, 1e-100]), 1.0);
        assert_eq!(exact_sum(&[]), 0.0);
        assert_ne!([0.1; 10].iter().sum::<f64>(), 1.0, "a plain sum would not do");
    }
}
