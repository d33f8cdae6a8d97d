//! `Overrides::sets` and `--set NAME=VALUE`: values that replace `let`
//! constants by name before anything that depends on them is folded
//! (spec §3.1, `compile(sets=…)`).

use serq::ir::{self, Expr, StageKind, Stmt};
use serq::syntax::ast::Span;
use serq::{Diagnostic, Overrides, compile_ir, compile_source};
use std::process::Command;

const TAIL: &str = " workload { arrive batch(1); } run { horizon 10; }";

/// Compiles `src` (with [`TAIL`] appended) with the given sets.
fn compile(src: &str, sets: &[(&str, f64)]) -> Result<ir::ValidProgram, Vec<Diagnostic>> {
    let overrides = Overrides {
        sets: sets.iter().map(|(n, x)| (n.to_string(), *x)).collect(),
        ..Overrides::default()
    };
    compile_source(&format!("{src}{TAIL}"), &overrides)
}

fn linked(src: &str, sets: &[(&str, f64)]) -> ir::ValidProgram {
    compile(src, sets).unwrap_or_else(|d| panic!("link errors in {src:?}: {d:#?}"))
}

fn refused(src: &str, sets: &[(&str, f64)]) -> Vec<Diagnostic> {
    match compile(src, sets) {
        Ok(_) => panic!("linked, but should be refused: {src} with {sets:?}"),
        Err(d) => d,
    }
}

/// The work of the session's first `run` statement.
fn first_run_work(p: &ir::Program) -> &Expr {
    p.blocks[p.session]
        .iter()
        .find_map(|s| match s {
            Stmt::Run { work, .. } => Some(work),
            _ => None,
        })
        .expect("the session runs a stage")
}

#[test]
fn an_unknown_name_is_refused_listing_the_declared_constants_in_order() {
    let d = refused(
        "let NP = 4; let ND = 2; stage s : ps(1); session { run s (1); }",
        &[("NX", 5.0)],
    );
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].rule, "set-unknown");
    // No place in the text: offset 0, and the label says where it came from.
    assert_eq!(d[0].span, Span::default());
    assert!(d[0].label.contains("override"), "{:?}", d[0].label);
    assert!(d[0].message.contains("`NX`"), "{}", d[0].message);
    assert!(
        d[0].message
            .contains("the declared constants are `NP`, `ND`"),
        "{}",
        d[0].message
    );
}

#[test]
fn an_unknown_name_in_a_program_without_lets_says_there_are_none() {
    let d = refused("stage s : ps(1); session { run s (1); }", &[("N", 5.0)]);
    assert!(
        d[0].message.contains("declares no `let` constants"),
        "{}",
        d[0].message
    );
}

#[test]
fn every_unknown_name_is_reported_not_only_the_first() {
    let d = refused(
        "let a = 1; stage s : ps(1); session { run s (a); }",
        &[("x", 1.0), ("a", 2.0), ("y", 1.0)],
    );
    let unknown: Vec<&str> = d
        .iter()
        .filter(|d| d.rule == "set-unknown")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(unknown.len(), 2, "{d:#?}");
}

#[test]
fn a_set_array_size_makes_that_many_members() {
    let src = "let NP = 4; stage P[NP] : fifo; session { run P[0] (1); }";
    assert_eq!(linked(src, &[]).stages.len(), 4);
    let p = linked(src, &[("NP", 500.0)]);
    assert_eq!(p.stages.len(), 500);
    assert!(p.stages.iter().all(|s| s.name == "P"));
}

#[test]
fn a_set_array_size_that_is_not_a_whole_number_is_refused_at_the_array() {
    let d = refused(
        "let NP = 4; stage P[NP] : fifo; session { run P[0] (1); }",
        &[("NP", 2.5)],
    );
    assert!(d.iter().any(|d| d.message.contains("stage `P`")), "{d:#?}");
}

#[test]
fn a_dependent_let_sees_the_set_value() {
    let src = "let a = 1; let b = a*3+1; stage s : ps(1); session { run s (b); }";
    assert_eq!(first_run_work(&linked(src, &[])), &Expr::Num(4.0));
    // b = 10*3 + 1.
    assert_eq!(
        first_run_work(&linked(src, &[("a", 10.0)])),
        &Expr::Num(31.0)
    );
}

