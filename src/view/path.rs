//! The session's path, read off the session block: which stations follow
//! which, which runs are flows, and which pools are held around which runs.
//!
//! Architecture invariant: reads only the IR, and walks every block once
//! (a loop is not unrolled: its back edge is found with a marker), so the
//! walk is linear in the program's size.

use crate::ir::{CRef, Expr, Program, Stmt};
use std::collections::BTreeSet;

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

/// The session's path, every list in program order without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Arrows: the session goes from the first point to the second.
    pub edges: Vec<(Point, Point)>,
    /// The runs over several stages.
    pub flows: Vec<Visit>,
    /// (pool, run): the run happens inside a hold on the pool (a pool
    /// `Target` indexes `Program::pools`).
    pub holds: Vec<(Target, Visit)>,
}

/// Where the walk stands: after a point, or at the start of a loop's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum After {
    Point(Point),
    LoopStart(usize),
}

struct Walker<'a> {
    program: &'a Program,
    walk: Walk,
    seen_edges: BTreeSet<(Point, Point)>,
    seen_flows: BTreeSet<Visit>,
    seen_holds: BTreeSet<(Target, Visit)>,
    /// The pools of the holds around the statement being walked.
    held: Vec<Target>,
    /// For each loop entered, the targets its body's first runs enter.
    loop_entries: Vec<Vec<Target>>,
}

/// Walks the session block: runs in order, both arms of a branch, a loop's
/// body once with an arrow back from its end to its start.
pub fn walk(program: &Program) -> Walk {
    let mut walker = Walker {
        program,
        walk: Walk::default(),
        seen_edges: BTreeSet::new(),
        seen_flows: BTreeSet::new(),
        seen_holds: BTreeSet::new(),
        held: Vec::new(),
        loop_entries: Vec::new(),
    };
    let out = walker.block(program.session, vec![After::Point(Point::Source)]);
    walker.arrive(&out, Point::Sink);
    walker.walk
}

impl Walker<'_> {
    /// Adds an arrow from every point in `from` to `to`.
    fn arrive(&mut self, from: &[After], to: Point) {
        for &a in from {
            match a {
                After::Point(p) => {
                    if self.seen_edges.insert((p, to)) {
                        self.walk.edges.push((p, to));
                    }
                }
                After::LoopStart(id) => {
                    if let Point::At(t) = to
                        && !self.loop_entries[id].contains(&t)
                    {
                        self.loop_entries[id].push(t);
                    }
                }
            }
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
                    after = vec![After::Point(Point::At(visit.last()))];
                    for &pool in &self.held {
                        let hold = (pool, visit.clone());
                        if self.seen_holds.insert(hold.clone()) {
                            self.walk.holds.push(hold);
                        }
                    }
                    if visit.is_flow() && self.seen_flows.insert(visit.clone()) {
                        self.walk.flows.push(visit);
                    }
                }
                Stmt::Hold { pools, body, .. } => {
                    let depth = self.held.len();
                    self.held.extend(pools.iter().map(|p| Target::of(&p.0)));
                    after = self.block(*body, after);
                    self.held.truncate(depth);
                }
                Stmt::Branch(_, then, otherwise) => {
                    let mut joined = self.block(*then, after.clone());
                    for a in self.block(*otherwise, after) {
                        if !joined.contains(&a) {
                            joined.push(a);
                        }
                    }
                    after = joined;
                }
                Stmt::Loop(body) => {
                    let id = self.loop_entries.len();
                    self.loop_entries.push(Vec::new());
                    let mut start = after.clone();
                    start.push(After::LoopStart(id));
                    let end: Vec<After> = self
                        .block(*body, start)
                        .into_iter()
                        .filter(|a| *a != After::LoopStart(id))
                        .collect();
                    let entries = std::mem::take(&mut self.loop_entries[id]);
                    for t in entries {
                        self.arrive(&end, Point::At(t));
                    }
                    // A loop is left only by `end;`.
                    after = Vec::new();
                }
                Stmt::End => {
                    self.arrive(&after, Point::Sink);
                    after = Vec::new();
                }
                Stmt::Set(..)
                | Stmt::Observe(..)
                | Stmt::Turn
                | Stmt::Grow(..)
                | Stmt::Load(..)
                | Stmt::Release(..)
                | Stmt::Drop(..)
                | Stmt::Choose { .. } => {}
            }
        }
        after
    }
}
