//! Faults the IR validator finds, reported at the statement's place.

use super::*;

#[test]
fn validator_faults_point_at_the_statement() {
    let src = with_b(
        "stage a[2] : delay;\nsession {\n  choose j in 20000000 by (j);\n  run a[0] (1);\n}",
    );
    let d = refused(&src, &["count 20000000", "limit"]);
    assert_eq!(
        &src[d[0].span.start as usize..d[0].span.end as usize],
        "choose j in 20000000 by (j);"
    );
}

#[test]
fn a_constant_index_out_of_range_is_reported_with_the_other_link_errors() {
    // The linker checks a constant index itself, at the index, so an
    // unknown stage elsewhere does not hide it (the validator, which runs
    // only on a program that linked, checks it again for IR).
    let src = with_b("stage a[2] : delay;\nsession {\n  run a[7] (1);\n  run b (1);\n}");
    let d = refused(&src, &["index 7 out of range", "indices 0 to 1"]);
    assert_eq!(&src[d[0].span.start as usize..d[0].span.end as usize], "7");
    assert!(d.iter().any(|d| d.rule == "unknown-stage"), "{d:?}");
    refused(
        &with_b("stage a[2] : delay;\nsession { run a[-1] (1); }"),
        &["not a whole number"],
    );
}

#[test]
fn a_validator_fault_renders_with_file_line_column_and_caret() {
    let src = "stage A : ps(1);\nstage C : fifo;\nshare maxmin;\nsession {\n  run A, C (1);\n}\nworkload { arrive batch(1); } run { horizon 5; }";
    let d = refused(src, &["stage `C`", "`fifo`", "ps"]);
    let text = serq::syntax::render(&d, "egress.sq", src);
    assert!(text.contains("egress.sq:5:3"), "{text}");
    assert!(text.contains("run A, C (1);"), "{text}");
    assert!(text.contains("help:"), "{text}");
}
