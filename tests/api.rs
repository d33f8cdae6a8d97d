//! The library API a capacity study builds on: compiling a file with
//! overrides, IR JSON in and out, running, and reading a report by name.
//! Every failure is a value.

use serq::{CompileError, Overrides, compile_file, compile_ir, compile_source, run};
use std::path::{Path, PathBuf};

/// Writes a program to a fresh file under the target directory.
fn program_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("api");
    std::fs::create_dir_all(&dir).expect("the target directory is writable");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the program file is writable");
    path
}

fn sets(pairs: &[(&str, f64)]) -> Overrides {
    Overrides {
        sets: pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Overrides::default()
    }
}

/// ND decoders behind a router; each session spends `d` on the decoder it
/// picks. The shared run puts `BW` in a link rule (a shared stage must be
/// `ps` of a constant above 0).
const PD: &str = "let ND = 2;
let d = 1;
let BW = 1;
stage egress : ps(1);
stage ingress[ND] : ps(BW);
stage D[ND] : delay;
share maxmin;
workload { arrive batch(4); }
session {
  set t0 = now;
  choose j in ND by ((serial - j)^2, j);
  run D[j] (d);
  observe decoded = now - t0;
  run egress, ingress[j] (0);
  end;
}
run { horizon 100; seed 1; }
";

#[test]
fn compile_file_with_an_unknown_set_is_a_diagnostics_error_naming_it() {
    let path = program_file("pd_unknown.sq", PD);
    match compile_file(&path, &sets(&[("NP", 3.0)])) {
        Err(CompileError::Diagnostics {
            diagnostics,
            sources,
            ..
        }) => {
            assert_eq!(sources.main().text, PD);
            assert!(diagnostics[0].message.contains("`NP`"), "{diagnostics:#?}");
        }
        other => panic!("expected diagnostics, got {other:?}"),
    }
}

#[test]
fn compile_file_with_a_set_array_size_makes_that_many_members() {
    let path = program_file("pd_size.sq", PD);
    let program = compile_file(&path, &sets(&[("ND", 4.0)])).expect("links");
    // egress, ingress[0..4], D[0..4].
    assert_eq!(program.stages.len(), 1 + 4 + 4);
    let report = run(&program).expect("runs");
    // Four sessions; session i is nearest decoder i ((i - j)² is 0 at j = i).
    for j in 0..4 {
        assert_eq!(report.stage("D", Some(j)).expect("D[j]").completed, 1);
    }
    assert!(report.stage("D", Some(4)).is_none());
}

#[test]
fn compile_file_checks_a_link_rule_with_the_set_constant() {
    let path = program_file("pd_rule.sq", PD);
    assert!(compile_file(&path, &sets(&[("BW", 2.0)])).is_ok());
    match compile_file(&path, &sets(&[("BW", 0.0)])) {
        Err(CompileError::Diagnostics { diagnostics, .. }) => assert!(
            diagnostics.iter().any(|d| d.rule == "shared-stage-kind"),
            "{diagnostics:#?}"
        ),
        other => panic!("expected the shared-stage rule, got {other:?}"),
    }
}

#[test]
fn compile_file_of_a_missing_file_is_an_io_error_naming_it() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("api/absent.sq");
    let e = compile_file(&path, &Overrides::default()).expect_err("no such file");
    assert!(matches!(e, CompileError::Io { .. }));
    assert!(e.to_string().contains("absent.sq"), "{e}");
}

#[test]
fn compile_file_renders_diagnostics_with_the_line_and_caret() {
    let path = program_file(
        "broken.sq",
        "stage s : fifo\nworkload { arrive batch(1); }\n",
    );
    let e = compile_file(&path, &Overrides::default()).expect_err("a missing `;`");
    let text = e.to_string();
    assert!(text.contains("broken.sq:"), "{text}");
    assert!(text.contains('^'), "{text}");
}

