//! The statistics of an observation's samples, defined as the reference
//! defines them (spec §6.11): Welford mean and cv², nearest-rank p99, and a
//! 95% confidence half-width from 20 batch means; p50, p90 and p95 are
//! serq's own, nearest-rank as p99 is.

/// The summary of one observation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Welford running mean; `None` without samples or when not finite.
    pub mean: Option<f64>,
    /// Half-width of the 95% CI from 20 batch means; `None` below 40 samples.
    pub ci: Option<f64>,
    /// Squared coefficient of variation; `None` below 2 samples or when not finite.
    pub cv2: Option<f64>,
    /// The ⌈0.5 n⌉-th smallest sample (the nearest-rank median); `None`
    /// without samples or when not finite, as for every percentile.
    pub p50: Option<f64>,
    /// The ⌈0.9 n⌉-th smallest sample.
    pub p90: Option<f64>,
    /// The ⌈0.95 n⌉-th smallest sample.
    pub p95: Option<f64>,
    /// The ⌈0.99 n⌉-th smallest sample.
    pub p99: Option<f64>,
}

/// The percentiles a [`Summary`] holds, in increasing order.
const PERCENTILES: [f64; 4] = [0.5, 0.9, 0.95, 0.99];

/// Student's t at 19 degrees of freedom, 97.5%, as the reference uses it.
const T19: f64 = 2.093;
/// The number of batches of the batch-means CI.
const BATCHES: usize = 20;

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The Welford running count, mean and sum of squared deviations of samples
/// in recording order: the engine keeps one per observation as samples are
/// recorded, where its division overlaps the run's other work (over the
/// samples at the report's end it is a chain of dependent divisions, 9 % of
/// an M/M/1 run). [`Welford::of`] gives the same bits from the samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Welford {
    /// Samples added, as a float (the recurrence divides by it).
    pub count: f64,
    /// The running mean.
    pub mean: f64,
    /// The running sum of squared deviations from the mean.
    pub m2: f64,
}

impl Welford {
    /// Adds sample `x`.
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.count += 1.0;
        let d = x - self.mean;
        self.mean += d / self.count;
        self.m2 += d * (x - self.mean);
    }

    /// The moments of `samples`, added in order.
    pub fn of(samples: &[f64]) -> Welford {
        let mut w = Welford::default();
        for &x in samples {
            w.push(x);
        }
        w
    }
}

impl Summary {
    /// Summarises samples given in recording order.
    pub fn of(samples: &[f64]) -> Summary {
        Summary::with_moments(samples, Welford::of(samples))
    }

    /// Summarises samples given in recording order whose running moments
    /// are `w` (as [`Welford::of`] the samples gives them).
    pub fn with_moments(samples: &[f64], w: Welford) -> Summary {
        let n = samples.len();
        debug_assert_eq!(w.count, n as f64, "the moments are the samples'");
        let (k, m, m2) = (w.count, w.mean, w.m2);
        let mean = if n == 0 { None } else { finite(m) };
        let cv2 = if n < 2 {
            None
        } else {
            finite((m2 / (k - 1.0)) / (m * m))
        };
        let [p50, p90, p95, p99] = percentiles(samples);
        Summary {
            count: n as u64,
            mean,
            ci: batch_means_ci(samples),
            cv2,
            p50,
            p90,
            p95,
            p99,
        }
    }
}

/// The nearest-rank percentiles of [`PERCENTILES`]: for q, the sample of
/// rank ⌈q·n⌉ (1-based) in increasing order (`f64::total_cmp`, so a NaN
/// sorts above `inf`); all `None` without samples.
fn percentiles(samples: &[f64]) -> [Option<f64>; 4] {
    let n = samples.len();
    if n == 0 {
        return [None; 4];
    }
    // Each rank by selection, O(n) in all: a full sort of a long run's
    // samples cost more than the rest of the report. The ranks increase, so
    // each selection works in the part right of the one before.
    // Selection runs on integer keys of `f64::total_cmp`'s order: equal
    // keys are equal bits, so the sample of each rank is the same.
    let mut copy: Vec<i64> = samples.iter().map(|&x| total_key(x)).collect();
    let mut out = [None; 4];
    let mut done = 0;
    for (slot, q) in out.iter_mut().zip(PERCENTILES) {
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (_, nth, _) = copy[done..].select_nth_unstable(rank - done);
        *slot = finite(from_total_key(*nth));
        done = rank;
    }
    out
}

