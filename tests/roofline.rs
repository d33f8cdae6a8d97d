//! `use <roofline>;`, the roofline library serq ships: its figures for
//! (model, GPU, TP) combinations derived by hand in the comments, the
//! decode bound the issue pins, how a step stage's cost reads it, and how
//! the linker treats the shipped library (found from text and from files,
//! an unknown name refused with a did-you-mean, no change to the IR of a
//! program that calls nothing from it).

use serq::{Overrides, compile_source};

/// The samples of each observation of a program that `use`s the library.
fn observe(body: &str) -> Vec<(String, f64)> {
    let source = format!(
        "use <roofline>;\nstage d : delay;\nworkload {{ arrive batch(1); }}\n\
         session {{ {body} run d (1); }}\nrun {{ horizon 10; }}\n"
    );
    let program = compile_source(&source, &Overrides::default()).expect("links");
    let report = serq::run(&program).expect("runs");
    report
        .observes
        .iter()
        .map(|o| (o.name.clone(), o.samples[0]))
        .collect()
}

/// One observed value.
fn value(expr: &str) -> f64 {
    observe(&format!("observe x = {expr};"))[0].1
}

/// Equal to rounding: the library and the derivation below add the same
/// terms, not always in the same order.
fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 1e-12 * expected.abs()
}

// The catalogue's ids: model 1 Llama-3.1-8B, 2 Llama-3.1-70B, 3 Llama-3.1-405B;
// GPU 2 H100 SXM, 3 H200.

#[test]
fn kv_bytes_per_token_is_two_times_layers_kv_heads_head_dim_and_bytes() {
    // Llama-3.1-8B BF16: 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 131 072.
    assert_eq!(value("kv_bytes_per_token(1, 2)"), 131072.0);
    // Llama-3.1-70B BF16: 2 · 80 · 8 · 128 · 2 = 327 680; per GPU at TP 4
    // each GPU keeps 8/4 = 2 KV heads: 2 · 80 · 2 · 128 · 2 = 81 920.
    assert_eq!(value("kv_bytes_per_token(2, 2)"), 327680.0);
    assert_eq!(value("kv_bytes_per_token_per_gpu(2, 2, 4, 1)"), 81920.0);
    // Llama-3.1-405B FP8 at TP 8: 2 · 126 · 1 · 128 · 1 = 32 256; at TP 16
    // the 8 KV heads are kept twice, still one head per GPU.
    assert_eq!(value("kv_bytes_per_token_per_gpu(3, 1, 8, 1)"), 32256.0);
    assert_eq!(value("kv_bytes_per_token_per_gpu(3, 1, 16, 1)"), 32256.0);
    // PP 2 halves the layers: ceil(126 / 2) = 63, so 2 · 63 · 1 · 128 · 2 = 32 256.
    assert_eq!(value("kv_bytes_per_token_per_gpu(3, 2, 8, 2)"), 32256.0);
    // A transfer of 1000 tokens of Llama-3.1-8B BF16: 1000 · 131 072 bytes.
    assert_eq!(value("kv_transfer_bytes(1, 2, 1000)"), 131_072_000.0);
}

#[test]
fn the_kv_pool_is_the_memory_less_a_spare_fraction_and_the_weights_share() {
    // Llama-3.1-8B BF16 on one H100, spare 0.1: 80 GiB · 0.9 = 77 309 411 328
    // bytes, less 8 030 261 248 · 2 = 16 060 522 496 of weights, leaves
    // 61 248 888 832, over 131 072 bytes a token: 467 291.9 → 467 291 tokens.
    assert_eq!(value("kv_pool_tokens(1, 2, 2, 1, 1, 0.1)"), 467_291.0);
    // Llama-3.1-70B BF16 on four H200s: 141 GiB · 0.9 = 136 257 837 465.6,
    // less 70 553 706 496 · 2 / 4 = 35 276 853 248 each, leaves
    // 100 980 984 217.6 over 81 920 a token: 1 232 678.03 → 1 232 678.
    assert_eq!(value("kv_pool_tokens(2, 3, 2, 4, 1, 0.1)"), 1_232_678.0);
    // Llama-3.1-405B FP8 on eight H100s: 77 309 411 328 less 405 853 388 800 / 8
    // = 50 731 673 600 leaves 26 577 737 728 over 32 256: 823 962.6 → 823 962.
    assert_eq!(value("kv_pool_tokens(3, 2, 1, 8, 1, 0.1)"), 823_962.0);
    // The same model in BF16 on 8 x 2 H100s (TP 8, PP 2): twice the bytes
    // over twice the GPUs, half the layers a GPU: again 823 962.
    assert_eq!(value("kv_pool_tokens(3, 2, 2, 8, 2, 0.1)"), 823_962.0);
    // 405B in BF16 on one H100 does not fit (77.3e9 bytes less 811.7e9 of
    // weights): the capacity is negative, which a pool refuses.
    assert!(value("kv_pool_tokens(3, 2, 2, 1, 1, 0.1)") < 0.0);
}

