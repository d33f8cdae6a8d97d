//! Key tuples and the serve order of a step stage's residents (spec
//! §8.1): ascending keys, ties in admission order, then in join order.
//!
//! Invariant: the serve order is a total order (a resident's join number
//! is unique), so sorting residents needs no stable sort and no buffer;
//! a scan for the smallest key tuple (eviction, like `choose`) keeps the
//! earlier candidate unless a later one is strictly smaller.

use std::cmp::Ordering;

/// The `admission` of a session that was never admitted to any hold:
/// u64::MAX as a float (1.8446744073709552e19), as the reference reads it,
/// so such sessions sort after every admitted one under `serve admission`.
pub const NEVER_ADMITTED: f64 = u64::MAX as f64;

/// Whether key tuple `a` comes strictly before `b`: lexicographic, with
/// IEEE `<` and `==` (the first position where they are not `==`
/// decides, by `<`), so a NaN key is never before anything and ties keep
/// the earlier candidate, as `choose` does.
pub fn strictly_before(a: &[f64], b: &[f64]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x < y;
        }
    }
    a.len() < b.len()
}

/// A resident's place in the serve order.
#[derive(Clone, Debug, PartialEq)]
pub struct Rank<K> {
    /// The `serve by` keys read at the Serve moment (empty for `serve
    /// admission` and `serve exclusive prefill`).
    pub keys: K,
    /// The session's latest hold admission number ([`NEVER_ADMITTED`] if none).
    pub admission: f64,
    /// When the run joined the stage, as a number unique per resident.
    pub joined: u64,
}

/// The serve order: ascending keys, then admission number, then join
/// order. Keys compare as numbers with -0 equal to 0; a NaN key sorts
/// after every number (a total order the sort needs; the reference's
/// order for NaN keys is not pinned).
pub fn serve_order<K: AsRef<[f64]>>(a: &Rank<K>, b: &Rank<K>) -> Ordering {
    // NaN as the one positive NaN (above +inf in total_cmp), -0 as 0.
    let key = |x: f64| {
        if x.is_nan() {
            f64::NAN
        } else if x == 0.0 {
            0.0
        } else {
            x
        }
    };
    for (x, y) in a.keys.as_ref().iter().zip(b.keys.as_ref()) {
        match key(*x).total_cmp(&key(*y)) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    a.admission
        .total_cmp(&b.admission)
        .then(a.joined.cmp(&b.joined))
}

#[cfg(test)]
mod tests {
    use super::{NEVER_ADMITTED, Rank, serve_order, strictly_before};

    #[test]
    fn a_tuple_is_before_another_only_if_strictly_smaller() {
        assert!(strictly_before(&[1.0, 5.0], &[1.0, 6.0]));
        assert!(!strictly_before(&[1.0, 6.0], &[1.0, 6.0]));
        assert!(strictly_before(&[-0.0, 1.0], &[0.0, 2.0]));
        // A NaN decides "not before" where it stands.
        assert!(!strictly_before(&[f64::NAN, 0.0], &[1.0, 5.0]));
        assert!(!strictly_before(&[1.0, 5.0], &[f64::NAN, 0.0]));
    }

    fn rank(keys: Vec<f64>, admission: f64, joined: u64) -> Rank<Vec<f64>> {
        Rank {
            keys,
            admission,
            joined,
        }
    }

    fn sorted(mut v: Vec<Rank<Vec<f64>>>) -> Vec<u64> {
        v.sort_unstable_by(serve_order);
        v.iter().map(|r| r.joined).collect()
    }

    #[test]
    fn serve_admission_puts_the_never_admitted_last_in_join_order() {
        // tests/serving/serve_admission_latest_hold: session 1 (never held,
        // joined first) goes after session 0 (admission 0) and session 2
        // (admission 1).
        let order = sorted(vec![
            rank(vec![], NEVER_ADMITTED, 0),
            rank(vec![], 1.0, 1),
            rank(vec![], 0.0, 2),
            rank(vec![], NEVER_ADMITTED, 3),
        ]);
        assert_eq!(order, vec![2, 1, 0, 3]);
        assert_eq!(NEVER_ADMITTED, 18446744073709551615.0);
    }

    #[test]
    fn keys_come_first_then_admission() {
        // t2_serve_by_keys: by (remaining), prefills of 9, 6, 3.
        let order = sorted(vec![
            rank(vec![9.0], 0.0, 0),
            rank(vec![6.0], 1.0, 1),
            rank(vec![3.0], 2.0, 2),
        ]);
        assert_eq!(order, vec![2, 1, 0]);
        // serve decode first: (decoding ? 0 : 1), ties in admission order.
        let order = sorted(vec![
            rank(vec![1.0], 0.0, 0),
            rank(vec![0.0], 5.0, 1),
            rank(vec![0.0], 3.0, 2),
        ]);
        assert_eq!(order, vec![2, 1, 0]);
    }

    #[test]
    fn nan_keys_sort_last_and_minus_zero_ties_zero() {
        let order = sorted(vec![
            rank(vec![f64::NAN], 0.0, 0),
            rank(vec![0.0], 2.0, 1),
            rank(vec![-0.0], 1.0, 2),
            rank(vec![f64::INFINITY], 3.0, 3),
        ]);
        assert_eq!(order, vec![2, 1, 3, 0]);
    }
}
