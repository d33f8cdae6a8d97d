//! Recovery: every error in a file is reported, and rendering.

use super::*;

#[test]
fn every_error_in_a_file_is_reported() {
    let src = "\
let a = 1 +;
stage S : ps(1)
pool p { cap ; }
session {
  set x = (1;
  run S (1);
  set = 2;
  end;
}
gauge g = 1;
run { horizon 10; }
";
    let (program, diags) = parse(src);
    let lines: Vec<u32> = diags
        .iter()
        .map(|d| serq::syntax::diagnostic::line_col(src, d.span.start).0)
        .collect();
    assert_eq!(lines, [1, 3, 3, 5, 7, 10], "{diags:#?}");
    assert!(
        diags.iter().all(|d| d.message.contains("expected")),
        "{diags:#?}"
    );
    // What could be built is kept: stage, pool, session (with `run` and `end`), run.
    assert_eq!(program.items.len(), 4, "{:#?}", program.items);
    let Item::Session { body, .. } = &program.items[2] else {
        panic!()
    };
    let kinds: Vec<_> = body
        .stmts
        .iter()
        .map(|s| std::mem::discriminant(&s.kind))
        .collect();
    assert_eq!(kinds.len(), 2);
}

#[test]
fn a_missing_semicolon_before_a_new_line_keeps_the_next_declaration() {
    let src = "stage S : ps(1)\nworkload { arrive batch(1); }\n";
    let (program, diags) = parse(src);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0].message,
        "expected `;` after the declaration of stage `S`, found `workload`"
    );
    assert_eq!(text(src, diags[0].span), "workload");
    assert_eq!(program.items.len(), 2);
}

#[test]
fn a_statement_error_skips_to_the_next_line_that_begins_a_statement() {
    let (program, diags) = parse("session {\n  set x = 1 2\n  run S (1);\n}");
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let Item::Session { body, .. } = &program.items[0] else {
        panic!()
    };
    assert!(matches!(body.stmts[0].kind, StmtKind::Run { .. }));
}

#[test]
fn an_unclosed_block_is_reported_at_the_end_with_its_opening() {
    let src = "session { run S (1);";
    let d = one_error(src);
    assert_eq!(d.message, "expected `}` to close `{`, found end of file");
    assert_eq!(d.secondary[0].0, Span { start: 8, end: 9 });
}

#[test]
fn diagnostics_render_with_line_column_and_caret() {
    let src = "session {\n  run S ((1 + 2);\n}";
    let text = serq::syntax::render(&errors(src), "x.sq", src);
    assert!(
        text.contains("error[syntax]: expected `)` to close `(`, found `;`"),
        "{text}"
    );
    assert!(text.contains("x.sq:2:17"), "{text}");
}