#[test]
fn a_decode_of_one_token_on_an_h100_is_the_weights_over_the_bandwidth_over_its_efficiency_plus_the_overhead()
 {
    // Llama-3.1-8B BF16, batch 1, context 0, one H100, flop efficiency 0.5,
    // memory efficiency 0.8, overhead 2 ms. The bound: 16 060 522 496 bytes
    // of weights / 3.35e12 B/s = 4.7942 ms (the 16 GB / 3.35 TB/s ≈
    // 4.8 ms); the token's KV written adds 131 072 bytes (0.04 µs). Memory:
    // (16 060 522 496 + 131 072) / (3.35e12 · 0.8) = 5.99278 ms. Compute:
    // 2 · 8 030 261 248 / (989.4e12 · 0.5) = 32.5 µs, far below. No TP.
    // So 5.99278 ms + 2 ms = 7.99278 ms.
    let bound = value("decode_bound(1, 2, 2, 1)");
    assert!(close(bound, 16_060_522_496.0 / 3.35e12), "{bound}");
    assert!(
        (bound - 16e9 / 3.35e12).abs() / bound < 0.004,
        "≈ 16 GB / 3.35 TB/s"
    );
    let expected = (16_060_522_496.0 + 131_072.0) / (3.35e12 * 0.8) + 0.002;
    let t = value("step_time(1, 2, 2, 1, 0.5, 0.8, 0.002, 1, 0, 0)");
    assert!(close(t, expected), "{t} vs {expected}");
    assert!(close(t, 0.007_992_781_182_089_553), "{t}");
    // And as a step stage's cost: an idle engine's one decode of one token
    // (no memory pool, so kv_decode = 0; attention 0) ends at that cost.
    let source = "use <roofline>;
        stage e : step { budget 8192; cost iteration_time(1, 2, 2, 1, 0.5, 0.8, 0.002); }
        workload { arrive batch(1); }
        session { run e decode (1); observe t = now; }
        run { horizon 1; }";
    let program = compile_source(source, &Overrides::default()).expect("links");
    let report = serq::run(&program).expect("runs");
    assert!(close(report.observes[0].samples[0], expected));
}

#[test]
fn a_prefill_chunk_is_compute_bound_and_counts_its_attention() {
    // Llama-3.1-8B BF16 on an H100: a prefill of 2048 tokens at position 0
    // attends to 2048 · (0 + 2048/2) = 2 097 152 pairs. Compute:
    // (2 · 8 030 261 248 · 2048 + 4 · 32 layers · 32 heads · 128 · 2 097 152)
    // / (989.4e12 · 0.5) = (3.28924e13 + 1.09951e12) / 4.947e14 = 68.711 ms;
    // memory (16 060 522 496 + 131 072 · 2048) / 2.68e12 = 6.093 ms. So
    // 68.711 + 2 = 70.711 ms.
    let compute = (2.0 * 8_030_261_248.0 * 2048.0 + 4.0 * 32.0 * 32.0 * 128.0 * 2_097_152.0)
        / (989.4e12 * 0.5);
    let expected = compute + 0.002;
    assert!(close(
        value("step_time(1, 2, 2, 1, 0.5, 0.8, 0.002, 2048, 2097152, 0)"),
        expected
    ));
    assert!(close(expected, 0.070_711_262_784_685_67));
    // The engine reads the same from `tokens` and `attention`: one prefill
    // of 2048 (not growing, so K = 0) in one iteration.
    let source = "use <roofline>;
        stage e : step { budget 8192; cost iteration_time(1, 2, 2, 1, 0.5, 0.8, 0.002); }
        workload { arrive batch(1); }
        session { run e prefill (2048); observe t = now; }
        run { horizon 1; }";
    let program = compile_source(source, &Overrides::default()).expect("links");
    let report = serq::run(&program).expect("runs");
    assert!(close(report.observes[0].samples[0], expected));
}

