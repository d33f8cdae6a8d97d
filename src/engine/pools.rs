//! Pools: holds, admission with head-of-line blocking, reserve, rejection,
//! grow stalls, release and leases (spec §6.6–6.8).
//!
//! Invariants: a waiting hold sits in the queue of its first pool only; an
//! admission pass visits pools in declaration order, and in each the
//! stalled growers (in stall order) before the queue head, stopping at the
//! first that does not fit; every return of units while the session goes
//! on (a hold's end, `release`, a lease's end) runs one pass at once,
//! before the returning session continues; a session's end leaves its
//! returns to the settle's next pass. `used` always equals the sum over
//! hold frames and leases; `holders` the sum over sessions of their
//! holdings (below).
//!
//! Holders, as the reference counts them: a session's allocations on a pool
//! (hold frames and leases) count one each from admission on, but returning
//! any one of them (a hold's end, a `release`, a lease's end) drops the
//! session's whole count on that pool, so with nested holds on `p` the
//! outer one no longer counts once the inner one ends. Measured on pyserq
//! 0.1.0 (`holders` after an inner hold ends, a lease ending during a hold);
//! spec §5.3's "number of allocations" holds while nothing was returned.

use std::collections::VecDeque;

use super::RunError;
use super::events::EventKind;
use super::session::{Held, HoldFrame, Lease, Step, Wait, check_amount};
use super::stats::{RunningMean, TimeAvg};
use super::world::World;
use crate::ir::{CRef, Expr, HoldPool, Stmt};
use smallvec::SmallVec;

/// A pool member: its allocations, its queue and its figures.
#[derive(Clone, Debug)]
pub struct PoolState {
    /// Capacity.
    pub cap: f64,
    /// Holds waiting for admission (session slots), in join order.
    pub queue: VecDeque<u32>,
    /// Sessions stalled in a `grow`, in stall order.
    pub stalled: VecDeque<u32>,
    /// Allocated units (its value is `used`).
    pub used_avg: TimeAvg,
    /// Holds waiting in the queue.
    pub queue_avg: TimeAvg,
    /// Allocations (hold frames and leases).
    pub holders_avg: TimeAvg,
    /// Queue waits of admissions at t >= warmup whose first pool this is.
    pub wait: RunningMean,
    /// Admissions over the whole run.
    pub admissions: u64,
    /// Rejections over the whole run.
    pub rejected: u64,
    holders: u64,
    /// How many times units came back: `used` can only fall when this moves.
    returns: u64,
    /// The queue head that did not fit, the pool it did not fit in, and that
    /// pool's `returns` then: while they stand, the head still does not fit.
    blocked: Option<Blocked>,
}

/// Why a queue head whose units read no state did not fit (see `try_admit`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Blocked {
    head: u32,
    on: u32,
    returns: u64,
}

impl PoolState {
    /// An empty pool.
    pub fn new(cap: f64, warmup: f64) -> PoolState {
        PoolState {
            cap,
            queue: VecDeque::new(),
            stalled: VecDeque::new(),
            used_avg: TimeAvg::new(warmup),
            queue_avg: TimeAvg::new(warmup),
            holders_avg: TimeAvg::new(warmup),
            wait: RunningMean::default(),
            admissions: 0,
            rejected: 0,
            holders: 0,
            returns: 0,
            blocked: None,
        }
    }

    /// `used(p)`.
    pub fn used(&self) -> f64 {
        self.used_avg.value()
    }

    /// `holders(p)`.
    pub fn holders(&self) -> u64 {
        self.holders
    }

    /// `queued(p)`.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    fn take(&mut self, now: f64, units: f64) {
        self.used_avg.add(now, units);
        self.holders += 1;
        self.holders_avg.set(now, self.holders as f64);
    }

    /// Units come back; `counted` is the returning session's whole holding.
    fn give_back(&mut self, now: f64, units: f64, counted: u32) {
        self.used_avg.add(now, -units);
        self.returns += 1;
        if counted > 0 {
            self.holders -= u64::from(counted);
            self.holders_avg.set(now, self.holders as f64);
        }
    }
}

