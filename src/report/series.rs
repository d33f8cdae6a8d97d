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
    /// Each window's start, and `to` last: `areas.len() + 1` times.
    bounds: Vec<f64>,
}

impl WindowedAverage {
    /// The number of windows.
    pub const WINDOWS: usize = 64;

    /// Starts at value 0 at time 0; `from < to`.
    pub fn new(from: f64, to: f64) -> WindowedAverage {
        let n = Self::WINDOWS;
        let bounds = (0..=n)
            .map(|k| {
                if k >= n {
                    to
                } else {
                    from + (to - from) * k as f64 / n as f64
                }
            })
            .collect();
        WindowedAverage::over(from, to, bounds)
    }

    /// The most windows [`WindowedAverage::every`] makes: a narrower
    /// width is widened to `(to − from) / MAX_EVERY_WINDOWS`.
    pub const MAX_EVERY_WINDOWS: usize = 1_000_000;

    /// How many windows of `every` (> 0) cover `[from, to]`, at least 1.
    pub fn windows_of(from: f64, to: f64, every: f64) -> f64 {
        ((to - from) / every).ceil().max(1.0)
    }

    /// Windows of `every` from `from` on (the last one ends at `to`,
    /// shorter when `to − from` is no multiple of `every`); `every > 0`,
    /// at most [`WindowedAverage::MAX_EVERY_WINDOWS`] of them.
    pub fn every(from: f64, to: f64, every: f64) -> WindowedAverage {
        let max = Self::MAX_EVERY_WINDOWS;
        let every = every.max((to - from) / max as f64);
        let n = (Self::windows_of(from, to, every) as usize).min(max);
        let bounds = (0..=n)
            .map(|k| if k >= n { to } else { from + every * k as f64 })
            .collect();
        WindowedAverage::over(from, to, bounds)
    }

    fn over(from: f64, to: f64, bounds: Vec<f64>) -> WindowedAverage {
        let mut w = WindowedAverage {
            from,
            to,
            value: 0.0,
            since: 0.0,
            current: 0,
            next: 0.0,
            areas: vec![0.0; bounds.len() - 1],
            bounds,
        };
        w.next = w.boundary(1);
        w
    }

    /// The start of window `k` (the last window's `k` gives `to` exactly).
    fn boundary(&self, k: usize) -> f64 {
        self.bounds[k.min(self.areas.len())]
    }

