//! Faults the IR validator finds, reported at the statement's place.

use super::*;

#[test]
fn validator_faults_point_at_the_statement() {
    let src = with_b("stage a[2] : delay;\nsession {\n  run a[7] (1);\n}");
    let d = refused(&src, &["index 7"]);
    assert_eq!(
        &src[d[0].span.start as usize..d[0].span.end as usize],
        "run a[7] (1);"
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
