//! The deployment view (`serq draw`): golden SVG files for every example,
//! and the layout rules of flows and returns.
//!
//! Every program `examples/<dir>/<name>.sq` must draw byte for byte as
//! `tests/view/<dir>__<name>.svg`. After a deliberate change to the drawing,
//! rewrite the golden files with
//!
//! ```text
//! SERQ_BLESS=1 cargo test --test view
//! ```
//!
//! and look at the pictures (and the diff) before committing them.

use serq::Overrides;
use serq::view::{self, Layout, Point, Shape};
use std::path::{Path, PathBuf};

fn compile(source: &str) -> serq::ValidProgram {
    serq::compile_source(source, &Overrides::default()).unwrap_or_else(|d| {
        panic!("the test program links: {d:?}");
    })
}

/// Every example program, sorted: (path relative to the crate, golden file).
fn examples() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let dir_name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("readable examples directory")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "sq"))
            .collect();
        files.sort();
        for file in files {
            let stem = file
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let golden = root
                .join("tests/view")
                .join(format!("{dir_name}__{stem}.svg"));
            out.push((format!("examples/{dir_name}/{stem}.sq"), golden));
        }
    }
    out
}

/// Every example program, linked.
fn example_programs() -> Vec<serq::ValidProgram> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    examples()
        .into_iter()
        .map(|(name, _)| {
            compile(&std::fs::read_to_string(root.join(&name)).expect("readable example"))
        })
        .collect()
}

#[test]
fn every_example_draws_as_its_golden_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var("SERQ_BLESS").is_ok_and(|v| v == "1");
    let examples = examples();
    assert!(examples.len() >= 9, "examples/ holds the example programs");
    let mut failures = Vec::new();
    for (name, golden) in examples {
        let source = std::fs::read_to_string(root.join(&name)).expect("readable example");
        let svg = view::svg(&compile(&source), &name);
        if bless {
            std::fs::write(&golden, &svg).expect("the golden file is writable");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == svg => {}
            Ok(_) => failures.push(format!("{name}: differs from {}", golden.display())),
            Err(_) => failures.push(format!("{name}: no golden file {}", golden.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(rewrite with SERQ_BLESS=1 cargo test --test view, then look at the pictures)",
        failures.join("\n")
    );
}

#[test]
fn ir_json_draws_as_the_source_it_came_from() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("examples/pd-disaggregation/pull_maxmin.sq"))
        .expect("readable example");
    let linked = compile(&source);
    let loaded = serq::compile_ir(&linked.to_json(), &Overrides::default()).expect("IR reloads");
    assert_eq!(view::svg(&linked, "x"), view::svg(&loaded, "x"));
}

/// The labels of the station row, left to right.
fn row(layout: &Layout) -> Vec<&str> {
    layout.stations.iter().map(|s| s.label.as_str()).collect()
}

/// Declared a, b, c, d; the path runs a, then the flow `run d, b`, then c,
/// so the row reads a d b (the flow's stations in its run's order) c.
const REORDERED: &str = "
stage a : delay;
stage b : ps(1);
stage c : delay;
stage d : ps(2);
share maxmin;
workload { arrive batch(1); }
session { run a (1); run d, b (1); run c (1); end; }
run { horizon 10; }
";

#[test]
fn a_flows_stations_are_adjacent_in_run_order() {
    let layout = view::layout(&compile(REORDERED));
    assert_eq!(row(&layout), ["a", "d", "b", "c"]);
    assert_eq!(layout.rails.len(), 1);
    // d is station 1 and b station 2: adjacent, in the run's order.
    assert_eq!(layout.rails[0].stations, [1, 2]);

    // Families: the flow's members stand together, all of egress then all of ingress.
    let families = compile(
        "stage ingress[2] : ps(1);
         stage P : delay;
         stage egress[2] : ps(1);
         share bottleneck;
         workload { arrive batch(2); }
         session { set j = serial; run P (1); run egress[j], ingress[1 - j] (1); }
         run { horizon 10; }",
    );
    let layout = view::layout(&families);
    assert_eq!(
        row(&layout),
        ["P", "egress[0]", "egress[1]", "ingress[0]", "ingress[1]"]
    );
    assert_eq!(layout.rails[0].stations, [1, 2, 3, 4]);
}

