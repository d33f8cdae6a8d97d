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
    let dir = std::env::temp_dir().join(format!("serq-plot-{}", std::process::id()));
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
        .args(["--plot", "p.svg", "--y", "response"])
        .output()
        .expect("serq runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(dir.join("p.svg")).expect("the plot is written");
    let _ = std::fs::remove_dir_all(&dir);
    svg
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