/// The pools that have waiters (a queued hold or a stalled grower), as a
/// bitset, so an admission pass visits only those, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct Waiting {
    words: Vec<u64>,
}

impl Waiting {
    /// An empty set over `n` pools.
    pub fn new(n: usize) -> Waiting {
        Waiting {
            words: vec![0; n.div_ceil(64)],
        }
    }

    fn insert(&mut self, p: usize) {
        self.words[p / 64] |= 1 << (p % 64);
    }

    fn remove(&mut self, p: usize) {
        self.words[p / 64] &= !(1 << (p % 64));
    }

    /// The smallest member at or after `p`.
    fn next_from(&self, p: usize) -> Option<usize> {
        let mut w = p / 64;
        let mut bits = *self.words.get(w)? & (u64::MAX << (p % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.words.get(w)?;
        }
    }
}

impl World<'_> {
    /// Session `slot` returns `units` to pool `p` (its holding there ends).
    fn give_back(&mut self, slot: u32, p: u32, units: f64) {
        let holdings = &mut self.sessions[slot as usize].pools_mut().holdings;
        let counted = match holdings.iter().position(|h| h.0 == p) {
            Some(i) => holdings.swap_remove(i).1,
            None => 0,
        };
        self.pools[p as usize].give_back(self.now, units, counted);
    }

    /// Units and reserve of a hold's pool, evaluated now in session `slot`.
    fn units_of(
        &mut self,
        slot: u32,
        at: (usize, usize),
        hp: &HoldPool,
    ) -> Result<(f64, f64), RunError> {
        let u = self.eval_in(slot, at, &hp.1)?;
        let u = check_amount("the hold's units", u).map_err(|m| self.session_error(slot, at, m))?;
        let r = match &hp.2 {
            Some(e) => {
                let r = self.eval_in(slot, at, e)?;
                check_amount("the hold's reserve", r)
                    .map_err(|m| self.session_error(slot, at, m))?
            }
            None => 0.0,
        };
        Ok((u, r))
    }

    /// `hold …`: a request above a capacity is rejected (the session ends);
    /// otherwise it joins its first pool's queue and the session blocks.
    pub fn join_hold(
        &mut self,
        slot: u32,
        at: (usize, usize),
        pools: &[HoldPool],
    ) -> Result<Step, RunError> {
        let mut members: SmallVec<[u32; 4]> = SmallVec::new();
        let mut rejected_at = None;
        for hp in pools {
            let p = self.member_in(slot, at, &hp.0, "pool")?;
            let (u, r) = self.units_of(slot, at, hp)?;
            if rejected_at.is_none() && u.max(r) > self.pools[p].cap {
                rejected_at = Some(p);
            }
            members.push(p as u32);
        }
        if let Some(p) = rejected_at {
            self.pools[p].rejected += 1;
            self.end_session(slot)?;
            return Ok(Step::Stop);
        }
        let Some(&first) = members.first() else {
            return Ok(Step::Next);
        };
        let now = self.now;
        self.sessions[slot as usize].pools_mut().wait = Wait::Hold {
            at,
            pools: members,
            joined: now,
        };
        let pool = &mut self.pools[first as usize];
        pool.queue.push_back(slot);
        pool.queue_avg.set(now, pool.queue.len() as f64);
        self.waiting.insert(first as usize);
        Ok(Step::Stop)
    }

    /// One admission pass over every pool in declaration order; returns
    /// whether it admitted anything (a hold or a stalled grow).
    pub fn admission_pass(&mut self) -> Result<bool, RunError> {
        let mut any = false;
        let mut next = 0;
        while let Some(p) = self.waiting.next_from(next) {
            while let Some(&slot) = self.pools[p].stalled.front() {
                if !self.resume_grow(slot)? {
                    break;
                }
                self.pools[p].stalled.pop_front();
                self.ready.push_back(slot);
                any = true;
            }
            while let Some(&slot) = self.pools[p].queue.front() {
                if self.still_blocked(p, slot) || !self.try_admit(slot)? {
                    break;
                }
                any = true;
            }
            if self.pools[p].stalled.is_empty() && self.pools[p].queue.is_empty() {
                self.waiting.remove(p);
            }
            next = p + 1;
        }
        Ok(any)
    }

