//! The report's text table and JSON, from a report filled by hand with the
//! figures of spec §6.11's worked example (two reads over egress and ingress).

use serq::Report;
use serq::report::{Observation, PoolRow, StageRow, Welford};

fn worked_example() -> Report {
    Report {
        source_name: "egress.sq".into(),
        horizon: 10.0,
        end: 10.0,
        warmup: 0.0,
        seed: 1,
        events: 7,
        arrivals: 2,
        ended: 2,
        turns: 0,
        mean_live: 0.8,
        live_series: Vec::new(),
        stage_series: Vec::new(),
        pool_series: Vec::new(),
        observes: vec![Observation {
            name: "transferred".into(),
            samples: vec![3.0, 3.0],
            moments: Welford::of(&[3.0, 3.0]),
            provenance: None,
        }],
        stages: vec![StageRow {
            name: "egress".into(),
            member: None,
            mean_number: 0.4,
            utilization: Some(0.2),
            completed: 2,
            throughput: 0.2,
            mean_wait: Some(0.0),
            mean_service: Some(2.0),
            iterations: 0,
        }],
        pools: vec![PoolRow {
            name: "kvP".into(),
            member: None,
            mean_used: 6.0,
            mean_cached: 0.0,
            mean_queue: 0.0,
            mean_holders: 0.6,
            mean_wait: Some(0.0),
            admissions: 2,
            evicted_entries: 0,
            evicted_units: 0.0,
            preemptions: 0,
            spills: 0,
            rejected: 0,
            stuck: 0,
        }],
        turn_marks: None,
        negative_amounts: None,
    }
}

#[test]
fn table_has_the_header_line_and_one_row_per_figure() {
    let table = worked_example().to_table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "egress.sq  seed 1  horizon 10  end 10  warmup 0  events 7  arrivals 2  ended 2  mean_live 0.800"
    );
    // Two equal samples: mean 3, no CI below 40 samples (±inf), cv² 0, p50 p90 p95 p99 3.
    let words: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        words,
        [
            "transferred",
            "2",
            "3.0000",
            "±inf",
            "0.000",
            "3.0000",
            "3.0000",
            "3.0000",
            "3.0000"
        ]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "observation",
            "count",
            "mean",
            "±ci",
            "cv²",
            "p50",
            "p90",
            "p95",
            "p99"
        ]
    );
    let words: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(
        words,
        ["egress", "0.400", "0.200", "2", "0.200", "0.0000", "2.0000"]
    );
    let words: Vec<&str> = lines[6].split_whitespace().collect();
    assert_eq!(
        words,
        [
            "kvP", "6.000", "0.000", "0.000", "0.600", "0.0000", "2", "0"
        ]
    );
}

#[test]
fn json_uses_the_reference_field_names_and_null_for_undefined() {
    let mut report = worked_example();
    report.stages[0].mean_service = None;
    let v: serde_json::Value = serde_json::from_str(&report.to_json(true)).unwrap();
    assert_eq!(v["events"], 7);
    assert_eq!(v["mean_live"], 0.8);
    let obs = &v["observes"]["transferred"];
    assert_eq!(
        (obs["count"].as_u64(), obs["mean"].as_f64()),
        (Some(2), Some(3.0))
    );
    assert!(obs["ci"].is_null());
    // The reference's fields, then serq's percentiles beside them.
    assert!(report.to_json(false).contains(
        r#""transferred":{"count":2,"mean":3.0,"ci":null,"cv2":0.0,"p99":3.0,"p50":3.0,"p90":3.0,"p95":3.0}"#
    ));
    assert_eq!(obs["p50"], 3.0);
    assert_eq!(obs["samples"], serde_json::json!([3.0, 3.0]));
    assert!(v["stages"][0]["mean_service"].is_null());
    assert_eq!(v["pools"][0]["admissions"], 2);
    // Without --samples the samples are left out.
    let v: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    assert!(v["observes"]["transferred"].get("samples").is_none());
}

#[test]
fn array_members_print_with_their_index() {
    let mut report = worked_example();
    report.stages[0].member = Some(1);
    assert!(
        report
            .to_table()
            .lines()
            .any(|l| l.starts_with("egress[1] "))
    );
}

