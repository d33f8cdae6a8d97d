//! `serq run --timeline`: the Chrome trace of a run (docs/timeline.md).
//! Each program's timeline is checked against the Trace Event format's
//! rules (every event has `ph`, `ts`, `pid` and `tid`; complete slices
//! have durations >= 0 and never overlap on one thread; async begins and
//! ends pair up; counters are numbers), and a whole-run timeline against
//! its own report: an engine's iteration slices are its `iterations`, a
//! shared NIC's Σ rate × duration / capacity over [warmup, end] is its
//! utilisation × (end − warmup), a pool's `used` counter averaged over
//! [warmup, end] is its mean used.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use serq::timeline::{DEFAULT_CAP, Timeline};
use serq::{Overrides, Report, RunOptions};

/// A writer whose bytes the test reads back after the run.
#[derive(Clone, Default)]
struct Bytes(Arc<Mutex<Vec<u8>>>);

impl Write for Bytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("one writer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A run of `file` (under `overrides`) and its timeline of `window`,
/// capped at `cap` events.
fn timeline_of(
    file: &str,
    overrides: Overrides,
    window: (f64, f64),
    cap: u64,
) -> (serq::ValidProgram, Report, Vec<Value>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let program = serq::compile_file(&path, &overrides).expect("the example compiles");
    let bytes = Bytes::default();
    let recorder = Timeline::new(Box::new(bytes.clone()), window, cap);
    let mut options = RunOptions {
        timeline: Some(Box::new(recorder)),
        ..RunOptions::default()
    };
    let report = serq::run_with(&program, &mut options).expect("the example runs");
    let recorder = options
        .timeline
        .take()
        .expect("the run gives the timeline back");
    recorder.finish(report.end).expect("written to memory");
    let text = String::from_utf8(bytes.0.lock().expect("one writer").clone()).expect("utf-8");
    let trace: Value = serde_json::from_str(&text).expect("the timeline is JSON");
    let events = trace["traceEvents"]
        .as_array()
        .expect("a traceEvents array")
        .clone();
    (program, report, events)
}

fn whole(file: &str, overrides: Overrides) -> (serq::ValidProgram, Report, Vec<Value>) {
    timeline_of(file, overrides, (0.0, f64::INFINITY), DEFAULT_CAP)
}

fn num(e: &Value, key: &str) -> f64 {
    e[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is a number in {e}"))
}

/// Every rule of the Trace Event format this timeline relies on.
fn check_format(events: &[Value]) {
    assert!(!events.is_empty());
    // Complete slices by (pid, tid); async spans by (pid, cat, id).
    let mut slices: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut open: BTreeMap<(u64, String, u64), Vec<f64>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("`ph` in {e}"));
        let ts = num(e, "ts");
        let pid = e["pid"].as_u64().unwrap_or_else(|| panic!("`pid` in {e}"));
        let tid = e["tid"].as_u64().unwrap_or_else(|| panic!("`tid` in {e}"));
        assert!(ts >= 0.0, "{e}");
        match ph {
            "X" => {
                let dur = num(e, "dur");
                assert!(dur >= 0.0, "a negative duration: {e}");
                slices.entry((pid, tid)).or_default().push((ts, dur));
            }
            "b" | "e" => {
                let cat = e["cat"].as_str().expect("an async event's cat").to_string();
                let id = e["id2"]["local"].as_u64().expect("an async event's id");
                let stack = open.entry((pid, cat, id)).or_default();
                if ph == "b" {
                    stack.push(ts);
                } else {
                    let began = stack
                        .pop()
                        .unwrap_or_else(|| panic!("an end with no begin: {e}"));
                    assert!(ts >= began, "an end before its begin: {e}");
                }
            }
            "C" => {
                let args = e["args"].as_object().expect("a counter's args");
                assert!(!args.is_empty(), "{e}");
                assert!(
                    args.values().all(Value::is_number),
                    "a counter not a number: {e}"
                );
            }
            "n" => {
                assert!(e["id2"]["local"].is_u64(), "an async instant's id: {e}");
                assert!(
                    e["args"]["value"].is_number(),
                    "an observation's value: {e}"
                );
            }
            "i" | "M" => {}
            other => panic!("an unexpected phase `{other}`: {e}"),
        }
    }
    for ((pid, cat, id), stack) in &open {
        assert!(stack.is_empty(), "async span {pid}/{cat}/{id} never ends");
    }
    for ((pid, tid), list) in &mut slices {
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in list.windows(2) {
            // ts and dur are rounded to the ns apart: their sum may
            // exceed the next ts by a float's last digit.
            assert!(
                w[1].0 >= w[0].0 + w[0].1 - 1e-6,
                "complete slices overlap on {pid}/{tid}: {:?} and {:?}",
                w[0],
                w[1]
            );
        }
    }
}

/// The pid of the process named `name` (`stage D[3]`, `pool kv`).
fn pid_of(events: &[Value], name: &str) -> u64 {
    events
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == name)
        .and_then(|e| e["pid"].as_u64())
        .unwrap_or_else(|| panic!("no process `{name}`"))
}

