//! A series over the measured interval: the time average of a
//! piecewise-constant quantity (the live sessions) in each of
//! [`WindowedAverage::WINDOWS`] equal windows of `[warmup, horizon]`, the
//! input of the stability test (`super::stability`).
//!
//! Invariant: [`WindowedAverage::set`] costs a comparison and a
//! multiply-add when no window boundary is crossed, and allocates nothing:
//! the engine calls it where the quantity changes.

/// The time average of a piecewise-constant value over each of
/// [`WindowedAverage::WINDOWS`] equal windows of `[from, to]`; time before
/// `from` or after `to` is not counted.
///
/// ```
/// use serq::report::WindowedAverage;
/// // Value 2 on [0, 48), 4 from 48 on; windows of [32, 96] are 1 long, so
/// // windows 0..16 (times 32..48) average 2 and windows 16..64 average 4.
/// let mut w = WindowedAverage::new(32.0, 96.0);
/// w.set(0.0, 2.0);
/// w.set(48.0, 4.0);
/// let means = w.means(96.0);
/// assert_eq!(means.len(), 64);
/// assert!(means[..16].iter().all(|&m| m == 2.0) && means[16..].iter().all(|&m| m == 4.0));
/// // At end 64.5, only the 32 windows up to 64 are complete.
/// assert_eq!(w.means(64.5).len(), 32);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WindowedAverage {
    from: f64,
    to: f64,
    value: f64,
    since: f64,
    /// The window `since` lies in.
    current: usize,
    /// The end of the current window.
    next: f64,
    /// The integral of the value over each window, so far.
    areas: Vec<f64>,
}

impl WindowedAverage {
    /// The number of windows.
    pub const WINDOWS: usize = 64;

    /// Starts at value 0 at time 0; `from < to`.
    pub fn new(from: f64, to: f64) -> WindowedAverage {
        let mut w = WindowedAverage {
            from,
            to,
            value: 0.0,
            since: 0.0,
            current: 0,
            next: 0.0,
            areas: vec![0.0; Self::WINDOWS],
        };
        w.next = w.boundary(1);
        w
    }

    /// The start of window `k` (`k = WINDOWS` gives `to` exactly).
    fn boundary(&self, k: usize) -> f64 {
        if k >= Self::WINDOWS {
            self.to
        } else {
            self.from + (self.to - self.from) * k as f64 / Self::WINDOWS as f64
        }
    }

    /// The value changes to `value` at `now` (never earlier than the last change).
    #[inline(always)]
    pub fn set(&mut self, now: f64, value: f64) {
        if now > self.since {
            if now <= self.next && self.since >= self.from {
                // Within the current window: the common case, one multiply-add.
                self.areas[self.current] += self.value * (now - self.since);
                self.since = now;
            } else {
                self.integrate(now);
            }
        }
        self.value = value;
    }

    /// Adds the value held since the last change up to `now` to the windows.
    fn integrate(&mut self, now: f64) {
        if now <= self.from {
            self.since = now;
            return;
        }
        let mut t = self.since.max(self.from);
        // `current` only moves forward, so this ends.
        while now > self.next && self.current + 1 < Self::WINDOWS {
            self.areas[self.current] += self.value * (self.next - t).max(0.0);
            t = t.max(self.next);
            self.current += 1;
            self.next = self.boundary(self.current + 1);
        }
        let upto = now.min(self.to);
        if upto > t {
            self.areas[self.current] += self.value * (upto - t);
        }
        self.since = now;
    }

    /// The average in each window that ends at or before `end`, in time order.
    pub fn means(&self, end: f64) -> Vec<f64> {
        let mut done = self.clone();
        if end > done.since {
            done.integrate(end);
        }
        (0..Self::WINDOWS)
            .take_while(|&k| self.boundary(k + 1) <= end)
            .map(|k| done.areas[k] / (self.boundary(k + 1) - self.boundary(k)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_spanning_windows_is_split_at_their_boundaries() {
        // [0, 64]: windows of 1. Value 1 on [0.5, 2.5), then 0.
        // Window 0: 0.5 of 1 → 0.5; window 1: 1; window 2: 0.5; the rest 0.
        let mut w = WindowedAverage::new(0.0, 64.0);
        w.set(0.5, 1.0);
        w.set(2.5, 0.0);
        let means = w.means(64.0);
        assert_eq!(&means[..4], [0.5, 1.0, 0.5, 0.0]);
        assert!(means[3..].iter().all(|&m| m == 0.0));
    }

    #[test]
    fn time_before_the_start_is_not_counted() {
        // [10, 74]: value 3 from 0 to 11, so window 0 ([10, 11]) averages 3.
        let mut w = WindowedAverage::new(10.0, 74.0);
        w.set(0.0, 3.0);
        w.set(11.0, 0.0);
        assert_eq!(&w.means(74.0)[..2], [3.0, 0.0]);
    }
}
