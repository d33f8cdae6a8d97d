//! Naive re-solves from scratch, the oracles of the property tests.
//!
//! Architecture invariant: shares no code with the solvers; O(S × F) per
//! level, written for obviousness, not speed.

/// Max-min fair rates by progressive filling over every flow at once.
pub(super) fn maxmin_rates(capacity: &[f64], flows: &[Vec<u32>]) -> Vec<f64> {
    let mut rate = vec![f64::INFINITY; flows.len()];
    let mut frozen: Vec<bool> = flows
        .iter()
        .map(|st| st.iter().all(|&s| capacity[s as usize].is_infinite()))
        .collect();
    loop {
        let mut best = f64::INFINITY;
        let mut level = vec![f64::INFINITY; capacity.len()];
        for (s, &cap) in capacity.iter().enumerate() {
            if cap.is_infinite() {
                continue;
            }
            let mut residual = cap;
            let mut unfrozen = 0usize;
            for (f, st) in flows.iter().enumerate() {
                if st.contains(&(s as u32)) {
                    if frozen[f] {
                        residual -= rate[f];
                    } else {
                        unfrozen += 1;
                    }
                }
            }
            if unfrozen > 0 {
                level[s] = (residual / unfrozen as f64).max(0.0);
                best = best.min(level[s]);
            }
        }
        if best == f64::INFINITY {
            return rate;
        }
        for (f, st) in flows.iter().enumerate() {
            if !frozen[f]
                && st
                    .iter()
                    .any(|&s| level[s as usize] <= best * (1.0 + 1e-12))
            {
                frozen[f] = true;
                rate[f] = best;
            }
        }
    }
}

/// `min over s of φ_s / n_s` for every flow.
pub(super) fn bottleneck_rates(capacity: &[f64], flows: &[Vec<u32>]) -> Vec<f64> {
    let mut n = vec![0usize; capacity.len()];
    for st in flows {
        for &s in st {
            n[s as usize] += 1;
        }
    }
    flows
        .iter()
        .map(|st| {
            st.iter()
                .map(|&s| capacity[s as usize] / n[s as usize] as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}