#[test]
fn stations_stand_in_the_order_the_path_reaches_them() {
    // Declared D before P, NICs last: drawn P, the read over both NICs, D.
    let program = compile(
        "stage D[2] : ps(1);
         stage think : delay;
         stage P[2] : ps(1);
         stage egress[2] : ps(1);
         stage ingress[2] : ps(1);
         stage idle : fifo;
         share maxmin;
         workload { arrive poisson(1); }
         session {
           set i = serial - 2 * floor(serial / 2);
           loop {
             run P[i] (1);
             run egress[i], ingress[1 - i] (1);
             run D[1 - i] (1);
             branch with (0.5) { run think (1); } else { end; }
           }
         }
         run { horizon 10; }",
    );
    let layout = view::layout(&program);
    // idle, which the path never reaches, stands last.
    assert_eq!(
        row(&layout),
        [
            "P[0]",
            "P[1]",
            "egress[0]",
            "egress[1]",
            "ingress[0]",
            "ingress[1]",
            "D[0]",
            "D[1]",
            "think",
            "idle"
        ]
    );
    // Every arrow runs rightwards but the loop's way back, think -> P.
    let returns: Vec<_> = layout
        .arrows
        .iter()
        .filter(|a| a.shape == Shape::Return)
        .map(|a| a.label.as_deref())
        .collect();
    assert_eq!(returns, [Some("repeat")]);

    // nixl_pull.sq at 2 + 2, declared P, D, egress, ingress, think: drawn
    // along the path, so its one return is the next turn's.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nixl = std::fs::read_to_string(root.join("examples/pd-disaggregation/nixl_pull.sq"))
        .expect("readable example");
    let two = Overrides {
        sets: vec![("NP".into(), 2.0), ("ND".into(), 2.0)],
        ..Overrides::default()
    };
    let layout = view::layout(&serq::compile_source(&nixl, &two).expect("links at 2 x 2"));
    let families: Vec<&str> = layout
        .stations
        .iter()
        .map(|s| s.label.split('[').next().unwrap_or_default())
        .collect();
    let mut order = families.clone();
    order.dedup();
    assert_eq!(order, ["P", "egress", "ingress", "D", "think"]);
    let returns: Vec<_> = layout
        .arrows
        .iter()
        .filter(|a| a.shape == Shape::Return)
        .map(|a| a.label.as_deref())
        .collect();
    assert_eq!(returns, [Some("repeat")]);
}

/// nixl_pull.sq with `--set`s.
fn nixl_pull(np: f64, nd: f64) -> serq::ValidProgram {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nixl = std::fs::read_to_string(root.join("examples/pd-disaggregation/nixl_pull.sq"))
        .expect("readable example");
    let sets = Overrides {
        sets: vec![("NP".into(), np), ("ND".into(), nd)],
        ..Overrides::default()
    };
    serq::compile_source(&nixl, &sets).expect("nixl_pull links")
}

#[test]
fn families_above_four_members_fold_by_default_and_the_flags_force_either() {
    use serq::view::Fold;
    // At its defaults, 8 + 8: every family of 8 is one box.
    let folded = view::layout(&nixl_pull(8.0, 8.0));
    assert_eq!(
        row(&folded),
        ["P ×8", "egress ×8", "ingress ×8", "D ×8", "think"]
    );
    assert_eq!(folded.pools.len(), 2);
    assert!(folded.width <= view::SCREEN_W, "{}", folded.width);
    // Four members are drawn one by one.
    let four = view::layout(&nixl_pull(4.0, 4.0));
    assert_eq!(four.stations.len(), 4 * 4 + 1);
    // --by-family folds even a family of two.
    let by_family = view::layout_folded(&nixl_pull(2.0, 2.0), Fold::ByFamily);
    assert_eq!(
        row(&by_family),
        ["P ×2", "egress ×2", "ingress ×2", "D ×2", "think"]
    );
    // --members draws all 33 stations and 16 pools of the defaults.
    let members = view::layout_folded(&nixl_pull(8.0, 8.0), Fold::Members);
    assert_eq!((members.stations.len(), members.pools.len()), (33, 16));
    let svg = view::svg_folded(&nixl_pull(8.0, 8.0), "x", Fold::Members);
    assert!(svg.contains(">P[7]</text>") && svg.contains(">kvD[7]</text>"));
    assert!(!svg.contains('×'), "no folded box");
}

