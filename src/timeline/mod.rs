//! `serq run --timeline`: what the deployment did, event by event, as a
//! Chrome trace that Perfetto's UI and chrome://tracing open
//! (docs/timeline.md says what each track means).
//!
//! The engine calls a [`Timeline`] with plain figures (a stage or pool
//! index, a session's serial, the figures an iteration has at its start),
//! only when a run records one; the timeline keeps what it needs to pair
//! begins with ends and writes each event as soon as it is whole.
//!
//! Tracks: a process per stage member (its iterations as complete slices
//! on thread 0, the jobs that overlap on it, flows included, one lane
//! thread per slot in use, and a shared stage's `rate` counter), a process
//! per pool member (a `levels` counter of used, cached and queued units and
//! holders, and its preemptions as instants), and a `sessions` process
//! whose async tracks, one per session, hold what each session was doing.
//!
//! Invariants: a session has at most one open span; a span is written
//! whole (begin and end) when it closes, clipped to the window, so the
//! begins and ends pair up whatever the window or the cap; a lane holds one
//! job at a time, so complete slices never overlap on a thread. Nothing
//! here iterates a hash map: open spans are ordered by serial.

mod trace_event;

use std::collections::BTreeMap;
use std::io::Write;

use smallvec::SmallVec;

pub use trace_event::micros;
use trace_event::{Args, TraceWriter};

/// Events a timeline writes at most unless told otherwise: about 160 bytes
/// an event, some 800 MB.
pub const DEFAULT_CAP: u64 = 5_000_000;

/// What a `run` does at a step stage, as the statement says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunKind {
    /// A run at a delay, fifo or ps stage, or a flow.
    Plain,
    /// `run E prefill (…)`.
    Prefill,
    /// `run E decode (…)`.
    Decode,
}

/// What a session waits for, as its span is named.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Doing {
    /// A `run` at stage member `stage` (its first stage; `also` more).
    Run {
        /// The first stage member.
        stage: u32,
        /// How many other stages the run crosses (a flow).
        also: u32,
        /// Prefill or decode at a step stage.
        kind: RunKind,
    },
    /// Admission of a hold to pool member `pool`.
    Wait {
        /// The pool member.
        pool: u32,
    },
    /// A `grow` stalled on pool member `pool`.
    Grow {
        /// The pool member.
        pool: u32,
    },
    /// Readmission to pool member `pool` after a preemption.
    Preempted {
        /// The pool member.
        pool: u32,
    },
}

/// An iteration's figures, as the iteration itself has them at its start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iteration {
    /// When it starts.
    pub start: f64,
    /// Its duration (its cost, at least 0).
    pub duration: f64,
    /// Tokens served.
    pub tokens: f64,
    /// Of them, prefill tokens.
    pub prefill: f64,
    /// Residents of the engine.
    pub residents: f64,
    /// The cost expression's value.
    pub cost: f64,
}

/// What a finished timeline wrote.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Written {
    /// Trace events written.
    pub events: u64,
    /// Whether the cap stopped it before the run's end.
    pub capped: bool,
}

/// A session's open span.
struct Open {
    doing: Doing,
    since: f64,
    /// The lanes it holds, as (stage member, lane).
    lanes: SmallVec<[(u32, u32); 2]>,
}

/// The names and kinds of a program's members, for the tracks.
#[derive(Clone, Debug, Default)]
pub struct Members {
    /// Each stage member's name (`D[3]`).
    pub stages: Vec<String>,
    /// Whether each stage member is a step stage (its iterations are its slices).
    pub step: Vec<bool>,
    /// Whether each stage member is shared (its flows' rate is a counter).
    pub shared: Vec<bool>,
    /// Each pool member's name.
    pub pools: Vec<String>,
    /// Each observation's name.
    pub observes: Vec<String>,
}

/// A run's timeline as it is written.
pub struct Timeline {
    writer: TraceWriter,
    from: f64,
    to: f64,
    members: Members,
    open: BTreeMap<u64, Open>,
    /// Each stage member's lanes: whether each is in use.
    lanes: Vec<Vec<bool>>,
    /// Each pool member's last levels (used, cached, queued, holders).
    levels: Vec<[f64; 4]>,
    /// Each stage member's last rate in use.
    rates: Vec<f64>,
    /// Whether the levels at the window's start are written.
    entered: bool,
    /// Whether the trace is closed (a timeline dropped unfinished, by a
    /// run-time error, closes it as it stands).
    finished: bool,
}