    /// The windows' bounds: each window's start, then `to`.
    pub fn bounds(&self) -> &[f64] {
        &self.bounds
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
        while now > self.next && self.current + 1 < self.areas.len() {
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
        (0..self.areas.len())
            .take_while(|&k| self.boundary(k + 1) <= end)
            .map(|k| done.areas[k] / (self.boundary(k + 1) - self.boundary(k)))
            .collect()
    }

    /// The average in each window that starts before `end`, the last one
    /// over its part up to `end` (a run that ended early, by a drain or an
    /// interrupt), in time order.
    pub fn partial_means(&self, end: f64) -> Vec<f64> {
        let mut done = self.clone();
        if end > done.since {
            done.integrate(end);
        }
        (0..self.areas.len())
            .take_while(|&k| self.boundary(k) < end)
            .map(|k| done.areas[k] / (self.boundary(k + 1).min(end) - self.boundary(k)))
            .collect()
    }
}

/// `serq run --series OUT.csv --every DT`: each pool member's used,
/// cached and queued units and each stage member's utilisation averaged
/// over every window of DT from the warmup on, and the counts of the
/// windows (arrivals, completions, each stage's completions, each
/// observation's samples); [`Series::to_csv`] makes the rows with the
/// report's names and samples.
///
/// Invariant: the engine calls [`Series::levels`] after every event and
/// [`Series::mark`] before the first event at or after each window's
/// start, so a window's counts are those of its events, each counted once.
#[derive(Clone, Debug)]
pub struct Series {
    every: f64,
    /// Each pool member's used, cached and queued units.
    pools: Vec<[WindowedAverage; 3]>,
    /// Each stage member's utilisation.
    stages: Vec<WindowedAverage>,
    /// Whether each stage member is shared (its utilisation is its flows').
    shared: Vec<bool>,
    /// The windows' bounds (each start, then the horizon).
    bounds: Vec<f64>,
    /// The counts at each bound reached: arrivals, completions, each
    /// stage member's completions, each observation's samples.
    marks: Vec<Vec<u64>>,
}

impl Series {
    /// Windows of `every` (> 0), for a run not yet declared.
    pub fn new(every: f64) -> Series {
        Series {
            every,
            pools: Vec::new(),
            stages: Vec::new(),
            shared: Vec::new(),
            bounds: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// The run measures `[warmup, horizon]` over stage members of which
    /// `shared` says which are shared, and `pools` pool members (called
    /// once, at the run's start).
    pub fn declare(&mut self, warmup: f64, horizon: f64, shared: Vec<bool>, pools: usize) {
        let window = WindowedAverage::every(warmup, horizon, self.every);
        self.bounds = window.bounds().to_vec();
        self.pools = vec![[window.clone(), window.clone(), window.clone()]; pools];
        self.stages = vec![window; shared.len()];
        self.shared = shared;
    }

    /// Whether stage member `s` is shared.
    pub fn is_shared(&self, s: usize) -> bool {
        self.shared[s]
    }

    /// The pools' levels after an event at `now` (`cached(p)` reads member
    /// `p`'s cache).
    pub fn levels(
        &mut self,
        now: f64,
        used: &[f64],
        queued: &[f64],
        cached: impl Fn(usize) -> f64,
    ) {
        for (p, [u, c, q]) in self.pools.iter_mut().enumerate() {
            u.set(now, used[p]);
            c.set(now, cached(p));
            q.set(now, queued[p]);
        }
    }

    /// Stage member `s`'s utilisation after an event at `now`.
    pub fn utilisation(&mut self, now: f64, s: usize, u: f64) {
        self.stages[s].set(now, u);
    }

    /// When the next counts are due: the next bound not yet marked.
    pub fn next_mark(&self) -> f64 {
        self.bounds
            .get(self.marks.len())
            .copied()
            .unwrap_or(f64::INFINITY)
    }

    /// The counts now, before the events at `now`: they are the counts at
    /// every bound up to `now` not yet marked.
    pub fn mark(&mut self, now: f64, counts: &[u64]) {
        while self.marks.len() < self.bounds.len() && self.next_mark() <= now {
            self.marks.push(counts.to_vec());
        }
    }

    /// The run ended at `end` with these counts: the bounds up to it are
    /// marked, and the window it cuts short ends at `end`.
    pub fn finish(&mut self, end: f64, counts: &[u64]) {
        self.mark(end, counts);
        if self.marks.len() < self.bounds.len() {
            self.marks.push(counts.to_vec());
        }
    }

    /// The rows as CSV: a header, then one row per window that starts
    /// before the report's end. `fold` folds each family into its mean
    /// over the members, as `--by-family` folds the report.
    pub fn to_csv(&self, report: &crate::report::Report, by_family: bool) -> String {
        use std::fmt::Write;
        let end = report.end;
        let windows = self.bounds.iter().take_while(|&&b| b < end).count();
        let pools: Vec<[Vec<f64>; 3]> = self
            .pools
            .iter()
            .map(|w| w.clone().map(|x| x.partial_means(end)))
            .collect();
        let stages: Vec<Vec<f64>> = self.stages.iter().map(|w| w.partial_means(end)).collect();
        let (stage_groups, pool_groups) = if by_family {
            (
                groups(report.stages.iter().map(|r| (r.name.as_str(), r.member))),
                groups(report.pools.iter().map(|r| (r.name.as_str(), r.member))),
            )
        } else {
            (
                singles(report.stages.iter().map(|r| (r.name.as_str(), r.member))),
                singles(report.pools.iter().map(|r| (r.name.as_str(), r.member))),
            )
        };
        let mut out = String::from("from,to,arrivals,completions");
        for o in &report.observes {
            let _ = write!(out, ",{0}.count,{0}.mean,{0}.p99", o.name);
        }
        for (name, _) in &stage_groups {
            let _ = write!(out, ",{name}.util,{name}.thrpt");
        }
        for (name, _) in &pool_groups {
            let _ = write!(out, ",{name}.used,{name}.cached,{name}.queued");
        }
        out.push('\n');
        let stage_count = report.stages.len();
        let number = |x: f64| {
            if x.is_finite() {
                x.to_string()
            } else {
                String::new()
            }
        };
        for k in 0..windows.min(self.marks.len().saturating_sub(1)) {
            let (a, b) = (self.bounds[k], self.bounds[k + 1].min(end));
            let (before, after) = (&self.marks[k], &self.marks[k + 1]);
            let delta = |i: usize| after[i] - before[i];
            let _ = write!(out, "{a},{b},{},{}", delta(0), delta(1));
            for (i, o) in report.observes.iter().enumerate() {
                let at = |m: &Vec<u64>| m[2 + stage_count + i] as usize;
                let samples = o.samples.get(at(before)..at(after)).unwrap_or(&[]);
                let summary = crate::report::Summary::of(samples);
                let _ = write!(
                    out,
                    ",{},{},{}",
                    summary.count,
                    summary.mean.map_or(String::new(), number),
                    summary.p99.map_or(String::new(), number)
                );
            }
            let mean_of = |members: &[usize], f: &dyn Fn(usize) -> f64| {
                members.iter().map(|&m| f(m)).sum::<f64>() / members.len() as f64
            };
            for (_, members) in &stage_groups {
                let util = mean_of(members, &|s| stages[s][k]);
                let thrpt = mean_of(members, &|s| delta(2 + s) as f64 / (b - a));
                let _ = write!(out, ",{},{}", number(util), number(thrpt));
            }
            for (_, members) in &pool_groups {
                let [u, c, q] = [0, 1, 2].map(|j| number(mean_of(members, &|p| pools[p][j][k])));
                let _ = write!(out, ",{u},{c},{q}");
            }
            out.push('\n');
        }
        out
    }
}

/// Each member alone, named `name[k]` in a family.
fn singles<'a>(rows: impl Iterator<Item = (&'a str, Option<usize>)>) -> Vec<(String, Vec<usize>)> {
    rows.enumerate()
        .map(|(i, (name, member))| {
            let name = match member {
                Some(k) => format!("{name}[{k}]"),
                None => name.to_string(),
            };
            (name, vec![i])
        })
        .collect()
}

/// Each family (a run of one name) as one column group, in order.
fn groups<'a>(rows: impl Iterator<Item = (&'a str, Option<usize>)>) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, (name, _)) in rows.enumerate() {
        match out.last_mut() {
            Some((last, members)) if last == name => members.push(i),
            _ => out.push((name.to_string(), vec![i])),
        }
    }
    out
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
    fn a_mark_past_every_bound_marks_each_bound_once() {
        // [10, 25] in windows of 10: bounds 10, 20, 25. No event after
        // time 12: the next one is "at infinity", and each bound is marked
        // once with the counts then.
        let mut series = Series::new(10.0);
        series.declare(10.0, 25.0, vec![false], 0);
        series.mark(12.0, &[1]);
        series.mark(f64::INFINITY, &[3]);
        assert_eq!(series.marks, [vec![1], vec![3], vec![3]]);
        series.finish(25.0, &[3]);
        assert_eq!(series.marks.len(), 3);
    }

    #[test]
    fn windows_of_a_width_end_at_the_horizon() {
        // [100, 1000] in windows of 7: 129 windows, the last [996, 1000].
        let w = WindowedAverage::every(100.0, 1000.0, 7.0);
        assert_eq!(w.bounds().len(), 130);
        assert_eq!(w.bounds()[128..], [996.0, 1000.0]);
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
