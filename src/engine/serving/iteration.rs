//! Forming a step stage's iteration (spec §8.1): how the budget is handed
//! out to the residents in serve order and to the sessions admitted after
//! them, under `serve exclusive prefill` too, and the totals the cost
//! reads at the Step moment.
//!
//! Invariants: the tokens handed out never exceed the budget (under
//! `exclusive prefill`, the one prefill served alone takes at most the
//! budget); a decode takes at most one token an iteration, a prefill at
//! most the chunk; the totals are those of the grants that stand (a
//! withdrawn grant leaves no trace). The caller offers residents in
//! serve order, grows a growing resident's hold before it takes its
//! tokens, and skips one whose growth failed.

/// What a run on a step stage computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `run E prefill (T)`: up to the chunk an iteration.
    Prefill,
    /// `run E decode (T)`: one token an iteration.
    Decode,
}

/// The Step moment's totals over the grants that stand.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTotals {
    /// `tokens`: every token scheduled.
    pub tokens: f64,
    /// `prefilled`: the prefill tokens scheduled.
    pub prefilled: f64,
    /// `decoders`: decode residents given tokens.
    pub decoders: u32,
    /// `attention`: Σ over prefill chunks of n·(K + n/2).
    pub attention: f64,
    /// Residents given tokens (what `busy(E)` reads while it runs).
    pub served: u32,
}

/// `serve exclusive prefill`'s state within one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exclusive {
    /// Not an exclusive engine.
    Off,
    /// A prefill resident existed when the iteration started: decodes get
    /// nothing, the first prefill given tokens is served alone.
    Prefills,
    /// No prefill resident at the start: decodes are served, and a prefill
    /// admitted in the iteration takes over alone, withdrawing them.
    Open,
    /// A prefill took the iteration: nobody else is served or admitted.
    Alone,
}

/// What a grant did to earlier grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Withdrawal {
    /// Nothing: earlier grants stand.
    None,
    /// A prefill took the iteration alone under `exclusive prefill`: the
    /// decode tokens granted before it in this iteration are withdrawn
    /// (the caller sets those residents' tokens to 0).
    Decodes,
}

/// One iteration's hand-out of its budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Handout {
    budget: f64,
    chunk: f64,
    left: f64,
    exclusive: Exclusive,
    totals: StepTotals,
}

impl Handout {
    /// An iteration with `budget` (read at the Budget moment, above 0) and
    /// `chunk` (≤ 0: no cap); `exclusive` for `serve exclusive prefill`,
    /// `prefill_resident` whether a prefill resident exists at the start.
    pub fn new(budget: f64, chunk: f64, exclusive: bool, prefill_resident: bool) -> Handout {
        let exclusive = match (exclusive, prefill_resident) {
            (false, _) => Exclusive::Off,
            (true, true) => Exclusive::Prefills,
            (true, false) => Exclusive::Open,
        };
        Handout {
            budget,
            chunk: if chunk > 0.0 { chunk } else { f64::INFINITY },
            left: budget,
            exclusive,
            totals: StepTotals::default(),
        }
    }

    /// The tokens a resident would take now (0: it is not served): a
    /// decode `min(1, remaining, left)`, a prefill `min(remaining, left,
    /// chunk)`; under `exclusive prefill` a prefill takes `min(remaining,
    /// budget, chunk)` of the whole budget and decodes wait while a prefill
    /// resident exists.
    pub fn offer(&self, mode: Mode, remaining: f64) -> f64 {
        let tokens = match (self.exclusive, mode) {
            (Exclusive::Alone, _) | (Exclusive::Prefills, Mode::Decode) => 0.0,
            (Exclusive::Prefills | Exclusive::Open, Mode::Prefill) => {
                remaining.min(self.budget).min(self.chunk)
            }
            (_, Mode::Decode) => remaining.min(1.0).min(self.left),
            (_, Mode::Prefill) => remaining.min(self.left).min(self.chunk),
        };
        tokens.max(0.0)
    }

    /// Commits a grant of `tokens` (what [`Handout::offer`] said, after the
    /// resident's growth succeeded); `position` is the run's position
    /// before the chunk for a `growing` run and 0 otherwise (attention's K).
    pub fn take(&mut self, mode: Mode, tokens: f64, position: f64) -> Withdrawal {
        let alone = mode == Mode::Prefill
            && matches!(self.exclusive, Exclusive::Prefills | Exclusive::Open);
        let mut withdrawal = Withdrawal::None;
        if alone {
            if self.totals.served > 0 {
                withdrawal = Withdrawal::Decodes;
            }
            self.totals = StepTotals::default();
            self.exclusive = Exclusive::Alone;
            self.left = 0.0;
        } else {
            self.left -= tokens;
        }
        self.count(mode, tokens, position, 1.0);
        withdrawal
    }

