//! Caching in holds (spec §8.3–8.4): what an admission consumes of the
//! session's cached entries, what a release keeps, `drop`, and eviction
//! (LRU or keyed, piece by piece) with its spills.
//!
//! Invariants: a session consumes its own entries before any eviction
//! makes room for it; eviction stops as soon as `used + cached + need ≤
//! cap + EPS`; every change of a pool's cache is noted in its
//! `mean_cached`. A spilled piece reaches its target after the target has
//! evicted while it was already over its capacity, and its job runs with
//! no session waiting for it.

use std::cell::Cell;

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::{Code, Expr, Stmt, ctx_index};
use crate::engine::data::kv::Owner;
use crate::engine::data::session::{HoldFrame, Lease, Wait};
use crate::engine::data::stage::{Service, join};
use crate::engine::eval::evaluate::Moment;
use crate::engine::eval::sim::{Outside, OutsideAttrs, RunStream, Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::serving::order::strictly_before;
use crate::engine::serving::position::cached_units;
use crate::engine::serving::prefix_cache::{Entry, Evicted, room};
use crate::ir::Ctx;

/// What a new entry of session `e` in pool `p` keeps of its owner, if the
/// pool's keys read owners: the session itself while it lives, and its
/// attributes now (at the release) for when it has ended.
fn owner_of(code: &Code, sim: &Sim, e: Entity, p: usize) -> Owner {
    if !code.pools[p].evict_reads_owner {
        return Owner::Ended(Box::default());
    }
    match sim.sessions.states.get(e) {
        Ok((_, _, life)) => Owner::Session(e, life.row, sim.sessions.attrs.of(life.row).into()),
        Err(_) => Owner::Ended(Box::default()),
    }
}

/// What a dead entry or an ended session's entry keeps: the attributes as
/// they are now, if the pool's keys read owners.
fn frozen(code: &Code, sim: &Sim, e: Entity, p: usize) -> Owner {
    match owner_of(code, sim, e, p) {
        Owner::Session(_, _, now) => Owner::Ended(now),
        ended => ended,
    }
}

fn serial_of(sim: &Sim, e: Entity) -> Result<u64, RunError> {
    match sim.sessions.states.get(e) {
        Ok((_, _, life)) => Ok(life.serial),
        Err(_) => Err(lost("session", sim.time.clock.now)),
    }
}

/// At an admission of session `e`'s hold to `pools`: each pool's entry is
/// consumed, at most `limit` (the hold's `reuse`, `inf` without one);
/// returns what each consumed.
pub fn consume(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    pools: &[u32],
    limit: f64,
    consumed: &mut smallvec::SmallVec<[f64; 4]>,
) -> Result<(), RunError> {
    consumed.clear();
    let serial = serial_of(sim, e)?;
    let now = sim.time.clock.now;
    for &p in pools {
        let p = p as usize;
        if sim.pools.kv.cache[p].live_units(serial) == 0.0 {
            consumed.push(0.0);
            continue;
        }
        let dead = frozen(code, sim, e, p);
        let block = sim.pools.kv.block[p];
        let got = sim.pools.kv.cache[p].consume(serial, limit, block, || dead);
        sim.pools.kv.note_cached(p, now);
        consumed.push(got);
    }
    Ok(())
}

/// At a release of session `e`'s allocation of `units` on pool `p` by a
/// hold with `cache (ℓ)` = `cache`: `min(ℓ, computed)` rounded down to
/// the block becomes the session's entry.
pub fn keep(code: &Code, sim: &mut Sim, e: Entity, p: usize, units: f64) -> Result<(), RunError> {
    if units.is_nan() || units <= 0.0 {
        return Ok(());
    }
    let serial = serial_of(sim, e)?;
    let owner = owner_of(code, sim, e, p);
    let now = sim.time.clock.now;
    sim.pools.kv.cache[p].store(serial, owner, units, now);
    sim.pools.kv.note_cached(p, now);
    Ok(())
}

/// What a release of a hold's pool keeps: `cache` is the clause's value
/// (read when the hold is released), the rest the hold's state.
pub fn kept_units(
    sim: &Sim,
    p: usize,
    cache: Option<f64>,
    ran: bool,
    position: f64,
    allocation: f64,
) -> f64 {
    match cache {
        Some(l) => cached_units(l, ran, position, allocation, sim.pools.kv.block[p]),
        None => 0.0,
    }
}

/// Session `e` lets go of every pool of `hold` it still holds (at its end
/// inside the hold, or preempted): in written order, each pool returned
/// before the hold's `cache` clause is read for it, as pyserq 0.1.0 reads
/// it; no admission pass.
pub fn release_frame(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    hold: &HoldFrame,
) -> Result<(), RunError> {
    let cache = match &code.blocks[hold.at.0][hold.at.1] {
        Stmt::Hold { cache, .. } => cache.as_ref(),
        _ => None,
    };
    for h in hold.pools.iter().filter(|h| !h.released) {
        sim.give_back(e, h.pool, h.units);
        if let Some(x) = cache {
            let l = sim.eval_in(e, hold.at, x)?;
            let kept = kept_units(sim, h.pool as usize, Some(l), hold.ran, h.position, h.units);
            keep(code, sim, e, h.pool as usize, kept)?;
        }
    }
    Ok(())
}

/// What the end of `lease` (its time, a `release`, its session's end)
/// keeps: its hold's `cache (ℓ)` read now, as 0.1.0 reads it (`set p =
/// 30` after a body of `cache (p)` that computed 40 keeps 28), bounded by
/// the hold's state when its body ended.
pub fn lease_kept(code: &Code, sim: &mut Sim, e: Entity, lease: &Lease) -> Result<f64, RunError> {
    let Stmt::Hold { cache: Some(x), .. } = &code.blocks[lease.at.0][lease.at.1] else {
        return Ok(0.0);
    };
    let l = sim.eval_in(e, lease.at, x)?;
    Ok(kept_units(
        sim,
        lease.pool as usize,
        Some(l),
        lease.ran,
        lease.position,
        lease.units,
    ))
}

/// `drop p;`: the session's live entry in p goes.
pub fn drop_entry(sim: &mut Sim, e: Entity, p: usize) -> Result<(), RunError> {
    let serial = serial_of(sim, e)?;
    let now = sim.time.clock.now;
    sim.pools.kv.cache[p].drop_live(serial);
    sim.pools.kv.note_cached(p, now);
    Ok(())
}

/// Session `e` ends: its live entries in pools whose keys read owners keep
/// its attributes as they were when it released each.
pub fn freeze_owner(code: &Code, sim: &mut Sim, e: Entity) -> Result<(), RunError> {
    let serial = serial_of(sim, e)?;
    for p in 0..code.pools.len() {
        if !code.pools[p].evict_reads_owner || sim.pools.kv.cache[p].live_units(serial) == 0.0 {
            continue;
        }
        if let Some(o) = sim.pools.kv.cache[p].live_owner_mut(serial)
            && let Owner::Session(_, _, released) = o
        {
            *o = Owner::Ended(std::mem::take(released));
        }
    }
    Ok(())
}

/// Evicts from pool `p` until `used + cached + need ≤ cap + EPS`, in the
/// pool's order, spilling what its clause says.
pub fn make_room(code: &Code, sim: &mut Sim, p: usize, need: f64) -> Result<(), RunError> {
    let room = room(sim.pools.levels.cap[p], sim.pools.levels.used[p], need);
    evict_to(code, sim, p, room, 0)
}

/// Evicts from pool `p` while its cache holds more than `room`, piece by
/// piece: the keys are read with the cache as it is (a key may read
/// `cachedin` of this very pool), and each piece is spilled before the
/// next is chosen (spec §8.3), so a key or a spill clause reads the state
/// after the pieces before it.
fn evict_to(code: &Code, sim: &mut Sim, p: usize, room: f64, depth: u32) -> Result<(), RunError> {
    if sim.pools.kv.cache[p].total() <= room {
        return Ok(());
    }
    let now = sim.time.clock.now;
    let block = sim.pools.kv.block[p];
    let spill = code.pools[p].spill.as_ref();
    let mut evicted = Evicted::default();
    let (mut orders, mut best_key, mut candidate) = (Vec::new(), Vec::new(), Vec::new());
    while sim.pools.kv.cache[p].total() > room {
        let order = match &code.pools[p].evict {
            None => sim.pools.kv.cache[p].first_order(),
            Some(keys) => {
                sim.pools.kv.cache[p].orders_into(&mut orders);
                let mut best = None;
                for &order in &orders {
                    candidate.clear();
                    for k in keys.iter() {
                        let v = key_at(sim, k, p, order).map_err(|m| {
                            sim.error(format!(
                                "pool `{}`: an eviction key: {m}",
                                code.program.pools[p].name
                            ))
                        })?;
                        candidate.push(v);
                    }
                    if best.is_none() || strictly_before(&candidate, &best_key) {
                        best = Some(order);
                        std::mem::swap(&mut best_key, &mut candidate);
                    }
                }
                best
            }
        };
        let Some(order) = order else { break };
        let entry = match spill {
            Some(_) => sim.pools.kv.cache[p].get(order).cloned(),
            None => None,
        };
        let Some(piece) = sim.pools.kv.cache[p].take_piece(order, block, &mut evicted) else {
            break;
        };
        sim.pools.kv.note_cached(p, now);
        if let (Some(spill), Some(entry)) = (spill, entry) {
            let piece = Entry {
                units: piece,
                ..entry
            };
            spill_piece(code, sim, p, spill, piece, depth)?;
        }
    }
    let figures = &mut sim.pools.kv.figures[p];
    figures.evicted_entries += evicted.entries;
    figures.evicted_units += evicted.units;
    Ok(())
}

/// Whose attributes an Evict-moment expression reads: a live owner's row,
/// or an ended owner's attributes copied into cells, as an evaluation
/// reads them (`eval::Cx`; on the stack for up to 32 attributes).
// One lives on the stack for one evaluation: boxing the cells would
// allocate per key.
#[allow(clippy::large_enum_variant)]
enum Reads {
    Live(Entity, u32),
    Ended(SmallVec<[Cell<f64>; 32]>),
}

impl Reads {
    fn of(owner: &Owner) -> Reads {
        match owner {
            Owner::Session(e, row, _) => Reads::Live(*e, *row),
            Owner::Ended(attrs) => Reads::Ended(attrs.iter().copied().map(Cell::new).collect()),
        }
    }
}

/// A key at the Evict moment of the entry at `order` in pool `p`'s cache,
/// read in place (`size` is the entry's units).
fn key_at(sim: &mut Sim, x: &Expr, p: usize, order: u64) -> Result<f64, String> {
    let Some(entry) = sim.pools.kv.cache[p].get(order) else {
        return Ok(f64::NAN);
    };
    let (session, released, size) = (entry.session, entry.released, entry.units);
    let reads = Reads::of(&entry.owner);
    evict_moment(sim, x, session, released, size, &reads)
}

/// An expression at the Evict moment of an entry of `session` released at
/// `released`, for a piece of `size` units.
fn evict_moment(
    sim: &mut Sim,
    x: &Expr,
    session: u64,
    released: f64,
    size: f64,
    reads: &Reads,
) -> Result<f64, String> {
    let now = sim.time.clock.now;
    let mut moment = Moment::NONE;
    moment.0[ctx_index(Ctx::Size)] = size;
    moment.0[ctx_index(Ctx::Age)] = now - released;
    moment.0[ctx_index(Ctx::Last)] = released;
    let (attrs, waiting) = match reads {
        Reads::Live(e, row) => {
            let waiting = sim
                .sessions
                .dealings
                .get(*e)
                .ok()
                .and_then(|d| d.0.as_deref().map(|d| matches!(d.wait, Wait::Hold { .. })))
                .unwrap_or(false);
            (OutsideAttrs::Row(*row), waiting)
        }
        Reads::Ended(cells) => (OutsideAttrs::Cells(cells), false),
    };
    moment.0[ctx_index(Ctx::Waiting)] = if waiting { 1.0 } else { 0.0 };
    let scope = Outside {
        present: f64::NAN,
        moment: &moment,
        serial: session,
        attrs,
        stream: RunStream::Machine,
    };
    sim.evaluate_outside(x, scope).map_err(|f| f.to_string())
}

/// One evicted piece (`entry`: its session, owner, size and the release
/// time of the entry it came from) under `spill T via L (w) when (c)`.
fn spill_piece(
    code: &Code,
    sim: &mut Sim,
    p: usize,
    spill: &crate::engine::data::code::SpillCode,
    entry: Entry<Owner>,
    depth: u32,
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (session, piece) = (entry.session, entry.units);
    let name = &code.program.pools[p].name;
    let reads = Reads::of(&entry.owner);
    let when = evict_moment(sim, &spill.when, session, entry.released, piece, &reads)
        .map_err(|m| sim.error(format!("pool `{name}`: spill `when`: {m}")))?;
    if when == 0.0 {
        return Ok(());
    }
    let work = evict_moment(sim, &spill.work, session, entry.released, piece, &reads)
        .map_err(|m| sim.error(format!("pool `{name}`: spill work: {m}")))?;
    sim.pools.kv.figures[p].spills += 1;
    let to = spill.to as usize;
    if depth < 64 {
        // The target makes room only while it is already over its capacity.
        let room = room(sim.pools.levels.cap[to], sim.pools.levels.used[to], 0.0);
        evict_to(code, sim, to, room, depth + 1)?;
    }
    if entry.dead {
        // Named where the `reuse` left it, so its pieces gather in one
        // entry per pool all down a chain (spill_dead_identity_down_the_chain).
        let origin = entry.origin.unwrap_or((p as u32, entry.id));
        sim.pools.kv.cache[to].add_dead_piece(origin, session, entry.owner, piece, now);
    } else {
        sim.pools.kv.cache[to].add_piece(session, entry.owner, piece, now);
    }
    sim.pools.kv.note_cached(to, now);
    if work.is_nan() || work < 0.0 {
        return Err(sim.error(format!(
            "pool `{name}`: the spill's work is {work}; an amount must be a number >= 0"
        )));
    }
    if work > 0.0 {
        detached_job(code, sim, spill.via as usize, work)?;
    }
    Ok(())
}

/// A job of `work` on stage `s` that no session waits for (a spill's).
fn detached_job(code: &Code, sim: &mut Sim, s: usize, work: f64) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    match &*service {
        Service::Shared(_) => sim.start_flow(None, &[s as u32], work),
        Service::Step(_) => Err(sim.error(format!(
            "a spill's job cannot run on the step stage `{}`",
            code.program.stages[s].name
        ))),
        _ => {
            let is_ps = matches!(*service, Service::Ps(_));
            join(
                s,
                (&mut service, &mut stats),
                sim.stages.load,
                now,
                Entity::PLACEHOLDER,
                work,
                sim.time.events,
            );
            if is_ps {
                sim.stages.dirty.mark(s as u32);
            }
            Ok(())
        }
    }
}