/// `x`'s bits as an integer ordered as `f64::total_cmp` orders `x`
/// (negative numbers' magnitude bits flipped).
fn total_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// The inverse of [`total_key`].
fn from_total_key(k: i64) -> f64 {
    f64::from_bits((k ^ (((k >> 63) as u64) >> 1) as i64) as u64)
}

/// The batch-means half-width: b = ⌊n/20⌋ samples a batch, trailing samples
/// ignored, two-pass variance of the 20 batch means.
fn batch_means_ci(samples: &[f64]) -> Option<f64> {
    let n = samples.len();
    if n < 2 * BATCHES {
        return None;
    }
    let b = n / BATCHES;
    // The 20 batch sums advance together, each in its samples' order (the
    // bits of `iter().sum()` batch by batch), so the adds of one batch do
    // not wait on each other.
    let mut means = [-0.0f64; BATCHES];
    for j in 0..b {
        for (i, sum) in means.iter_mut().enumerate() {
            *sum += samples[i * b + j];
        }
    }
    for mean in &mut means {
        *mean /= b as f64;
    }
    let grand = means.iter().sum::<f64>() / BATCHES as f64;
    let s2 = means.iter().map(|x| (x - grand) * (x - grand)).sum::<f64>() / (BATCHES - 1) as f64;
    finite(T19 * (s2 / BATCHES as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_keys_order_as_total_cmp_and_invert() {
        // -inf < -1 < -0 < +0 < 1 < inf < NaN under total_cmp.
        let xs = [
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in xs.windows(2) {
            assert!(total_key(w[0]) < total_key(w[1]), "{w:?}");
        }
        for x in xs {
            assert_eq!(from_total_key(total_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn two_equal_samples_have_zero_cv2_and_no_ci() {
        // The seed's line `transferred 2 2.0000 ±inf 0.000 2.0000`.
        let s = Summary::of(&[2.0, 2.0]);
        assert_eq!(
            (s.count, s.mean, s.ci, s.cv2, s.p99),
            (2, Some(2.0), None, Some(0.0), Some(2.0))
        );
    }

    #[test]
    fn percentiles_of_ten_samples_by_hand() {
        // Sorted: 1 2 3 4 5 6 7 8 9 10 (given shuffled). n = 10:
        // p50 rank ⌈5⌉ = 5 → 5; p90 rank ⌈9⌉ = 9 → 9;
        // p95 rank ⌈9.5⌉ = 10 → 10; p99 rank ⌈9.9⌉ = 10 → 10.
        let s = Summary::of(&[7.0, 3.0, 10.0, 1.0, 9.0, 2.0, 8.0, 5.0, 4.0, 6.0]);
        assert_eq!(
            (s.p50, s.p90, s.p95, s.p99),
            (Some(5.0), Some(9.0), Some(10.0), Some(10.0))
        );
        // n = 7: ranks ⌈3.5⌉ = 4, ⌈6.3⌉ = 7, ⌈6.65⌉ = 7, ⌈6.93⌉ = 7 of 0.5 1.5 … 6.5.
        let s = Summary::of(&[6.5, 0.5, 5.5, 1.5, 4.5, 2.5, 3.5]);
        assert_eq!(
            (s.p50, s.p90, s.p95, s.p99),
            (Some(3.5), Some(6.5), Some(6.5), Some(6.5))
        );
        // One sample is every percentile; none has none.
        let one = Summary::of(&[4.0]);
        assert_eq!((one.p50, one.p99), (Some(4.0), Some(4.0)));
        assert_eq!(Summary::of(&[]).p50, None);
    }

    #[test]
    fn percentiles_of_a_hundred_samples() {
        // 0..100 given in reverse: rank ⌈q·100⌉ of 0..99 is q·100 − 1.
        let hundred: Vec<f64> = (0..100).rev().map(f64::from).collect();
        let s = Summary::of(&hundred);
        assert_eq!(
            (s.p50, s.p90, s.p95, s.p99),
            (Some(49.0), Some(89.0), Some(94.0), Some(98.0))
        );
    }

    #[test]
    fn batch_sums_and_running_moments_keep_the_bits_of_the_plain_loops() {
        // The loops these replaced: each batch's `iter().sum()` in order,
        // and Welford's recurrence over the samples at the report's end.
        let mut x = 0.123_f64;
        let samples: Vec<f64> = (0..1013)
            .map(|_| {
                x = (x * 3.9 * (1.0 - x)).abs();
                x * 1e3
            })
            .collect();
        let b = samples.len() / BATCHES;
        let plain: Vec<f64> = (0..BATCHES)
            .map(|i| samples[i * b..(i + 1) * b].iter().sum::<f64>() / b as f64)
            .collect();
        let grand = plain.iter().sum::<f64>() / BATCHES as f64;
        let s2 =
            plain.iter().map(|m| (m - grand) * (m - grand)).sum::<f64>() / (BATCHES - 1) as f64;
        let ci = T19 * (s2 / BATCHES as f64).sqrt();
        assert_eq!(
            batch_means_ci(&samples).map(f64::to_bits),
            Some(ci.to_bits())
        );
        let (mut k, mut m, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for &x in &samples {
            k += 1.0;
            let d = x - m;
            m += d / k;
            m2 += d * (x - m);
        }
        let w = Welford::of(&samples);
        assert_eq!(
            [w.count, w.mean, w.m2].map(f64::to_bits),
            [k, m, m2].map(f64::to_bits)
        );
    }

    #[test]
    fn a_non_finite_sample_is_a_null_percentile_only_where_picked() {
        // Sorted by total order: 1 2 3 inf. p50 rank 2 → 2; p90, p95, p99 rank 4 → inf → None.
        let s = Summary::of(&[f64::INFINITY, 1.0, 3.0, 2.0]);
        assert_eq!((s.p50, s.p90, s.p99), (Some(2.0), None, None));
    }

    #[test]
    fn p99_is_the_nearest_rank() {
        // n = 100: ⌈99⌉ = 99th smallest, i.e. 98.0 of 0..100; n = 50: ⌈49.5⌉ = 50th, the largest.
        let hundred: Vec<f64> = (0..100).map(f64::from).collect();
        assert_eq!(Summary::of(&hundred).p99, Some(98.0));
        let fifty: Vec<f64> = (0..50).map(f64::from).collect();
        assert_eq!(Summary::of(&fifty).p99, Some(49.0));
    }

    #[test]
    fn ci_from_twenty_batches_of_two() {
        // 40 samples: batch i holds {i, i} so its mean is i; the means 0..19
        // have variance Σ(i - 9.5)²/19 = 665/19 = 35; ci = 2.093·√(35/20).
        let samples: Vec<f64> = (0..20).flat_map(|i| [f64::from(i), f64::from(i)]).collect();
        let ci = Summary::of(&samples).ci.unwrap();
        assert!((ci - 2.093 * (35.0f64 / 20.0).sqrt()).abs() < 1e-12);
        assert_eq!(Summary::of(&samples[..39]).ci, None);
    }

    #[test]
    fn all_zero_samples_have_null_cv2() {
        // 0/0 from the Welford recurrence.
        assert_eq!(Summary::of(&[0.0, 0.0, 0.0]).cv2, None);
    }
}
