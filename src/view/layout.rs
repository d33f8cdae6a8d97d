//! Where everything stands: the station row, the pool row above it, and the
//! shape of every arrow, in whole pixels.
//!
//! Architecture invariant: reads only the IR (through [`super::path`]); no
//! map whose order could reach the output, so one program always lays out
//! the same way.

use super::label;
use super::path::{Point, Target, Visit, Walk};
use crate::ir::Program;
use std::collections::BTreeMap;

/// By default ([`Fold::Auto`]), families larger than this are drawn as one
/// station `name ×N`: at nixl_pull.sq's 8 + 8 every member drawn made a
/// drawing 5 502 px wide in one row; four members side by side still read.
pub const COLLAPSE_ABOVE: usize = 4;
/// The width a row (of stations, or of pools) is fitted to: a family whose
/// members would make the row wider is drawn in a grid of fewer columns.
pub const SCREEN_W: i32 = 1920;
/// The vertical gap between two rows of a family's grid.
pub const ROW_GAP: i32 = 10;
/// Width of a character of the labels' monospace font, in pixels.
pub const CHAR_W: i32 = 8;
/// Height of a station box.
pub const STATION_H: i32 = 46;
/// Height of a pool box.
pub const POOL_H: i32 = 38;
/// Padding of a family's frame around its members.
pub const FRAME_PAD: i32 = 7;
/// Radius of the source and sink circles.
pub const END_R: i32 = 14;
/// Width of a character of the small labels (arrows, leases), in pixels.
pub const SMALL_W: i32 = 7;

const MEMBER_GAP: i32 = 10;
const FLOW_GAP: i32 = 18;
const FAMILY_GAP: i32 = 56;
const POOL_GAP: i32 = 24;

/// Which families the drawing folds into one box `name ×N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fold {
    /// Those of more than [`COLLAPSE_ABOVE`] members (`serq draw`'s default).
    #[default]
    Auto,
    /// Every family of more than one member (`--by-family`).
    ByFamily,
    /// None: one box per member (`--members`), a large family in a grid
    /// of as many columns as fit [`SCREEN_W`].
    Members,
}

impl Fold {
    /// Whether a family of `count` members is drawn as one box.
    pub fn folds(self, count: usize) -> bool {
        match self {
            Fold::Auto => count > COLLAPSE_ABOVE,
            Fold::ByFamily => count > 1,
            Fold::Members => false,
        }
    }
}

/// A box in a row: a stage (or pool) member, or a collapsed family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Station {
    /// `name`, `name[i]`, or `name ×N` for a collapsed family of N.
    pub label: String,
    /// The second line: the stage's kind, or the pool's capacity.
    pub detail: String,
    /// The family's index in [`Layout::families`] (or [`Layout::pool_families`]).
    pub family: usize,
    /// Left edge.
    pub x: i32,
    /// Width.
    pub w: i32,
    /// The row of its family's grid it stands in (0 for the top row).
    pub row: i32,
}

/// A declared family of stages or pools and the stations drawing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    /// Index of the first member in `Program::stages` (or `pools`).
    pub base: usize,
    /// Members.
    pub count: usize,
    /// First and last station (inclusive) in the row.
    pub stations: (usize, usize),
    /// Whether it is drawn as one box `name ×N`.
    pub folded: bool,
    /// The columns of its grid of members (1 when folded).
    pub columns: usize,
}

impl Family {
    /// Whether the family is drawn in a frame (several member boxes).
    pub fn is_framed(&self) -> bool {
        self.stations.1 > self.stations.0
    }
}

/// Where an arrow ends: a range of stations (inclusive) and its extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    /// First station; -1 for the source.
    pub first: i64,
    /// Last station; the station count for the sink.
    pub last: i64,
    /// Left edge.
    pub x0: i32,
    /// Right edge.
    pub x1: i32,
}

impl Spot {
    /// The horizontal middle.
    pub fn mid(&self) -> i32 {
        (self.x0 + self.x1) / 2
    }
}

/// How an arrow is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// To the next box on the right: a straight line through the row.
    Straight,
    /// Rightwards past other boxes: an arc over the row.
    Over,
    /// Leftwards (or onto itself): a return, curved below the row.
    Return,
}

