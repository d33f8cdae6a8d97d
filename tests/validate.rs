//! `Program::validate` on IR that did not come from the linker: hand-written
//! JSON breaking each rule is refused, with the message the linker gives for
//! the same fault in source text.

use serde_json::{Value, json};
use serq::ir::{IrError, Program};
use serq::link::{Overrides, link};
use serq::syntax::parse;

/// A small valid program: two ps(1) stages carrying one flow, `share maxmin`.
fn flow_program() -> Value {
    json!({
        "version": 8,
        "attrs": ["cached","serial","turn_no","new","out","think","more","forced","computed"],
        "observes": [],
        "pools": [{"name": "kv", "cap": 4.0}],
        "stages": [
            {"name": "a", "kind": {"Ps": {"Num": 1.0}}},
            {"name": "b", "kind": {"Ps": {"Num": 1.0}}},
            {"name": "c", "kind": "Delay"}
        ],
        "arrival": {"Batch": 1},
        "init": 0, "turn": 1, "session": 2,
        "blocks": [[], [], [
            {"Run": {"stage": {"base": 0, "count": 1, "index": null}, "mode": "Plain",
                     "work": {"Num": 1.0}, "growing": null,
                     "also": [{"base": 1, "count": 1, "index": null}]}},
            "End"
        ]],
        "horizon": 10.0, "warmup": 0.0, "seed": 1,
        "share": "MaxMin"
    })
}

fn errors(v: &Value) -> Vec<IrError> {
    match Program::from_json(&v.to_string()) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => e,
    }
}

/// The messages the linker gives for a source program (parse must succeed).
fn link_messages(src: &str) -> Vec<String> {
    let (ast, d) = parse(src);
    assert!(d.is_empty(), "{d:?}");
    match link(&ast, src, &Overrides::default()) {
        Ok(_) => panic!("linked: {src}"),
        Err(d) => d.into_iter().map(|d| d.message).collect(),
    }
}

fn messages(v: &Value) -> Vec<String> {
    errors(v).into_iter().map(|e| e.message).collect()
}

#[test]
fn the_base_program_is_valid() {
    let p = Program::from_json(&flow_program().to_string()).unwrap();
    assert!(p.has_flows());
}

#[test]
fn a_flow_without_share_is_refused_as_from_source() {
    let mut v = flow_program();
    v.as_object_mut().unwrap().remove("share");
    let e = errors(&v);
    assert_eq!(e[0].at, Some((2, 0)));
    let src = "stage a:ps(1); stage b:ps(1); stage c:delay; pool kv { cap 4; }
               workload { arrive batch(1); } session { run a, b (1); end; } run { horizon 10; }";
    assert_eq!(messages(&v), link_messages(src));
    assert!(e[0].message.contains("share"));
}

#[test]
fn share_without_a_flow_is_refused() {
    let mut v = flow_program();
    v["blocks"][2][0]["Run"]
        .as_object_mut()
        .unwrap()
        .remove("also");
    let m = messages(&v);
    assert!(m[0].contains("share") && m[0].contains("without"), "{m:?}");
    let src = "stage a:ps(1); stage b:ps(1); stage c:delay; pool kv { cap 4; } share maxmin;
               workload { arrive batch(1); } session { run a (1); end; } run { horizon 10; }";
    assert_eq!(m, link_messages(src));
}

#[test]
fn every_stage_of_a_flow_is_ps_of_a_constant_above_0() {
    for (kind, word, source_kind) in [
        (json!("Delay"), "delay", "delay"),
        (json!({"Fifo": 1}), "fifo", "fifo"),
        (json!({"Ps": {"Num": 0.0}}), "above 0", "ps(0)"),
        (json!({"Ps": {"Ctx": "N"}}), "constant", "ps(present)"),
    ] {
        let mut v = flow_program();
        v["stages"][1]["kind"] = kind;
        let m = messages(&v);
        assert!(
            m.iter()
                .any(|m| m.contains("stage `b`") && m.contains("ps") && m.contains(word)),
            "{m:?}"
        );
        let src = format!(
            "stage a:ps(1); stage b:{source_kind}; stage c:delay; pool kv {{ cap 4; }} share maxmin;
             workload {{ arrive batch(1); }} session {{ run a, b (1); end; }} run {{ horizon 10; }}"
        );
        assert_eq!(m, link_messages(&src));
    }
}

#[test]
fn a_stage_family_named_twice_in_one_run_is_refused() {
    let mut v = flow_program();
    v["blocks"][2][0]["Run"]["also"] = json!([{"base": 0, "count": 1, "index": {"Num": 0.0}}]);
    let m = messages(&v);
    assert!(
        m.iter()
            .any(|m| m.contains("stage `a`") && m.contains("twice")),
        "{m:?}"
    );
}