#[test]
fn setting_a_dependent_let_replaces_its_initializer() {
    let src = "let a = 1; let b = a*3+1; stage s : ps(1); session { run s (b); }";
    let p = linked(src, &[("a", 10.0), ("b", 7.0)]);
    assert_eq!(first_run_work(&p), &Expr::Num(7.0));
}

#[test]
fn a_name_set_twice_takes_the_last_value() {
    let src = "let a = 1; stage s : ps(1); session { run s (a); }";
    let p = linked(src, &[("a", 2.0), ("a", 3.0)]);
    assert_eq!(first_run_work(&p), &Expr::Num(3.0));
}

#[test]
fn inf_is_a_value_a_set_may_give() {
    let src = "let a = 1; let b = min(a, 5); stage s : ps(1); session { run s (b); }";
    let p = linked(src, &[("a", f64::INFINITY)]);
    assert_eq!(first_run_work(&p), &Expr::Num(5.0));
}

#[test]
fn a_nan_set_is_refused() {
    let d = refused(
        "let a = 1; stage s : ps(1); session { run s (a); }",
        &[("a", f64::NAN)],
    );
    assert!(
        d.iter()
            .any(|d| d.rule == "nan" && d.message.contains("`a`")),
        "{d:#?}"
    );
}

#[test]
fn the_initializer_of_a_set_let_is_still_checked() {
    // `let a = now;` is not a constant, whatever value replaces it.
    let d = refused(
        "let a = now; stage s : ps(1); session { run s (a); }",
        &[("a", 1.0)],
    );
    assert!(
        d.iter().any(|d| d.message.contains("not a constant")),
        "{d:#?}"
    );
}

const SHARED: &str = "let C = 1; stage a : ps(C); stage b : ps(1); share maxmin; \
                      session { run a, b (1); }";

#[test]
fn a_constant_in_a_link_rule_is_checked_with_its_set_value() {
    let p = linked(SHARED, &[("C", 2.0)]);
    assert_eq!(p.stages[0].kind, StageKind::Ps(Expr::Num(2.0)));
    let d = refused(SHARED, &[("C", 0.0)]);
    assert!(
        d.iter()
            .any(|d| d.rule == "shared-stage-kind" && d.message.contains("above 0")),
        "{d:#?}"
    );
}

#[test]
fn ir_json_refuses_sets_because_it_has_no_lets() {
    let json = linked("let a = 1; stage s : ps(1); session { run s (a); }", &[]).to_json();
    assert!(compile_ir(&json, &Overrides::default()).is_ok());
    let overrides = Overrides {
        sets: vec![("a".to_string(), 2.0)],
        ..Overrides::default()
    };
    let e = compile_ir(&json, &overrides).expect_err("sets on IR are refused");
    assert!(e[0].message.contains("`a`"), "{}", e[0].message);
}

// The command line, end to end.

/// Writes a program to a fresh file under the target directory.
fn program_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("overrides");
    std::fs::create_dir_all(&dir).expect("the target directory is writable");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the program file is writable");
    path
}

fn serq(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .output()
        .expect("the serq binary runs")
}

const NP_PROGRAM: &str = "let NP = 4;\nlet ND = 2;\nstage P[NP] : fifo;\nstage D[ND] : fifo;\n\
                          workload { arrive batch(1); }\nsession { run P[0] (1); run D[0] (1); }\n\
                          run { horizon 10; }\n";

