//! The session's path, read off the session block: which stations follow
//! which, which runs are flows, and which pools are held around which runs.
//!
//! Architecture invariant: reads only the IR, and walks every block once
//! (a loop is not unrolled: its back edge is found with a marker), so the
//! walk is linear in the program's size.

use super::label;
use crate::ir::{CRef, Dist, Expr, Program, Stmt};
use std::collections::{BTreeMap, BTreeSet};

/// What a reference names in the drawing: one member, or the whole family
/// when the index is computed when the statement runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// A member, by its index in `Program::stages` (or `pools`).
    Member(usize),
    /// A family, by the index of its first member.
    Family(usize),
}

impl Target {
    /// The target a reference names: a member when the family has one
    /// member or the index is a constant whole number in range, else the family.
    pub fn of(r: &CRef) -> Target {
        if r.count <= 1 {
            return Target::Member(r.base);
        }
        match r.index {
            Some(Expr::Num(k)) if k >= 0.0 && k.fract() == 0.0 && k < r.count as f64 => {
                Target::Member(r.base + k as usize)
            }
            _ => Target::Family(r.base),
        }
    }
}

/// An end of an arrow: where sessions arrive, a station, or where they end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Point {
    /// The workload: sessions come from here.
    Source,
    /// A station (or a family of stations).
    At(Target),
    /// `end;`, or the end of the session block.
    Sink,
}

/// One run as the drawing sees it: the stations it holds, in the run's order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Visit(pub Vec<Target>);

impl Visit {
    /// Where the session enters the run.
    pub fn first(&self) -> Target {
        self.0[0]
    }
    /// Where the session leaves the run.
    pub fn last(&self) -> Target {
        self.0[self.0.len() - 1]
    }
    /// Whether the run is a flow (holds several stages at once).
    pub fn is_flow(&self) -> bool {
        self.0.len() > 1
    }
}

/// An arrow of the path: the session goes from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Where it leaves.
    pub from: Point,
    /// Where it enters.
    pub to: Point,
    /// When it is taken: a branch's guard (`more`, `with (0.3)`), `else`,
    /// or `repeat` on a loop's way back; `None` when it is always taken
    /// (or both arms of a branch take it).
    pub label: Option<String>,
}

/// A run made while the session keeps a pool's units after the hold that
/// took them (`hold … { } lease P (t)`), or, when the session makes no run
/// before the lease ends, the hold's last run (the units stay after it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lease {
    /// The leased pool (a `Target` into `Program::pools`).
    pub pool: Target,
    /// The run.
    pub visit: Visit,
    /// `lease`, or `lease (t)` when the lease has a finite length `t`.
    pub label: String,
}

/// The session's path, every list in program order without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Arrows, with the condition under which each is taken.
    pub edges: Vec<Edge>,
    /// The runs over several stages.
    pub flows: Vec<Visit>,
    /// (pool, run): the run happens inside a hold on the pool (a pool
    /// `Target` indexes `Program::pools`).
    pub holds: Vec<(Target, Visit)>,
    /// The runs made while a lease keeps a pool's units.
    pub leases: Vec<Lease>,
}

/// Where the walk stands: after a point, or at the start of a loop's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum At {
    Point(Point),
    LoopStart(usize),
}

/// A place the walk stands at, with the branch conditions that lead there
/// since the last run (`None` when none does).
#[derive(Clone, Debug, PartialEq, Eq)]
struct After {
    at: At,
    label: Option<String>,
}

impl After {
    fn at(point: Point) -> After {
        After {
            at: At::Point(point),
            label: None,
        }
    }
}

/// The longest condition written on an arrow; a longer one is cut with `…`.
const LABEL_CHARS: usize = 24;