impl Timeline {
    /// A timeline written to `out`, of the events in `[from, to]` of
    /// simulated time, at most `cap` of them.
    pub fn new(out: Box<dyn Write + Send + Sync>, window: (f64, f64), cap: u64) -> Timeline {
        Timeline {
            writer: TraceWriter::new(out, cap),
            from: window.0,
            to: window.1,
            members: Members::default(),
            open: BTreeMap::new(),
            lanes: Vec::new(),
            levels: Vec::new(),
            rates: Vec::new(),
            entered: false,
            finished: false,
        }
    }

    /// A timeline written to the file at `path` (created or truncated).
    pub fn create(
        path: &std::path::Path,
        window: (f64, f64),
        cap: u64,
    ) -> std::io::Result<Timeline> {
        let file = std::fs::File::create(path)?;
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        Ok(Timeline::new(Box::new(out), window, cap))
    }

    fn stage_pid(s: usize) -> u32 {
        s as u32 + 1
    }

    fn pool_pid(&self, p: usize) -> u32 {
        (self.members.stages.len() + p) as u32 + 1
    }

    fn sessions_pid(&self) -> u32 {
        (self.members.stages.len() + self.members.pools.len()) as u32 + 1
    }

    /// The run's members: names every track (called once, at the run's start).
    pub fn declare(&mut self, members: Members) {
        self.lanes = vec![Vec::new(); members.stages.len()];
        self.rates = vec![0.0; members.stages.len()];
        self.levels = vec![[0.0; 4]; members.pools.len()];
        self.members = members;
        let sessions = self.sessions_pid();
        self.writer
            .metadata("process_name", sessions, 0, Args::Name { name: "sessions" });
        self.writer.metadata(
            "process_sort_index",
            sessions,
            0,
            Args::Sort { sort_index: 0 },
        );
        for s in 0..self.members.stages.len() {
            let name = format!("stage {}", self.members.stages[s]);
            let pid = Self::stage_pid(s);
            self.writer
                .metadata("process_name", pid, 0, Args::Name { name: &name });
            let sort_index = u64::from(pid);
            self.writer
                .metadata("process_sort_index", pid, 0, Args::Sort { sort_index });
            if self.members.step[s] {
                let name = "iterations";
                self.writer
                    .metadata("thread_name", pid, 0, Args::Name { name });
            }
        }
        for p in 0..self.members.pools.len() {
            let name = format!("pool {}", self.members.pools[p]);
            let pid = self.pool_pid(p);
            self.writer
                .metadata("process_name", pid, 0, Args::Name { name: &name });
            let sort_index = u64::from(pid);
            self.writer
                .metadata("process_sort_index", pid, 0, Args::Sort { sort_index });
        }
    }

    /// Whether `[a, b]` meets the window, and its part in it.
    fn clip(&self, a: f64, b: f64) -> Option<(f64, f64)> {
        (b >= self.from && a <= self.to).then(|| (a.max(self.from), b.min(self.to)))
    }

    fn name_of(&self, doing: Doing) -> String {
        match doing {
            Doing::Run { stage, also, kind } => {
                let name = &self.members.stages[stage as usize];
                match (kind, also) {
                    (RunKind::Prefill, _) => format!("prefill {name}"),
                    (RunKind::Decode, _) => format!("decode {name}"),
                    (RunKind::Plain, 0) => format!("run {name}"),
                    (RunKind::Plain, _) => format!("transfer {name} +{also}"),
                }
            }
            Doing::Wait { pool } => format!("wait {}", self.members.pools[pool as usize]),
            Doing::Grow { pool } => format!("grow {}", self.members.pools[pool as usize]),
            Doing::Preempted { pool } => {
                format!("preempted, wait {}", self.members.pools[pool as usize])
            }
        }
    }

    /// Session `serial` runs again at `now`: its open span (if any) ends.
    pub fn resume(&mut self, serial: u64, now: f64) {
        let Some(open) = self.open.remove(&serial) else {
            return;
        };
        if let Some(span) = self.clip(open.since, now) {
            let name = self.name_of(open.doing);
            let pid = self.sessions_pid();
            self.writer.span(&name, "session", pid, serial, span);
            let job = if open.lanes.is_empty() {
                String::new()
            } else {
                format!("session {serial}")
            };
            for &(s, lane) in &open.lanes {
                let pid = Self::stage_pid(s as usize);
                let args = Args::Session { session: serial };
                self.writer.complete(&job, pid, lane + 1, span, args);
            }
        }
        for &(s, lane) in &open.lanes {
            self.lanes[s as usize][lane as usize] = false;
        }
    }