#[test]
fn percentiles_of_a_small_sample_in_table_and_json() {
    // Samples 4 1 3 2 5 (n = 5), sorted 1 2 3 4 5: p50 rank ⌈2.5⌉ = 3 → 3;
    // p90 rank ⌈4.5⌉ = 5 → 5; p95 ⌈4.75⌉ = 5 → 5; p99 ⌈4.95⌉ = 5 → 5.
    let mut report = worked_example();
    report.observes[0].samples = vec![4.0, 1.0, 3.0, 2.0, 5.0];
    let v: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    let obs = &v["observes"]["transferred"];
    assert_eq!(
        [&obs["p50"], &obs["p90"], &obs["p95"], &obs["p99"]],
        [3.0, 5.0, 5.0, 5.0]
    );
    let table = report.to_table();
    let words: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(&words[5..], ["3.0000", "5.0000", "5.0000", "5.0000"]);

    // Samples 1..=20: p50 rank 10, p90 rank 18, p95 rank 19, p99 rank
    // ⌈19.8⌉ = 20: the table's p95 column is the JSON's p95.
    report.observes[0].samples = (1..=20).map(f64::from).collect();
    let v: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    assert_eq!(v["observes"]["transferred"]["p95"], 19.0);
    let table = report.to_table();
    let head: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&head[5..], ["p50", "p90", "p95", "p99"]);
    let words: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(&words[5..], ["10.0000", "18.0000", "19.0000", "20.0000"]);
}

#[test]
fn by_family_folds_an_array_into_one_row_of_mean_min_and_max() {
    // egress[0..3] with utilisations 0.2, 0.4, 0.6: one row `egress ×3`,
    // util mean 0.4, min 0.2, max 0.6; kvP stays a row of its own.
    let mut report = worked_example();
    let row = report.stages[0].clone();
    report.stages = [0.2, 0.4, 0.6]
        .iter()
        .enumerate()
        .map(|(i, &u)| StageRow {
            member: Some(i),
            utilization: Some(u),
            ..row.clone()
        })
        .collect();
    let table = report.to_table_by_family();
    let line = table
        .lines()
        .find(|l| l.starts_with("egress ×3"))
        .expect("one folded row");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[2..6], ["0.400", "0.400", "0.200", "0.600"]);
    assert!(!table.contains("egress[0]"));
    let v: serde_json::Value = serde_json::from_str(&report.to_json_by_family(false)).unwrap();
    let egress = &v["stages"][0];
    assert_eq!(egress["members"], 3);
    assert_eq!(egress["utilization"]["min"], 0.2);
    assert_eq!(egress["utilization"]["max"], 0.6);
    assert_eq!(v["stages"].as_array().unwrap().len(), 1);
    // Unfolded, every JSON row carries its member index.
    let v: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    assert_eq!(v["stages"][2]["member"], 2);
    assert!(v["pools"][0]["member"].is_null());
}

#[test]
fn a_wide_figure_widens_its_column_instead_of_touching_the_next() {
    // chat.sq's kv pool: 11759.553 used and 36239.694 cached once printed as
    // `11759.55336239.694`; each figure now keeps a space before it.
    let mut report = worked_example();
    report.pools[0].mean_used = 11759.553;
    report.pools[0].mean_cached = 36239.694;
    let table = report.to_table();
    let row: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("kvP "))
        .expect("the pool's row")
        .split_whitespace()
        .collect();
    assert_eq!(row[..3], ["kvP", "11759.553", "36239.694"]);
    // The header stays over its column: right edges line up.
    let head = table
        .lines()
        .find(|l| l.starts_with("pool"))
        .expect("header");
    let line = table.lines().find(|l| l.starts_with("kvP ")).expect("row");
    let right = |l: &str, word: &str| l.find(word).map(|i| i + word.len());
    assert_eq!(right(head, "cached"), right(line, "36239.694"));
}

#[test]
fn a_serving_run_shows_iterations_evictions_and_preemptions() {
    // The kernel report keeps its columns.
    let kernel = worked_example().to_table();
    assert!(!kernel.contains("iters") && !kernel.contains("preempted"));
    let mut report = worked_example();
    report.stages[0].iterations = 345917;
    report.pools[0].evicted_units = 6657792.0;
    report.pools[0].preemptions = 344;
    let table = report.to_table();
    let stage: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("stage"))
        .take(2)
        .flat_map(str::split_whitespace)
        .collect();
    assert_eq!(stage[7], "iters");
    assert_eq!(stage[15], "345917");
    let pool = table.lines().find(|l| l.starts_with("kvP ")).expect("row");
    let words: Vec<&str> = pool.split_whitespace().collect();
    assert_eq!(words[8..], ["6657792", "344"]);
}