#[test]
fn a_large_deployment_drawn_member_by_member_fits_a_screens_width_in_rows() {
    use serq::view::Fold;
    for n in [8.0, 32.0, 500.0] {
        let l = view::layout_folded(&nixl_pull(n, n), Fold::Members);
        assert!(l.width <= view::SCREEN_W, "{n}: {}", l.width);
        assert_eq!(l.stations.len(), 4 * n as usize + 1);
    }
    // At 8 + 8 (one row of them all would be 5 502 px): every family of 8
    // stands in 4 rows of 2, so P, the NICs and D read alike.
    let l = view::layout_folded(&nixl_pull(8.0, 8.0), Fold::Members);
    let rows = |name: &str| {
        l.stations
            .iter()
            .filter(|s| s.label.starts_with(&format!("{name}[")))
            .map(|s| s.row)
            .max()
    };
    for name in ["P", "egress", "ingress", "D"] {
        assert_eq!(rows(name), Some(3), "{name}");
    }
    // P[1] stands right of P[0] in the top row, P[2] under P[0].
    let at = |label: &str| {
        let s = l.stations.iter().find(|s| s.label == label).expect("drawn");
        (s.x, s.row)
    };
    assert_eq!(at("P[1]").1, 0);
    assert!(at("P[1]").0 > at("P[0]").0);
    assert_eq!(at("P[2]"), (at("P[0]").0, 1));
}

#[test]
fn the_members_drawing_of_nixl_pull_is_its_golden_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = root.join("tests/view/members/pd-disaggregation__nixl_pull.svg");
    let svg = view::svg_folded(
        &nixl_pull(8.0, 8.0),
        "examples/pd-disaggregation/nixl_pull.sq",
        serq::view::Fold::Members,
    );
    if std::env::var("SERQ_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(golden.parent().expect("a directory")).expect("writable");
        std::fs::write(&golden, &svg).expect("the golden file is writable");
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("the golden file exists");
    assert!(
        expected == svg,
        "differs from {} (rewrite with SERQ_BLESS=1 cargo test --test view)",
        golden.display()
    );
}

#[test]
fn no_arrow_runs_between_the_stations_of_one_flow() {
    let mut programs = vec![compile(REORDERED)];
    programs.extend(example_programs());
    let mut rails = 0;
    for program in &programs {
        let layout = view::layout(program);
        for rail in &layout.rails {
            rails += 1;
            let inside = |first: i64, last: i64| {
                (first..=last).all(|s| s >= 0 && rail.stations.contains(&(s as usize)))
            };
            for a in &layout.arrows {
                assert!(
                    !(inside(a.tail.first, a.tail.last) && inside(a.head.first, a.head.last)),
                    "an arrow {:?} -> {:?} runs inside a flow",
                    a.from,
                    a.to
                );
            }
        }
    }
    // REORDERED, after.sq, capacity.sq, pull_bottleneck.sq, pull_maxmin.sq,
    // nixl_pull.sq, hardware/pd_bytes.sq and slo.sq have one flow each.
    assert_eq!(rails, 8);
}

#[test]
fn a_leftward_arrow_is_a_return() {
    let layout = view::layout(&compile(REORDERED));
    // Row a d b c, along the path: no arrow goes back.
    assert!(layout.arrows.iter().all(|a| a.shape != Shape::Return));
    // A branch that skips a run: a -> c passes over b: an arc, not a
    // line through it.
    let skipping = view::layout(&compile(
        "stage a : delay; stage b : delay; stage c : delay;
         workload { arrive poisson(1); }
         session { run a (1); branch with (0.5) { run b (1); } run c (1); }
         run { horizon 10; }",
    ));
    assert_eq!(row(&skipping), ["a", "b", "c"]);
    let over = skipping
        .arrows
        .iter()
        .find(|a| a.tail.first == 0 && a.head.first == 2);
    assert_eq!(over.map(|a| a.shape), Some(Shape::Over));

    // A loop's back edge onto an earlier station is a return too.
    let looped = view::layout(&compile(
        "stage s : fifo; stage t : delay;
         workload { arrive poisson(1); }
         session { loop { run s (1); run t (1); branch (now > 5) { end; } } }
         run { horizon 10; }",
    ));
    for layout in [&layout, &looped] {
        for a in &layout.arrows {
            if a.head.mid() < a.tail.mid() {
                assert_eq!(a.shape, Shape::Return, "{:?} -> {:?}", a.from, a.to);
            } else {
                assert_ne!(a.shape, Shape::Return, "{:?} -> {:?}", a.from, a.to);
            }
        }
    }
    let returns: Vec<_> = looped
        .arrows
        .iter()
        .filter(|a| a.shape == Shape::Return)
        .collect();
    assert_eq!(returns.len(), 1, "t -> s closes the loop");
    assert!(matches!(returns[0].to, Point::At(_)));
}