/// One arrow of the session's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// What it leaves.
    pub from: Point,
    /// What it enters.
    pub to: Point,
    /// Where it leaves.
    pub tail: Spot,
    /// Where it enters.
    pub head: Spot,
    /// How it is drawn.
    pub shape: Shape,
    /// When it is taken (a branch's guard, `else`, `repeat`), if not always.
    pub label: Option<String>,
    /// How far an arc's control points rise above the row, or a return's
    /// reach below it (the curve itself reaches three quarters of it); 0
    /// for a straight arrow.
    pub bend: i32,
}

/// The rail under the stations of one flow (a run over several stages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rail {
    /// The flow's stations, in the run's order.
    pub stations: Vec<usize>,
    /// Left end.
    pub x0: i32,
    /// Right end.
    pub x1: i32,
}

/// A dashed link from a pool to the stations of a run inside a hold on it
/// (or, for a lease, a run made while the session keeps the pool's units).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The pool end (pool stations).
    pub pool: Spot,
    /// The run's stations.
    pub run: Spot,
    /// Where the link leaves the pool's bottom edge: the links of one pool
    /// leave it side by side in the order of their runs, so they do not cross.
    pub pool_x: i32,
    /// Where the link meets the run's top edge, side by side in the order
    /// of their pools.
    pub run_x: i32,
}

impl Link {
    /// A link from the middle of `pool` to the middle of `run`.
    fn between(pool: Spot, run: Spot) -> Link {
        Link {
            pool,
            run,
            pool_x: pool.mid(),
            run_x: run.mid(),
        }
    }
}

/// A dotted link from a pool to a run made while a lease keeps its units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseLink {
    /// Where it is drawn.
    pub link: Link,
    /// `lease`, or `lease (t)` for a lease of finite length.
    pub label: String,
}

/// The whole drawing, ready to be written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The arrival process, written under the source.
    pub arrival: String,
    /// The share policy (`maxmin`, `bottleneck`), if the program has flows.
    pub share: Option<&'static str>,
    /// The stage families, in declaration order.
    pub families: Vec<Family>,
    /// The station row, left to right.
    pub stations: Vec<Station>,
    /// The pool families, in declaration order.
    pub pool_families: Vec<Family>,
    /// The pool row, left to right.
    pub pools: Vec<Station>,
    /// The session's path.
    pub arrows: Vec<Arrow>,
    /// One per flow.
    pub rails: Vec<Rail>,
    /// Pools to the runs they are held around.
    pub links: Vec<Link>,
    /// Leased pools to the runs made while the lease keeps their units.
    pub leases: Vec<LeaseLink>,
    /// Pools to the engine (step stage) that admits their queue (`admit via`).
    pub admits: Vec<Link>,
    /// Centre of the source circle.
    pub source_x: i32,
    /// Centre of the sink circle.
    pub sink_x: i32,
    /// Top of the pool row.
    pub pool_top: i32,
    /// Height of the pool row: its tallest grid, frames left out.
    pub pools_h: i32,
    /// Top of the station row.
    pub row_top: i32,
    /// Height of the station row: its tallest grid, frames left out.
    pub stations_h: i32,
    /// Total width.
    pub width: i32,
    /// Total height.
    pub height: i32,
}

/// The families of a flattened list of names: runs of equal names.
fn families_of<'a>(names: impl Iterator<Item = &'a str>) -> Vec<Family> {
    let mut families: Vec<Family> = Vec::new();
    let mut last: Option<&str> = None;
    for (i, name) in names.enumerate() {
        match families.last_mut() {
            Some(f) if last == Some(name) => f.count += 1,
            _ => families.push(Family {
                base: i,
                count: 1,
                stations: (0, 0),
                folded: false,
                columns: 1,
            }),
        }
        last = Some(name);
    }
    families
}

/// For each member, the index of its family.
fn member_family(families: &[Family]) -> Vec<usize> {
    let mut of = Vec::new();
    for (i, f) in families.iter().enumerate() {
        of.extend(std::iter::repeat_n(i, f.count));
    }
    of
}

