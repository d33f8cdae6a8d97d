//! The deployment view: `serq draw` draws a program's stations, pools and
//! the path every session runs, as a standalone SVG.
//!
//! Architecture invariant: the view reads only the IR ([`crate::ir::Program`]),
//! never the AST, and knows nothing of the engine; a program that arrives as
//! IR JSON draws exactly as the one linked from source. The output is
//! deterministic: no map whose order can reach it, whole-pixel coordinates,
//! numbers printed by `f64`'s shortest round-trip `Display`.
//!
//! # What is drawn
//!
//! - **The station row.** The stage families in the order the session's
//!   path first reaches them ([`row_order`]; those it never reaches last, in
//!   declaration order), so that the path's arrows run left to right. One
//!   box per member, labelled `name` or `name[i]` and its kind (`delay`,
//!   `fifo(c)`, `ps(φ)`; the fill colour says the kind too): the members
//!   of a family of 2 to [`COLLAPSE_ABOVE`] stand side by side in a grey
//!   frame, and a larger family is *folded* into one box `name ×N` (its
//!   member count) with two shadows behind it, so a 500-member array costs
//!   one box ([`Fold`]: `--by-family` folds every family, `--members`
//!   none). A family whose members would make the row wider than
//!   [`SCREEN_W`] stands in a grid of fewer columns, so a large deployment
//!   drawn member by member fits a screen's width.
//! - **The path.** The session block is walked in program order: each run
//!   is an arrow from the previous run's last station to its first. A
//!   reference with a constant index (or a family of one) points at the
//!   member; one with a computed index (`P[i]`) at the family's frame. Both
//!   arms of a branch are drawn and join afterwards; a loop's body is walked
//!   once and an arrow goes back from its end to its start; `end;` and the
//!   end of the session block lead to the sink (a ringed dot), and the source
//!   (a dot, the arrival process under it) leads to the first run. An arrow
//!   to the next box on the right is straight, one that passes other boxes
//!   arcs over the row, and one that goes leftwards (or onto itself) is a
//!   *return*, curved below the row. Arcs (and returns) that overlap are
//!   bent apart. An arrow taken only under a condition says which: into a
//!   branch's arm the guard (`more`, `with (0.3)`) or `else`, and `repeat`
//!   on a loop's way back; an arrow both arms take has no label.
//! - **Flows.** A run over several stages is one job: its families stand
//!   side by side in the run's order right after its first stage
//!   ([`row_order`]), closer together than other families, with a rail (a
//!   bracket under them, labelled with the share policy) and no arrow
//!   between them: the session enters at the first and leaves from the last.
//!   A family placed earlier is not moved again; a later flow that cannot
//!   then be made adjacent gets a rail over the stations between.
//! - **Pools.** A pool row above the stations (`name[i]`, `cap c`), each
//!   family centred over the runs that happen inside a hold on it, and a
//!   dashed link from the pool to each such run (to the whole span of a
//!   flow). Pools held around no run stand at the end of the row. The links
//!   that share a box leave (or reach) it side by side, in the order of
//!   their other ends, so two links cross only where their pools and runs
//!   stand in opposite orders.
//! - **Leases.** `hold … { } lease P (t)` keeps P's units after the body: a
//!   dotted link labelled `lease` (or `lease (t)`) goes from P to every run
//!   made while the session keeps them (until the `release P` a transfer
//!   writes, or the end); a lease no run happens in is drawn on the run
//!   it follows.

mod label;
mod layout;
mod path;
mod svg;

pub use layout::{
    Arrow, COLLAPSE_ABOVE, Family, Fold, Layout, LeaseLink, Link, Rail, SCREEN_W, Shape, Spot,
    Station, row_order,
};
pub use path::{Edge, Lease, Point, Target, Visit, Walk, walk};

use crate::ir::Program;

/// Lays out a program's deployment view (the data the SVG is drawn from),
/// its large families folded ([`Fold::Auto`]).
pub fn layout(program: &Program) -> Layout {
    layout_folded(program, Fold::Auto)
}

/// Lays out a program's deployment view, its families folded as `fold` says.
pub fn layout_folded(program: &Program, fold: Fold) -> Layout {
    layout::layout(program, &path::walk(program), fold)
}

/// The deployment view of a program as a standalone SVG document, with
/// `title` (usually the file's name) as its title and heading, its large
/// families folded ([`Fold::Auto`]).
pub fn svg(program: &Program, title: &str) -> String {
    svg_folded(program, title, Fold::Auto)
}

/// The deployment view as SVG, its families folded as `fold` says.
pub fn svg_folded(program: &Program, title: &str, fold: Fold) -> String {
    svg::write(program, &layout_folded(program, fold), title)
}