/// The time average over [from, to] (seconds) of counter `name`'s field
/// `key` in process `pid`: each value holds from its `ts` to the next.
fn counter_average(events: &[Value], pid: u64, name: &str, key: &str, from: f64, to: f64) -> f64 {
    let points: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["pid"] == pid && e["name"] == name)
        .map(|e| (num(e, "ts") / 1e6, num(&e["args"], key)))
        .collect();
    assert!(!points.is_empty(), "no counter {name} in {pid}");
    let mut area = 0.0;
    for (k, &(t, v)) in points.iter().enumerate() {
        let next = points.get(k + 1).map_or(to, |p| p.0);
        let (a, b) = (t.max(from), next.min(to));
        if b > a {
            area += v * (b - a);
        }
    }
    area / (to - from)
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-6 * b.abs().max(1.0),
        "{what}: the timeline says {a}, the report {b}"
    );
}

#[test]
fn a_step_engine_with_preemptions_follows_the_format_and_its_report() {
    let overrides = Overrides {
        horizon: Some(300.0),
        ..Overrides::default()
    };
    let (_, report, events) = whole("examples/single-turn/vllm.sq", overrides);
    check_format(&events);
    let engine = pid_of(&events, "stage engine");
    let iterations = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == engine && e["name"] == "iteration")
        .count() as u64;
    assert!(iterations > 1000);
    assert_eq!(iterations, report.stages[0].iterations);
    // The program preempts: each is an instant on its pool with its victim.
    let kv = pid_of(&events, "pool kv");
    let preempts = events
        .iter()
        .filter(|e| e["ph"] == "i" && e["pid"] == kv && e["name"] == "preempt")
        .count() as u64;
    assert!(preempts > 0);
    assert_eq!(preempts, report.pools[0].preemptions);
    // Each victim's own track waits again from that instant, and a
    // prefill and a decode at the engine are named so.
    let sessions = pid_of(&events, "sessions");
    let begins: std::collections::BTreeSet<(u64, String, u64)> = events
        .iter()
        .filter(|e| e["ph"] == "b" && e["pid"] == sessions)
        .map(|e| {
            let id = e["id2"]["local"].as_u64().expect("an id");
            let name = e["name"].as_str().expect("a name").to_string();
            (id, name, num(e, "ts") as u64)
        })
        .collect();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "i" && e["name"] == "preempt")
    {
        let victim = e["args"]["victim"].as_u64().expect("a victim");
        let key = (
            victim,
            "preempted, wait kv".to_string(),
            num(e, "ts") as u64,
        );
        assert!(begins.contains(&key), "{e}");
    }
    for name in ["wait kv", "prefill engine", "decode engine"] {
        assert!(begins.iter().any(|(_, n, _)| n == name), "{name}");
    }
    for (key, mean) in [
        ("used", report.pools[0].mean_used),
        ("cached", report.pools[0].mean_cached),
        ("queued", report.pools[0].mean_queue),
        ("holders", report.pools[0].mean_holders),
    ] {
        let average = counter_average(&events, kv, "levels", key, report.warmup, report.end);
        close(average, mean, &format!("kv's mean {key}"));
    }
}

#[test]
fn an_iteration_slice_carries_its_tokens_split_residents_and_cost() {
    let overrides = Overrides {
        horizon: Some(20.0),
        warmup: Some(0.0),
        ..Overrides::default()
    };
    let (_, _, events) = whole("examples/single-turn/vllm.sq", overrides);
    let first = events
        .iter()
        .find(|e| e["ph"] == "X" && e["name"] == "iteration")
        .expect("an iteration");
    let args = &first["args"];
    // Its tokens are its prefill and decode tokens, and it lasts its cost.
    close(
        num(args, "prefill") + num(args, "decode"),
        num(args, "tokens"),
        "tokens",
    );
    assert!(num(args, "residents") >= 1.0);
    close(
        num(first, "dur"),
        (num(args, "cost") * 1e9).round() / 1e3,
        "dur",
    );
}

#[test]
fn a_pd_deployment_with_flows_follows_the_format_and_its_report() {
    let (program, report, events) = whole(
        "examples/pd-disaggregation/nixl_pull.sq",
        Overrides::default(),
    );
    check_format(&events);
    // Every engine's iteration slices are its iterations in the report.
    let mut nics = 0;
    for (s, row) in report.stages.iter().enumerate() {
        let name = match row.member {
            Some(k) => format!("stage {}[{k}]", row.name),
            None => format!("stage {}", row.name),
        };
        let pid = pid_of(&events, &name);
        let iterations = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["name"] == "iteration")
            .count() as u64;
        assert_eq!(iterations, row.iterations, "{name}");
        // A shared NIC: Σ rate × duration / capacity = utilisation × span.
        if let serq::ir::StageKind::Ps(serq::ir::Expr::Num(phi)) = program.stages[s].kind
            && row.name.ends_with("gress")
        {
            let span = report.end - report.warmup;
            let rate = counter_average(&events, pid, "rate", "rate", report.warmup, report.end);
            let util = row.utilization.expect("a NIC's utilisation");
            assert!(util > 0.0, "{name} carries flows");
            close(
                rate * span / phi,
                util * span,
                &format!("{name}'s busy time"),
            );
            nics += 1;
        }
    }
    // NP egress and ND ingress NICs, 8 each.
    assert_eq!(nics, 16);
    // Each transfer is a slice on both NICs it crosses.
    let egress = pid_of(&events, "stage egress[0]");
    let ingress = pid_of(&events, "stage ingress[0]");
    let on = |pid: u64| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid)
            .count()
    };
    assert!(on(egress) > 0 && on(ingress) > 0);
    for row in &report.pools {
        let name = match row.member {
            Some(k) => format!("pool {}[{k}]", row.name),
            None => format!("pool {}", row.name),
        };
        let pid = pid_of(&events, &name);
        let used = counter_average(&events, pid, "levels", "used", report.warmup, report.end);
        close(used, row.mean_used, &format!("{name}'s mean used"));
    }
}

