//! Writes a [`Layout`] as a standalone SVG document.
//!
//! Architecture invariant: draws only what the layout decided; every
//! coordinate is a whole pixel, so the bytes depend on the program alone.

use super::layout::{
    Arrow, CHAR_W, END_R, FRAME_PAD, Layout, POOL_H, ROW_GAP, STATION_H, Shape, Spot, Station,
};
use crate::ir::{Program, StageKind};
use std::fmt::Write;

const STYLE: &str = "\
text { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; fill: #222; }
.title { font-size: 16px; font-weight: bold; }
.note { font-size: 12px; fill: #555; }
.name { font-size: 13px; font-weight: bold; text-anchor: middle; }
.detail { font-size: 12px; fill: #444; text-anchor: middle; }
.small { font-size: 11px; fill: #555; text-anchor: middle; }
.station { stroke: #3a4a5c; stroke-width: 1.2; }
.delay { fill: #eef3fb; }
.fifo { fill: #fff3dc; }
.ps { fill: #e6f5ea; }
.frame { fill: #f4f4f4; stroke: #b8b8b8; stroke-width: 1; }
.pool { fill: #f1ecfa; stroke: #7d62a8; stroke-width: 1.2; }
.hold { stroke: #7d62a8; stroke-width: 1.2; stroke-dasharray: 5 4; fill: none; }
.path { stroke: #222; stroke-width: 1.6; fill: none; marker-end: url(#arrow); }
.rail { stroke: #b5432a; stroke-width: 3; fill: none; stroke-linejoin: round; }
.rail-label { font-size: 11px; fill: #b5432a; text-anchor: middle; }
.end { fill: #222; }
";

/// The style of arrows' conditions, written only for a program that has
/// one (the other drawings keep their bytes).
const WHEN_STYLE: &str = ".when { font-size: 11px; fill: #1f5f8b; }\n";

/// The style of leases, written only for a program that draws one (the
/// other drawings keep their bytes).
const LEASE_STYLE: &str = "\
.lease { stroke: #7d62a8; stroke-width: 1.6; stroke-dasharray: 1 4; stroke-linecap: round; fill: none; }
.lease-label { font-size: 11px; fill: #7d62a8; }
";

/// The style of engines and `admit via` links, written only for a program
/// that has a step stage (the other drawings keep their bytes).
const ENGINE_STYLE: &str = "\
.step { fill: #fde9e2; stroke: #8a3b24; stroke-width: 2.4; }
.admit { stroke: #8a3b24; stroke-width: 1.4; fill: none; marker-end: url(#arrow); }
";

/// Escapes text for an SVG text node or attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// The SVG document of a laid-out program.
pub fn write(program: &Program, layout: &Layout, title: &str) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    draw(program, layout, title, &mut out).expect("writing to a String cannot fail");
    out
}

fn draw(program: &Program, l: &Layout, title: &str, out: &mut String) -> std::fmt::Result {
    let subtitle = subtitle(program, l);
    // The title is 16px bold (about 10px a character), the subtitle 12px.
    let w = l
        .width
        .max(40 + 10 * title.chars().count() as i32)
        .max(40 + CHAR_W * subtitle.chars().count() as i32);
    let h = l.height;
    writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">"
    )?;
    writeln!(out, "<title>{}</title>", escape(title))?;
    let engines = program
        .stages
        .iter()
        .any(|s| matches!(s.kind, StageKind::Step(_)));
    let engine_style = if engines { ENGINE_STYLE } else { "" };
    let lease_style = if l.leases.is_empty() { "" } else { LEASE_STYLE };
    let when_style = if l.arrows.iter().any(|a| a.label.is_some()) {
        WHEN_STYLE
    } else {
        ""
    };
    writeln!(
        out,
        "<style>\n{STYLE}{engine_style}{lease_style}{when_style}</style>"
    )?;
    writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"8\" markerHeight=\"8\" markerUnits=\"userSpaceOnUse\" orient=\"auto\">\
         <path d=\"M0,0 L10,5 L0,10 z\" fill=\"#222\"/></marker></defs>"
    )?;
    writeln!(out, "<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>")?;
    writeln!(
        out,
        "<text class=\"title\" x=\"20\" y=\"28\">{}</text>",
        escape(title)
    )?;
    writeln!(
        out,
        "<text class=\"note\" x=\"20\" y=\"46\">{}</text>",
        escape(&subtitle)
    )?;

    // Holds first, so that boxes cover the ends of their links.
    for link in &l.links {
        let (x0, y0) = (link.pool_x, pool_bottom(l, &link.pool));
        let (x1, y1) = (link.run_x, top(l, &link.run));
        writeln!(out, "<path class=\"hold\" d=\"M{x0},{y0} L{x1},{y1}\"/>")?;
    }
    // A lease: the pool's units stay with the session for these runs. The
    // label lies along the link, above it near its run (each lease its own
    // label), turned by whole degrees and always upright.
    for lease in &l.leases {
        let link = &lease.link;
        let (x0, y0) = (link.pool_x, pool_bottom(l, &link.pool));
        let (x1, y1) = (link.run_x, top(l, &link.run));
        writeln!(out, "<path class=\"lease\" d=\"M{x0},{y0} L{x1},{y1}\"/>")?;
        let (dx, dy) = (f64::from(x1 - x0), f64::from(y1 - y0));
        let mut angle = dy.atan2(dx).to_degrees().round() as i32;
        if angle > 90 {
            angle -= 180;
        }
        let (x, y) = (x0 + (x1 - x0) * 4 / 5, y0 + (y1 - y0) * 4 / 5);
        writeln!(
            out,
            "<text class=\"lease-label\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate({angle} {x} {y})\">{}</text>",
            y - 4,
            escape(&lease.label)
        )?;
    }
    // `admit via`: the engine's iterations admit the pool's queue.
    for link in &l.admits {
        let (x0, y0) = (link.pool_x, pool_bottom(l, &link.pool));
        let (x1, y1) = (link.run_x, top(l, &link.run));
        writeln!(out, "<path class=\"admit\" d=\"M{x0},{y0} L{x1},{y1}\"/>")?;
        writeln!(
            out,
            "<text class=\"small\" x=\"{}\" y=\"{}\">admit via</text>",
            (x0 + x1) / 2 + 34,
            (y0 + y1) / 2
        )?;
    }
    for f in l.pool_families.iter().filter(|f| f.is_framed()) {
        frame(out, &l.pools, f.stations, l.pool_top, POOL_H)?;
    }
    for p in &l.pools {
        boxed(out, p, "pool", row_y(l.pool_top, p.row, POOL_H), POOL_H)?;
    }
    for f in &l.families {
        if f.is_framed() {
            frame(out, &l.stations, f.stations, l.row_top, STATION_H)?;
        } else if f.folded {
            // A collapsed family: two shadows behind its one box say "many".
            let s = &l.stations[f.stations.0];
            for k in [2, 1] {
                let (x, y) = (s.x + 4 * k, l.row_top - 4 * k);
                writeln!(
                    out,
                    "<rect class=\"station {}\" x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{STATION_H}\" rx=\"6\"/>",
                    kind_class(program, f.base),
                    s.w
                )?;
            }
        }
    }
    for s in &l.stations {
        let class = format!("station {}", kind_class(program, l.families[s.family].base));
        boxed(
            out,
            s,
            &class,
            row_y(l.row_top, s.row, STATION_H),
            STATION_H,
        )?;
    }
    for r in &l.rails {
        let (x0, x1) = (r.x0, r.x1);
        // Under the rail's own stations, not under a taller grid elsewhere.
        let low = r
            .stations
            .iter()
            .map(|&s| l.stations[s].row)
            .max()
            .unwrap_or(0);
        let rail_y = row_y(l.row_top, low, STATION_H) + STATION_H + FRAME_PAD + 8;
        writeln!(
            out,
            "<path class=\"rail\" d=\"M{x0},{} L{x0},{rail_y} L{x1},{rail_y} L{x1},{}\"/>",
            rail_y - 7,
            rail_y - 7
        )?;
        let label = match l.share {
            Some(share) => format!("flow, share {share}"),
            None => "flow".to_string(),
        };
        writeln!(
            out,
            "<text class=\"rail-label\" x=\"{}\" y=\"{}\">{label}</text>",
            (x0 + x1) / 2,
            rail_y + 15
        )?;
    }
    endpoints(out, l)?;
    for a in &l.arrows {
        let d = match a.shape {
            Shape::Straight => {
                let (y0, y1) = (middle(l, &a.tail), middle(l, &a.head));
                format!("M{},{y0} L{},{y1}", a.tail.x1, a.head.x0)
            }
            Shape::Over => {
                let (x0, y0) = (a.tail.x1 - 10, top(l, &a.tail));
                let (x1, y1) = (a.head.x0 + 10, top(l, &a.head));
                let c = y0.min(y1) - a.bend;
                format!("M{x0},{y0} C{x0},{c} {x1},{c} {x1},{y1}")
            }
            Shape::Return => {
                // Leave right of the tail's middle, enter left of the head's.
                let (x0, y0) = (a.tail.mid() + 8, bottom(l, &a.tail));
                let (x1, y1) = (a.head.mid() - 8, bottom(l, &a.head));
                // An end above the bottom of the row's tallest grid drops
                // to it first, so that the curve passes under the grid.
                let low = l.row_top + l.stations_h;
                let (b0, b1) = (y0.max(low), y1.max(low));
                let c = b0.max(b1) + a.bend;
                // A loop onto the same box bulges sideways to look round.
                let bulge = if a.tail == a.head { 24 } else { 0 };
                let drop = |x: i32, y: i32, b: i32| {
                    if b > y {
                        format!(" L{x},{b}")
                    } else {
                        String::new()
                    }
                };
                let (down, up) = (drop(x0, y0, b0), drop(x1, y1, b1));
                let up = if up.is_empty() {
                    String::new()
                } else {
                    format!(" L{x1},{y1}")
                };
                format!(
                    "M{x0},{y0}{down} C{},{c} {},{c} {x1},{}{up}",
                    x0 + bulge,
                    x1 - bulge,
                    b1
                )
            }
        };
        writeln!(out, "<path class=\"path\" d=\"{d}\"/>")?;
        if let Some(text) = &a.label {
            when(out, l, a, text)?;
        }
    }
    writeln!(out, "</svg>")
}

/// An arrow's condition: over a straight arrow's middle, right of where an
/// arc comes down onto its head, under the lowest point of a return.
fn when(out: &mut String, l: &Layout, a: &Arrow, text: &str) -> std::fmt::Result {
    let (x, y, anchor) = match a.shape {
        Shape::Straight => (
            (a.tail.x1 + a.head.x0) / 2,
            l.row_top + STATION_H / 2 - 6,
            "middle",
        ),
        Shape::Over => (a.head.x0 + 16, top(l, &a.head) - 8, "start"),
        Shape::Return => {
            let low = l.row_top + l.stations_h;
            let y = bottom(l, &a.tail).max(bottom(l, &a.head)).max(low) + a.bend * 3 / 4;
            ((a.tail.mid() + a.head.mid()) / 2, y + 15, "middle")
        }
    };
    writeln!(
        out,
        "<text class=\"when\" x=\"{x}\" y=\"{y}\" text-anchor=\"{anchor}\">{}</text>",
        escape(text)
    )
}

/// `3 stages, 2 pools, share maxmin`.
fn subtitle(program: &Program, l: &Layout) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![
        count(program.stages.len(), "stage"),
        count(program.pools.len(), "pool"),
    ];
    if let Some(share) = l.share {
        parts.push(format!("share {share}"));
    }
    parts.join(", ")
}

/// The CSS class of a stage family's kind.
fn kind_class(program: &Program, base: usize) -> &'static str {
    match program.stages[base].kind {
        StageKind::Delay => "delay",
        StageKind::Fifo(_) => "fifo",
        StageKind::Ps(_) => "ps",
        StageKind::Step(_) => "step",
    }
}

/// The frame padding of a spot: a family's frame, or none for one box.
fn pad(spot: &Spot) -> i32 {
    if spot.last > spot.first { FRAME_PAD } else { 0 }
}

/// Whether a spot is the source or the sink (they have no boxes).
fn is_end(l: &Layout, spot: &Spot) -> bool {
    spot.first < 0 || spot.first >= l.stations.len() as i64
}

/// The top of row `row` of a band of boxes `h` high from `top`.
fn row_y(top: i32, row: i32, h: i32) -> i32 {
    top + row * (h + ROW_GAP)
}

/// The rows a spot's boxes stand in, first and last.
fn rows(boxes: &[Station], spot: &Spot) -> (i32, i32) {
    let (a, b) = (spot.first as usize, spot.last as usize);
    boxes[a..=b]
        .iter()
        .fold((i32::MAX, 0), |(lo, hi), s| (lo.min(s.row), hi.max(s.row)))
}

/// The top edge of a spot in the station row.
fn top(l: &Layout, spot: &Spot) -> i32 {
    if is_end(l, spot) {
        l.row_top + STATION_H / 2 - END_R
    } else {
        row_y(l.row_top, rows(&l.stations, spot).0, STATION_H) - pad(spot)
    }
}

/// The bottom edge of a spot in the station row.
fn bottom(l: &Layout, spot: &Spot) -> i32 {
    if is_end(l, spot) {
        l.row_top + STATION_H / 2 + END_R
    } else {
        row_y(l.row_top, rows(&l.stations, spot).1, STATION_H) + STATION_H + pad(spot)
    }
}

/// Where a straight arrow meets a spot: the middle of its top row.
fn middle(l: &Layout, spot: &Spot) -> i32 {
    let row = if is_end(l, spot) {
        0
    } else {
        rows(&l.stations, spot).0
    };
    row_y(l.row_top, row, STATION_H) + STATION_H / 2
}

/// The bottom edge of a spot in the pool row.
fn pool_bottom(l: &Layout, spot: &Spot) -> i32 {
    row_y(l.pool_top, rows(&l.pools, spot).1, POOL_H) + POOL_H + pad(spot)
}

/// A box with its two lines of text.
fn boxed(out: &mut String, s: &Station, class: &str, y: i32, h: i32) -> std::fmt::Result {
    let mid = s.x + s.w / 2;
    writeln!(
        out,
        "<rect class=\"{class}\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{h}\" rx=\"6\"/>",
        s.x, s.w
    )?;
    let (name_y, detail_y) = (y + h / 2 - 3, y + h / 2 + 13);
    writeln!(
        out,
        "<text class=\"name\" x=\"{mid}\" y=\"{name_y}\">{}</text>",
        escape(&s.label)
    )?;
    writeln!(
        out,
        "<text class=\"detail\" x=\"{mid}\" y=\"{detail_y}\">{}</text>",
        escape(&s.detail)
    )
}

/// The frame around a family's member boxes (all the rows of its grid).
fn frame(
    out: &mut String,
    boxes: &[Station],
    (a, b): (usize, usize),
    y: i32,
    h: i32,
) -> std::fmt::Result {
    let members = &boxes[a..=b];
    let x0 = members.iter().map(|s| s.x).fold(i32::MAX, i32::min) - FRAME_PAD;
    let x1 = members.iter().map(|s| s.x + s.w).fold(0, i32::max) + FRAME_PAD;
    let rows = members.iter().map(|s| s.row + 1).fold(1, i32::max);
    writeln!(
        out,
        "<rect class=\"frame\" x=\"{x0}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"9\"/>",
        y - FRAME_PAD,
        x1 - x0,
        row_y(0, rows - 1, h) + h + 2 * FRAME_PAD
    )
}

/// The source (sessions arrive) and the sink (sessions end).
fn endpoints(out: &mut String, l: &Layout) -> std::fmt::Result {
    let y = l.row_top + STATION_H / 2;
    let (sx, kx) = (l.source_x, l.sink_x);
    writeln!(
        out,
        "<circle class=\"end\" cx=\"{sx}\" cy=\"{y}\" r=\"{END_R}\"/>"
    )?;
    writeln!(
        out,
        "<text class=\"small\" x=\"{sx}\" y=\"{}\">arrive</text>",
        y - END_R - 6
    )?;
    writeln!(
        out,
        "<text class=\"small\" x=\"{sx}\" y=\"{}\">{}</text>",
        y + END_R + 15,
        escape(&l.arrival)
    )?;
    writeln!(
        out,
        "<circle cx=\"{kx}\" cy=\"{y}\" r=\"{END_R}\" fill=\"#fff\" stroke=\"#222\" stroke-width=\"2\"/>"
    )?;
    writeln!(
        out,
        "<circle class=\"end\" cx=\"{kx}\" cy=\"{y}\" r=\"{}\"/>",
        END_R - 6
    )?;
    writeln!(
        out,
        "<text class=\"small\" x=\"{kx}\" y=\"{}\">end</text>",
        y + END_R + 15
    )
}