/// The station row's order of families: the order the session's path
/// first reaches them (its arrows in program order), so that arrows run
/// left to right and only a loop's way back (or a branch's) returns; the
/// stations of a flow stand right after its first stage, in the run's
/// order. Families the path never reaches follow, in declaration order.
/// A family already placed (by an earlier arrow or flow) stays where it is.
pub fn row_order(family_of: &[usize], count: usize, walk: &Walk) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    let place = |f: usize, order: &mut Vec<usize>| {
        if !order.contains(&f) {
            order.push(f);
        }
    };
    let target_family = |t: Target| {
        let (Target::Member(m) | Target::Family(m)) = t;
        family_of[m]
    };
    for e in &walk.edges {
        for p in [e.from, e.to] {
            let Point::At(t) = p else { continue };
            let f = target_family(t);
            let fresh = !order.contains(&f);
            place(f, &mut order);
            if !fresh {
                continue;
            }
            for flow in walk.flows.iter().filter(|v| target_family(v.first()) == f) {
                for &t in &flow.0 {
                    place(target_family(t), &mut order);
                }
            }
        }
    }
    for f in 0..count {
        place(f, &mut order);
    }
    order
}

/// The width of a box for these two lines of text.
fn box_width(label: &str, detail: &str) -> i32 {
    let chars = label.chars().count().max(detail.chars().count()) as i32;
    (chars * CHAR_W + 18).max(64)
}

/// The width of a family drawn as a grid of `columns` columns of boxes
/// `w` wide (its frame included when it has several members).
fn grid_width(count: usize, columns: usize, w: i32) -> i32 {
    let c = columns as i32;
    let frame = if count > 1 { 2 * FRAME_PAD } else { 0 };
    c * w + (c - 1) * MEMBER_GAP + frame
}

