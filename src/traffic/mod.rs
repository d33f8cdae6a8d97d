//! Arrival traces (a serq extension, `arrive trace "FILE"`): production
//! request logs whose rows are the workload's arrivals, each row a
//! session with the row's sizes. Three formats: serq's own CSV
//! (`time,new,out`, seconds), the Azure LLM inference trace (CSV,
//! `TIMESTAMP,ContextTokens,GeneratedTokens`, datetimes) and the Mooncake
//! trace (JSON lines, `timestamp` in ms, `input_length`, `output_length`,
//! `hash_ids`).
//!
//! Architecture invariant: plain data read from a file; nothing here knows
//! the IR or the engine. A trace is streamed: [`ArrivalReader`] holds one
//! row, so the engine reads rows as the simulation reaches them and a
//! million-row trace is never in memory at once. (Turn traces, spec §8.7,
//! are [`crate::trace`]'s.)

mod datetime;
mod reader;

pub use datetime::parse_nanos;
pub use reader::{ArrivalReader, ArrivalRow, Format, Scan, scan};