#[test]
fn serq_ir_with_sets_prints_the_program_with_the_new_sizes() {
    let path = program_file("np.sq", NP_PROGRAM);
    let out = serq(&[
        "ir".as_ref(),
        path.as_os_str(),
        "--set".as_ref(),
        "NP=500".as_ref(),
        "--set".as_ref(),
        "ND=3".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p: ir::Program = serde_json::from_slice(&out.stdout).expect("serq ir prints IR JSON");
    let count = |name: &str| p.stages.iter().filter(|s| s.name == name).count();
    assert_eq!((count("P"), count("D")), (500, 3));
}

#[test]
fn serq_check_with_an_unknown_set_exits_2_listing_the_constants() {
    let path = program_file("np_unknown.sq", NP_PROGRAM);
    let out = serq(&[
        "check".as_ref(),
        path.as_os_str(),
        "--set".as_ref(),
        "NX=1".as_ref(),
    ]);
    // A name a flag gives that the program lacks is a usage error (issue 15).
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`NP`, `ND`"), "{stderr}");
}

#[test]
fn a_malformed_set_is_a_usage_error() {
    let path = program_file("np_malformed.sq", NP_PROGRAM);
    for bad in ["NP", "NP=", "NP=abc", "=5", "NP=nan", "1x=2"] {
        let out = serq(&[
            "ir".as_ref(),
            path.as_os_str(),
            "--set".as_ref(),
            bad.as_ref(),
        ]);
        assert_eq!(out.status.code(), Some(2), "--set {bad}");
    }
}

#[test]
fn a_set_value_may_be_inf_on_the_command_line() {
    let path = program_file(
        "inf.sq",
        "let T = 1;\nstage s : ps(1);\nworkload { arrive batch(1); }\n\
         session { run s (min(T, 2)); }\nrun { horizon 10; }\n",
    );
    let out = serq(&[
        "check".as_ref(),
        path.as_os_str(),
        "--set".as_ref(),
        "T=inf".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles `src` (with [`TAIL`] appended) with the given `--def`s.
fn with_defs(src: &str, defs: &[(&str, &str)]) -> Result<serq::ValidProgram, Vec<Diagnostic>> {
    let overrides = Overrides {
        defs: defs
            .iter()
            .map(|(n, e)| (n.to_string(), e.to_string()))
            .collect(),
        ..Overrides::default()
    };
    compile_source(&format!("{src}{TAIL}"), &overrides)
}

const DEFS: &str =
    "def f(x) = x + 1; def w(x) { set y = x; } stage s : ps(1); session { run s (f(2)); w(1); }";

#[test]
fn a_def_override_replaces_an_expression_definitions_body() {
    // f(2) with the body `x * 10` is 2 * 10 (pyserq 0.1.0's compile(defs=…) gives 20).
    let p = with_defs(DEFS, &[("f", "x * 10")]).unwrap();
    let work = p.blocks[2]
        .iter()
        .find_map(|s| match s {
            ir::Stmt::Run { work, .. } => Some(work.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(work.constant_value(), Some(20.0));
}

#[test]
fn a_def_override_is_refused_for_an_unknown_name_a_statement_def_and_bad_text() {
    let e = with_defs(DEFS, &[("g", "1")]).unwrap_err();
    assert_eq!(e[0].message, "unknown --def `g`");
    assert!(
        e[0].help
            .as_deref()
            .unwrap()
            .ends_with("the program declares: f")
    );
    let e = with_defs(DEFS, &[("w", "1")]).unwrap_err();
    assert!(
        e[0].message.contains("`def w` is statements"),
        "{}",
        e[0].message
    );
    let e = with_defs(DEFS, &[("f", "x +")]).unwrap_err();
    assert!(
        e[0].message
            .starts_with("invalid expression in --def `f = x +`: 1:4: expected an expression"),
        "{}",
        e[0].message
    );
    // Text after a whole expression is not an expression either.
    assert!(with_defs(DEFS, &[("f", "x 1")]).is_err());
}

#[test]
fn serq_run_and_check_take_def_overrides() {
    let path = program_file(
        "def.sq",
        "def step_time(n) = n + 1;\nstage s : delay;\nworkload { arrive batch(1); }\n\
         session { run s (step_time(2)); observe t = now; }\nrun { horizon 100; }\n",
    );
    // step_time(2) = 2 * 10 with the new body: the run ends at 20.
    let out = serq(&[
        "run".as_ref(),
        path.as_os_str(),
        "--def".as_ref(),
        "step_time=n * 10".as_ref(),
        "--json".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["observes"]["t"]["mean"], 20.0);
    let out = serq(&[
        "check".as_ref(),
        path.as_os_str(),
        "--def".as_ref(),
        "price=1".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown --def `price`"), "{stderr}");
    let out = serq(&[
        "check".as_ref(),
        path.as_os_str(),
        "--def".as_ref(),
        "cost".as_ref(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a --def without `=` is a usage error"
    );
}