#[test]
fn tensor_parallel_decode_on_h200s_splits_the_reads_and_adds_two_all_reduces_a_layer() {
    // Llama-3.1-70B BF16 on four H200s, 64 decoders of 2000 tokens each
    // (context 128 000), efficiencies 0.5 / 0.8, overhead 2 ms.
    // Memory: (141 107 412 992 / 4 + 81 920 · (128 000 + 64)) / (4.8e12 · 0.8)
    //       = (35 276 853 248 + 10 490 642 880) / 3.84e12 = 11.9187 ms.
    // Compute: (2 · 70 553 706 496 · 64 + 4 · 80 · 64 · 128 · 128 000) / 4
    //       / (989.4e12 · 0.5) = 4.7334 ms: memory-bound.
    // All-reduce: 2 · 80 · (2 · 3/4 · 64 · 8192 · 2 / 450e9 + 6e-6)
    //       = 160 · (3.4953 µs + 6 µs) = 1.5192 ms.
    // Total 11.9187 + 1.5192 + 2 = 15.4380 ms.
    let memory = (141_107_412_992.0 / 4.0 + 81_920.0 * 128_064.0) / (4.8e12 * 0.8);
    let all_reduce = 160.0 * (1.5 * 64.0 * 8192.0 * 2.0 / 450e9 + 6e-6);
    let expected = memory + all_reduce + 0.002;
    let t = value("step_time(2, 3, 2, 4, 0.5, 0.8, 0.002, 64, 0, 128000)");
    assert!(close(t, expected), "{t} vs {expected}");
    assert!(close(t, 0.015_437_953_066_666_668), "{t}");
    // At TP 1 there is no all-reduce at all (the latency term too).
    assert_eq!(value("allreduce_time(2, 3, 1, 64)"), 0.0);
}

#[test]
fn fp8_on_eight_h100s_uses_the_fp8_peak_and_one_byte_weights() {
    // Llama-3.1-405B FP8, TP 8 on H100s, 32 decoders of 1000 tokens.
    // Memory: (405 853 388 800 / 8 + 32 256 · (32 000 + 32)) / (3.35e12 · 0.8)
    //       = (50 731 673 600 + 1 033 224 192) / 2.68e12 = 19.3153 ms.
    // Compute: (2 · 405 853 388 800 · 32 + 4 · 126 · 128 · 128 · 32 000) / 8
    //       / (1978.9e12 · 0.5) = 3.3148 ms.
    // All-reduce: 2 · 126 · (2 · 7/8 · 32 · 16 384 · 2 / 450e9 + 6e-6) = 2.5396 ms.
    // Total 19.3153 + 2.5396 + 2 = 23.8549 ms.
    let t = value("step_time(3, 2, 1, 8, 0.5, 0.8, 0.002, 32, 0, 32000)");
    assert!(close(t, 0.023_854_864_850_149_253), "{t}");
    assert_eq!(value("gpu_flops(2, 1)"), 1978.9e12);
    assert_eq!(value("gpu_flops(2, 2)"), 989.4e12);
    // The A100 has no FP8: its FP8 figure is its BF16 rate.
    assert_eq!(value("gpu_flops(1, 1)"), 312e12);
}

#[test]
fn a_decode_step_reads_the_context_its_decoders_hold_in_the_memory_pool() {
    // One decoder holding 2000 KV tokens, Llama-3.1-8B BF16 on an H100:
    // kv_decode = 2000, tokens = 1: memory (16 060 522 496 + 131 072 · 2001)
    // / 2.68e12 = 6.09065 ms, plus 2 ms.
    let expected = (16_060_522_496.0 + 131_072.0 * 2001.0) / (3.35e12 * 0.8) + 0.002;
    let source = "use <roofline>;
        pool kv { cap 10000; }
        stage e : step { budget 8192; cost iteration_time(1, 2, 2, 1, 0.5, 0.8, 0.002); memory kv; }
        workload { arrive batch(1); }
        session { hold kv (2000) { run e decode (1); } observe t = now; }
        run { horizon 1; }";
    let program = compile_source(source, &Overrides::default()).expect("links");
    let report = serq::run(&program).expect("runs");
    let t = report.observes[0].samples[0];
    assert!(close(t, expected), "{t} vs {expected}");
}

#[test]
fn pipeline_parallelism_adds_the_sends_between_its_stages() {
    // PP 4 of Llama-3.1-70B on H100s: 3 sends of 100 tokens · 8192 · 2 bytes
    // over 450e9 B/s, plus 6 µs each: 3 · (3.6409 µs + 6 µs) = 28.92 µs.
    let t = value("pp_send_time(2, 2, 4, 100)");
    assert!(close(t, 3.0 * (100.0 * 8192.0 * 2.0 / 450e9 + 6e-6)), "{t}");
    assert_eq!(value("pp_send_time(2, 2, 1, 100)"), 0.0);
}

#[test]
fn the_catalogue_gives_each_gpu_its_datasheet_figures() {
    let seen = observe(
        "observe mem = gpu_memory(3); observe bw = gpu_hbm_bandwidth(6); \
         observe l40s = gpu_bf16_flops(5); observe b200 = gpu_fp8_flops(4); \
         observe price = gpu_price(2); observe mixtral = model_active_params(6);",
    );
    let get = |n: &str| seen.iter().find(|(k, _)| k == n).expect(n).1;
    assert_eq!(get("mem"), 141.0 * 1_073_741_824.0); // H200: 141 GiB
    assert_eq!(get("bw"), 5.3e12); // MI300X: 5.3 TB/s
    assert_eq!(get("l40s"), 362.05e12); // L40S dense BF16
    assert_eq!(get("b200"), 4500e12); // B200 dense FP8
    assert_eq!(get("price"), 2.99); // H100 $/GPU-hour
    assert_eq!(get("mixtral"), 12_879_925_248.0); // two of eight experts
}

