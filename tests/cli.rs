//! The `serq` command as a user meets it: exit statuses (0 ok, 1 the
//! program's fault, 2 a usage error), where output goes, and what the
//! diagnostics show (spec §6.12).

use std::process::{Command, Output};

fn serq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the serq binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("serq-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write scratch file");
    path.to_string_lossy().into_owned()
}

#[test]
fn check_prints_a_one_line_summary_and_exits_0() {
    let out = serq(&["check", "examples/pd-disaggregation/after.sq"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("ok") && stdout.contains("share maxmin"),
        "{stdout}"
    );
}

#[test]
fn check_of_a_faulty_program_shows_file_line_col_the_line_and_a_caret_and_exits_1() {
    let file = scratch(
        "fifo_flow.sq",
        "stage A : ps(1);\nstage C : fifo;\nshare maxmin;\nsession { run A, C (1); }\nrun { horizon 5; }\n",
    );
    let out = serq(&["check", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("fifo_flow.sq:4:"), "{stderr}");
    assert!(stderr.contains("session { run A, C (1); }"), "{stderr}");
    assert!(stderr.contains('^'), "{stderr}");
    assert!(
        stderr.contains("`C`") && stderr.contains("above 0"),
        "{stderr}"
    );
}

#[test]
fn every_syntax_error_in_a_file_is_reported() {
    // Two faults on two lines: a missing `;` and an unexpected character.
    let file = scratch(
        "two_faults.sq",
        "stage s : delay\nlet x = 7 % 2;\nrun { horizon 5; }\n",
    );
    let out = serq(&["check", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("two_faults.sq:2:1"), "{stderr}");
    assert!(stderr.contains("unexpected character `%`"), "{stderr}");
}

#[test]
fn an_unreadable_file_or_a_bad_flag_is_a_usage_error_exiting_2() {
    assert_eq!(serq(&["check", "no/such/file.sq"]).status.code(), Some(2));
    assert_eq!(serq(&["run", "--bogus", "x.sq"]).status.code(), Some(2));
    // --samples needs --json.
    let out = serq(&["run", "--samples", "examples/single-turn/mm1.sq"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_prints_the_table_and_json_with_samples() {
    let out = serq(&["run", "examples/pd-disaggregation/after.sq"]);
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    assert!(table.starts_with("examples/pd-disaggregation/after.sq  seed 1  horizon 10  end 10"));
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "transferred",
                    "2",
                    "3.0000",
                    "±inf",
                    "0.000",
                    "3.0000",
                    "3.0000",
                    "3.0000",
                    "3.0000"
                ])
    );

    let out = serq(&[
        "run",
        "--json",
        "--samples",
        "examples/pd-disaggregation/after.sq",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(
        json["observes"]["transferred"]["samples"],
        serde_json::json!([3.0, 3.0])
    );
    assert_eq!(json["events"], 7);
}

#[test]
fn run_flags_replace_the_run_block() {
    // With the horizon cut to 2, neither read (ending at 3) is observed.
    let out = serq(&[
        "run",
        "--json",
        "--horizon",
        "2",
        "examples/pd-disaggregation/after.sq",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["horizon"], 2.0);
    assert_eq!(json["observes"]["transferred"]["count"], 0);
}

#[test]
fn ir_round_trips_through_a_json_file() {
    let out = serq(&["ir", "examples/pd-disaggregation/after.sq"]);
    assert_eq!(out.status.code(), Some(0));
    let ir = text(&out.stdout);
    assert!(ir.contains("\"version\": 8") && ir.contains("\"also\""));
    let file = scratch("after.ir.json", &ir);
    let from_ir = serq(&["run", "--json", &file]);
    let from_source = serq(&["run", "--json", "examples/pd-disaggregation/after.sq"]);
    assert_eq!(from_ir.status.code(), Some(0));
    assert_eq!(from_ir.stdout, from_source.stdout);
}

#[test]
fn ir_of_another_version_is_refused() {
    let ir = text(&serq(&["ir", "examples/single-turn/mm1.sq"]).stdout)
        .replace("\"version\": 8", "\"version\": 7");
    let file = scratch("v7.ir.json", &ir);
    let out = serq(&["check", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("version"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_run_time_error_names_the_statement_the_session_and_the_time() {
    // Session 1 computes index 2 into a family of 2 at t = 1.
    let file = scratch(
        "bad_index.sq",
        "stage s[2] : delay;\nworkload { arrive batch(2); }\nsession {\n  run s[0] (1);\n  run s[serial * 2] (1);\n}\nrun { horizon 5; }\n",
    );
    let out = serq(&["run", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad_index.sq:5:"), "{stderr}");
    assert!(stderr.contains("session 1"), "{stderr}");
    assert!(stderr.contains("t = 1"), "{stderr}");
    assert!(stderr.contains("index"), "{stderr}");
}

#[test]
fn a_name_a_flag_gives_that_the_program_lacks_is_a_usage_error_everywhere() {
    // `--set` of a constant the file does not declare: exit 2, with a did-you-mean.
    let out = serq(&[
        "run",
        "examples/pd-disaggregation/capacity.sq",
        "--set",
        "lamm=3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean `lam`?"),
        "{}",
        text(&out.stderr)
    );
    let out = serq(&[
        "check",
        "examples/pd-disaggregation/capacity.sq",
        "--set",
        "x=3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // IR has no constants at all: `--set` on it is the same usage error.
    let ir = serq(&["ir", "examples/single-turn/mm1.sq"]);
    let path = scratch("mm1.ir.json", &text(&ir.stdout));
    let out = serq(&["check", &path, "--set", "lam=1"]);
    assert_eq!(out.status.code(), Some(2));
    // A fault of the file itself stays the program's (exit 1), even with a flag.
    let bad = scratch(
        "bad.sq",
        "let lam = 1;\nstage s : fifo;\nsession { run t (1); }\n",
    );
    let out = serq(&["check", &bad, "--set", "lam=2"]);
    assert_eq!(out.status.code(), Some(1));
}

// Flag values: one bad in itself or against the run's other settings is a
// usage error (exit 2) naming the flag; a `--set` that breaks the program
// is the program's fault (exit 1).

#[test]
fn a_negative_horizon_is_a_usage_error_naming_the_flag_in_either_spelling() {
    for args in [["--horizon=-5", ""], ["--horizon", "-5"]] {
        let mut all = vec!["run", "examples/single-turn/mm1.sq"];
        all.extend(args.iter().filter(|a| !a.is_empty()));
        let out = serq(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--horizon") && stderr.contains("above 0"),
            "{stderr}"
        );
        // Not clap's tip for a value that looks like a flag.
        assert!(!stderr.contains("-- -5"), "{stderr}");
    }
}

#[test]
fn a_horizon_that_is_nan_or_not_a_number_exits_2_naming_the_flag() {
    for value in ["nan", "abc", "inf"] {
        let out = serq(&["run", "examples/single-turn/mm1.sq", "--horizon", value]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        assert!(stderr.contains("'--horizon <T>'"), "{stderr}");
    }
}

#[test]
fn negative_seeds_warmups_and_replications_are_refused_by_their_flag() {
    for (flag, value) in [
        ("--seed", "-1"),
        ("--warmup", "-1"),
        ("--arrivals", "0"),
        ("--replications", "-1"),
    ] {
        let out = serq(&["run", "examples/single-turn/mm1.sq", flag, value]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(&format!("'{flag} <")), "{stderr}");
        assert!(!stderr.contains("tip:"), "{stderr}");
    }
}

#[test]
fn a_warmup_flag_beyond_the_programs_horizon_is_a_usage_error() {
    // mm1.sq runs to horizon 20000.
    let out = serq(&["run", "examples/single-turn/mm1.sq", "--warmup", "30000"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("(with `--warmup 30000`)") && stderr.contains("below the horizon 20000"),
        "{stderr}"
    );
    // The same from a sweep, before any run.
    let out = serq(&[
        "sweep",
        "examples/pd-disaggregation/capacity.sq",
        "--grid",
        "lam=4,8",
        "--warmup",
        "1e9",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_set_that_makes_the_run_block_invalid_is_the_programs_fault() {
    let file = scratch(
        "horizon_let.sq",
        "let H = 10;\nstage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); }\nrun { horizon H; }\n",
    );
    let out = serq(&["run", &file, "--set", "H=-5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("horizon -5"), "{stderr}");
}

#[test]
fn a_huge_horizon_is_printed_in_exponent_form_with_the_limit_and_its_reason() {
    // poisson(0.8) × 1e300 is far above 2^42 expected arrivals.
    let out = serq(&["run", "examples/single-turn/mm1.sq", "--horizon", "1e300"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`--horizon 1e300`"), "{stderr}");
    assert!(
        stderr.contains("rate × horizon is at most 2^42"),
        "{stderr}"
    );
    assert!(!stderr.contains("0000000000000000"), "{stderr}");
    // A closed workload has no such limit: its header shows 1e300 too.
    let out = serq(&[
        "run",
        "examples/pd-disaggregation/after.sq",
        "--horizon",
        "1e300",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("horizon 1e300  end 1e300"), "{stdout}");
}

/// Waits until process `pid` catches SIGINT (its handler is installed),
/// read from the SigCgt mask of /proc/PID/status (Linux).
fn wait_for_sigint_handler(pid: u32) {
    for _ in 0..2000 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (libc::SIGINT - 1)) != 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("process {pid} never caught SIGINT");
}

/// `serq run ARGS` on a run far too long to finish, stopped by a SIGINT
/// once it has run a while: its exit status, stdout and stderr.
fn interrupted_run(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the serq binary starts");
    wait_for_sigint_handler(child.id());
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().expect("the run ends")
}

#[test]
fn ctrl_c_on_run_prints_the_partial_report_marked_as_such_and_exits_130() {
    // poisson(0.8) to 1e9 is 8e8 arrivals: minutes, never done in 300 ms.
    let out = interrupted_run(&["run", "examples/single-turn/mm1.sq", "--horizon", "1e9"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted at t = "), "{stderr}");
    let mut lines = stdout.lines();
    let mark = lines.next().unwrap_or_default();
    assert!(
        mark.starts_with("partial report: interrupted at t = ")
            && mark.ends_with("of the horizon 1000000000"),
        "{stdout}"
    );
    // The report's own header: its end is where the run stopped.
    let header = lines.next().unwrap_or_default();
    let end: f64 = header
        .split("  end ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|e| e.parse().ok())
        .expect("an end in the header");
    assert!(end > 1000.0 && end < 1e9, "{header}");
    assert!(stdout.contains("\nsrv "), "{stdout}");
}

#[test]
fn ctrl_c_on_run_json_adds_partial_true() {
    let out = interrupted_run(&[
        "run",
        "examples/single-turn/mm1.sq",
        "--horizon",
        "1e9",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["partial"], serde_json::Value::Bool(true));
    assert!(report["end"].as_f64().unwrap() < 1e9);
}

// Output at a thousand nodes: families of more than 16 members fold in
// text by default; --members shows each, --by-family folds all; JSON keeps
// every member unless --by-family.

const NIXL: &str = "examples/pd-disaggregation/nixl_pull.sq";

fn stdout_of(args: &[&str]) -> String {
    let out = serq(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_family_of_more_than_16_members_folds_in_text_unless_members_is_given() {
    let big = [
        "run",
        NIXL,
        "--set",
        "NP=20",
        "--set",
        "ND=20",
        "--horizon",
        "50",
    ];
    let folded = stdout_of(&big);
    assert!(folded.lines().any(|l| l.starts_with("D ×20 ")), "{folded}");
    assert!(!folded.contains("D[19]"), "{folded}");
    let every = stdout_of(&[&big[..], &["--members"]].concat());
    assert!(every.lines().any(|l| l.starts_with("D[19] ")), "{every}");
    // 8 + 8 members (the default) stay one row per member.
    let small = stdout_of(&["run", NIXL, "--horizon", "50"]);
    assert!(small.lines().any(|l| l.starts_with("D[7] ")), "{small}");
    // JSON never folds without --by-family: the checker reads every member.
    let json = stdout_of(&[&big[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ds = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "D")
        .count();
    assert_eq!(ds, 20);
}

#[test]
fn by_family_combines_with_replications_in_text_and_json() {
    let args = [
        "run",
        NIXL,
        "--horizon",
        "50",
        "--replications",
        "2",
        "--by-family",
    ];
    let table = stdout_of(&args);
    assert!(table.lines().any(|l| l.starts_with("D ×8 ")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("kvD ×8 ")), "{table}");
    assert!(!table.contains("D[0]"), "{table}");
    let json = stdout_of(&[&args[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let d = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "D")
        .expect("a folded D");
    assert_eq!(d["members"], 8);
    let u = &d["utilization"];
    let (lo, mean, hi) = (
        u["min"].as_f64().unwrap(),
        u["mean"].as_f64().unwrap(),
        u["max"].as_f64().unwrap(),
    );
    assert!(lo <= mean && mean <= hi, "{u}");
}

#[test]
fn a_sweep_folds_a_family_above_16_members_at_any_point_of_its_grid() {
    let csv = stdout_of(&["sweep", NIXL, "--grid", "ND=8,20", "--horizon", "50"]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    // D and its NICs reach 20 members at ND = 20: three columns each, at
    // both points; P stays at 8, one column per member.
    for name in ["D.util", "D.util.min", "D.util.max", "ingress.util.max"] {
        assert!(header.contains(&name), "{name}: {header:?}");
    }
    assert!(!header.iter().any(|c| c.starts_with("D[")), "{header:?}");
    assert!(header.contains(&"P[7].util"), "{header:?}");
    assert_eq!(csv.lines().count(), 3);
    // The help names the folded columns and both flags.
    let help = stdout_of(&["sweep", "--help"]);
    for word in [
        "STAGE.util.min",
        "STAGE.util.max",
        "--by-family",
        "--members",
        "`stability`",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
}

#[test]
fn a_sweep_whose_reader_closes_standard_output_stops_quietly_and_successfully() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    // `serq sweep … | head -1`: 900 points, of which the reader takes the
    // header and goes. The next row's write finds the pipe closed.
    let path = scratch(
        "pipe.sq",
        "let d = 0.5; stage s : delay; workload { arrive poisson(1); }
         session { run s (d); } run { horizon 2000; }",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["sweep", &path, "--grid", "d=0.1:1:0.001"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the serq binary runs");
    let stdout = child.stdout.take().expect("piped");
    let mut header = String::new();
    BufReader::new(stdout)
        .read_line(&mut header)
        .expect("the header is written");
    assert!(header.starts_with("d,replications,"), "{header}");
    // The reader is dropped here: the pipe is closed.
    let out = child.wait_with_output().expect("serq ends");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no message for a closed pipe");
}
