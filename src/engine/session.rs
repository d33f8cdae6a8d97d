//! Sessions: their state and the interpreter of their statements (spec §4).
//!
//! Invariant: a session's continuation is a stack of block frames; a frame
//! of kind `Hold` has exactly one entry on the session's hold stack, pushed
//! with it at admission and popped with it when the body ends, so the two
//! stacks nest alike. A session runs only from the ready queue and only
//! until it blocks (a job of positive work, a pool queue, a stalled grow)
//! or ends; commands take no time.

use smallvec::SmallVec;

use super::eval::{Cx, eval, member};
use super::rng::{Purpose, Stream};
use super::stages::Service;
use super::world::{LIVELOCK, World};
use super::{MAX_CHOOSE_COUNT, RunError};
use crate::ir::{self, Expr, Program, RunMode, Stmt};

/// What a block frame does when its statements run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The session's program: the session ends.
    Top,
    /// A branch arm: continue after the branch.
    Seq,
    /// A loop body: start it again.
    Loop,
    /// A hold body: the hold returns its units (or leases one pool).
    Hold,
}

/// A block being executed and the next statement in it.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The block.
    pub block: u32,
    /// The next statement.
    pub pc: u32,
    /// What happens at its end.
    pub kind: FrameKind,
}

/// One pool of an admitted hold.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// The pool member.
    pub pool: u32,
    /// Units allocated (grows with `grow`).
    pub units: f64,
    /// The computed position set by `load` (`None`: the allocation).
    pub loaded: Option<f64>,
    /// Given back early by `release`.
    pub released: bool,
}

/// An admitted hold: its statement and its pools in the hold's order.
#[derive(Clone, Debug)]
pub struct HoldFrame {
    /// The hold statement (block, index).
    pub at: (usize, usize),
    /// Its pools.
    pub pools: SmallVec<[Held; 4]>,
}

/// A lease: an allocation that outlived its hold.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    /// Unique over the run (a lease-end event names it).
    pub id: u64,
    /// The pool member.
    pub pool: u32,
    /// Units.
    pub units: f64,
}

/// What a blocked session waits for.
#[derive(Clone, Debug, Default)]
pub enum Wait {
    /// Nothing (ready, running or at a stage).
    #[default]
    None,
    /// Admission of the hold at `at` to `pools` (queued at the first), since `joined`.
    Hold {
        /// The hold statement.
        at: (usize, usize),
        /// The pool members, in the hold's order.
        pools: SmallVec<[u32; 4]>,
        /// When it joined the queue.
        joined: f64,
    },
    /// A stalled grow of entry `entry` of hold frame `hold` by `amount`.
    Grow {
        /// Index in the hold stack.
        hold: usize,
        /// Index in the hold's pools.
        entry: usize,
        /// Units to add.
        amount: f64,
    },
}

/// A session's dealings with pools: built at its first `hold`, kept (and
/// cleared) when its slot is reused.
#[derive(Clone, Debug, Default)]
pub struct SessionPools {
    /// Admitted holds, outermost first.
    pub holds: Vec<HoldFrame>,
    /// Leases, oldest first.
    pub leases: Vec<Lease>,
    /// Allocations counted in each pool's `holders`: (pool, count).
    pub holdings: SmallVec<[(u32, u32); 4]>,
    /// What it waits for (a hold's admission or a stalled grow).
    pub wait: Wait,
}

impl SessionPools {
    fn clear(&mut self) {
        self.holds.clear();
        self.leases.clear();
        self.holdings.clear();
        self.wait = Wait::None;
    }
}

