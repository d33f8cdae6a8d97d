//! The sweep plot reads as a person expects: the legend stands below the
//! chart (covering no line), and no line has the red of the unstable
//! rings.

use std::process::Command;

/// M/M/N-like: at N = 1 and lam = 1.2 the queue grows (an unstable point).
const PROGRAM: &str = "let lam = 0.5;
let N = 1;
stage srv[N] : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; choose i in N by (queue(srv[i])); run srv[i] (~exp(1)); observe response = now - t0; }
run { horizon 2000; warmup 100; }
";

fn plot() -> String {
    plot_with("plain", "response", &[]).expect("the plot is drawn")
}

/// The plot of `y` in PROGRAM's sweep with `extra` flags (in a directory of its own,
/// `name`), or the failed command's exit status and stderr.
fn plot_with(name: &str, y: &str, extra: &[&str]) -> Result<String, (Option<i32>, String)> {
    // A directory per call: two tests may draw the same `name` at once.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("serq-plot-{}-{name}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("p.sq"), PROGRAM).expect("writable");
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .current_dir(&dir)
        .args([
            "sweep",
            "p.sq",
            "--grid",
            "lam=0.3,0.6,0.9,1.2",
            "--grid",
            "N=1,2",
        ])
        .args(["--plot", "p.svg", "--y", y])
        .args(extra)
        .output()
        .expect("serq runs");
    let svg = std::fs::read_to_string(dir.join("p.svg"));
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        return Err((
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(svg.expect("the plot is written"))
}

/// The y of the `<text>` element whose content is `content`.
fn text_y(svg: &str, content: &str) -> Option<i32> {
    let lines: Vec<&str> = svg.lines().collect();
    let at = lines.iter().position(|l| l.trim() == content)?;
    let open = lines[..at].iter().rev().find(|l| l.contains("<text"))?;
    let y = open.split(" y=\"").nth(1)?.split('"').next()?;
    y.parse::<f64>().ok().map(|y| y as i32)
}

#[test]
fn the_legend_stands_below_the_chart_and_no_line_is_the_unstable_red() {
    let svg = plot();
    // The chart is 600 px high; the legend's entries stand below it.
    assert!(
        svg.starts_with("<svg width=\"900\" height=\"632\""),
        "{}",
        &svg[..80]
    );
    for entry in ["N=1", "N=2", "unstable: live sessions grow"] {
        let y = text_y(&svg, entry).unwrap_or_else(|| panic!("no legend entry {entry}"));
        assert!(y > 600, "{entry} at y {y}");
    }
    // The second line is orange, not the red (214, 39, 40) it was; the
    // rings' red (200, 0, 0) marks the unstable point only.
    assert!(svg.contains("stroke=\"#FF7F0E\""));
    assert!(!svg.contains("#D62728"));
    assert_eq!(
        svg.matches("stroke=\"#C80000\"").count(),
        2,
        "the ring and its legend swatch"
    );
}

#[test]
fn a_target_line_is_drawn_and_named_in_the_legend() {
    let svg = plot_with("target", "response", &["--target", "2.5"]).expect("the plot is drawn");
    assert!(text_y(&svg, "target 2.5").is_some(), "{svg}");
    // Dashed: the target's grey, rgb(60,60,60), in a dashed stroke.
    assert!(
        svg.contains("#3C3C3C") || svg.contains("rgb(60,60,60)"),
        "{svg}"
    );
    assert!(!plot().contains("target"));
}

#[test]
fn units_label_the_axes_and_an_observations_unit_labels_its_percentiles() {
    let svg = plot_with(
        "units",
        "response",
        &["--units", "lam=req/s", "--units", "response=s"],
    )
    .expect("the plot is drawn");
    assert!(text_y(&svg, "lam (req/s)").is_some(), "{svg}");
    assert!(text_y(&svg, "mean response (s)").is_some(), "{svg}");
    // `response.p99` is labelled with `response`'s unit.
    let svg = plot_with("p99", "response.p99", &["--units", "response=s"]);
    assert!(svg.is_ok_and(|svg| text_y(&svg, "response.p99 (s)").is_some()));
}

#[test]
fn a_unit_for_a_name_the_sweep_lacks_is_a_usage_error_before_any_run() {
    let (code, stderr) = plot_with("bad-unit", "response", &["--units", "lamb=req/s"]).unwrap_err();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("did you mean `lam`?"), "{stderr}");
}
