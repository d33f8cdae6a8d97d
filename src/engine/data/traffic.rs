//! Arrivals from a trace (a serq extension, `arrive trace "FILE"`): the
//! reader of the trace, the row that arrives next and the sizes of the
//! one that arrived last.
//!
//! Invariant: one row is held ahead, never the file; a row in the window
//! `[start, end)` (seconds after the trace's first row) arrives at
//! `(time − start) / speed`, in file order; reading stops at the first row
//! past the window's end.
//!
//! Architecture invariant: plain data over [`crate::traffic`]'s reader;
//! nothing here evaluates or schedules (`arrive` does, with what this
//! returns).

use bevy_ecs::prelude::*;

use crate::ir::ArrivalTrace;
use crate::trace::TraceError;
use crate::traffic::{ArrivalReader, ArrivalRow};

/// The workload's arrival trace, when it arrives by one.
#[derive(Resource, Debug, Default)]
pub struct Traffic {
    stream: Option<TraceArrivals>,
}

#[derive(Debug)]
struct TraceArrivals {
    reader: ArrivalReader,
    /// The next row in the window, if any.
    next: Option<ArrivalRow>,
    /// `new` and `out` of the row that arrived last.
    sizes: (f64, f64),
    start: f64,
    end: f64,
    speed: f64,
}

impl Traffic {
    /// Opens the trace at `path` (the spec's, as resolved) and reads up to
    /// the window's first row.
    pub fn open(spec: &ArrivalTrace) -> Result<Traffic, TraceError> {
        let reader = ArrivalReader::open(std::path::Path::new(&spec.path))?;
        let mut stream = TraceArrivals {
            reader,
            next: None,
            sizes: (0.0, 0.0),
            start: spec.start,
            end: spec.end,
            speed: spec.speed,
        };
        stream.read_next()?;
        Ok(Traffic {
            stream: Some(stream),
        })
    }

    /// When the next row arrives; `None` once the window is exhausted (or
    /// without a trace).
    pub fn next_time(&self) -> Option<f64> {
        let s = self.stream.as_ref()?;
        let row = s.next.as_ref()?;
        Some((row.time - s.start) / s.speed)
    }

    /// The next row arrives now: its sizes become [`Traffic::sizes`] and
    /// the row after it is read.
    pub fn take(&mut self) -> Result<(), TraceError> {
        let Some(s) = self.stream.as_mut() else {
            return Ok(());
        };
        if let Some(row) = s.next.take() {
            s.sizes = (row.new, row.out);
        }
        s.read_next()
    }

    /// `new` and `out` of the row that arrived last, with a trace.
    pub fn sizes(&self) -> Option<(f64, f64)> {
        self.stream.as_ref().map(|s| s.sizes)
    }
}

impl TraceArrivals {
    /// Reads the next row in the window into `next` (skipping those before it).
    fn read_next(&mut self) -> Result<(), TraceError> {
        self.next = None;
        while let Some(row) = self.reader.next_row()? {
            if row.time >= self.end {
                return Ok(());
            }
            if row.time >= self.start {
                self.next = Some(row);
                return Ok(());
            }
        }
        Ok(())
    }
}