/// Chooses each unfolded family's columns so that the row, `gaps` wide
/// between its families, fits [`SCREEN_W`] where it can: every family
/// side by side in one row when that fits, else the fewest rows `r` that
/// fit, each family in at most `r` rows of `⌈members / r⌉` columns (so
/// the grids of a deployment's families read alike, P beside D, and the
/// drawing is as short as the width allows).
fn fit_columns(families: &mut [Family], widths: &[i32], gaps: i32) {
    let most = families.iter().map(|f| f.count).max().unwrap_or(1).max(1);
    let columns = |f: &Family, rows: usize| {
        if f.folded {
            1
        } else {
            f.count.div_ceil(rows).max(1)
        }
    };
    let width = |rows: usize| {
        families
            .iter()
            .zip(widths)
            .map(|(f, &w)| grid_width(f.count, columns(f, rows), w))
            .sum::<i32>()
            + gaps
    };
    // The width only shrinks as the rows grow: the fewest that fit, by halving.
    let (mut lo, mut hi) = (1, most);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if width(mid) <= SCREEN_W {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    for f in families.iter_mut() {
        f.columns = columns(f, lo);
    }
}

/// Lays out a row of families in `order`: their stations left to right from
/// `x` (a family's members in a grid of its `columns`, all its boxes as
/// wide as its widest), with `gap(previous, next)` between families.
/// Returns the right edge.
fn place_row(
    families: &mut [Family],
    order: &[usize],
    mut x: i32,
    boxes: &mut Vec<Station>,
    text: impl Fn(usize, usize) -> (String, String),
    gap: impl Fn(usize, usize) -> i32,
) -> i32 {
    for (k, &fi) in order.iter().enumerate() {
        if k > 0 {
            x += gap(order[k - 1], fi);
        }
        let family = &mut families[fi];
        let first = boxes.len();
        let members: Vec<usize> = if family.folded {
            vec![usize::MAX]
        } else {
            (0..family.count).collect()
        };
        let framed = members.len() > 1;
        if framed {
            x += FRAME_PAD;
        }
        let texts: Vec<(String, String)> = members.iter().map(|&m| text(fi, m)).collect();
        let w = texts.iter().map(|(l, d)| box_width(l, d)).fold(0, i32::max);
        let columns = family.columns.clamp(1, members.len());
        for (n, (label, detail)) in texts.into_iter().enumerate() {
            let (col, row) = ((n % columns) as i32, (n / columns) as i32);
            boxes.push(Station {
                label,
                detail,
                family: fi,
                x: x + col * (w + MEMBER_GAP),
                w,
                row,
            });
        }
        x += columns as i32 * w + (columns as i32 - 1) * MEMBER_GAP;
        if framed {
            x += FRAME_PAD;
        }
        family.stations = (first, boxes.len() - 1);
    }
    x
}

/// The widest box of each family (the width all its boxes are drawn).
fn box_widths(families: &[Family], text: impl Fn(usize, usize) -> (String, String)) -> Vec<i32> {
    families
        .iter()
        .enumerate()
        .map(|(fi, f)| {
            let members: Vec<usize> = if f.folded {
                vec![usize::MAX]
            } else {
                (0..f.count).collect()
            };
            members
                .iter()
                .map(|&m| {
                    let (l, d) = text(fi, m);
                    box_width(&l, &d)
                })
                .fold(0, i32::max)
        })
        .collect()
}

/// The rows of the tallest grid in a row of boxes.
pub fn row_count(boxes: &[Station]) -> i32 {
    boxes.iter().map(|b| b.row + 1).max().unwrap_or(1)
}

/// The label of member `m` of a family named `name` of `count` members
/// (`usize::MAX` for the collapsed family).
fn member_label(name: &str, count: usize, m: usize) -> String {
    if m == usize::MAX {
        // `[0..500]` read as 501 members; the count alone is unambiguous.
        format!("{name} ×{count}")
    } else if count > 1 {
        format!("{name}[{m}]")
    } else {
        name.to_string()
    }
}

/// The spot of a target in a row.
fn spot(families: &[Family], family_of: &[usize], boxes: &[Station], t: Target) -> Spot {
    let (Target::Member(m) | Target::Family(m)) = t;
    let family = &families[family_of[m]];
    let (first, last) = match t {
        Target::Member(m) if family.is_framed() => {
            let s = family.stations.0 + (m - family.base);
            (s, s)
        }
        _ => family.stations,
    };
    let pad = if first != last { FRAME_PAD } else { 0 };
    // A family in a grid: its leftmost and rightmost columns.
    let members = &boxes[first..=last];
    Spot {
        first: first as i64,
        last: last as i64,
        x0: members.iter().map(|b| b.x).fold(i32::MAX, i32::min) - pad,
        x1: members.iter().map(|b| b.x + b.w).fold(i32::MIN, i32::max) + pad,
    }
}

/// The spot of a run: from its first station's left edge to its last's right.
fn run_spot(families: &[Family], family_of: &[usize], boxes: &[Station], v: &Visit) -> Spot {
    let a = spot(families, family_of, boxes, v.first());
    let b = spot(families, family_of, boxes, v.last());
    Spot {
        first: a.first.min(b.first),
        last: a.last.max(b.last),
        x0: a.x0.min(b.x0),
        x1: a.x1.max(b.x1),
    }
}

/// Lays out a program's deployment view from its IR.
pub fn layout(program: &Program, walk: &Walk, fold: Fold) -> Layout {
    let mut families = families_of(program.stages.iter().map(|s| s.name.as_str()));
    for f in &mut families {
        f.folded = fold.folds(f.count);
    }
    let family_of = member_family(&families);
    let order = row_order(&family_of, families.len(), walk);
    // Families that stand in one flow's block sit closer: no arrow between them.
    let mut same_block = vec![None; families.len()];
    for (i, flow) in walk.flows.iter().enumerate() {
        for t in &flow.0 {
            let (Target::Member(m) | Target::Family(m)) = *t;
            same_block[family_of[m]].get_or_insert(i);
        }
    }
    // A labelled arrow between neighbouring families needs room for its label.
    let mut room: BTreeMap<(Option<usize>, Option<usize>), i32> = BTreeMap::new();
    let family_at = |p: Point| match p {
        Point::At(Target::Member(m) | Target::Family(m)) => Some(family_of[m]),
        Point::Source | Point::Sink => None,
    };
    for e in &walk.edges {
        if let Some(text) = &e.label {
            let w = text.chars().count() as i32 * SMALL_W + 24;
            let key = (family_at(e.from), family_at(e.to));
            let r = room.entry(key).or_insert(FAMILY_GAP);
            *r = (*r).max(w);
        }
    }
    let arrival = label::arrival(program);
    let source_x = 20 + END_R.max(arrival.chars().count() as i32 * 7 / 2);
    let spans: Vec<(usize, usize)> = families.iter().map(|f| (f.base, f.count)).collect();
    let text = |fi: usize, m: usize| {
        let (base, count) = spans[fi];
        (
            member_label(&program.stages[base].name, count, m),
            label::kind(program, &program.stages[base + m.min(count - 1)].kind),
        )
    };
    let gap = |a: usize, b: usize| match (same_block[a], same_block[b]) {
        (Some(x), Some(y)) if x == y => FLOW_GAP,
        _ => room.get(&(Some(a), Some(b))).copied().unwrap_or(FAMILY_GAP),
    };
    let last = order.last().copied();
    let sink_gap = room.get(&(last, None)).copied().unwrap_or(FAMILY_GAP);
    // Everything in the row but the families: the source, the sink, the gaps.
    let gaps = source_x
        + END_R
        + FAMILY_GAP
        + sink_gap
        + 2 * END_R
        + 24
        + order.windows(2).map(|w| gap(w[0], w[1])).sum::<i32>();
    let widths = box_widths(&families, text);
    fit_columns(&mut families, &widths, gaps);
    let mut stations = Vec::new();
    let right = place_row(
        &mut families,
        &order,
        source_x + END_R + FAMILY_GAP,
        &mut stations,
        text,
        gap,
    );
    let sink_x = right + sink_gap + END_R;
    let n = stations.len() as i64;
    let end_spot = |p: Point| match p {
        Point::Source => Spot {
            first: -1,
            last: -1,
            x0: source_x - END_R,
            x1: source_x + END_R,
        },
        Point::Sink => Spot {
            first: n,
            last: n,
            x0: sink_x - END_R,
            x1: sink_x + END_R,
        },
        Point::At(t) => spot(&families, &family_of, &stations, t),
    };
    let arrows: Vec<Arrow> = walk
        .edges
        .iter()
        .map(|e| {
            let (from, to) = (e.from, e.to);
            let (tail, head) = (end_spot(from), end_spot(to));
            let shape = if tail.last < head.first && tail.x1 <= head.x0 {
                if head.first == tail.last + 1 {
                    Shape::Straight
                } else {
                    Shape::Over
                }
            } else {
                Shape::Return
            };
            Arrow {
                from,
                to,
                tail,
                head,
                shape,
                label: e.label.clone(),
                bend: 0,
            }
        })
        .collect();
    let mut arrows = arrows;
    bend(&mut arrows);
    let rails = walk
        .flows
        .iter()
        .map(|v| {
            let mut members = Vec::new();
            for &t in &v.0 {
                let s = spot(&families, &family_of, &stations, t);
                members.extend(s.first as usize..=s.last as usize);
            }
            let s = run_spot(&families, &family_of, &stations, v);
            Rail {
                stations: members,
                x0: s.x0,
                x1: s.x1,
            }
        })
        .collect();
    let (pool_families, pools, mut links) =
        pool_row(program, walk, fold, &families, &family_of, &stations);
    let pool_family_of = member_family(&pool_families);
    let mut leases: Vec<LeaseLink> = Vec::new();
    for lease in &walk.leases {
        let pool = spot(&pool_families, &pool_family_of, &pools, lease.pool);
        let run = run_spot(&families, &family_of, &stations, &lease.visit);
        let l = LeaseLink {
            link: Link::between(pool, run),
            label: lease.label.clone(),
        };
        if !leases.contains(&l) {
            leases.push(l);
        }
    }

    let mut admits: Vec<Link> = Vec::new();
    for (p, pool) in program.pools.iter().enumerate() {
        let Some(e) = pool.admit_via else { continue };
        if e >= program.stages.len() {
            continue;
        }
        let link = Link::between(
            spot(&pool_families, &pool_family_of, &pools, Target::Member(p)),
            spot(&families, &family_of, &stations, Target::Member(e)),
        );
        if !admits.contains(&link) {
            admits.push(link);
        }
    }
    spread_ports(&mut links, &mut leases, &mut admits);
    let pool_top = 64;
    let pools_h = band_height(row_count(&pools), POOL_H);
    let stations_h = band_height(row_count(&stations), STATION_H);
    // Arcs pushed past the usual highest (90) take the room they rise into.
    let risen = arrows
        .iter()
        .filter(|a| a.shape == Shape::Over)
        .map(|a| (a.bend - 90) * 3 / 4)
        .fold(0, i32::max);
    let row_top = risen
        + if pools.is_empty() {
            96
        } else {
            pool_top + pools_h + 70
        };
    let below = arrows
        .iter()
        .filter(|a| a.shape == Shape::Return)
        .map(|a| a.bend * 3 / 4 + if a.label.is_some() { 30 } else { 16 })
        .fold(if walk.flows.is_empty() { 16 } else { 44 }, i32::max);
    let width = sink_x + END_R + 24;
    let width = pools.iter().map(|p| p.x + p.w + 24).fold(width, i32::max);
    // An arc's label stands right of its head.
    let width = arrows
        .iter()
        .filter(|a| a.shape == Shape::Over)
        .filter_map(|a| Some(a.head.x0 + 16 + a.label.as_ref()?.chars().count() as i32 * SMALL_W))
        .fold(width, |w, right| w.max(right + 12));
    let height = row_top + stations_h + FRAME_PAD + below + 16;
    Layout {
        arrival,
        share: program.share.map(crate::ir::Share::word),
        families,
        stations,
        pool_families,
        pools,
        arrows,
        rails,
        links,
        leases,
        admits,
        source_x,
        sink_x,
        pool_top,
        pools_h,
        row_top,
        stations_h,
        width,
        height,
    }
}

/// The height of a band of `rows` rows of boxes `h` high.
fn band_height(rows: i32, h: i32) -> i32 {
    rows * h + (rows - 1) * ROW_GAP
}

/// A link's end at a box, sorted by its other end: that end's middle and
/// left edge, then the link's index (holds, leases, admits).
type Port = (i32, i32, usize);

/// Spreads the ends of the links that share a box side by side: at a pool,
/// in the order of the runs they go to, at a run in the order of their
/// pools (of one pool: the hold, then the lease, then `admit via`), so
/// that links sharing an end neither meet nor cross.
fn spread_ports(links: &mut [Link], leases: &mut [LeaseLink], admits: &mut [Link]) {
    let mut all: Vec<&mut Link> = links
        .iter_mut()
        .chain(leases.iter_mut().map(|l| &mut l.link))
        .chain(admits.iter_mut())
        .collect();
    let ends = |s: &Spot| (s.first, s.last);
    let mut by_pool: BTreeMap<(i64, i64), Vec<Port>> = BTreeMap::new();
    let mut by_run: BTreeMap<(i64, i64), Vec<Port>> = BTreeMap::new();
    for (i, l) in all.iter().enumerate() {
        by_pool
            .entry(ends(&l.pool))
            .or_default()
            .push((l.run.mid(), l.run.x0, i));
        by_run
            .entry(ends(&l.run))
            .or_default()
            .push((l.pool.mid(), l.pool.x0, i));
    }
    let offsets = |group: &mut Vec<Port>, spot: Spot| {
        group.sort();
        let k = group.len() as i32;
        let step = ((spot.x1 - spot.x0) / (k + 1)).min(28);
        group
            .iter()
            .enumerate()
            .map(|(n, &(_, _, i))| (i, spot.mid() + (2 * n as i32 - (k - 1)) * step / 2))
            .collect::<Vec<_>>()
    };
    for group in by_pool.values_mut() {
        let spot = all[group[0].2].pool;
        for (i, x) in offsets(group, spot) {
            all[i].pool_x = x;
        }
    }
    for group in by_run.values_mut() {
        let spot = all[group[0].2].run;
        for (i, x) in offsets(group, spot) {
            all[i].run_x = x;
        }
    }
}

/// The least difference of bend between two arcs (or two returns) that
/// overlap, so that neither is drawn over the other.
const BEND_STEP: i32 = 16;

/// The horizontal extent of an arc or a return, as drawn.
fn reach(a: &Arrow) -> (i32, i32) {
    match a.shape {
        Shape::Over => (a.tail.x1 - 10, a.head.x0 + 10),
        _ => {
            let (x0, x1) = (a.tail.mid() + 8, a.head.mid() - 8);
            (x0.min(x1) - 24, x0.max(x1) + 24)
        }
    }
}

/// Bends every arc and return: longer ones further from the row (an arc
/// rises 24 px and an eighth of its length, at most 90; a return reaches
/// 64 px and a sixth of its length, at most 160; a loop onto one box is a
/// small round loop of 40), then each pushed further, shortest first,
/// until it is [`BEND_STEP`] from every one it overlaps.
fn bend(arrows: &mut [Arrow]) {
    for a in arrows.iter_mut() {
        a.bend = match a.shape {
            Shape::Straight => 0,
            Shape::Over => {
                let (x0, x1) = reach(a);
                24 + ((x1 - x0) / 8).min(66)
            }
            Shape::Return if a.tail == a.head => 40,
            Shape::Return => 64 + ((a.tail.mid() - a.head.mid()).abs() / 6).min(96),
        };
    }
    for shape in [Shape::Over, Shape::Return] {
        let mut order: Vec<usize> = (0..arrows.len())
            .filter(|&i| arrows[i].shape == shape)
            .collect();
        order.sort_by_key(|&i| {
            let (x0, x1) = reach(&arrows[i]);
            (arrows[i].bend, x1 - x0, i)
        });
        for (k, &i) in order.iter().enumerate() {
            let (x0, x1) = reach(&arrows[i]);
            let mut b = arrows[i].bend;
            loop {
                let clash = order[..k].iter().any(|&j| {
                    let (y0, y1) = reach(&arrows[j]);
                    y0 < x1 && x0 < y1 && (arrows[j].bend - b).abs() < BEND_STEP
                });
                if !clash {
                    break;
                }
                b += BEND_STEP;
            }
            arrows[i].bend = b;
        }
    }
}

/// The pool row: each pool family centred, as far as its neighbours allow,
/// over the runs it is held around; pools held around no run at the end.
fn pool_row(
    program: &Program,
    walk: &Walk,
    fold: Fold,
    stage_families: &[Family],
    stage_family_of: &[usize],
    stations: &[Station],
) -> (Vec<Family>, Vec<Station>, Vec<Link>) {
    let mut families = families_of(program.pools.iter().map(|p| p.name.as_str()));
    for f in &mut families {
        f.folded = fold.folds(f.count);
    }
    let family_of = member_family(&families);
    let runs: Vec<(Target, Spot)> = walk
        .holds
        .iter()
        .map(|(pool, v)| {
            (
                *pool,
                run_spot(stage_families, stage_family_of, stations, v),
            )
        })
        .collect();
    // Wanted centre of each family: the mean centre of the runs it is held around.
    let mut wanted: Vec<(i64, usize)> = (0..families.len()).map(|f| (i64::MAX, f)).collect();
    for (f, w) in wanted.iter_mut().enumerate() {
        let mids: Vec<i64> = runs
            .iter()
            .filter(|(t, _)| {
                let (Target::Member(m) | Target::Family(m)) = *t;
                family_of[m] == f
            })
            .map(|(_, s)| s.mid() as i64)
            .collect();
        if !mids.is_empty() {
            w.0 = mids.iter().sum::<i64>() / mids.len() as i64;
        }
    }
    wanted.sort();
    let spans: Vec<(usize, usize)> = families.iter().map(|f| (f.base, f.count)).collect();
    let text = |fi: usize, m: usize| {
        let (base, count) = spans[fi];
        let cap = program.pools[base + m.min(count - 1)].cap;
        (
            member_label(&program.pools[base].name, count, m),
            format!("cap {}", label::number(cap)),
        )
    };
    let first_x = stations.first().map_or(20, |s| s.x);
    let widths = box_widths(&families, text);
    let gaps = first_x + POOL_GAP * families.len() as i32;
    fit_columns(&mut families, &widths, gaps);
    let mut pools = Vec::new();
    let mut cursor = first_x;
    for &(mid, f) in &wanted {
        // Measure the family alone, then place it at its wanted centre.
        let mut probe = Vec::new();
        let width = place_row(&mut families, &[f], 0, &mut probe, text, |_, _| 0);
        let x = if mid == i64::MAX {
            cursor
        } else {
            cursor.max(mid as i32 - width / 2)
        };
        cursor = place_row(&mut families, &[f], x, &mut pools, text, |_, _| 0) + POOL_GAP;
    }
    let mut links: Vec<Link> = Vec::new();
    for (t, run) in runs {
        let link = Link::between(spot(&families, &family_of, &pools, t), run);
        if !links.contains(&link) {
            links.push(link);
        }
    }
    (families, pools, links)
}