#[test]
fn a_kernel_mm1_draws_its_jobs_in_lanes_and_its_sessions_as_async_spans() {
    let (_, report, events) = whole("examples/single-turn/mm1.sq", Overrides::default());
    check_format(&events);
    // Every session that ended has spans on its own async track.
    let sessions = pid_of(&events, "sessions");
    let tracks: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "b" && e["pid"] == sessions)
        .filter_map(|e| e["id2"]["local"].as_u64())
        .collect();
    assert_eq!(tracks.len() as u64, report.arrivals);
    // Each `observe` is an instant on its session's track; those at or
    // after the warmup are the report's samples, in order.
    let measured: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "n" && e["name"] == "response")
        .filter(|e| num(e, "ts") >= report.warmup * 1e6)
        .map(|e| num(&e["args"], "value"))
        .collect();
    assert_eq!(measured, report.observes[0].samples);
    // A fifo(1) server's jobs, waiting included, overlap: more than one lane.
    let lanes = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter(|e| {
            e["args"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("lane"))
        })
        .count();
    assert!(lanes > 1, "{lanes} lanes");
}

#[test]
fn a_window_keeps_only_what_happens_in_it() {
    let overrides = Overrides {
        horizon: Some(300.0),
        ..Overrides::default()
    };
    let (_, _, events) = timeline_of(
        "examples/single-turn/vllm.sq",
        overrides,
        (150.0, 160.0),
        DEFAULT_CAP,
    );
    check_format(&events);
    let timed: Vec<&Value> = events.iter().filter(|e| e["ph"] != "M").collect();
    assert!(timed.len() > 100);
    for e in timed {
        let ts = num(e, "ts");
        let end = ts + e["dur"].as_f64().unwrap_or(0.0);
        assert!((150e6..=160e6).contains(&ts) && end <= 160e6 + 1e-3, "{e}");
    }
}

#[test]
fn the_cap_stops_the_timeline_and_leaves_a_valid_trace() {
    let (_, _, events) = timeline_of(
        "examples/single-turn/vllm.sq",
        Overrides::default(),
        (0.0, f64::INFINITY),
        1000,
    );
    assert_eq!(events.len(), 1000);
    check_format_except_unpaired(&events);
}

/// A capped trace may stop between a span's begin and its end (they are
/// written one after the other); every other rule holds.
fn check_format_except_unpaired(events: &[Value]) {
    let mut events = events.to_vec();
    if events.last().is_some_and(|e| e["ph"] == "b") {
        events.pop();
    }
    check_format(&events);
}

fn serq(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the serq binary runs")
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("serq-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name).to_string_lossy().into_owned()
}

#[test]
fn run_writes_the_timeline_file_and_warns_at_the_cap() {
    let out = scratch("capped.json");
    let run = serq(&[
        "run",
        "examples/single-turn/mm1.sq",
        "--timeline",
        &out,
        "--timeline-cap",
        "50",
    ]);
    assert_eq!(run.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("cap of 50 events"), "{stderr}");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    assert_eq!(trace["traceEvents"].as_array().map(Vec::len), Some(50));
}

#[test]
fn bad_timeline_flags_are_refused_before_the_run_with_exit_2() {
    let out = scratch("refused.json");
    for (args, says) in [
        (
            vec!["--timeline", &out, "--timeline-window", "5:2"],
            "FROM < TO",
        ),
        (
            vec!["--timeline", &out, "--timeline-window", "a:2"],
            "two numbers",
        ),
        (
            vec!["--timeline", &out, "--timeline-window", "30000:40000"],
            "after the run's horizon",
        ),
        (
            vec!["--timeline", "/no/such/dir/t.json"],
            "no such directory",
        ),
        (
            vec!["--timeline", &out, "--timeline-cap", "0"],
            "timeline-cap",
        ),
    ] {
        let _ = std::fs::remove_file(&out);
        let mut all = vec!["run", "examples/single-turn/mm1.sq"];
        all.extend(args.iter().copied());
        let run = serq(&all);
        assert_eq!(run.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        assert!(run.stdout.is_empty(), "no report for {all:?}");
    }
}