#[test]
fn ir_written_and_read_back_runs_to_the_same_report() {
    let program = compile_source(PD, &Overrides::default()).expect("links");
    let path = program_file("pd.ir.json", &program.to_json());
    // A `.json` file is IR; the seed override applies to it, sets do not.
    let again = compile_file(&path, &Overrides::default()).expect("valid IR");
    assert_eq!(run(&again).expect("runs"), run(&program).expect("runs"));
    let seeded = Overrides {
        seed: Some(9),
        ..Overrides::default()
    };
    assert_eq!(compile_file(&path, &seeded).expect("valid IR").seed, 9);
    let e = compile_file(&path, &sets(&[("ND", 3.0)])).expect_err("IR has no lets");
    assert!(matches!(e, CompileError::Ir { .. }));
    assert!(compile_ir("{", &Overrides::default()).is_err());
}

#[test]
fn a_report_is_read_by_observation_stage_and_pool_name() {
    let source = "pool kvD[2] { cap 10; }
stage egress : delay;
workload { arrive batch(2); }
session {
  set t0 = now;
  hold kvD[serial] (5) { run egress (1 + serial); }
  observe ttft = now - t0;
  end;
}
run { horizon 10; }";
    let report = run(&compile_source(source, &Overrides::default()).unwrap()).unwrap();
    let ttft = report.observation("ttft").expect("observed");
    // Session 0 ends at 1, session 1 at 2 (a delay serves both at once).
    assert_eq!(ttft.samples(), &[1.0, 2.0]);
    assert_eq!(
        (ttft.count(), ttft.mean(), ttft.p99(), ttft.ci()),
        (2, Some(1.5), Some(2.0), None)
    );
    // egress holds one job over [0, 1] and another over [0, 2]: 3/10 on average.
    let egress = report.stage("egress", None).expect("egress");
    assert!((egress.mean_number - 0.3).abs() < 1e-12);
    // kvD[1] holds 5 units over [0, 2] of [0, 10]: 1 on average.
    assert!((report.pool("kvD", Some(1)).expect("kvD[1]").mean_used - 1.0).abs() < 1e-12);
    assert!(report.pool("kvD", None).is_none());
    assert!(report.observation("response").is_none());
    // The JSON carries the same figures.
    let json: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    assert_eq!(json["observes"]["ttft"]["mean"], 1.5);
}

#[test]
fn a_run_time_error_is_a_value() {
    // Session 0's work is 0 / 0: NaN, an error under any options.
    let source = "stage s : delay; workload { arrive batch(1); }
                  session { run s (serial / serial); } run { horizon 10; }";
    let program = compile_source(source, &Overrides::default()).unwrap();
    let e = run(&program).expect_err("session 0 runs NaN units of work");
    assert!(e.message.contains("NaN"), "{e}");
}

#[test]
fn serq_draw_takes_sets() {
    let path = program_file("pd_draw.sq", PD);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["draw", "--set", "ND=3"])
        .arg(&path)
        .output()
        .expect("serq runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = String::from_utf8(out.stdout).unwrap();
    // Three decoders drawn: D[2] exists only with ND = 3.
    assert!(svg.contains("D[2]"), "no D[2] in the drawing");
    assert!(!svg.contains("D[3]"));
}

#[test]
fn a_hand_edited_program_runs_only_after_it_validates_again() {
    // `serq::run` takes a `ValidProgram`; a program changed by hand must pass
    // `validate` again, which refuses the out-of-range slot that used to
    // panic the engine ("index out of bounds").
    let source = "stage s : delay; workload { arrive batch(1); }
                  session { set x = 1; run s (x); } run { horizon 5; }";
    let valid = compile_source(source, &Overrides::default()).expect("links");
    assert_eq!(run(&valid).expect("runs").stages[0].completed, 1);
    let mut edited = valid.into_program();
    let serq::ir::Stmt::Set(slot, _) = &mut edited.blocks[2][0] else {
        panic!("block 2 starts with the set: {:?}", edited.blocks[2]);
    };
    *slot = 99;
    let errors = edited.validate().expect_err("slot 99 of 10");
    assert!(
        errors
            .iter()
            .any(|e| e.rule == "ir-structure" && e.message.contains("slot 99")),
        "{errors:?}"
    );
}