    /// Session `serial` blocks at `now` doing `doing`; a run takes a lane
    /// on each of `stages` that is not a step stage.
    pub fn block(&mut self, serial: u64, now: f64, doing: Doing, stages: &[u32]) {
        self.resume(serial, now);
        let mut lanes = SmallVec::new();
        for &s in stages {
            if self.members.step[s as usize] {
                continue;
            }
            let busy = &mut self.lanes[s as usize];
            let lane = match busy.iter().position(|&b| !b) {
                Some(k) => k,
                None => {
                    busy.push(false);
                    let k = busy.len() - 1;
                    let name = format!("lane {k}");
                    let pid = Self::stage_pid(s as usize);
                    let tid = k as u32 + 1;
                    self.writer
                        .metadata("thread_name", pid, tid, Args::Name { name: &name });
                    k
                }
            };
            self.lanes[s as usize][lane] = true;
            lanes.push((s, lane as u32));
        }
        self.open.insert(
            serial,
            Open {
                doing,
                since: now,
                lanes,
            },
        );
    }

    /// Session `serial`'s run was taken away at `now` by a preemption for
    /// pool member `pool`: an instant on the pool and the session, and the
    /// session waits for readmission.
    pub fn preempted(&mut self, serial: u64, pool: u32, now: f64) {
        self.resume(serial, now);
        if self.clip(now, now).is_some() {
            let pid = self.pool_pid(pool as usize);
            let args = Args::Victim { victim: serial };
            self.writer.instant("preempt", pid, 0, now, args);
        }
        self.block(serial, now, Doing::Preempted { pool }, &[]);
    }

    /// Session `serial` observed `value` for observation `index` at `now`:
    /// an instant on its track, named by the observation.
    pub fn observe(&mut self, serial: u64, index: u32, value: f64, now: f64) {
        if self.clip(now, now).is_some()
            && let Some(name) = self.members.observes.get(index as usize)
        {
            let pid = self.sessions_pid();
            self.writer.mark(name, "session", pid, serial, now, value);
        }
    }

    /// Step stage member `stage` starts an iteration.
    pub fn iteration(&mut self, stage: u32, it: Iteration) {
        if let Some(span) = self.clip(it.start, it.start + it.duration) {
            let args = Args::Iteration {
                tokens: it.tokens,
                prefill: it.prefill,
                decode: it.tokens - it.prefill,
                residents: it.residents,
                cost: it.cost,
            };
            let pid = Self::stage_pid(stage as usize);
            self.writer.complete("iteration", pid, 0, span, args);
        }
    }

    /// At the window's start, the levels held then.
    fn enter(&mut self, now: f64) {
        if self.entered || now < self.from {
            return;
        }
        self.entered = true;
        let from = self.from;
        for p in 0..self.levels.len() {
            self.write_levels(p, from);
        }
        for s in 0..self.rates.len() {
            if self.members.shared[s] {
                let pid = Self::stage_pid(s);
                let rate = self.rates[s];
                self.writer.counter("rate", pid, from, Args::Rate { rate });
            }
        }
    }

    fn write_levels(&mut self, p: usize, t: f64) {
        let [used, cached, queued, holders] = self.levels[p];
        let args = Args::Pool {
            used,
            cached,
            queued,
            holders,
        };
        let pid = self.pool_pid(p);
        self.writer.counter("levels", pid, t, args);
    }

    /// Shared stage member `stage`'s rate in use is `rate` from `now`.
    pub fn rate(&mut self, stage: u32, now: f64, rate: f64) {
        self.enter(now);
        let s = stage as usize;
        if self.rates[s] == rate {
            return;
        }
        self.rates[s] = rate;
        if self.entered && now <= self.to {
            let pid = Self::stage_pid(s);
            self.writer.counter("rate", pid, now, Args::Rate { rate });
        }
    }

    /// After an event at `now`: every pool member's levels, of which the
    /// changed ones are written (`cached(p)` reads member `p`'s cache).
    pub fn levels(
        &mut self,
        now: f64,
        used: &[f64],
        holders: &[f64],
        queued: &[f64],
        cached: impl Fn(usize) -> f64,
    ) {
        self.enter(now);
        for p in 0..self.levels.len() {
            let new = [used[p], cached(p), queued[p], holders[p]];
            if new != self.levels[p] {
                self.levels[p] = new;
                if self.entered && now <= self.to {
                    self.write_levels(p, now);
                }
            }
        }
    }

