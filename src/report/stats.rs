//! The statistics of an observation's samples, defined as the reference
//! defines them (spec §6.11): Welford mean and cv², nearest-rank p99, and a
//! 95% confidence half-width from 20 batch means.

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
    /// The ⌈0.99 n⌉-th smallest sample; `None` without samples.
    pub p99: Option<f64>,
}

/// Student's t at 19 degrees of freedom, 97.5%, as the reference uses it.
const T19: f64 = 2.093;
/// The number of batches of the batch-means CI.
const BATCHES: usize = 20;

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Summary {
    /// Summarises samples given in recording order.
    pub fn of(samples: &[f64]) -> Summary {
        let n = samples.len();
        let (mut k, mut m, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for &x in samples {
            k += 1.0;
            let d = x - m;
            m += d / k;
            m2 += d * (x - m);
        }
        let mean = if n == 0 { None } else { finite(m) };
        let cv2 = if n < 2 {
            None
        } else {
            finite((m2 / (k - 1.0)) / (m * m))
        };
        let p99 = if n == 0 {
            None
        } else {
            // The rank-th smallest by selection, O(n): a full sort of a long
            // run's samples cost more than the rest of the report.
            let mut copy = samples.to_vec();
            let rank = (0.99 * n as f64).ceil() as usize;
            let (_, nth, _) = copy.select_nth_unstable_by(rank.clamp(1, n) - 1, f64::total_cmp);
            finite(*nth)
        };
        Summary {
            count: n as u64,
            mean,
            ci: batch_means_ci(samples),
            cv2,
            p99,
        }
    }
}

/// The batch-means half-width: b = ⌊n/20⌋ samples a batch, trailing samples
/// ignored, two-pass variance of the 20 batch means.
fn batch_means_ci(samples: &[f64]) -> Option<f64> {
    let n = samples.len();
    if n < 2 * BATCHES {
        return None;
    }
    let b = n / BATCHES;
    let mut means = [0.0f64; BATCHES];
    for (i, mean) in means.iter_mut().enumerate() {
        let sum: f64 = samples[i * b..(i + 1) * b].iter().sum();
        *mean = sum / b as f64;
    }
    let grand = means.iter().sum::<f64>() / BATCHES as f64;
    let s2 = means.iter().map(|x| (x - grand) * (x - grand)).sum::<f64>() / (BATCHES - 1) as f64;
    finite(T19 * (s2 / BATCHES as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

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