/// A session.
///
/// Kept small (under 150 bytes): `batch(10^7)` has every session live at
/// once. Its attributes live in the world's [`Attrs`] arena, its pool
/// dealings behind a box built only for a session that holds, and its
/// generator behind a box built only for a session that draws often.
#[derive(Clone, Debug)]
pub struct Session {
    /// Creation order, from 0.
    pub serial: u64,
    /// The continuation. (A `SmallVec` of two inline frames would save
    /// its heap block, 64 bytes a session, but cost 2% more instructions
    /// per event on M/M/1: every statement reads the top frame.)
    pub frames: Vec<Frame>,
    /// Holds, leases and what it waits for; `None` until its first `hold`.
    pub pools: Option<Box<SessionPools>>,
    /// Its statements' draws.
    pub rng: Stream,
    /// Statements run at `steps_at` (livelock counter).
    pub steps: u64,
    /// The instant `steps` counts at.
    pub steps_at: f64,
    /// Not ended.
    pub live: bool,
}

impl Session {
    /// A new session of `prog` with this serial.
    pub fn new(prog: &Program, serial: u64) -> Session {
        let mut s = Session {
            serial,
            frames: Vec::new(),
            pools: None,
            rng: Stream::new(prog.seed, Purpose::Session(serial)),
            steps: 0,
            steps_at: 0.0,
            live: true,
        };
        s.reset(prog, serial);
        s
    }

    /// Makes this (ended) session a new one, keeping its buffers (its
    /// attributes are reset in the [`Attrs`] arena).
    pub fn reset(&mut self, prog: &Program, serial: u64) {
        self.serial = serial;
        self.frames.clear();
        self.frames.push(Frame {
            block: prog.session as u32,
            pc: 0,
            kind: FrameKind::Top,
        });
        if let Some(pools) = &mut self.pools {
            pools.clear();
        }
        self.rng.reset(prog.seed, Purpose::Session(serial));
        self.steps = 0;
        self.steps_at = f64::NAN;
        self.live = true;
    }

    /// Its pool dealings, built empty at the first call.
    pub fn pools_mut(&mut self) -> &mut SessionPools {
        self.pools.get_or_insert_with(Box::default)
    }

    /// Its admitted holds (none before its first `hold`).
    pub fn holds(&self) -> &[HoldFrame] {
        self.pools.as_deref().map_or(&[], |p| &p.holds)
    }
}

/// Every session's attributes in one arena, `width` values per session
/// slot: a session costs exactly its attributes, with no header or heap
/// block of its own (10^7 sessions of a `batch` live at once).
#[derive(Clone, Debug)]
pub struct Attrs {
    width: usize,
    values: Vec<f64>,
}

impl Attrs {
    /// An empty arena for `prog`'s attributes (at least the built-in ones).
    pub fn new(prog: &Program) -> Attrs {
        Attrs {
            width: prog.attrs.len().max(ir::BUILTIN_ATTRS.len()),
            values: Vec::new(),
        }
    }

    /// Room for `sessions` slots in all, reserved exactly.
    pub fn reserve_slots(&mut self, sessions: usize) {
        let want = sessions.saturating_mul(self.width);
        self.values
            .reserve_exact(want.saturating_sub(self.values.len()));
    }

    /// The attributes of session slot `slot`.
    pub fn of(&self, slot: u32) -> &[f64] {
        let at = slot as usize * self.width;
        &self.values[at..at + self.width]
    }

    /// The attributes of session slot `slot`, to change.
    pub fn of_mut(&mut self, slot: u32) -> &mut [f64] {
        let at = slot as usize * self.width;
        &mut self.values[at..at + self.width]
    }

    /// Slot `slot` starts a new session: every attribute 0 but `serial`.
    /// Slots are handed out in order, so a new slot is the next one.
    pub fn reset(&mut self, slot: u32, serial: u64) {
        let at = slot as usize * self.width;
        if self.values.len() < at + self.width {
            self.values.resize(at + self.width, 0.0);
        }
        let attrs = &mut self.values[at..at + self.width];
        attrs.fill(0.0);
        attrs[ir::SLOT_SERIAL] = serial as f64;
    }
}

/// What a statement did to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Go on with the next statement.
    Next,
    /// The session blocked (or ended): stop running it.
    Stop,
}