    /// Whether the head `slot` of pool `p`'s queue provably still does not
    /// fit: its units read neither the clock nor an observable, so it can
    /// only come to fit once the pool it did not fit in gets units back.
    /// Pools with many waiters are retried after every event; this keeps
    /// those retries from re-evaluating every head.
    fn still_blocked(&self, p: usize, slot: u32) -> bool {
        self.pools[p]
            .blocked
            .is_some_and(|b| b.head == slot && self.pools[b.on as usize].returns == b.returns)
    }

    /// Admits the waiting hold of session `slot` (the head of its first
    /// pool's queue) if it fits in every pool now.
    fn try_admit(&mut self, slot: u32) -> Result<bool, RunError> {
        let Wait::Hold {
            at,
            ref pools,
            joined,
        } = self.sessions[slot as usize].pools_mut().wait
        else {
            return Ok(false);
        };
        let members = pools.clone();
        let prog = self.prog;
        let hold_pools = match &prog.blocks[at.0][at.1] {
            Stmt::Hold { pools, .. } => pools.as_slice(),
            _ => &[],
        };
        let first = members[0] as usize;
        let mut units: SmallVec<[f64; 4]> = SmallVec::new();
        for (hp, &p) in hold_pools.iter().zip(&members) {
            let (u, r) = self.units_of(slot, at, hp)?;
            let pool = &self.pools[p as usize];
            // Amounts are never NaN (checked), so `>` is the negation of "fits".
            if pool.used() + u.max(r) > pool.cap {
                self.pools[first].blocked = self.static_holds[at.0][at.1].then_some(Blocked {
                    head: slot,
                    on: p,
                    returns: pool.returns,
                });
                return Ok(false);
            }
            units.push(u);
        }
        let now = self.now;
        let mut held: SmallVec<[Held; 4]> = SmallVec::new();
        for (i, (&p, &u)) in members.iter().zip(&units).enumerate() {
            let pool = &mut self.pools[p as usize];
            if i == 0 {
                pool.queue.pop_front();
                pool.queue_avg.set(now, pool.queue.len() as f64);
                if now >= prog.warmup {
                    pool.wait.push(now - joined);
                }
            }
            pool.take(now, u);
            pool.admissions += 1;
            let holdings = &mut self.sessions[slot as usize].pools_mut().holdings;
            match holdings.iter_mut().find(|h| h.0 == p) {
                Some(h) => h.1 += 1,
                None => holdings.push((p, 1)),
            }
            held.push(Held {
                pool: p,
                units: u,
                loaded: None,
                released: false,
            });
        }
        let Stmt::Hold { body, .. } = &prog.blocks[at.0][at.1] else {
            return Ok(false);
        };
        let session = &mut self.sessions[slot as usize];
        let dealings = session.pools_mut();
        dealings.wait = Wait::None;
        dealings.holds.push(HoldFrame { at, pools: held });
        session.frames.push(super::session::Frame {
            block: *body as u32,
            pc: 0,
            kind: super::session::FrameKind::Hold,
        });
        self.ready.push_back(slot);
        Ok(true)
    }

