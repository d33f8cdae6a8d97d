//! A step stage's residents and its iteration (spec §8.1): the runs that
//! joined it and have not completed, in join order, and what the running
//! iteration granted each.
//!
//! Invariants: a resident's `remaining` counts only credited tokens (an
//! iteration's grants are credited when it ends); `granted` is non-zero
//! only for a resident served by the running iteration; the engine has at
//! most one live iteration end event (generation `generation`).
//!
//! Architecture invariant: plain data and its arithmetic; nothing here
//! evaluates an expression or touches a pool.

use bevy_ecs::prelude::*;

use crate::engine::serving::iteration::Mode;

/// One resident: a run `run E prefill|decode (T)` at the stage.
#[derive(Clone, Copy, Debug)]
pub struct Resident {
    /// Its session.
    pub session: Entity,
    /// Prefill or decode.
    pub mode: Mode,
    /// Tokens not yet credited.
    pub remaining: f64,
    /// `growing P`: the pool member whose hold grows with the tokens.
    pub growing: Option<u32>,
    /// When it joined (its run's service start).
    pub joined: f64,
    /// Its join number, unique over the run (the serve order's last tie-break).
    pub order: u64,
    /// Tokens the running iteration gave it (0: not served).
    pub granted: f64,
    /// Stalled in a growth (`preempt none`): it gets no tokens until granted.
    pub stalled: bool,
    /// It joined while the engine formed an iteration: the admitting
    /// system serves it from what that iteration has left.
    pub fresh: bool,
    /// Its place in the running iteration's serve order (completions go
    /// on in it).
    pub rank: u32,
    /// Its run statement (for errors in its serve keys).
    pub at: (usize, usize),
    /// Its session's latest hold admission number (serve order), fixed
    /// while it is a resident (its session is blocked at the run).
    pub admission: f64,
    /// The units its session's hold frames hold in the stage's `memory`
    /// (`kv_decode`/`kv_prefill`), kept up to date by its growths.
    pub kv: f64,
}

/// A step stage's residents and iteration.
#[derive(Clone, Debug, Default)]
pub struct Engine {
    /// The residents, in join order.
    pub residents: Vec<Resident>,
    /// Whether an iteration runs (its end event is pending).
    pub running: bool,
    /// Whether an iteration is being formed now: a run that joins gets its
    /// tokens at once from what is left.
    pub forming: bool,
    /// Grants of residents that a `grow` statement preempted while the
    /// iteration was being formed (mode, tokens, attention's K): the
    /// forming iteration gives them back to its budget and totals.
    pub withdrawn: Vec<(Mode, f64, f64)>,
    /// The live end event's generation.
    pub generation: u64,
    /// The next resident's join number.
    pub next_order: u64,
    /// Residents given tokens by the running iteration (`busy(E)`).
    pub served: u32,
    /// Iterations started over the whole run.
    pub iterations: u64,
    /// The running iteration's budget (read at its Budget moment), which
    /// its grants stay within (checked by `check_invariants`).
    pub budget: f64,
}

impl Engine {
    /// The resident of session `e`, if any.
    pub fn find(&self, e: Entity) -> Option<usize> {
        self.residents.iter().position(|r| r.session == e)
    }

    /// The resident of session `e`, looked for first at `hint` (where it
    /// was, if nobody left before it since).
    pub fn find_at(&self, hint: usize, e: Entity) -> Option<usize> {
        match self.residents.get(hint) {
            Some(r) if r.session == e => Some(hint),
            _ => self.find(e),
        }
    }

    /// `work(E)`: every resident's remaining tokens, not yet credited.
    pub fn work(&self) -> f64 {
        self.residents.iter().map(|r| r.remaining).sum()
    }

    /// A new resident joins (in join order).
    pub fn join(&mut self, resident: Resident) {
        self.residents.push(Resident {
            order: self.next_order,
            ..resident
        });
        self.next_order += 1;
    }
}
