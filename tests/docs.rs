//! Every fenced ```sq block in docs/ links; blocks marked ```sq error show
//! a fault and must be refused. The documentation cannot drift from the
//! language without this test failing.

use serq::Overrides;
use std::path::Path;

/// (file, first line of the block, is an error block, text) for every sq block.
fn sq_blocks() -> Vec<(String, usize, bool, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("docs/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut blocks = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable doc");
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut current: Option<(usize, bool, String)> = None;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            match current.take() {
                None => {
                    if let Some(info) = trimmed.strip_prefix("```") {
                        let words: Vec<&str> = info.split_whitespace().collect();
                        if words.first() == Some(&"sq") {
                            current = Some((i + 1, words.contains(&"error"), String::new()));
                        }
                    }
                }
                Some((start, is_error, mut body)) => {
                    if trimmed.starts_with("```") {
                        blocks.push((name.clone(), start, is_error, body));
                    } else {
                        body.push_str(line);
                        body.push('\n');
                        current = Some((start, is_error, body));
                    }
                }
            }
        }
    }
    blocks
}

#[test]
fn every_sq_block_in_the_docs_links_and_every_error_block_is_refused() {
    let blocks = sq_blocks();
    assert!(
        blocks.len() >= 30,
        "docs/ holds the language's examples ({} found)",
        blocks.len()
    );
    let mut failures = Vec::new();
    for (file, line, is_error, text) in &blocks {
        let result = serq::compile_source(text, &Overrides::default());
        match (is_error, result) {
            (false, Err(d)) => failures.push(format!(
                "{file}:{line}: does not link: {}",
                d.iter()
                    .map(|d| d.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            (true, Ok(_)) => failures.push(format!("{file}:{line}: marked `sq error` but links")),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_serving_construct_has_an_example_in_the_docs_that_links() {
    // Each of these appears in some ```sq block (not an error block), so
    // the test above links an example of it. `use` is the exception: a
    // program given as text cannot `use` (tests/libraries.rs runs it).
    let linked: String = sq_blocks()
        .into_iter()
        .filter(|(_, _, is_error, _)| !is_error)
        .map(|(_, _, _, text)| text)
        .collect();
    let constructs = [
        ": step",
        "budget ",
        "chunk ",
        "cost ",
        "memory ",
        "serve admission",
        "serve decode first",
        "serve exclusive prefill",
        "serve by (",
        "prefill (",
        "decode (",
        "growing ",
        "block ",
        "blocksize(",
        "evict lru",
        "evict by (",
        "preempt lifo",
        "preempt none",
        "queue fifo",
        "queue by (",
        "admit via ",
        "spill ",
        "reuse (",
        "at admission (",
        "cache (",
        "cached",
        "computed",
        "cachedin(",
        "drop ",
        "budget_left(",
        "hidden ",
        "server {",
        "request;",
        "trace \"",
        " ordered;",
        "more",
        "turn_no",
        "est_lambda(",
        "est_rho(",
        "est_wait(",
        "price(",
        "tool ",
        " on ",
        "kv_decode",
        "kv_prefill",
        "attention",
        "decoders",
        "residents",
        "prefilled",
        "tokens",
        "remaining",
        "decoding",
        "admission",
        "waited",
        "waiting",
        "size",
        "age",
        "last",
    ];
    let missing: Vec<&str> = constructs
        .iter()
        .copied()
        .filter(|c| !linked.contains(c))
        .collect();
    assert!(missing.is_empty(), "no linked example of {missing:?}");
}
