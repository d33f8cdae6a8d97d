//! Hostile input gets a clear error: never a panic, a stack overflow, a hang
//! or a huge allocation. Each test pins one limit (docs/development.md lists
//! them) or one input a fuzzer found. They run on the test harness's 2 MiB
//! threads in debug builds too, which is the tightest stack serq meets.

use serq::{Overrides, compile_ir, compile_source};

/// A complete program around one session statement.
fn with_session(stmts: &str) -> String {
    format!(
        "stage s : ps(1);\nworkload {{ arrive batch(1); }}\nsession {{ {stmts} run s (1); }}\nrun {{ horizon 10; }}\n"
    )
}

/// The messages of a program that must be refused.
fn refused(source: &str) -> Vec<String> {
    match compile_source(source, &Overrides::default()) {
        Ok(_) => panic!("linked: {}", &source[..source.len().min(200)]),
        Err(d) => {
            // Rendering must not panic either (long lines, spans at the end).
            let _ = serq::syntax::render(&d, "hostile.sq", source);
            d.into_iter().map(|d| d.message).collect()
        }
    }
}

fn assert_mentions(messages: &[String], words: &[&str]) {
    assert!(
        messages.iter().any(|m| words.iter().all(|w| m.contains(w))),
        "no message has all of {words:?}: {messages:?}"
    );
}