#[test]
fn an_id_outside_the_catalogue_is_refused_where_it_is_used() {
    let source = "use <roofline>;
        pool kv { cap kv_pool_tokens(1, 7, 2, 1, 1, 0.1); }
        stage d : delay;
        workload { arrive batch(1); }
        session { hold kv (1) { run d (1); } }
        run { horizon 2; }";
    let diagnostics = compile_source(source, &Overrides::default()).unwrap_err();
    assert_eq!(diagnostics[0].rule, "nan", "{diagnostics:?}");
}

#[test]
fn an_unknown_shipped_library_is_a_use_error_with_a_did_you_mean() {
    let source = "use <roofln>;
        stage d : delay;
        workload { arrive batch(1); }
        session { run d (1); }
        run { horizon 2; }";
    let diagnostics = compile_source(source, &Overrides::default()).unwrap_err();
    assert_eq!(diagnostics[0].rule, "use");
    assert_eq!(diagnostics[0].message, "serq ships no library `<roofln>`");
    assert_eq!(
        diagnostics[0].help.as_deref(),
        Some("did you mean `<roofline>`?")
    );
}

#[test]
fn using_the_library_without_calling_it_leaves_the_ir_unchanged() {
    // Definitions never reach the IR: only what a program calls does.
    let plain = "stage d : delay;
        workload { arrive batch(2); }
        session { run d (1); observe t = now; }
        run { horizon 2; }";
    let with = format!("use <roofline>;\n{plain}");
    let a = compile_source(plain, &Overrides::default()).unwrap();
    let b = compile_source(&with, &Overrides::default()).unwrap();
    // Positions shift by the line `use` takes; the rest is the same.
    let strip = |p: &serq::ValidProgram| {
        let mut p = (**p).clone();
        p.positions = None;
        p.to_json()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn a_program_file_reaches_the_library_from_any_folder_and_names_it_twice_harmlessly() {
    let dir = std::env::temp_dir().join(format!("serq-roofline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("main.sq");
    std::fs::write(
        &path,
        "use <roofline>;\nuse <roofline>;\nstage d : delay;\nworkload { arrive batch(1); }\n\
         session { run d (decode_bound(1, 2, 2, 1)); observe t = now; }\nrun { horizon 1; }\n",
    )
    .unwrap();
    let program = serq::compile_file(&path, &Overrides::default()).expect("links");
    let report = serq::run(&program).unwrap();
    assert!(close(
        report.observes[0].samples[0],
        16_060_522_496.0 / 3.35e12
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_error_a_program_makes_with_the_library_is_shown_in_the_library_text() {
    // `iteration_time` reads `tokens`, which only a step stage's cost has:
    // used in a session it is refused, and the caret is in <roofline>.
    let dir = std::env::temp_dir().join(format!("serq-roofline-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("main.sq");
    std::fs::write(
        &path,
        "use <roofline>;\nstage d : delay;\nworkload { arrive batch(1); }\n\
         session { run d (iteration_time(1, 2, 2, 1, 0.5, 0.8, 0.002)); }\nrun { horizon 1; }\n",
    )
    .unwrap();
    let error = serq::compile_file(&path, &Overrides::default()).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("<roofline>:"), "{text}");
    assert!(text.contains("`tokens`"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_shipped_use_is_a_syntax_error_at_its_place() {
    let tail = "\nstage d : delay;\nworkload { arrive batch(1); }\nsession { run d (1); }\nrun { horizon 1; }\n";
    for (head, message, column) in [
        (
            "use <>;",
            "expected a library's name after `<` (`use <roofline>;`), found `>`",
            6,
        ),
        ("use <roofline;", "expected `>` to close `<`, found `;`", 14),
        (
            "use <\"x\">;",
            "expected a library's name after `<` (`use <roofline>;`), found the string \"x\"",
            6,
        ),
    ] {
        let source = format!("{head}{tail}");
        let diagnostics = compile_source(&source, &Overrides::default()).unwrap_err();
        assert_eq!(diagnostics[0].rule, "syntax", "{head}");
        assert_eq!(diagnostics[0].message, message, "{head}");
        // Offsets are 0-based, columns 1-based, all on line 1.
        assert_eq!(diagnostics[0].span.start + 1, column, "{head}");
    }
    // Spaces inside the brackets are allowed: the name is one word.
    let source = format!("use < roofline >;{tail}");
    assert!(compile_source(&source, &Overrides::default()).is_ok());
}