    /// Ends the timeline at the run's `end`: every open span closes then,
    /// and the file is closed.
    pub fn finish(mut self, end: f64) -> std::io::Result<Written> {
        self.enter(end);
        let open: Vec<u64> = self.open.keys().copied().collect();
        for serial in open {
            self.resume(serial, end);
        }
        self.finished = true;
        self.writer.finish()?;
        Ok(Written {
            events: self.writer.written(),
            capped: self.writer.capped(),
        })
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        if !self.finished {
            // Best effort: the run failed, and its error is what is reported.
            let _ = self.writer.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut v) = self.0.lock() {
                v.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// One delay stage `s` and one pool `kv`.
    fn timeline(window: (f64, f64)) -> (Timeline, Shared) {
        let bytes = Shared::default();
        let mut t = Timeline::new(Box::new(bytes.clone()), window, DEFAULT_CAP);
        t.declare(Members {
            stages: vec!["s".into()],
            step: vec![false],
            shared: vec![false],
            pools: vec!["kv".into()],
            observes: vec!["ttft".into()],
        });
        (t, bytes)
    }

    fn events(t: Timeline, bytes: &Shared, end: f64) -> Vec<serde_json::Value> {
        assert!(t.finish(end).is_ok());
        let text = bytes.0.lock().map(|v| v.clone()).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
        v["traceEvents"].as_array().cloned().unwrap_or_default()
    }

    fn run_at_s() -> Doing {
        Doing::Run {
            stage: 0,
            also: 0,
            kind: RunKind::Plain,
        }
    }

    #[test]
    fn overlapping_jobs_take_lanes_and_a_freed_lane_is_taken_again() {
        let (mut t, bytes) = timeline((0.0, f64::INFINITY));
        // Sessions 1 and 2 overlap on s; 3 starts once 1 has left.
        t.block(1, 0.0, run_at_s(), &[0]);
        t.block(2, 1.0, run_at_s(), &[0]);
        t.resume(1, 2.0);
        t.block(3, 2.0, run_at_s(), &[0]);
        let all = events(t, &bytes, 5.0);
        let lane_of = |name: &str| {
            all.iter()
                .find(|e| e["ph"] == "X" && e["name"] == name)
                .and_then(|e| e["tid"].as_u64())
        };
        assert_eq!(lane_of("session 1"), Some(1));
        assert_eq!(lane_of("session 2"), Some(2));
        assert_eq!(lane_of("session 3"), Some(1));
        // Two lanes were named, and every open span closed at the end.
        let lanes = all.iter().filter(|e| e["name"] == "thread_name").count();
        assert_eq!(lanes, 2);
        let ends = all.iter().filter(|e| e["ph"] == "e").count();
        assert_eq!(ends, 3);
    }

    #[test]
    fn a_span_across_the_window_is_cut_at_its_ends() {
        let (mut t, bytes) = timeline((10.0, 20.0));
        // Waits from 5 to 25: written as [10, 20] (in µs).
        t.block(7, 5.0, Doing::Wait { pool: 0 }, &[]);
        t.resume(7, 25.0);
        // Ends before the window: not written.
        t.block(8, 1.0, Doing::Wait { pool: 0 }, &[]);
        t.resume(8, 2.0);
        let all = events(t, &bytes, 30.0);
        let spans: Vec<(f64, &str)> = all
            .iter()
            .filter(|e| e["ph"] == "b" || e["ph"] == "e")
            .map(|e| {
                (
                    e["ts"].as_f64().unwrap_or(-1.0),
                    e["ph"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(spans, [(10e6, "b"), (20e6, "e")]);
        assert!(all.iter().any(|e| e["name"] == "wait kv"));
    }

    #[test]
    fn levels_are_written_when_they_change_and_at_the_window_s_start() {
        let (mut t, bytes) = timeline((10.0, f64::INFINITY));
        // used 4 from 3 (before the window), 4 again at 12 (no change),
        // then 6 at 15: written as 4 at 10 and 6 at 15.
        t.levels(3.0, &[4.0], &[1.0], &[0.0], |_| 0.0);
        t.levels(12.0, &[4.0], &[1.0], &[0.0], |_| 0.0);
        t.levels(15.0, &[6.0], &[1.0], &[0.0], |_| 0.0);
        let all = events(t, &bytes, 20.0);
        let used: Vec<(f64, f64)> = all
            .iter()
            .filter(|e| e["ph"] == "C")
            .map(|e| {
                let ts = e["ts"].as_f64().unwrap_or(-1.0);
                (ts, e["args"]["used"].as_f64().unwrap_or(-1.0))
            })
            .collect();
        assert_eq!(used, [(10e6, 4.0), (15e6, 6.0)]);
    }
}