    /// Takes back a grant made earlier in this iteration (a resident
    /// preempted after it was served): its tokens return to the budget.
    /// The reference panics here ("no entry found for key", a victim served
    /// earlier in the serve order); serq gives the tokens back.
    pub fn withdraw(&mut self, mode: Mode, tokens: f64, position: f64) {
        if self.exclusive != Exclusive::Alone {
            self.left += tokens;
        }
        self.count(mode, tokens, position, -1.0);
    }

    /// Adds (`sign` 1) or removes (`sign` -1) a grant from the totals.
    fn count(&mut self, mode: Mode, tokens: f64, position: f64, sign: f64) {
        let t = &mut self.totals;
        let step = |n: &mut u32| {
            *n = if sign > 0.0 {
                *n + 1
            } else {
                n.saturating_sub(1)
            }
        };
        t.tokens += sign * tokens;
        step(&mut t.served);
        match mode {
            Mode::Prefill => {
                t.prefilled += sign * tokens;
                t.attention += sign * tokens * (position + tokens / 2.0);
            }
            Mode::Decode => step(&mut t.decoders),
        }
    }

    /// The budget left for the residents after these and for admissions.
    pub fn left(&self) -> f64 {
        self.left
    }

    /// Whether the iteration may still admit from its queues: budget is
    /// left and no prefill took it alone.
    pub fn admits(&self) -> bool {
        self.exclusive != Exclusive::Alone && self.left > 0.0
    }

    /// What `budget_left(E)` reads in the header of a hold being admitted
    /// by this iteration: the budget left, or the whole budget under
    /// `exclusive prefill` (an admitted prefill would take it all).
    pub fn header_budget_left(&self) -> f64 {
        match self.exclusive {
            Exclusive::Off => self.left,
            Exclusive::Alone => 0.0,
            Exclusive::Prefills | Exclusive::Open => self.budget,
        }
    }

    /// The totals of the grants that stand.
    pub fn totals(&self) -> StepTotals {
        self.totals
    }
}