/// The messages of IR JSON that must be refused.
fn ir_refused(json: &str) -> Vec<String> {
    match compile_ir(json, &Overrides::default()) {
        Ok(_) => panic!("accepted: {}", &json[..json.len().min(200)]),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

// ----- sizes ---------------------------------------------------------------

#[test]
fn an_array_of_a_trillion_members_is_refused_without_allocating() {
    let m = refused(
        "stage s[1e12] : delay;\nworkload { arrive batch(1); }\nsession { run s[0] (1); }\nrun { horizon 10; }\n",
    );
    assert_mentions(&m, &["array size", "at most 1000000"]);
}

#[test]
fn arrays_past_a_million_members_in_all_are_refused() {
    // Each array is within the per-array cap; together they are not.
    let m = refused(
        "pool p[600000] { cap 1; }\nstage s[600000] : delay;\nworkload { arrive batch(1); }\nsession { run s[0] (1); }\nrun { horizon 10; }\n",
    );
    assert_mentions(&m, &["stage `s`", "more than 1000000", "in all"]);
}

#[test]
fn batch_of_a_trillion_sessions_is_refused() {
    let m = refused(
        "stage s : delay;\nworkload { arrive batch(1e12); }\nsession { run s (1); }\nrun { horizon 10; }\n",
    );
    assert_mentions(&m, &["batch(n)", "at most 10000000"]);
}

#[test]
fn closed_of_a_trillion_sessions_is_refused() {
    let m = refused(
        "stage s : delay;\nworkload { arrive closed(1e12); }\nsession { run s (1); }\nrun { horizon 10; }\n",
    );
    assert_mentions(&m, &["closed(n)", "at most 10000000"]);
}

#[test]
fn batch_at_the_limit_links() {
    let source = "stage s : delay;\nworkload { arrive batch(10000000); }\nsession { run s (1); }\nrun { horizon 10; }\n";
    let p = compile_source(source, &Overrides::default()).expect("links");
    assert_eq!(p.arrival, serq::ir::Arrival::Batch(10_000_000));
}

#[test]
fn ir_with_a_batch_past_the_limit_is_refused() {
    let json = minimal_ir().replace(
        r#""arrival":"None""#,
        r#""arrival":{"Batch":1000000000000}"#,
    );
    assert_mentions(&ir_refused(&json), &["batch(n)", "at most 10000000"]);
}

// ----- nesting -------------------------------------------------------------

#[test]
fn blocks_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "{}{}",
        "branch (1) { ".repeat(10_000),
        "} ".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn loops_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "{}end; {}",
        "loop { ".repeat(10_000),
        "} ".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn parentheses_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "set x = {}1{};",
        "(".repeat(10_000),
        ")".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_chain_of_a_hundred_thousand_additions_is_refused() {
    // Left-associative: the tree is as deep as the chain is long.
    let source = with_session(&format!("set x = {};", vec!["1"; 100_000].join(" + ")));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_hundred_thousand_prefix_minuses_are_refused() {
    let source = with_session(&format!("set x = {}1;", "-".repeat(100_000)));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_chain_of_ands_and_a_tower_of_powers_are_refused() {
    let ands = with_session(&format!("set x = {};", vec!["1"; 50_000].join(" && ")));
    assert_mentions(&refused(&ands), &["at most 100 levels of nesting"]);
    let powers = with_session(&format!("set x = {};", vec!["1"; 50_000].join("^")));
    assert_mentions(&refused(&powers), &["at most 100 levels of nesting"]);
}

#[test]
fn a_sum_of_ninety_terms_links_and_its_ir_reads_back() {
    // 90 levels: within the parser's 100, and its JSON (~180 levels) is
    // past serde_json's default limit of 128, which IR reading lifts.
    let source = with_session(&format!("set x = {};", vec!["now"; 90].join(" + ")));
    let p = compile_source(&source, &Overrides::default()).expect("links");
    let back = compile_ir(&p.to_json(), &Overrides::default()).expect("reads back");
    assert_eq!(back, p);
}

#[test]
fn nested_calls_as_deep_as_the_parser_allows_read_back_from_ir() {
    // `min(…, 1)` costs 4 JSON levels per level of expression.
    let source = with_session(&format!(
        "set x = {}now{};",
        "min(".repeat(45),
        ", 1)".repeat(45)
    ));
    let p = compile_source(&source, &Overrides::default()).expect("links");
    let back = compile_ir(&p.to_json(), &Overrides::default()).expect("reads back");
    assert_eq!(back, p);
}

/// Found by `run_bounded`: a `branch` in `init` (refused) lowered its arms
/// into blocks before `turn` and the session had theirs, so they took
/// another block's number (a debug build's assertion panicked). Both
/// blocks' `branch`es are reported, each in its own block's words.
#[test]
fn a_branch_in_the_workload_blocks_is_refused_in_each() {
    let messages = refused(
        "stage s : delay;\nworkload { arrive closed(2); init { branch (0.5) { set x = 1; } else { set x = 2; } }\n  turn { branch (0.5) { set y = 1; } } }\nsession { run s (1); turn; }\nrun { horizon 10; }\n",
    );
    assert_mentions(&messages, &["`init` block has a `branch`"]);
    assert_mentions(&messages, &["`turn` block has a `branch`"]);
}

// ----- defs ----------------------------------------------------------------

#[test]
fn a_def_that_calls_itself_is_refused() {
    let m =
        refused(&with_session("set y = f(1);").replace("stage s", "def f(x) = f(x) + 1;\nstage s"));
    assert_mentions(&m, &["`f` uses itself"]);
}

#[test]
fn a_statement_def_that_calls_itself_is_refused() {
    let m = refused(&with_session("w();").replace("stage s", "def w() { w(); }\nstage s"));
    assert_mentions(&m, &["`w` uses itself"]);
}

#[test]
fn defs_that_double_at_each_level_are_refused_before_they_blow_up() {
    // f39 would expand to 2^40 nodes.
    let mut defs = String::from("def f0(x) = x + x;\n");
    for k in 1..40 {
        defs += &format!("def f{k}(x) = f{}(x) + f{}(x);\n", k - 1, k - 1);
    }
    let source = format!("{defs}{}", with_session("set y = f39(now);"));
    // Refused by the expansion's node count, so it ends (no wall-clock
    // bound here: speed is for benches, not tests).
    let m = refused(&source);
    assert_mentions(&m, &["expanding the `def`s", "more than 1000000"]);
}

#[test]
fn statement_defs_that_double_at_each_level_are_refused() {
    let mut defs = String::from("def w0() { set y = 1; set y = 2; }\n");
    for k in 1..40 {
        defs += &format!("def w{k}() {{ w{}(); w{}(); }}\n", k - 1, k - 1);
    }
    let m = refused(&format!("{defs}{}", with_session("w39();")));
    assert_mentions(&m, &["expanding the `def`s", "more than 1000000"]);
}

#[test]
fn a_long_chain_of_defs_is_refused_for_its_expanded_depth() {
    // Each def is shallow; expanded, the last is 2000 levels deep.
    let mut defs = String::from("def f0(x) = x + 1;\n");
    for k in 1..2000 {
        defs += &format!("def f{k}(x) = f{}(x) + 1;\n", k - 1);
    }
    let m = refused(&format!("{defs}{}", with_session("set y = f1999(now);")));
    assert_mentions(&m, &["levels of nesting once the `def`s are expanded"]);
}

#[test]
fn nested_uses_of_a_deep_def_are_refused_for_their_expanded_depth() {
    let body = vec!["x"; 60].join(" + ");
    let source = format!(
        "def f(x) = {body};\n{}",
        with_session("set y = f(f(f(f(f(f(f(f(now))))))));")
    );
    assert_mentions(
        &refused(&source),
        &["levels of nesting once the `def`s are expanded"],
    );
}

// ----- a long line and big numbers -----------------------------------------

/// 100 MB in a release build (`cargo test --release`, as CI runs it, about
/// 2 s); 10 MB in a debug build, where 100 MB takes about a minute.
const LONG_LINE: usize = if cfg!(debug_assertions) {
    10 << 20
} else {
    100 << 20
};

#[test]
fn a_hundred_megabyte_line_is_refused_quickly() {
    // One unknown name of 100 MB (a line of that length in a session).
    let name = "a".repeat(LONG_LINE);
    let source = with_session(&format!("set x = {name};"));
    let m = refused(&source);
    assert!(
        m.iter().any(|m| m.contains("unknown")),
        "{:?}",
        m.iter().map(|m| &m[..m.len().min(80)]).collect::<Vec<_>>()
    );
}

#[test]
fn a_hundred_megabyte_comment_line_links() {
    let source = format!("// {}\n{}", "x".repeat(LONG_LINE), with_session(""));
    compile_source(&source, &Overrides::default()).expect("links");
}

#[test]
fn a_horizon_of_1e300_links_and_an_infinite_one_is_refused() {
    // 1e300 is finite: a run ends when its events run out (the engine's
    // test in tests/generated.rs runs such a program).
    let source = with_session("").replace("horizon 10", "horizon 1e300");
    let p = compile_source(&source, &Overrides::default()).expect("links");
    assert_eq!(p.horizon, 1e300);
    let inf = with_session("").replace("horizon 10", "horizon 1e400");
    assert_mentions(&refused(&inf), &["horizon", "finite"]);
}

#[test]
fn an_override_horizon_of_nan_is_refused() {
    let overrides = Overrides {
        horizon: Some(f64::NAN),
        ..Overrides::default()
    };
    assert!(compile_source(&with_session(""), &overrides).is_err());
    assert!(compile_ir(&minimal_ir(), &overrides).is_err());
}

// ----- IR JSON -------------------------------------------------------------

/// The smallest valid IR: no sessions, one stage.
fn minimal_ir() -> String {
    r#"{"version":8,"attrs":["cached","serial","turn_no","new","out","think","more","forced","computed"],"observes":[],"pools":[],"stages":[{"name":"s","kind":"Delay"}],"arrival":"None","init":0,"turn":1,"session":2,"blocks":[[],[],[]],"horizon":10.0,"warmup":0.0,"seed":1}"#.to_string()
}

fn with_session_ir(stmts: &str) -> String {
    minimal_ir().replace(
        r#""blocks":[[],[],[]]"#,
        &format!(r#""blocks":[[],[],[{stmts}]]"#),
    )
}

#[test]
fn the_minimal_ir_is_valid() {
    compile_ir(&minimal_ir(), &Overrides::default()).expect("valid");
}

#[test]
fn ir_with_a_stage_index_out_of_range_is_refused() {
    let json = with_session_ir(
        r#"{"Run":{"stage":{"base":7,"count":1,"index":null},"mode":"Plain","work":{"Num":1.0},"growing":null}}"#,
    );
    assert_mentions(&ir_refused(&json), &["out of range"]);
}

#[test]
fn ir_with_a_huge_family_count_is_refused() {
    let json = with_session_ir(
        r#"{"Run":{"stage":{"base":0,"count":18446744073709551615,"index":{"Num":3.0}},"mode":"Plain","work":{"Num":1.0},"growing":null}}"#,
    );
    ir_refused(&json);
}

#[test]
fn ir_with_a_block_index_out_of_range_is_refused() {
    let json = with_session_ir(r#"{"Loop":99}"#);
    assert_mentions(&ir_refused(&json), &["block 99 is out of range"]);
}

#[test]
fn ir_with_an_attribute_slot_out_of_range_is_refused() {
    let json = with_session_ir(r#"{"Set":[1000000,{"Attr":123456789}]}"#);
    assert_mentions(&ir_refused(&json), &["out of range"]);
}

#[test]
fn ir_with_blocks_in_a_cycle_is_refused() {
    let json = minimal_ir().replace(
        r#""blocks":[[],[],[]]"#,
        r#""blocks":[[],[],[],[{"Loop":3}]]"#,
    );
    ir_refused(&json);
}

#[test]
fn ir_of_another_version_is_refused() {
    let json = minimal_ir().replace(r#""version":8"#, r#""version":7"#);
    assert_mentions(&ir_refused(&json), &["IR version 7", "reads 8"]);
    let huge = minimal_ir().replace(r#""version":8"#, r#""version":99999999999"#);
    ir_refused(&huge);
}

#[test]
fn ir_of_a_later_version_is_refused_by_its_version_not_its_fields() {
    // pyserq 0.1.0 writes IR version 9, which has fields version 8 lacks
    // (`trace_ordered`): the message names the version, not the field.
    let json = minimal_ir().replace(r#""version":8"#, r#""version":9,"trace_ordered":false"#);
    let messages = ir_refused(&json);
    assert_eq!(messages, ["IR version 9 (serq reads 8)"]);
}

#[test]
fn deeply_nested_json_is_refused_before_it_is_read() {
    for depth in [2_000, 1_000_000] {
        let json = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_mentions(&ir_refused(&json), &["more than 1000 deep"]);
    }
}

#[test]
fn brackets_inside_json_strings_do_not_count_as_nesting() {
    let name = "[".repeat(5_000);
    let json = minimal_ir().replace(r#""name":"s""#, &format!(r#""name":"{name}""#));
    compile_ir(&json, &Overrides::default()).expect("valid");
}

#[test]
fn an_ir_expression_nested_past_the_validators_limit_is_refused() {
    // 400 negations: 800 JSON levels, within the reader's 1000.
    let depth = 400;
    let expr = format!(
        "{}{{\"Num\":1.0}}{}",
        r#"{"Unary":["Neg","#.repeat(depth),
        "]}".repeat(depth)
    );
    let json = with_session_ir(&format!(r#"{{"Set":[3,{expr}]}}"#))
        .replace(r#""computed"]"#, r#""computed","x"]"#);
    assert_mentions(&ir_refused(&json), &["nested more than 200 deep"]);
}

#[test]
fn truncated_and_garbage_json_is_refused() {
    let full = minimal_ir();
    for cut in [0, 1, 10, full.len() / 2, full.len() - 1] {
        ir_refused(&full[..cut]);
    }
    ir_refused("\u{0}\u{1}garbage");
    ir_refused(r#"{"version":8}"#);
}

// ----- run-time limits -----------------------------------------------------

fn run_error(source: &str) -> serq::RunError {
    let program = compile_source(source, &Overrides::default()).expect("links");
    serq::run(&program).expect_err("the run must stop with an error")
}

#[test]
fn a_constant_choose_count_past_ten_million_is_refused() {
    let m = refused(&with_session("choose j in 1e8 by (j);"));
    assert_mentions(&m, &["`choose`", "100000000", "limit of 10000000"]);
}

#[test]
fn a_choose_count_of_ten_million_links() {
    compile_source(
        &with_session("choose j in 1e7 by (j);"),
        &Overrides::default(),
    )
    .expect("10^7 is the limit itself");
}

#[test]
fn a_computed_choose_count_past_ten_million_stops_the_run_at_once() {
    let e = run_error(&with_session("set n = 1e15; choose j in n by (j);"));
    assert!(
        e.message.contains("choose") && e.message.contains("limit of 10000000"),
        "{}",
        e.message
    );
    // The limit is checked before the first candidate: were it not, this
    // test would evaluate 10^15 of them and never end.
}

#[test]
fn fifo_with_four_billion_servers_serves_a_thousand_jobs_at_once() {
    // Servers are a count, not a slot each: nothing is allocated per server.
    let source = "stage s : fifo(4e9);\nworkload { arrive batch(1000); }\nsession { run s (1); }\nrun { horizon 10; }\n";
    let program = compile_source(source, &Overrides::default()).expect("links");
    let report = serq::run(&program).expect("runs");
    let row = &report.stages[0];
    // 1000 jobs of work 1 all start at 0: none waits.
    assert_eq!((row.completed, row.mean_wait), (1000, Some(0.0)));
}

/// Creates 10^7 sessions (about 3 GB): a release build takes ~4 s, a
/// debug build far longer, so it runs in release builds only.
#[test]
#[cfg_attr(debug_assertions, ignore = "10^7 sessions: run it in a release build")]
fn a_flood_of_arrivals_stops_at_ten_million_live_sessions() {
    let e = run_error(
        // 1e11 · 10 arrivals expected: within the 2^42 a horizon allows.
        "stage s : delay;\nworkload { arrive poisson(1e11); }\nsession { run s (1); }\nrun { horizon 10; }\n",
    );
    assert!(
        e.message.contains("10000000 live sessions") && e.message.contains("limit"),
        "{}",
        e.message
    );
    // Arrivals 1e-11 apart: the flood fills the limit long before time 1.
    assert!(e.time < 1.0, "{}", e.time);
}
