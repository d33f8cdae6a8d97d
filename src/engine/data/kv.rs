//! KV pools (spec §8.3–8.4): every pool member's block, prefix cache and
//! serving figures, as dense columns by pool index, so that `cachedin`
//! reads an array and eviction reaches any pool a spill names.
//!
//! Invariant: [`KvPools::cached_avg`] of a member always integrates its
//! cache's total (every change of a cache goes through
//! [`KvPools::note_cached`]); an entry's [`Owner`] is `Session` only while
//! its session lives (its end makes it `Ended`), so a key never reads a
//! recycled entity's new session.
//!
//! Architecture invariant: plain data; nothing here evaluates an
//! expression or knows a hold. The cache itself is
//! `serving::prefix_cache::Cache`.

use bevy_ecs::prelude::*;

use crate::engine::data::stats::TimeAvg;
use crate::engine::serving::blocks::Block;
use crate::engine::serving::prefix_cache::Cache;
use crate::engine::serving::victim::Stuck;

/// What an entry's eviction keys read of its session.
#[derive(Clone, Debug, PartialEq)]
pub enum Owner {
    /// The session is live: keys read its current attributes (its row) and
    /// whether it waits in a queue (its entity). The attributes as they
    /// were when it released the entry are kept for when it ends: keys then
    /// read those (0.1.0; `evict_ended_session_reads_release_attributes`).
    Session(Entity, u32, Box<[f64]>),
    /// The session ended, or the entry is dead: keys read these attributes
    /// (empty when the pool's keys read none) and `waiting` 0.
    Ended(Box<[f64]>),
}

/// A pool member's serving figures (whole-run counters, spec §6.11).
#[derive(Clone, Debug)]
pub struct KvFigures {
    /// Units cached (`mean_cached`).
    pub cached_avg: TimeAvg,
    /// Entries removed whole by eviction.
    pub evicted_entries: u64,
    /// Units evicted.
    pub evicted_units: f64,
    /// Victims preempted for this pool.
    pub preemptions: u64,
    /// Pieces spilled from this pool.
    pub spills: u64,
    /// Sessions counted `stuck` here.
    pub stuck: u64,
}

/// Every pool member's block, cache and serving figures.
#[derive(Resource, Clone, Debug)]
pub struct KvPools {
    /// Each member's block.
    pub block: Vec<Block>,
    /// Each member's cache.
    pub cache: Vec<Cache<Owner>>,
    /// Each member's figures.
    pub figures: Vec<KvFigures>,
    /// Each (session serial, pool) pair's preemption record, for `stuck`:
    /// kept in a sorted list, since few sessions are ever preempted.
    pub stuck: Vec<((u64, u32), Stuck)>,
    /// For each `preempt lifo` pool that is no engine's memory, the
    /// sessions admitted to it (some may hold it no more): its victims'
    /// candidates.
    pub lifo_holders: Vec<Vec<Entity>>,
}

impl KvPools {
    /// Every member empty; `blocks` by pool index.
    pub fn new(blocks: &[Option<f64>], warmup: f64) -> KvPools {
        KvPools {
            block: blocks.iter().map(|b| Block::new(*b)).collect(),
            cache: blocks.iter().map(|_| Cache::new()).collect(),
            figures: blocks
                .iter()
                .map(|_| KvFigures {
                    cached_avg: TimeAvg::new(warmup),
                    evicted_entries: 0,
                    evicted_units: 0.0,
                    preemptions: 0,
                    spills: 0,
                    stuck: 0,
                })
                .collect(),
            stuck: Vec::new(),
            lifo_holders: blocks.iter().map(|_| Vec::new()).collect(),
        }
    }

    /// The session's live cached units in member `p` (`cachedin(p)`).
    #[inline]
    pub fn cached_in(&self, p: usize, serial: u64) -> f64 {
        self.cache.get(p).map_or(0.0, |c| c.live_units(serial))
    }

    /// Member `p`'s cache changed at `now`: its time average follows.
    pub fn note_cached(&mut self, p: usize, now: f64) {
        let total = self.cache[p].total();
        self.figures[p].cached_avg.set(now, total);
    }

    /// A preemption of session `serial` on pool `p` at `position`: whether
    /// it counts in the pool's `stuck` (a session counts once, over every
    /// pool).
    pub fn stuck_preempted(&mut self, serial: u64, p: u32, position: f64) -> bool {
        // The records are sorted by (serial, pool): the session's are a run.
        let from = self.stuck.partition_point(|((s, _), _)| *s < serial);
        let elsewhere = self.stuck[from..]
            .iter()
            .take_while(|((s, _), _)| *s == serial)
            .any(|((_, q), r)| *q != p && r.counted());
        self.stuck_record(serial, p).preempted(position, elsewhere)
    }

    /// The `stuck` record of (session, pool).
    fn stuck_record(&mut self, serial: u64, p: u32) -> &mut Stuck {
        let key = (serial, p);
        let i = match self.stuck.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) => i,
            Err(i) => {
                self.stuck.insert(i, (key, Stuck::default()));
                i
            }
        };
        &mut self.stuck[i].1
    }

    /// A hold of the session on pool `p` completed: its record starts afresh.
    pub fn hold_completed(&mut self, serial: u64, p: u32) {
        if let Ok(i) = self.stuck.binary_search_by(|(k, _)| k.cmp(&(serial, p))) {
            self.stuck[i].1.completed();
        }
    }
}
