//! Non-negative least squares: Lawson and Hanson's active-set method
//! ("Solving Least Squares Problems", 1974, chapter 23), each step's
//! unconstrained solve done by nalgebra's SVD.
//!
//! Architecture invariant: pure numerics on a dense matrix; nothing here
//! knows CSV files, term names or serq programs.

use nalgebra::{DMatrix, DVector};

/// The most outer iterations: Lawson–Hanson ends in finitely many (each
/// adds a variable to the passive set), 3k is their own bound in practice.
fn outer_limit(k: usize) -> usize {
    3 * k.max(1) + 10
}

/// The `x >= 0` minimising `|a x - b|`. Columns are scaled to unit norm
/// before the loop (a CSV's terms span ten orders of magnitude: tokens in
/// thousands, attention pairs in millions) and the result scaled back; a
/// column of zeros gets coefficient 0.
///
/// ```
/// use nalgebra::{DMatrix, DVector};
/// // b = 2 * col0 exactly, and col1 would need a negative weight: it stays 0.
/// let a = DMatrix::from_row_slice(3, 2, &[1.0, 1.0, 2.0, 0.0, 3.0, -1.0]);
/// let b = DVector::from_row_slice(&[2.0, 4.0, 6.0]);
/// let x = serq::fit::nnls::solve(&a, &b);
/// assert!((x[0] - 2.0).abs() < 1e-12 && x[1] == 0.0);
/// ```
pub fn solve(a: &DMatrix<f64>, b: &DVector<f64>) -> DVector<f64> {
    let k = a.ncols();
    let norms: Vec<f64> = (0..k).map(|j| a.column(j).norm()).collect();
    let mut scaled = a.clone();
    for (j, &n) in norms.iter().enumerate() {
        if n > 0.0 {
            scaled.column_mut(j).unscale_mut(n);
        }
    }
    let x = solve_scaled(&scaled, b, &norms);
    DVector::from_fn(k, |j, _| if norms[j] > 0.0 { x[j] / norms[j] } else { 0.0 })
}

/// Lawson–Hanson on columns of unit norm (a zero column never enters).
fn solve_scaled(a: &DMatrix<f64>, b: &DVector<f64>, norms: &[f64]) -> DVector<f64> {
    let k = a.ncols();
    let tolerance = 1e-12 * b.norm();
    let mut x = DVector::<f64>::zeros(k);
    let mut passive = vec![false; k];
    for _ in 0..outer_limit(k) {
        // The gradient of -|ax - b|²/2: a variable at 0 with a positive
        // entry would lower the residual by rising.
        let w = a.transpose() * (b - a * &x);
        let entering = (0..k)
            .filter(|&j| !passive[j] && norms[j] > 0.0 && w[j] > tolerance)
            .max_by(|&i, &j| w[i].total_cmp(&w[j]));
        let Some(j) = entering else { break };
        passive[j] = true;
        // Inner loop: solve on the passive set; step back to the boundary
        // while the solution leaves the feasible region.
        for _ in 0..outer_limit(k) {
            let s = passive_solve(a, b, &passive);
            let blocking: Vec<usize> = (0..k).filter(|&i| passive[i] && s[i] <= 0.0).collect();
            if blocking.is_empty() {
                x = s;
                break;
            }
            // The largest step toward s that keeps x >= 0; the variable
            // that sets it reaches 0 and leaves (rounding may leave it a
            // hair either side of 0), with any other at or below 0.
            let (first, alpha) = blocking.iter().map(|&i| (i, x[i] / (x[i] - s[i]))).fold(
                (blocking[0], f64::INFINITY),
                |best, c| {
                    if c.1 < best.1 { c } else { best }
                },
            );
            x += (s - &x) * alpha;
            for i in 0..k {
                if passive[i] && (i == first || x[i] <= 0.0) {
                    passive[i] = false;
                    x[i] = 0.0;
                }
            }
        }
    }
    x
}

/// The unconstrained least-squares solution on the passive columns (0
/// elsewhere), by SVD, which copes with nearly collinear terms.
fn passive_solve(a: &DMatrix<f64>, b: &DVector<f64>, passive: &[bool]) -> DVector<f64> {
    let columns: Vec<usize> = (0..a.ncols()).filter(|&j| passive[j]).collect();
    let sub = a.select_columns(&columns);
    let solved = sub
        .svd(true, true)
        .solve(b, 1e-14)
        .unwrap_or_else(|_| DVector::zeros(columns.len()));
    let mut s = DVector::zeros(a.ncols());
    for (i, &j) in columns.iter().enumerate() {
        s[j] = solved[i];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unconstrained_optimum_inside_the_orthant_is_found_exactly() {
        // b = 1 + 2 t exactly over t = 0..4: x = (1, 2).
        let a = DMatrix::from_fn(5, 2, |i, j| if j == 0 { 1.0 } else { i as f64 });
        let b = DVector::from_fn(5, |i, _| 1.0 + 2.0 * i as f64);
        let x = solve(&a, &b);
        assert!(
            (x[0] - 1.0).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12,
            "{x}"
        );
    }

    #[test]
    fn a_coefficient_that_would_be_negative_is_held_at_zero() {
        // b = 3 - t: unconstrained (3, -1); with x >= 0 the slope is 0 and
        // the constant is b's mean, (3 + 2 + 1 + 0) / 4 = 1.5.
        let a = DMatrix::from_fn(4, 2, |i, j| if j == 0 { 1.0 } else { i as f64 });
        let b = DVector::from_fn(4, |i, _| 3.0 - i as f64);
        let x = solve(&a, &b);
        assert_eq!(x[1], 0.0);
        assert!((x[0] - 1.5).abs() < 1e-12, "{x}");
    }

    #[test]
    fn a_column_of_zeros_gets_zero() {
        let a = DMatrix::from_fn(3, 2, |i, j| if j == 0 { 1.0 + i as f64 } else { 0.0 });
        let b = DVector::from_fn(3, |i, _| 2.0 * (1.0 + i as f64));
        let x = solve(&a, &b);
        assert_eq!(x[1], 0.0);
        assert!((x[0] - 2.0).abs() < 1e-12);
    }
}
