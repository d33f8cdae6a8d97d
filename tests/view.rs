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

/// Declared a, b, c, d; the flow `run d, b` keeps d where it stands and
/// moves b right after it, so the row reads a c d b.
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
    assert_eq!(row(&layout), ["a", "c", "d", "b"]);
    assert_eq!(layout.rails.len(), 1);
    // d is station 2 and b station 3: adjacent, in the run's order.
    assert_eq!(layout.rails[0].stations, [2, 3]);

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
fn no_arrow_runs_between_the_stations_of_one_flow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut programs = vec![compile(REORDERED)];
    for (name, _) in examples() {
        let source = std::fs::read_to_string(root.join(&name)).expect("readable example");
        programs.push(compile(&source));
    }
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
    // REORDERED, after.sq, capacity.sq, pull_bottleneck.sq, pull_maxmin.sq
    // and nixl_pull.sq have one flow each.
    assert_eq!(rails, 6);
}

#[test]
fn a_leftward_arrow_is_a_return() {
    let layout = view::layout(&compile(REORDERED));
    // Row a c d b: the session leaves the flow at b (rightmost) for c (second).
    let c = layout
        .stations
        .iter()
        .position(|s| s.label == "c")
        .expect("c drawn") as i64;
    let back = layout
        .arrows
        .iter()
        .find(|a| a.head.first == c)
        .expect("an arrow enters c");
    assert_eq!(back.shape, Shape::Return);
    // a -> d passes over c: an arc, not a line through c.
    let over = layout
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