    /// The body of session `slot`'s innermost hold ended: its pools are
    /// returned (the leased one becomes a lease), then one admission pass.
    pub fn end_hold(&mut self, slot: u32) -> Result<(), RunError> {
        let Some(hold) = self.sessions[slot as usize].pools_mut().holds.pop() else {
            return Ok(());
        };
        let prog = self.prog;
        let Stmt::Hold { pools, lease, .. } = &prog.blocks[hold.at.0][hold.at.1] else {
            return Ok(());
        };
        let leased = lease
            .as_ref()
            .and_then(|(r, _)| pools.iter().position(|hp| hp.0 == *r));
        let now = self.now;
        if let (Some(i), Some((_, length))) = (leased, lease)
            && !hold.pools[i].released
        {
            let t = self.eval_in(slot, hold.at, length)?;
            let id = self.next_lease;
            self.next_lease += 1;
            let h = hold.pools[i];
            self.sessions[slot as usize].pools_mut().leases.push(Lease {
                id,
                pool: h.pool,
                units: h.units,
            });
            if t <= 0.0 {
                self.events.schedule(now, EventKind::LeaseEnd(slot, id));
            } else if t.is_finite() {
                self.events.schedule(now + t, EventKind::LeaseEnd(slot, id));
            }
        }
        let mut returned = false;
        for (i, h) in hold.pools.iter().enumerate() {
            if h.released || Some(i) == leased {
                continue;
            }
            self.give_back(slot, h.pool, h.units);
            returned = true;
        }
        if returned {
            self.admission_pass()?;
        }
        Ok(())
    }

    /// The innermost hold entry of session `slot` on pool member `p` whose
    /// allocation is still held: (hold index, entry index).
    ///
    /// `release`, `grow` and `load` name their pool as the hold does (the
    /// linker checks the text), but like the reference the engine matches
    /// the member the reference evaluates to now, not the text: in
    /// `hold q[i] (3) { set i = 1; release q[i]; }` the release ends a
    /// lease of `q[1]` (pyserq 0.1.0).
    fn find_held(&self, slot: u32, p: u32) -> Option<(usize, usize)> {
        let session = &self.sessions[slot as usize];
        for (h, frame) in session.holds().iter().enumerate().rev() {
            for (i, held) in frame.pools.iter().enumerate() {
                if held.pool == p && !held.released {
                    return Some((h, i));
                }
            }
        }
        None
    }

    /// `release p;`: the innermost hold's allocation on p, else the oldest lease of p.
    pub fn release(&mut self, slot: u32, at: (usize, usize), r: &CRef) -> Result<(), RunError> {
        let p = self.member_in(slot, at, r, "pool")? as u32;
        if let Some((h, i)) = self.find_held(slot, p) {
            let held = &mut self.sessions[slot as usize].pools_mut().holds[h].pools[i];
            held.released = true;
            let units = held.units;
            self.give_back(slot, p, units);
            self.admission_pass()?;
            return Ok(());
        }
        let leases = &mut self.sessions[slot as usize].pools_mut().leases;
        if let Some(k) = leases.iter().position(|l| l.pool == p) {
            let lease = leases.remove(k);
            self.give_back(slot, p, lease.units);
            self.admission_pass()?;
        }
        Ok(())
    }

    /// A lease-end event: the lease ends unless it already did.
    pub fn end_lease_event(&mut self, slot: u32, id: u64) -> Result<(), RunError> {
        let Some(session) = self.sessions.get_mut(slot as usize) else {
            return Ok(());
        };
        if !session.live {
            return Ok(());
        }
        let Some(dealings) = session.pools.as_deref_mut() else {
            return Ok(());
        };
        let Some(k) = dealings.leases.iter().position(|l| l.id == id) else {
            return Ok(());
        };
        let lease = dealings.leases.remove(k);
        self.give_back(slot, lease.pool, lease.units);
        self.admission_pass()?;
        Ok(())
    }

    /// The pool member `r` names now and the innermost hold frame (and its
    /// entry) that holds it, or the run-time error of a `what` (`grow`,
    /// `load`) outside a hold of that pool.
    fn held_for(
        &mut self,
        slot: u32,
        at: (usize, usize),
        r: &CRef,
        what: &str,
    ) -> Result<(u32, usize, usize), RunError> {
        let p = self.member_in(slot, at, r, "pool")? as u32;
        match self.find_held(slot, p) {
            Some((h, i)) => Ok((p, h, i)),
            None => {
                let name = self.prog.pool_name(r.base);
                Err(self.session_error(slot, at, format!("{what} outside a hold of pool `{name}`")))
            }
        }
    }