#[test]
fn a_run_on_a_shared_stage_must_be_plain() {
    let mut v = flow_program();
    let blocks = v["blocks"][2].as_array_mut().unwrap();
    blocks.insert(
        1,
        json!({"Run": {"stage": {"base": 1, "count": 1, "index": null}, "mode": "Decode",
                       "work": {"Num": 1.0}, "growing": null}}),
    );
    let e = errors(&v);
    assert_eq!(e[0].at, Some((2, 1)));
    assert!(
        e[0].message.contains("shared stage `b`") && e[0].message.contains("plain"),
        "{e:?}"
    );
}

#[test]
fn the_version_must_be_8() {
    let mut v = flow_program();
    v["version"] = json!(9);
    assert!(messages(&v)[0].contains("version 9"));
}

#[test]
fn indices_must_be_in_range() {
    let mut v = flow_program();
    v["blocks"][2][0]["Run"]["stage"]["base"] = json!(7);
    assert!(messages(&v)[0].contains("out of range"));
    let mut v = flow_program();
    v["blocks"][2][1] = json!({"Set": [42, {"Num": 1.0}]});
    assert!(messages(&v)[0].contains("slot 42"));
    let mut v = flow_program();
    v["blocks"][2][1] = json!({"Observe": [0, {"Num": 1.0}]});
    assert!(messages(&v)[0].contains("observation 0"));
    let mut v = flow_program();
    v["blocks"][2][1] = json!({"Run": {"stage": {"base": 2, "count": 1, "index": {"Num": 3.0}},
        "mode": "Plain", "work": {"Num": 1.0}, "growing": null}});
    let e = errors(&v);
    assert_eq!(e[0].at, Some((2, 1)));
    assert!(
        e[0].message.contains("index 3 out of range (count 1)"),
        "{e:?}"
    );
}

#[test]
fn blocks_are_referenced_once_and_without_cycles() {
    let mut v = flow_program();
    v["blocks"][2][1] = json!({"Loop": 2});
    assert!(messages(&v).iter().any(|m| m.contains("referenced")));
    let mut v = flow_program();
    v["blocks"] = json!([[], [], [{"Loop": 3}], [{"Loop": 4}], [{"Loop": 3}, "End"]]);
    assert!(messages(&v).iter().any(|m| m.contains("referenced")));
    let mut v = flow_program();
    v["blocks"] = json!([[], [], [], [{"Loop": 4}], [{"Loop": 3}, "End"]]);
    v.as_object_mut().unwrap().remove("share");
    assert!(
        messages(&v).iter().any(|m| m.contains("cycle")),
        "{:?}",
        messages(&v)
    );
    let mut v = flow_program();
    v["blocks"][2][1] = json!({"Loop": 9});
    assert!(messages(&v).iter().any(|m| m.contains("block 9")));
}

#[test]
fn run_options_and_numbers_are_checked() {
    let mut v = flow_program();
    v["horizon"] = json!("inf");
    assert!(messages(&v)[0].contains("horizon"));
    let mut v = flow_program();
    v["warmup"] = json!(10.0);
    assert!(messages(&v)[0].contains("warmup"));
    let mut v = flow_program();
    v["arrivals"] = json!(3);
    assert!(messages(&v)[0].contains("arrivals"));
    let mut v = flow_program();
    v["pools"][0]["cap"] = json!(-1.0);
    assert!(messages(&v)[0].contains("negative"));
    let mut v = flow_program();
    v["stages"][2]["kind"] = json!({"Fifo": 0});
    assert!(messages(&v)[0].contains("fifo servers"));
    let mut v = flow_program();
    v["stages"][2]["kind"] = json!({"Ps": {"Binary": ["Add", {"Num": 1.0}, {"Num": 1.0}]}});
    assert!(messages(&v)[0].contains("not folded"));
}

#[test]
fn statement_rules_hold_for_json_too() {
    let cases = [
        (
            json!({"Release": {"base": 0, "count": 1, "index": null}}),
            "outside a hold",
            0,
        ),
        (json!({"Loop": 3}), "livelock", 1),
        (json!({"Branch": [{"Num": 0.5}, 3, 4]}), "branch with", 2),
        (
            json!({"Hold": {"pools": [[{"base": 0, "count": 1, "index": null}, {"Sample": ["Exp", [{"Num": 1.0}]]}, null]],
                "body": 3, "lease": null}}),
            "may not draw",
            1,
        ),
    ];
    for (stmt, word, new_blocks) in cases {
        let mut v = flow_program();
        v["blocks"][2][1] = stmt;
        let mut blocks = v["blocks"].as_array().unwrap().clone();
        blocks.extend((0..new_blocks).map(|_| json!([])));
        v["blocks"] = Value::Array(blocks);
        let e = errors(&v);
        assert!(
            e.iter()
                .any(|e| e.message.contains(word) && e.at == Some((2, 1))),
            "{word}: {e:?}"
        );
    }
}