#[test]
fn a_large_family_is_one_station() {
    let layout = view::layout(&compile(
        "pool kv[500] { cap 10; }
         stage P[500] : fifo(2);
         workload { arrive poisson(1); }
         session { choose i in 500 by (queue(P[i]), i); hold kv[i] (1) { run P[i] (1); } }
         run { horizon 10; }",
    ));
    // The count, not a range that reads as 501 members.
    assert_eq!(row(&layout), ["P ×500"]);
    assert_eq!(layout.stations[0].detail, "fifo(2)");
    assert_eq!(layout.pools.len(), 1);
    assert_eq!(layout.pools[0].label, "kv ×500");
    assert_eq!(layout.links.len(), 1);
}

#[test]
fn a_step_stage_is_drawn_as_an_engine_and_admit_via_links_its_pool_to_it() {
    let program = compile(
        "pool kv { cap 4096; block 16; admit via engine; } pool slots { cap 8; }
         stage engine : step { budget 8192; cost 0.01; memory kv; }
         workload { arrive batch(1); }
         session { hold slots (1) { hold kv (10) { run engine prefill (10) growing kv; } } }
         run { horizon 10; }",
    );
    let l: Layout = view::layout(&program);
    // The engine's box shows its budget and its memory pool.
    assert_eq!(l.stations[0].detail, "step budget 8192 · kv");
    // One `admit via` link, from kv (the first pool box) down to the engine.
    assert_eq!(l.admits.len(), 1);
    assert_eq!(l.admits[0].pool.first, 0);
    assert_eq!((l.admits[0].run.first, l.admits[0].run.last), (0, 0));
    let svg = view::svg(&program, "engine");
    assert!(svg.contains("class=\"station step\""), "{svg}");
    assert!(svg.contains("class=\"admit\""), "{svg}");
}

/// The label of the arrow from the station labelled `from` to the one
/// labelled `to` (`end` for the sink).
fn label_of<'a>(layout: &'a Layout, from: &str, to: &str) -> Option<&'a str> {
    let at = |name: &str| {
        if name == "end" {
            return Some(layout.stations.len() as i64);
        }
        layout
            .stations
            .iter()
            .position(|s| s.label == name)
            .map(|i| i as i64)
    };
    let (tail, head) = (at(from).expect("tail drawn"), at(to).expect("head drawn"));
    let arrow = layout
        .arrows
        .iter()
        .find(|a| a.tail.first == tail && a.head.first == head)
        .unwrap_or_else(|| panic!("an arrow {from} -> {to}"));
    arrow.label.as_deref()
}

#[test]
fn branch_arrows_carry_their_condition_and_a_loops_way_back_says_repeat() {
    let layout = view::layout(&compile(
        "stage a : delay; stage b : delay; stage c : delay; stage u : delay;
         workload { arrive poisson(1); init { set x = 1; set more = 1; } }
         session {
           loop {
             branch (x > 2) { run a (1); } else { run b (1); }
             branch with (0.3) { run c (1); }
             branch (x == 1) { set x = 2; }
             run u (1);
             branch (more) { } else { end; }
           }
         }
         run { horizon 10; }",
    ));
    // Into each arm: its guard, or `else`.
    assert_eq!(label_of(&layout, "a", "c"), Some("with (0.3)"));
    assert_eq!(label_of(&layout, "b", "c"), Some("with (0.3)"));
    assert_eq!(label_of(&layout, "a", "u"), Some("else"));
    assert_eq!(label_of(&layout, "c", "u"), None);
    // `end;` in the else arm: the sink's arrow says so.
    assert_eq!(label_of(&layout, "u", "end"), Some("else"));
    // The way back to the loop's first runs, from the empty `more` arm.
    assert_eq!(label_of(&layout, "u", "a"), Some("repeat"));
    assert_eq!(label_of(&layout, "u", "b"), Some("repeat"));
    // The loop's entry from the source is taken once: the first branch's guards.
    let entries: Vec<Option<&str>> = layout
        .arrows
        .iter()
        .filter(|a| a.from == Point::Source)
        .map(|a| a.label.as_deref())
        .collect();
    assert_eq!(entries, [Some("x > 2"), Some("else")]);

    // Both arms lead to the same run: the arrow is always taken, no label.
    let same = view::layout(&compile(
        "stage s : fifo;
         workload { arrive poisson(1); }
         session { set t0 = now; branch (t0 > 1) { observe late = t0; } run s (1); }
         run { horizon 10; }",
    ));
    assert!(same.arrows.iter().all(|a| a.label.is_none()));
    let svg = view::svg(&compile(LEASED), "x");
    assert!(!svg.contains("class=\"when\""), "{svg}");
}