/// `budget_left(E)` between iterations: `max(0, B − Σ want)`, with `B`
/// read now and each resident's want what it would take in an iteration
/// (a decode `min(1, remaining)`, a prefill `min(remaining, chunk)`, or
/// `remaining` without a chunk).
pub fn budget_left(
    budget: f64,
    chunk: f64,
    residents: impl IntoIterator<Item = (Mode, f64)>,
) -> f64 {
    let chunk = if chunk > 0.0 { chunk } else { f64::INFINITY };
    let want: f64 = residents
        .into_iter()
        .map(|(mode, remaining)| match mode {
            Mode::Decode => remaining.min(1.0),
            Mode::Prefill => remaining.min(chunk),
        })
        .sum();
    (budget - want).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::{Handout, Mode, StepTotals, Withdrawal, budget_left};

    /// Hands out one iteration to residents `(mode, remaining)` in order, as
    /// the engine does without growth; returns each one's tokens.
    fn hand_out(h: &mut Handout, residents: &[(Mode, f64)]) -> Vec<f64> {
        residents
            .iter()
            .map(|&(mode, remaining)| {
                let t = h.offer(mode, remaining);
                if t > 0.0 {
                    assert_eq!(h.take(mode, t, 0.0), Withdrawal::None);
                }
                t
            })
            .collect()
    }

    #[test]
    fn prefills_take_the_budget_in_order_and_decodes_one_token() {
        // t2_step_decode_fractional: budget 4, a prefill of 10 before a decode
        // of 5: p4 d0, p4 d0, p2 d1.
        let mut h = Handout::new(4.0, 0.0, false, false);
        assert_eq!(
            hand_out(&mut h, &[(Mode::Prefill, 10.0), (Mode::Decode, 5.0)]),
            [4.0, 0.0]
        );
        let mut h = Handout::new(4.0, 0.0, false, false);
        assert_eq!(
            hand_out(&mut h, &[(Mode::Prefill, 2.0), (Mode::Decode, 5.0)]),
            [2.0, 1.0]
        );
        // Budget 2.5: three decodes of 2 take 1, 1 and 0.5.
        let mut h = Handout::new(2.5, 0.0, false, false);
        let decodes = [(Mode::Decode, 2.0); 3];
        assert_eq!(hand_out(&mut h, &decodes), [1.0, 1.0, 0.5]);
        assert!(!h.admits());
    }

    #[test]
    fn the_chunk_caps_a_prefill() {
        // t2_step_budget_chunk: budget 4, chunk 3: a prefill of 10 takes 3.
        let mut h = Handout::new(4.0, 3.0, false, false);
        assert_eq!(hand_out(&mut h, &[(Mode::Prefill, 10.0)]), [3.0]);
        assert_eq!(h.left(), 1.0);
        assert!(h.admits());
    }

    #[test]
    fn step_totals_count_the_residents_given_tokens() {
        // t2_step_cost_totals: budget 2, a prefill of 4 before a decode of 2:
        // the first iteration gives p2 and nothing to the decode (decoders 0).
        let mut h = Handout::new(2.0, 0.0, false, false);
        hand_out(&mut h, &[(Mode::Prefill, 4.0), (Mode::Decode, 2.0)]);
        assert_eq!(
            h.totals(),
            StepTotals {
                tokens: 2.0,
                prefilled: 2.0,
                decoders: 0,
                attention: 2.0,
                served: 1
            }
        );
    }

    #[test]
    fn attention_adds_n_times_k_plus_half_n_per_prefill_chunk() {
        // t2_step_cost_kv_attention: chunks of 4 of a growing prefill of 8:
        // 4 * (0 + 2) = 8, then 4 * (4 + 2) = 24; without growing K = 0: 8, 8.
        let mut h = Handout::new(8.0, 4.0, false, false);
        assert_eq!(h.take(Mode::Prefill, 4.0, 0.0), Withdrawal::None);
        assert_eq!(h.totals().attention, 8.0);
        let mut h = Handout::new(8.0, 4.0, false, false);
        assert_eq!(h.take(Mode::Prefill, 4.0, 4.0), Withdrawal::None);
        assert_eq!(h.totals().attention, 24.0);
    }

    #[test]
    fn exclusive_prefill_serves_the_first_prefill_alone() {
        // t2_serve_exclusive_prefill X: budget 6, a decode of 3 and a prefill
        // of 4: the prefill takes 4 alone, the decode nothing.
        let mut h = Handout::new(6.0, 0.0, true, true);
        assert_eq!(
            hand_out(
                &mut h,
                &[
                    (Mode::Decode, 3.0),
                    (Mode::Prefill, 4.0),
                    (Mode::Prefill, 3.0)
                ]
            ),
            [0.0, 4.0, 0.0]
        );
        assert!(!h.admits());
        // tests/serving/serve_exclusive_prefill_chunk: chunk 2 caps it: 2 of 5.
        let mut h = Handout::new(6.0, 2.0, true, true);
        assert_eq!(
            hand_out(&mut h, &[(Mode::Decode, 2.0), (Mode::Prefill, 5.0)]),
            [0.0, 2.0]
        );
        assert_eq!(h.totals().tokens, 2.0);
    }

    #[test]
    fn an_admitted_prefill_withdraws_the_decode_tokens_under_exclusive_prefill() {
        // t2_serve_exclusive_prefill Y: budget 6; a decode takes 1; the
        // admission's header reads the whole budget, 6; the admitted prefill
        // of 6 takes all 6 and the decode's token is withdrawn.
        let mut h = Handout::new(6.0, 0.0, true, false);
        assert_eq!(h.offer(Mode::Decode, 3.0), 1.0);
        assert_eq!(h.take(Mode::Decode, 1.0, 0.0), Withdrawal::None);
        assert!(h.admits());
        assert_eq!(h.header_budget_left(), 6.0);
        assert_eq!(h.offer(Mode::Prefill, 6.0), 6.0);
        assert_eq!(h.take(Mode::Prefill, 6.0, 0.0), Withdrawal::Decodes);
        assert_eq!(
            h.totals(),
            StepTotals {
                tokens: 6.0,
                prefilled: 6.0,
                decoders: 0,
                attention: 18.0,
                served: 1
            }
        );
        assert!(!h.admits());
    }

    #[test]
    fn an_admission_header_reads_the_budget_left() {
        // t2_admit_via_budget: budget 6, the first admitted takes 4: 2 left.
        let mut h = Handout::new(6.0, 0.0, false, false);
        assert_eq!(h.header_budget_left(), 6.0);
        assert_eq!(h.take(Mode::Prefill, 4.0, 0.0), Withdrawal::None);
        assert_eq!(h.header_budget_left(), 2.0);
    }

    #[test]
    fn a_withdrawn_grant_returns_its_tokens() {
        let mut h = Handout::new(10.0, 0.0, false, false);
        assert_eq!(h.take(Mode::Prefill, 2.0, 0.0), Withdrawal::None);
        assert_eq!(h.take(Mode::Decode, 1.0, 0.0), Withdrawal::None);
        h.withdraw(Mode::Prefill, 2.0, 0.0);
        assert_eq!(h.left(), 9.0);
        assert_eq!(
            h.totals(),
            StepTotals {
                tokens: 1.0,
                prefilled: 0.0,
                decoders: 1,
                attention: 0.0,
                served: 1
            }
        );
    }

    #[test]
    fn budget_left_is_what_every_resident_would_not_take() {
        // t2_step_observables: budget 8, chunk 2, a prefill of 1, a decode of
        // 3 and a prefill of 10: 8 - 1 - 1 - 2 = 4; clamped at 0.
        let residents = [
            (Mode::Prefill, 1.0),
            (Mode::Decode, 3.0),
            (Mode::Prefill, 10.0),
        ];
        assert_eq!(budget_left(8.0, 2.0, residents), 4.0);
        assert_eq!(budget_left(8.0, 0.0, residents), 0.0);
        assert_eq!(budget_left(6.0, 0.0, []), 6.0);
    }
}
