//! The Chrome Trace Event format (JSON), as Perfetto's UI and
//! chrome://tracing read it: one object `{"traceEvents": [...]}` whose
//! events are streamed to the writer one by one, never held in memory.
//!
//! Invariants: every event has `ph`, `ts`, `pid` and `tid`; `ts` and `dur`
//! are microseconds rounded to the nanosecond (one unit of simulated time
//! is a second); once the cap of events is reached nothing more is written
//! but the closing of the object, so a capped file is still a valid trace.

use std::io::Write;

use serde::Serialize;

/// One event's arguments: the figures a person reads beside a slice or a
/// counter's series.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Args<'a> {
    /// A step stage's iteration.
    Iteration {
        /// Tokens served.
        tokens: f64,
        /// Of them, prefill tokens.
        prefill: f64,
        /// Of them, decode tokens.
        decode: f64,
        /// Residents at the iteration's start.
        residents: f64,
        /// Its cost (its duration, in simulated time).
        cost: f64,
    },
    /// A pool member's levels.
    Pool {
        /// Allocated units.
        used: f64,
        /// Cached units.
        cached: f64,
        /// Holds waiting in its queue.
        queued: f64,
        /// Allocations (hold frames and leases).
        holders: f64,
    },
    /// A shared stage's rate in use (Σ of its flows' rates).
    Rate {
        /// The rate.
        rate: f64,
    },
    /// The session a slice is.
    Session {
        /// Its serial.
        session: u64,
    },
    /// A preemption's victim.
    Victim {
        /// Its serial.
        victim: u64,
    },
    /// An observation's value.
    Value {
        /// The value.
        value: f64,
    },
    /// A metadata event's name.
    Name {
        /// The name.
        name: &'a str,
    },
    /// A metadata event's sort index.
    Sort {
        /// The index.
        sort_index: u64,
    },
}

/// An async event's id, local to its process (Perfetto scopes `id2.local`
/// by `pid`, so a session's id does not meet a stage's).
#[derive(Serialize)]
struct Id2 {
    local: u64,
}

/// One trace event, as serialised.
#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'a str>,
    ph: &'a str,
    ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    pid: u32,
    tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    id2: Option<Id2>,
    /// An instant's scope (`t`: its thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args<'a>>,
}

/// A simulated time as a trace's `ts`: microseconds, to the nanosecond.
pub fn micros(t: f64) -> f64 {
    (t * 1e9).round() / 1e3
}

/// The writer of one trace: events in, JSON out, up to a cap.
pub struct TraceWriter {
    out: Box<dyn Write + Send + Sync>,
    /// Whether an event was written (the next one needs a comma).
    any: bool,
    written: u64,
    cap: u64,
    capped: bool,
    error: Option<std::io::Error>,
}

impl TraceWriter {
    /// Starts the trace on `out`; at most `cap` events are written.
    pub fn new(out: Box<dyn Write + Send + Sync>, cap: u64) -> TraceWriter {
        let mut w = TraceWriter {
            out,
            any: false,
            written: 0,
            cap,
            capped: false,
            error: None,
        };
        w.raw(b"{\"traceEvents\":[\n");
        w
    }

    /// Events written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Whether the cap stopped the trace.
    pub fn capped(&self) -> bool {
        self.capped
    }

    fn raw(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    fn event(&mut self, event: &Event<'_>) {
        if self.error.is_some() || self.capped {
            return;
        }
        if self.written >= self.cap {
            self.capped = true;
            return;
        }
        if self.any {
            self.raw(b",\n");
        }
        self.any = true;
        self.written += 1;
        if let Err(e) = serde_json::to_writer(&mut self.out, event) {
            self.error = Some(e.into());
        }
    }

    /// A metadata event (`process_name`, `thread_name`, `process_sort_index`).
    pub fn metadata(&mut self, name: &str, pid: u32, tid: u32, args: Args<'_>) {
        self.event(&Event {
            name,
            cat: None,
            ph: "M",
            ts: 0.0,
            dur: None,
            pid,
            tid,
            id2: None,
            s: None,
            args: Some(args),
        });
    }

    /// A complete slice over `[from, to]` (simulated time).
    pub fn complete(&mut self, name: &str, pid: u32, tid: u32, span: (f64, f64), args: Args<'_>) {
        let (ts, end) = (micros(span.0), micros(span.1));
        self.event(&Event {
            name,
            cat: None,
            ph: "X",
            ts,
            dur: Some((((end - ts) * 1e3).round() / 1e3).max(0.0)),
            pid,
            tid,
            id2: None,
            s: None,
            args: Some(args),
        });
    }

    /// An async span over `[from, to]` on track `id` of process `pid`: its
    /// begin and its end, written together.
    pub fn span(&mut self, name: &str, cat: &str, pid: u32, id: u64, span: (f64, f64)) {
        for (ph, t) in [("b", span.0), ("e", span.1)] {
            self.event(&Event {
                name,
                cat: Some(cat),
                ph,
                ts: micros(t),
                dur: None,
                pid,
                tid: 0,
                id2: Some(Id2 { local: id }),
                s: None,
                args: (ph == "b").then_some(Args::Session { session: id }),
            });
        }
    }

    /// An instant on async track `id` of process `pid`, with a value.
    pub fn mark(&mut self, name: &str, cat: &str, pid: u32, id: u64, t: f64, value: f64) {
        self.event(&Event {
            name,
            cat: Some(cat),
            ph: "n",
            ts: micros(t),
            dur: None,
            pid,
            tid: 0,
            id2: Some(Id2 { local: id }),
            s: None,
            args: Some(Args::Value { value }),
        });
    }

    /// An instant on a thread.
    pub fn instant(&mut self, name: &str, pid: u32, tid: u32, t: f64, args: Args<'_>) {
        self.event(&Event {
            name,
            cat: None,
            ph: "i",
            ts: micros(t),
            dur: None,
            pid,
            tid,
            id2: None,
            s: Some("t"),
            args: Some(args),
        });
    }

    /// A counter's values at `t` (one series per field of `args`).
    pub fn counter(&mut self, name: &str, pid: u32, t: f64, args: Args<'_>) {
        self.event(&Event {
            name,
            cat: None,
            ph: "C",
            ts: micros(t),
            dur: None,
            pid,
            tid: 0,
            id2: None,
            s: None,
            args: Some(args),
        });
    }

    /// Closes the trace object and flushes it; the first write error, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.raw(b"\n],\"displayTimeUnit\":\"ms\"}\n");
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
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
            self.0.lock().map_or(Ok(0), |mut v| {
                v.extend_from_slice(buf);
                Ok(buf.len())
            })
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_capped_trace_is_still_one_json_object() {
        let bytes = Shared::default();
        let mut w = TraceWriter::new(Box::new(bytes.clone()), 2);
        for k in 0..5 {
            w.counter("kv", 1, f64::from(k), Args::Rate { rate: 1.0 });
        }
        assert!(w.capped());
        assert!(w.finish().is_ok());
        let text = String::from_utf8(bytes.0.lock().map(|v| v.clone()).unwrap_or_default());
        let v: serde_json::Value = serde_json::from_str(&text.unwrap_or_default()).unwrap();
        assert_eq!(v["traceEvents"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn time_is_written_in_microseconds_to_the_nanosecond() {
        // 1.2345678904 s = 1234567.8904 µs, rounded to 1234567.89 (ns).
        assert_eq!(micros(1.2345678904), 1234567.89);
        assert_eq!(micros(0.5), 500000.0);
    }
}