/// A prefill's KV leased until the transfer after it has read it; a slot
/// leased for 2 after the decode, with no run while it lasts.
const LEASED: &str = "
pool kvP { cap 10; } pool kvD { cap 10; } pool slot { cap 2; }
stage P : ps(1); stage L : ps(1); stage D : ps(1);
workload { arrive poisson(1); }
session {
  hold kvP (4) { run P (1); } lease kvP (inf);
  hold kvD (4) { run L (1); load kvD (4); release kvP; run D (1); }
  hold slot (1) { run D (1); } lease slot (2);
}
run { horizon 10; }
";

#[test]
fn a_lease_links_its_pool_to_the_runs_made_while_it_keeps_the_units() {
    let layout = view::layout(&compile(LEASED));
    let at = |row: &[view::Station], name: &str| {
        row.iter().position(|s| s.label == name).expect("drawn") as i64
    };
    let station = |name: &str| at(&layout.stations, name);
    let pool = |name: &str| at(&layout.pools, name);
    let leases: Vec<(i64, i64, &str)> = layout
        .leases
        .iter()
        .map(|l| (l.link.pool.first, l.link.run.first, l.label.as_str()))
        .collect();
    // kvP's units stay with the session for L (released before D); slot's
    // lease has no run in it, so it is drawn on the run it follows.
    assert_eq!(
        leases,
        [
            (pool("kvP"), station("L"), "lease"),
            (pool("slot"), station("D"), "lease (2)"),
        ]
    );
    let svg = view::svg(&compile(LEASED), "leased");
    assert_eq!(svg.matches("class=\"lease\"").count(), 2, "{svg}");
    assert!(svg.contains(">lease (2)</text>"), "{svg}");
}

/// Whether segments a-b and c-d meet (touching counts).
fn meet(a: (i32, i32), b: (i32, i32), c: (i32, i32), d: (i32, i32)) -> bool {
    let cross = |o: (i32, i32), p: (i32, i32), q: (i32, i32)| {
        let v = i64::from(p.0 - o.0) * i64::from(q.1 - o.1)
            - i64::from(p.1 - o.1) * i64::from(q.0 - o.0);
        v.signum()
    };
    let within = |o: (i32, i32), p: (i32, i32), q: (i32, i32)| {
        q.0 >= o.0.min(p.0) && q.0 <= o.0.max(p.0) && q.1 >= o.1.min(p.1) && q.1 <= o.1.max(p.1)
    };
    let (d1, d2) = (cross(c, d, a), cross(c, d, b));
    let (d3, d4) = (cross(a, b, c), cross(a, b, d));
    if d1 * d2 < 0 && d3 * d4 < 0 {
        return true;
    }
    (d1 == 0 && within(c, d, a))
        || (d2 == 0 && within(c, d, b))
        || (d3 == 0 && within(a, b, c))
        || (d4 == 0 && within(a, b, d))
}

#[test]
fn pool_links_cross_only_where_their_pools_and_runs_stand_in_opposite_orders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut programs = vec![compile(LEASED)];
    programs.extend(example_programs());
    let nixl = std::fs::read_to_string(root.join("examples/pd-disaggregation/nixl_pull.sq"))
        .expect("readable example");
    let two = Overrides {
        sets: vec![("NP".into(), 2.0), ("ND".into(), 2.0)],
        ..Overrides::default()
    };
    programs.push(serq::compile_source(&nixl, &two).expect("nixl_pull links at 2 x 2"));
    let mut shared_ends = 0;
    for program in &programs {
        let l = view::layout(program);
        // Every link as (pool spot, run spot, top point, bottom point); the
        // y of the ends do not matter for the order, only that tops are
        // above bottoms.
        let links: Vec<_> = l
            .links
            .iter()
            .chain(l.leases.iter().map(|x| &x.link))
            .chain(&l.admits)
            .map(|k| (k.pool, k.run, (k.pool_x, 0), (k.run_x, 100)))
            .collect();
        for (i, a) in links.iter().enumerate() {
            for b in &links[i + 1..] {
                let shared = a.0 == b.0 || a.1 == b.1;
                shared_ends += usize::from(shared);
                // Crossing is forced when one pool stands left of the other
                // and its run right of the other's.
                let forced = !shared && (a.0.mid() < b.0.mid()) != (a.1.mid() < b.1.mid());
                if !forced {
                    assert!(
                        !meet(a.2, a.3, b.2, b.3),
                        "links {:?} and {:?} meet",
                        (a.2, a.3),
                        (b.2, b.3)
                    );
                }
            }
        }
    }
    // nixl_pull (kvD to D and to the read; kvP's hold and lease), LEASED,
    // the vLLM-like engines (a hold and `admit via`), … share ends.
    assert!(shared_ends >= 8, "{shared_ends}");
}