#[test]
fn deeply_nested_blocks_are_refused_without_exhausting_the_stack() {
    let mut v = flow_program();
    let n = 5000;
    let mut blocks = vec![json!([]), json!([]), json!([{"Loop": 3}])];
    for b in 3..3 + n {
        let last = b == 2 + n;
        blocks.push(if last {
            json!(["End"])
        } else {
            json!([{"Loop": b + 1}])
        });
    }
    v["blocks"] = Value::Array(blocks);
    v.as_object_mut().unwrap().remove("share");
    assert!(messages(&v).iter().any(|m| m.contains("nested")));
}

/// A small valid serving program: a step stage `e` with memory `kv`, one
/// hold prefilling growing.
fn step_program() -> Value {
    json!({
        "version": 8,
        "attrs": ["cached","serial","turn_no","new","out","think","more","forced","computed","secret"],
        "observes": [],
        "pools": [{"name": "kv", "cap": 40.0, "block": 4.0}],
        "stages": [{"name": "e", "kind": {"Step": {
            "budget": {"Num": 8.0}, "cost": {"Ctx": "Tokens"}, "chunk": {"Num": 0.0},
            "serve": {"By": []}, "memory": 0}}}],
        "arrival": {"Batch": 1},
        "init": 0, "turn": 1, "session": 2,
        "blocks": [[{"Set": [9, {"Num": 1.0}]}], [], [
            {"Hold": {"pools": [[{"base": 0, "count": 1, "index": null}, {"Num": 4.0}, null]],
                      "body": 3, "lease": null}}
        ], [
            {"Run": {"stage": {"base": 0, "count": 1, "index": null}, "mode": "Prefill",
                     "work": {"Num": 4.0}, "growing": {"base": 0, "count": 1, "index": null}}}
        ]],
        "horizon": 10.0, "warmup": 0.0, "seed": 1
    })
}

#[test]
fn a_serving_program_from_json_meets_the_linkers_rules() {
    assert!(Program::from_json(&step_program().to_string()).is_ok());
    let cases: [(&str, Value, &str); 8] = [
        (
            "/stages/0/kind/Step/budget",
            json!({"Num": 0.0}),
            "budget 0 must be above 0",
        ),
        (
            "/stages/0/kind/Step/budget",
            json!({"Ctx": "Tokens"}),
            "`tokens` is read in a step stage's budget",
        ),
        (
            "/stages/0/kind/Step/memory",
            json!(3),
            "memory pool 3 out of range",
        ),
        ("/pools/0/block", json!(-1.0), "block must be positive"),
        (
            "/pools/0/queue",
            json!([{"Sample": ["Exp", [{"Num": 1.0}]]}]),
            "queue key may not draw",
        ),
        (
            "/pools/0/admit_via",
            json!(5),
            "`admit via` stage 5 out of range",
        ),
        (
            "/blocks/3/0/Run/mode",
            json!("Plain"),
            "required on a step stage",
        ),
        (
            "/blocks/0/0/Set/1",
            json!({"Ctx": "Size"}),
            "`size` is read in a session statement",
        ),
    ];
    for (path, value, words) in cases {
        let mut v = step_program();
        // Replace the field, or add it to its object when it is absent.
        let (parent, key) = path.rsplit_once('/').unwrap();
        match v.pointer_mut(parent).unwrap_or_else(|| panic!("{path}")) {
            Value::Object(o) => {
                o.insert(key.to_string(), value);
            }
            Value::Array(a) => a[key.parse::<usize>().unwrap()] = value,
            other => panic!("{path}: {other}"),
        }
        let m = messages(&v);
        assert!(m.iter().any(|x| x.contains(words)), "{path}: {m:#?}");
    }
}

#[test]
fn a_hidden_attribute_read_by_the_scheduler_is_refused_in_json_too() {
    let mut v = step_program();
    v["hidden"] = json!([9]);
    assert!(
        Program::from_json(&v.to_string()).is_ok(),
        "a session may read it"
    );
    *v.pointer_mut("/blocks/2/0/Hold/pools/0/1").unwrap() = json!({"Attr": 9});
    let m = messages(&v);
    assert!(
        m.iter()
            .any(|x| x.contains("`secret` is hidden from the scheduler") && x.contains("header")),
        "{m:#?}"
    );
    let mut v = step_program();
    v["hidden"] = json!([0]);
    assert!(messages(&v).iter().any(|x| x.contains("hidden `cached`")));
}

#[test]
fn growing_outside_a_hold_of_its_pool_is_refused_in_json_too() {
    let mut v = step_program();
    let run = v.pointer("/blocks/3/0").unwrap().clone();
    v["blocks"][2] = json!([run]);
    v["blocks"].as_array_mut().unwrap().pop();
    let m = messages(&v);
    assert!(
        m.iter()
            .any(|x| x.contains("`growing kv` outside a hold of `kv`")),
        "{m:#?}"
    );
}