/// An amount (run work, hold units, reserve, grow, load) is >= 0 and not NaN.
pub fn check_amount(what: &str, x: f64) -> Result<f64, String> {
    if x.is_nan() {
        Err(format!("{what} is NaN; an amount must be a number >= 0"))
    } else if x < 0.0 {
        Err(format!("{what} is negative ({x}); an amount must be >= 0"))
    } else {
        Ok(x)
    }
}

impl World<'_> {
    /// A run-time error in session `slot` at statement `at`.
    pub fn session_error(&self, slot: u32, at: (usize, usize), message: String) -> RunError {
        RunError {
            rule: RunError::rule_of(&message),
            message,
            at: Some(at),
            session: Some(self.sessions[slot as usize].serial),
            time: self.now,
        }
    }

    /// Runs `f` with what session `slot` may read: its attributes, and
    /// `stream` (its own stream when `None`); failures become errors at `at`.
    fn in_session<T>(
        &mut self,
        slot: u32,
        at: (usize, usize),
        stream: Option<&mut Stream>,
        f: impl FnOnce(&mut Cx<'_>) -> Result<T, String>,
    ) -> Result<T, RunError> {
        let session = &mut self.sessions[slot as usize];
        let mut cx = Cx {
            now: self.now,
            present: f64::NAN,
            attrs: self.attrs.of(slot),
            rng: stream.unwrap_or(&mut session.rng),
            first: &mut self.first_draws,
            stages: &self.stages,
            pools: &self.pools,
            flows: &self.flows,
        };
        f(&mut cx).map_err(|m| self.session_error(slot, at, m))
    }

    /// Evaluates `e` in session `slot` (its attributes and stream).
    pub fn eval_in(&mut self, slot: u32, at: (usize, usize), e: &Expr) -> Result<f64, RunError> {
        self.in_session(slot, at, None, |cx| eval(e, cx))
    }

    /// The member a reference names, in session `slot`.
    pub fn member_in(
        &mut self,
        slot: u32,
        at: (usize, usize),
        r: &ir::CRef,
        what: &str,
    ) -> Result<usize, RunError> {
        self.in_session(slot, at, None, |cx| member(r, cx, what))
    }

    /// Runs the `init` (turn 0) or `turn` block of session `slot` with its
    /// own stream; these blocks only `set` and `observe`.
    pub fn run_workload_block(
        &mut self,
        slot: u32,
        block: usize,
        turn: u64,
    ) -> Result<(), RunError> {
        let prog = self.prog;
        if prog.blocks[block].is_empty() {
            return Ok(());
        }
        let serial = self.sessions[slot as usize].serial;
        // The world's one turn stream, re-targeted: it keeps its boxed
        // generator, so a block that draws often allocates nothing.
        let mut rng = std::mem::replace(&mut self.turn_rng, Stream::new(0, Purpose::Machine));
        rng.reset(prog.seed, Purpose::Turn { serial, turn });
        let result = self.run_workload_stmts(slot, block, &mut rng);
        self.turn_rng = rng;
        result
    }

    fn run_workload_stmts(
        &mut self,
        slot: u32,
        block: usize,
        rng: &mut Stream,
    ) -> Result<(), RunError> {
        let prog = self.prog;
        for (i, stmt) in prog.blocks[block].iter().enumerate() {
            let (target, e) = match stmt {
                Stmt::Set(t, e) | Stmt::Observe(t, e) => (*t, e),
                _ => {
                    return Err(self.session_error(
                        slot,
                        (block, i),
                        "workload blocks may only `set` and `observe`".into(),
                    ));
                }
            };
            let v = self.in_session(slot, (block, i), Some(&mut *rng), |cx| eval(e, cx))?;
            if let Stmt::Set(..) = stmt {
                self.set_attr(slot, (block, i), target, v)?;
            } else {
                self.observe(target, v);
            }
        }
        Ok(())
    }

    fn set_attr(
        &mut self,
        slot: u32,
        at: (usize, usize),
        target: usize,
        v: f64,
    ) -> Result<(), RunError> {
        match self.attrs.of_mut(slot).get_mut(target) {
            Some(a) => {
                *a = v;
                Ok(())
            }
            None => {
                Err(self.session_error(slot, at, format!("attribute slot {target} does not exist")))
            }
        }
    }

    fn observe(&mut self, index: usize, v: f64) {
        if self.now >= self.prog.warmup
            && let Some(samples) = self.samples.get_mut(index)
        {
            samples.push(v);
        }
    }

    /// Runs session `slot` until it blocks or ends.
    pub fn run_session(&mut self, slot: u32) -> Result<(), RunError> {
        let prog = self.prog;
        loop {
            let now = self.now;
            let session = &mut self.sessions[slot as usize];
            let Some(frame) = session.frames.last_mut() else {
                return self.end_session(slot);
            };
            let block = &prog.blocks[frame.block as usize];
            let at = (frame.block as usize, frame.pc as usize);
            let stmt = block.get(frame.pc as usize);
            if stmt.is_none() {
                match frame.kind {
                    FrameKind::Seq => {
                        session.frames.pop();
                        continue;
                    }
                    FrameKind::Loop => frame.pc = 0,
                    FrameKind::Hold => {
                        session.frames.pop();
                        self.end_hold(slot)?;
                        continue;
                    }
                    FrameKind::Top => return self.end_session(slot),
                }
            } else {
                frame.pc += 1;
            }
            if session.steps_at != now {
                session.steps_at = now;
                session.steps = 0;
            }
            session.steps += 1;
            if session.steps > LIVELOCK {
                let serial = session.serial;
                return Err(self.session_error(
                    slot,
                    at,
                    format!(
                        "livelock: session {serial} ran more than {LIVELOCK} statements at time {now} without the clock moving"
                    ),
                ));
            }
            let Some(stmt) = stmt else { continue };
            if self.exec(slot, at, stmt)? == Step::Stop {
                return Ok(());
            }
        }
    }

    fn push_frame(&mut self, slot: u32, block: usize, kind: FrameKind) {
        self.sessions[slot as usize].frames.push(Frame {
            block: block as u32,
            pc: 0,
            kind,
        });
    }

    fn exec(&mut self, slot: u32, at: (usize, usize), stmt: &Stmt) -> Result<Step, RunError> {
        match stmt {
            Stmt::Set(target, e) => {
                let v = self.eval_in(slot, at, e)?;
                self.set_attr(slot, at, *target, v)?;
            }
            Stmt::Observe(index, e) => {
                let v = self.eval_in(slot, at, e)?;
                self.observe(*index, v);
            }
            Stmt::Turn => {
                let attrs = self.attrs.of_mut(slot);
                attrs[ir::SLOT_TURN] += 1.0;
                let turn = attrs[ir::SLOT_TURN].max(0.0) as u64;
                if self.now >= self.prog.warmup {
                    self.turns += 1;
                }
                self.run_workload_block(slot, self.prog.turn, turn)?;
            }
            Stmt::End => {
                self.end_session(slot)?;
                return Ok(Step::Stop);
            }
            Stmt::Hold { pools, .. } => return self.join_hold(slot, at, pools),
            Stmt::Grow(r, e) => return self.grow(slot, at, r, e),
            Stmt::Load(r, e) => self.load(slot, at, r, e)?,
            Stmt::Release(r) => self.release(slot, at, r)?,
            Stmt::Drop(_) => {
                return Err(self.session_error(slot, at, "`drop` is not supported yet".into()));
            }
            Stmt::Run {
                stage,
                mode,
                work,
                growing,
                also,
            } => {
                if *mode != RunMode::Plain || growing.is_some() {
                    return Err(self.session_error(
                        slot,
                        at,
                        "prefill/decode runs and `growing` need step stages, which serq does not implement yet".into(),
                    ));
                }
                return self.run_job(slot, at, stage, work, also);
            }
            Stmt::Branch(guard, then, other) => {
                let g = self.eval_in(slot, at, guard)?;
                if g == 1.0 {
                    self.push_frame(slot, *then, FrameKind::Seq);
                } else if g == 0.0 {
                    self.push_frame(slot, *other, FrameKind::Seq);
                } else {
                    return Err(self.session_error(
                        slot,
                        at,
                        format!("the guard is {g}, not 0 or 1"),
                    ));
                }
            }
            Stmt::Loop(body) => self.push_frame(slot, *body, FrameKind::Loop),
            Stmt::Choose { var, count, key } => self.choose(slot, at, *var, count, key)?,
        }
        Ok(Step::Next)
    }

    fn run_job(
        &mut self,
        slot: u32,
        at: (usize, usize),
        stage: &ir::CRef,
        work: &Expr,
        also: &[ir::CRef],
    ) -> Result<Step, RunError> {
        let first = self.member_in(slot, at, stage, "stage")?;
        let mut held: SmallVec<[u32; 4]> = SmallVec::new();
        held.push(first as u32);
        for r in also {
            held.push(self.member_in(slot, at, r, "stage")? as u32);
        }
        let w = self.eval_in(slot, at, work)?;
        let w = check_amount("the run's work", w).map_err(|m| self.session_error(slot, at, m))?;
        if w == 0.0 {
            // No job and no event, but the session yields: it goes to the
            // back of the ready queue, as in pyserq 0.1.0 (a session ready
            // behind it reaches a shared fifo first).
            self.ready.push_back(slot);
            return Ok(Step::Stop);
        }
        if held.len() > 1 || self.stages[first].is_shared() {
            if let Some(s) = held.iter().find(|&&s| !self.stages[s as usize].is_shared()) {
                let name = &self.prog.stages[*s as usize].name;
                return Err(self.session_error(
                    slot,
                    at,
                    format!("stage `{name}` is held with others by one run but is not shared"),
                ));
            }
            self.start_flow(slot, &held, w);
        } else {
            let now = self.now;
            self.stages[first].join(first, now, slot, w, &mut self.events);
            if let Service::Ps(_) = self.stages[first].service {
                self.mark_ps(first as u32);
            }
        }
        Ok(Step::Stop)
    }

    fn choose(
        &mut self,
        slot: u32,
        at: (usize, usize),
        var: usize,
        count: &Expr,
        key: &[Expr],
    ) -> Result<(), RunError> {
        let n = self.eval_in(slot, at, count)?;
        if !n.is_finite() {
            return Err(self.session_error(
                slot,
                at,
                format!("the choose count is {n}, not a finite number"),
            ));
        }
        let n = n.trunc();
        if n > MAX_CHOOSE_COUNT {
            return Err(self.session_error(
                slot,
                at,
                format!(
                    "the choose count is {n}, above the limit of {MAX_CHOOSE_COUNT} candidates"
                ),
            ));
        }
        if n <= 0.0 {
            return self.set_attr(slot, at, var, 0.0);
        }
        let mut keys = std::mem::take(&mut self.keys);
        let mut best = std::mem::take(&mut self.best);
        best.clear();
        let mut best_j = 0.0;
        let mut j = 0.0;
        let result = (|| {
            while j < n {
                self.set_attr(slot, at, var, j)?;
                keys.clear();
                for k in key {
                    keys.push(self.eval_in(slot, at, k)?);
                }
                if j == 0.0 || strictly_less(&keys, &best) {
                    std::mem::swap(&mut keys, &mut best);
                    best_j = j;
                }
                j += 1.0;
            }
            self.set_attr(slot, at, var, best_j)
        })();
        self.keys = keys;
        self.best = best;
        result
    }
}

/// Lexicographic `a < b` with IEEE `<` and `==` (a NaN never compares less).
fn strictly_less(a: &[f64], b: &[f64]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x < y {
            return true;
        }
        if x != y {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::Session;

    #[test]
    fn a_session_fits_in_128_bytes() {
        // batch(10^7) keeps every session live at once: 128 bytes each is
        // 1.28 GB of the 3.35 GB peak measured with `run d (1)` (the rest:
        // attributes, the event heap, the delay stage's jobs).
        assert!(
            std::mem::size_of::<Session>() <= 128,
            "{}",
            std::mem::size_of::<Session>()
        );
    }
}
