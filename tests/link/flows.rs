//! Runs over several stages and the `share` policy.

use super::*;

#[test]
fn flow_rules_of_the_seed() {
    refused(
        &with_b("stage a:ps(1); stage b:ps(1); session { run a, b (1); }"),
        &["share"],
    );
    refused(
        &with_b("stage a:ps(1); share maxmin; session { run a (1); }"),
        &["share", "without"],
    );
    refused(
        &with_b("stage a:ps(1); stage b:fifo; share maxmin; session { run a, b (1); }"),
        &["stage `b`", "ps", "above 0"],
    );
    refused(
        &with_b("stage a:ps(1); stage b:ps(0); share maxmin; session { run a, b (1); }"),
        &["stage `b`", "above 0"],
    );
    refused(
        &with_b(
            "stage a:ps(1); stage b:ps(min(present,2)); share maxmin; session { run a, b (1); }",
        ),
        &["stage `b`", "constant"],
    );
    refused(
        &with_b("stage a[2]:ps(1); share maxmin; session { run a[0], a[1] (1); }"),
        &["stage `a`", "twice"],
    );
    refused(
        &with_b(
            "stage a:ps(1); stage b:ps(1); share maxmin; share bottleneck; session { run a, b (1); }",
        ),
        &["share", "twice"],
    );
    refused(
        &with_b("stage a:ps(1); share fair; session { run a (1); }"),
        &["`share` takes `maxmin` or `bottleneck`, found `fair`"],
    );
    let p = linked(&with_b(
        "let C = 4; stage a:ps(1+1); stage b:ps(C); share bottleneck; session { run a, b (1); run a (1); }",
    ));
    assert_eq!(p.share, Some(ir::Share::Bottleneck));
    assert_eq!(p.shared_stages(), vec![true, true]);
}
