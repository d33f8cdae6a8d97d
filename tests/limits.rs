//! Limits a trusted simulator keeps: a horizon the f64 clock can resolve,
//! an Erlang draw that ends (docs/development.md, "Limits on hostile input").

use serq::{Overrides, compile_source, run};

fn refused(source: &str, words: &[&str]) {
    let diagnostics = compile_source(source, &Overrides::default()).unwrap_err();
    let all: Vec<String> = diagnostics.iter().map(|d| d.message.clone()).collect();
    assert!(
        all.iter().any(|m| words.iter().all(|w| m.contains(w))),
        "{all:?}"
    );
}

#[test]
fn a_horizon_the_clock_cannot_resolve_is_refused_saying_why() {
    // poisson(1) up to 1e300: 1e300 expected arrivals, far above 2^42.
    refused(
        "stage s : delay; workload { arrive poisson(1); } session { run s (1); }
         run { horizon 1e300; }",
        &["horizon 1e300", "2^42"],
    );
    // 1e13 · poisson(1) = 1e13 expected arrivals > 2^42 ≈ 4.4e12: at 1e13
    // the spacing 1e13·2^-52 ≈ 0.002 leaves fewer than 2^10 steps in a gap of 1.
    refused(
        "stage s : delay; workload { arrive poisson(1); } session { run s (1); }
         run { horizon 1e13; }",
        &["poisson(1)", "2^42"],
    );
    // 1e12 arrivals are within it (the run is stopped after 3 here).
    let ok = compile_source(
        "stage s : delay; workload { arrive poisson(1); } session { run s (1); }
         run { horizon 1e12; arrivals 3; }",
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(run(&ok).unwrap().arrivals, 3);
}

#[test]
fn a_horizon_flag_past_the_limit_names_the_flag() {
    let source = "stage s : delay; workload { arrive batch(1); } session { run s (1); }
                  run { horizon 10; }";
    let o = Overrides {
        horizon: Some(1e20),
        ..Overrides::default()
    };
    let source = source.replace("batch(1)", "poisson(1)");
    let source = source.as_str();
    let d = compile_source(source, &o).unwrap_err();
    assert!(d[0].message.contains("`--horizon 1e20`"), "{d:?}");
}

#[test]
fn an_erlang_of_a_huge_k_is_refused_not_drawn_k_times() {
    // A constant k: the validator.
    refused(
        "stage s : delay; workload { arrive batch(1); } session { run s (~erlang(1e9, 1)); }
         run { horizon 10; }",
        &["k = 1000000000", "above 1000000"],
    );
    // A computed k: the engine, at once.
    let program = compile_source(
        "stage s : delay; workload { arrive batch(1); }
         session { set k = 1e9 + serial; run s (~erlang(k, 1)); } run { horizon 10; }",
        &Overrides::default(),
    )
    .unwrap();
    let e = run(&program).unwrap_err();
    assert!(e.message.contains("from 1 to 10^6"), "{e}");
    assert_eq!(e.rule(), "distribution");
    // k = 10^6 is still drawn (10^6 exponentials).
    let big = compile_source(
        "stage s : delay; workload { arrive batch(1); }
         session { run s (~erlang(1000000, 2)); observe w = now; } run { horizon 10; }",
        &Overrides::default(),
    )
    .unwrap();
    let w = run(&big).unwrap();
    // A sum of 10^6 exponentials of mean 2e-6: mean 2, sd 2/1000.
    let x = w.observation("w").unwrap().mean().unwrap();
    assert!((x - 2.0).abs() < 0.02, "{x}");
}