/// The label of an arm: the guard as written (`with (p)` for a
/// `branch with`), or `else`.
fn arm_label(program: &Program, guard: &Expr, then: bool) -> String {
    if !then {
        return "else".to_string();
    }
    let text = match guard {
        Expr::Sample(Dist::Bernoulli, args) if args.len() == 1 => {
            format!("with ({})", label::expr(program, &args[0]))
        }
        _ => label::expr(program, guard),
    };
    if text.chars().count() > LABEL_CHARS {
        let cut: String = text.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The conditions of a way into an arm: the arm's, after those that led
/// to the branch.
fn arm_path(outer: Option<&str>, arm: &str) -> String {
    match outer {
        Some(outer) => format!("{outer} & {arm}"),
        None => arm.to_string(),
    }
}

/// A lease taken at the end of a hold's body.
struct Taken {
    pool: Target,
    /// The hold's last run, drawn when no run happens during the lease.
    last: Option<Visit>,
    label: String,
    /// Whether some run happened while it was live.
    used: bool,
}

struct Walker<'a> {
    program: &'a Program,
    walk: Walk,
    /// Each edge's index in `walk.edges`, and whether two ways to it
    /// disagree on its label (then it has none).
    seen_edges: BTreeMap<(Point, Point), (usize, bool)>,
    seen_flows: BTreeSet<Visit>,
    seen_holds: BTreeSet<(Target, Visit)>,
    seen_leases: BTreeSet<Lease>,
    /// The pools of the holds around the statement being walked.
    held: Vec<Target>,
    /// Every lease the walk has taken; `live` indexes the ones still kept.
    taken: Vec<Taken>,
    live: Vec<usize>,
    /// The last run walked.
    last_visit: Option<Visit>,
    /// For each loop entered, the targets its body's first runs enter.
    loop_entries: Vec<Vec<Target>>,
}

/// Walks the session block: runs in order, both arms of a branch, a loop's
/// body once with an arrow back from its end to its start.
pub fn walk(program: &Program) -> Walk {
    let mut walker = Walker {
        program,
        walk: Walk::default(),
        seen_edges: BTreeMap::new(),
        seen_flows: BTreeSet::new(),
        seen_holds: BTreeSet::new(),
        seen_leases: BTreeSet::new(),
        held: Vec::new(),
        taken: Vec::new(),
        live: Vec::new(),
        last_visit: None,
        loop_entries: Vec::new(),
    };
    let out = walker.block(program.session, vec![After::at(Point::Source)]);
    walker.arrive(&out, Point::Sink);
    // A lease no run happens in is drawn on the run it follows.
    for taken in std::mem::take(&mut walker.taken) {
        if let (false, Some(visit)) = (taken.used, taken.last) {
            walker.lease(taken.pool, visit, taken.label);
        }
    }
    walker.walk
}

impl Walker<'_> {
    /// Adds an arrow from every point in `from` to `to`, labelled with the
    /// way's conditions (or `label`, when given, for a loop's way back).
    fn arrive_labelled(&mut self, from: &[After], to: Point, label: Option<&str>) {
        for a in from {
            match a.at {
                At::Point(p) => {
                    let label = label.map(str::to_string).or_else(|| a.label.clone());
                    match self.seen_edges.get_mut(&(p, to)) {
                        None => {
                            self.seen_edges
                                .insert((p, to), (self.walk.edges.len(), false));
                            self.walk.edges.push(Edge { from: p, to, label });
                        }
                        Some((i, mixed)) => {
                            // Taken under two conditions: drawn without one.
                            if !*mixed && self.walk.edges[*i].label != label {
                                *mixed = true;
                                self.walk.edges[*i].label = None;
                            }
                        }
                    }
                }
                At::LoopStart(id) => {
                    if let Point::At(t) = to
                        && !self.loop_entries[id].contains(&t)
                    {
                        self.loop_entries[id].push(t);
                    }
                }
            }
        }
    }

    /// Adds an arrow from every point in `from` to `to`.
    fn arrive(&mut self, from: &[After], to: Point) {
        self.arrive_labelled(from, to, None);
    }

    /// Records that `visit` runs while `pool`'s units are leased.
    fn lease(&mut self, pool: Target, visit: Visit, label: String) {
        let lease = Lease { pool, visit, label };
        if self.seen_leases.insert(lease.clone()) {
            self.walk.leases.push(lease);
        }
    }

    /// `release p;` outside a hold on p ends the oldest live lease of p.
    fn release(&mut self, r: &CRef) {
        let t = Target::of(r);
        if self.held.contains(&t) {
            return;
        }
        let name = self.program.pool_name(r.base);
        let oldest = self
            .live
            .iter()
            .position(|&id| self.taken[id].pool == t)
            .or_else(|| {
                self.live.iter().position(|&id| {
                    let (Target::Member(m) | Target::Family(m)) = self.taken[id].pool;
                    self.program.pool_name(m) == name
                })
            });
        if let Some(k) = oldest {
            self.live.remove(k);
        }
    }

    /// Walks a block from the points in `after`; returns where it leaves
    /// (empty when every way through ends the session).
    fn block(&mut self, block: usize, mut after: Vec<After>) -> Vec<After> {
        let Some(stmts) = self.program.blocks.get(block) else {
            return after;
        };
        for stmt in stmts {
            match stmt {
                Stmt::Run { stage, also, .. } => {
                    let visit = Visit(std::iter::once(stage).chain(also).map(Target::of).collect());
                    self.arrive(&after, Point::At(visit.first()));
                    after = vec![After::at(Point::At(visit.last()))];
                    for &pool in &self.held {
                        let hold = (pool, visit.clone());
                        if self.seen_holds.insert(hold.clone()) {
                            self.walk.holds.push(hold);
                        }
                    }
                    for id in self.live.clone() {
                        self.taken[id].used = true;
                        let (pool, label) = (self.taken[id].pool, self.taken[id].label.clone());
                        self.lease(pool, visit.clone(), label);
                    }
                    self.last_visit = Some(visit.clone());
                    if visit.is_flow() && self.seen_flows.insert(visit.clone()) {
                        self.walk.flows.push(visit);
                    }
                }
                Stmt::Hold {
                    pools, body, lease, ..
                } => {
                    let depth = self.held.len();
                    self.held.extend(pools.iter().map(|p| Target::of(&p.0)));
                    after = self.block(*body, after);
                    self.held.truncate(depth);
                    if let Some((pool, length)) = lease {
                        let label = match length {
                            Expr::Num(t) if *t == f64::INFINITY => "lease".to_string(),
                            t => format!("lease ({})", label::expr(self.program, t)),
                        };
                        self.live.push(self.taken.len());
                        self.taken.push(Taken {
                            pool: Target::of(pool),
                            last: self.last_visit.clone(),
                            label,
                            used: false,
                        });
                    }
                }
                Stmt::Branch(guard, then, otherwise) => {
                    let live = self.live.clone();
                    let mut joined = self.arm(guard, true, *then, &after);
                    let then_live = std::mem::replace(&mut self.live, live);
                    for a in self.arm(guard, false, *otherwise, &after) {
                        if !joined.contains(&a) {
                            joined.push(a);
                        }
                    }
                    // A place both arms pass through unchanged keeps the
                    // conditions it had before the branch.
                    for before in &after {
                        let through = |then: bool| After {
                            at: before.at,
                            label: Some(arm_path(
                                before.label.as_deref(),
                                &arm_label(self.program, guard, then),
                            )),
                        };
                        let (t, e) = (through(true), through(false));
                        if let (Some(i), Some(_)) = (
                            joined.iter().position(|a| *a == t),
                            joined.iter().position(|a| *a == e),
                        ) {
                            joined[i] = before.clone();
                            joined.retain(|a| *a != e);
                        }
                    }
                    // A lease either arm still keeps is kept after the branch.
                    for id in then_live {
                        if !self.live.contains(&id) {
                            self.live.push(id);
                        }
                    }
                    after = joined;
                }
                Stmt::Loop(body) => {
                    let id = self.loop_entries.len();
                    self.loop_entries.push(Vec::new());
                    let mut start = after.clone();
                    start.push(After {
                        at: At::LoopStart(id),
                        label: None,
                    });
                    let end: Vec<After> = self
                        .block(*body, start)
                        .into_iter()
                        .filter(|a| a.at != At::LoopStart(id))
                        .collect();
                    let entries = std::mem::take(&mut self.loop_entries[id]);
                    for t in entries {
                        self.arrive_labelled(&end, Point::At(t), Some("repeat"));
                    }
                    // A loop is left only by `end;`.
                    after = Vec::new();
                }
                Stmt::End => {
                    self.arrive(&after, Point::Sink);
                    after = Vec::new();
                    self.live.clear();
                }
                Stmt::Release(pool) => self.release(pool),
                Stmt::Set(..)
                | Stmt::Observe(..)
                | Stmt::Turn
                | Stmt::Grow(..)
                | Stmt::Load(..)
                | Stmt::Drop(..)
                | Stmt::Choose { .. } => {}
            }
        }
        after
    }

    /// Walks one arm of a branch: the ways into it carry its condition.
    fn arm(&mut self, guard: &Expr, then: bool, block: usize, after: &[After]) -> Vec<After> {
        let arm = arm_label(self.program, guard, then);
        let entering = after
            .iter()
            .map(|a| After {
                at: a.at,
                label: Some(arm_path(a.label.as_deref(), &arm)),
            })
            .collect();
        self.block(block, entering)
    }
}
