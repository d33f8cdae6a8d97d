//! `RunOptions::provenance`: beside each observation sample, the time it
//! was taken, the session that took it and that session's turn; kept only
//! when asked.

use serq::report::Provenance;
use serq::{Overrides, RunOptions, compile_source, run, run_with};

/// Two sessions at t = 0. Session k (serial k) observes its serial in the
/// `init` block (t = 0, turn 0), then runs a delay for 1 + k, turns (the
/// `turn` block observes `turn_no` = 1 at t = 1 + k), observes the clock
/// (1 + k, turn 1), runs the delay for 2, turns (`turn_no` = 2 at 3 + k) and
/// observes the clock again (3 + k, turn 2). In time order: session 0 at 1,
/// session 1 at 2, session 0 at 3, session 1 at 4.
const TWO_TURNS: &str = "stage d : delay;
    workload { arrive batch(2); init { observe born = serial; } turn { observe tb = turn_no; } }
    session { run d (1 + serial); turn; observe x = now; run d (2); turn; observe x = now; }
    run { horizon 20; }";

fn kept(overrides: &Overrides) -> Vec<(String, Vec<f64>, Provenance)> {
    let program = compile_source(TWO_TURNS, overrides).expect("TWO_TURNS compiles");
    let mut options = RunOptions {
        provenance: true,
        ..RunOptions::default()
    };
    let report = run_with(&program, &mut options).expect("TWO_TURNS runs");
    report
        .observes
        .into_iter()
        .map(|o| {
            let p = o.provenance.expect("provenance was asked for");
            (o.name, o.samples, p)
        })
        .collect()
}

fn provenance(times: &[f64], sessions: &[u64], turns: &[u64]) -> Provenance {
    Provenance {
        times: times.to_vec(),
        sessions: sessions.to_vec(),
        turns: turns.to_vec(),
    }
}

#[test]
fn each_sample_has_its_time_session_and_turn() {
    // The same figures pyserq 0.1.0 gives for this program's
    // Observe.times, .sessions and .turns.
    let observes = kept(&Overrides::default());
    let born = provenance(&[0.0, 0.0], &[0, 1], &[0, 0]);
    let after_turns = provenance(&[1.0, 2.0, 3.0, 4.0], &[0, 1, 0, 1], &[1, 1, 2, 2]);
    assert_eq!(
        observes,
        vec![
            ("born".to_string(), vec![0.0, 1.0], born),
            (
                "tb".to_string(),
                vec![1.0, 1.0, 2.0, 2.0],
                after_turns.clone()
            ),
            ("x".to_string(), vec![1.0, 2.0, 3.0, 4.0], after_turns),
        ]
    );
}

#[test]
fn samples_before_warmup_leave_no_provenance() {
    // Warm-up 1.5 drops the births (t = 0) and session 0's first turn (t = 1).
    let observes = kept(&Overrides {
        warmup: Some(1.5),
        ..Overrides::default()
    });
    let later = provenance(&[2.0, 3.0, 4.0], &[1, 0, 1], &[1, 2, 2]);
    assert_eq!(
        observes[0],
        ("born".to_string(), vec![], Provenance::default())
    );
    assert_eq!(
        observes[1],
        ("tb".to_string(), vec![1.0, 2.0, 2.0], later.clone())
    );
    assert_eq!(observes[2], ("x".to_string(), vec![2.0, 3.0, 4.0], later));
}

#[test]
fn a_plain_run_keeps_only_the_values() {
    let program = compile_source(TWO_TURNS, &Overrides::default()).expect("TWO_TURNS compiles");
    let report = run(&program).expect("TWO_TURNS runs");
    assert!(report.observes.iter().all(|o| o.provenance.is_none()));
    assert_eq!(report.observes[2].samples, vec![1.0, 2.0, 3.0, 4.0]);
}