    /// `grow p (d);`: at once if it fits, else the session stalls.
    pub fn grow(
        &mut self,
        slot: u32,
        at: (usize, usize),
        r: &CRef,
        e: &Expr,
    ) -> Result<Step, RunError> {
        let (p, h, i) = self.held_for(slot, at, r, "grow")?;
        let d = self.eval_in(slot, at, e)?;
        let d = check_amount("the grow", d).map_err(|m| self.session_error(slot, at, m))?;
        self.sessions[slot as usize].pools_mut().wait = Wait::Grow {
            hold: h,
            entry: i,
            amount: d,
        };
        if self.resume_grow(slot)? {
            return Ok(Step::Next);
        }
        self.pools[p as usize].stalled.push_back(slot);
        self.waiting.insert(p as usize);
        Ok(Step::Stop)
    }

    /// Applies session `slot`'s pending grow if it fits; returns whether it did.
    fn resume_grow(&mut self, slot: u32) -> Result<bool, RunError> {
        let Wait::Grow {
            hold,
            entry,
            amount,
        } = self.sessions[slot as usize].pools_mut().wait
        else {
            return Ok(false);
        };
        let held = self.sessions[slot as usize].pools_mut().holds[hold].pools[entry];
        let pool = &mut self.pools[held.pool as usize];
        if pool.used() + amount > pool.cap {
            return Ok(false);
        }
        pool.used_avg.add(self.now, amount);
        let dealings = self.sessions[slot as usize].pools_mut();
        dealings.holds[hold].pools[entry].units += amount;
        dealings.wait = Wait::None;
        Ok(true)
    }

    /// `load p (n);`: the hold's computed position advances within its allocation.
    pub fn load(
        &mut self,
        slot: u32,
        at: (usize, usize),
        r: &CRef,
        e: &Expr,
    ) -> Result<(), RunError> {
        let (_, h, i) = self.held_for(slot, at, r, "load")?;
        let n = self.eval_in(slot, at, e)?;
        let n = check_amount("the load", n).map_err(|m| self.session_error(slot, at, m))?;
        let held = self.sessions[slot as usize].pools_mut().holds[h].pools[i];
        let computed = held.loaded.unwrap_or(0.0);
        if computed + n > held.units {
            let name = self.prog.pool_name(r.base);
            return Err(self.session_error(
                slot,
                at,
                format!(
                    "`load {name} ({n})`: the hold has {} allocated and {computed} computed; a load must fit the allocation (grow first)",
                    held.units
                ),
            ));
        }
        self.sessions[slot as usize].pools_mut().holds[h].pools[i].loaded = Some(computed + n);
        Ok(())
    }

    /// Ends session `slot`: its holds are returned innermost first, then
    /// its leases; then it is counted and (under `closed`) replaced.
    ///
    /// Unlike a hold's end or a `release`, a session's end runs no admission
    /// pass of its own: its waiters are admitted by the settle's next pass,
    /// after the sessions already ready (and a `closed` replacement) ran, in
    /// pool declaration order. Measured on pyserq 0.1.0: a session ready
    /// behind one that `end`s inside a hold, ends holding a lease, or is
    /// rejected still sees the freed pool's waiter queued.
    pub fn end_session(&mut self, slot: u32) -> Result<(), RunError> {
        self.sessions[slot as usize].frames.clear();
        if self.sessions[slot as usize].pools.is_none() {
            // It never held: nothing to return (and no box to build).
            return self.retire_session(slot);
        }
        while let Some(hold) = self.sessions[slot as usize].pools_mut().holds.pop() {
            for h in hold.pools.iter().filter(|h| !h.released) {
                self.give_back(slot, h.pool, h.units);
            }
        }
        let mut leases = std::mem::take(&mut self.sessions[slot as usize].pools_mut().leases);
        for lease in leases.drain(..) {
            self.give_back(slot, lease.pool, lease.units);
        }
        self.sessions[slot as usize].pools_mut().leases = leases;
        self.retire_session(slot)
    }
}
