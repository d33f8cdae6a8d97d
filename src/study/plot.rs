//! A sweep drawn as SVG: one observation's mean against one axis, one line
//! per combination of the other axes, with 95% CI bars.
//!
//! Invariant: the drawing is a pure function of the sweep (lines in order
//! of first appearance of their parameters, points sorted by x); it uses
//! plotters' SVG backend only, whose text is SVG `<text>`, so no font
//! library is loaded.

use plotters::prelude::*;

use super::sweep::Sweep;

/// Why a sweep could not be drawn.
///
/// ```
/// use serq::study::{Axis, PlotError, plot_svg, sweep};
/// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (d); observe r = now; } run { horizon 10; }";
/// let result = sweep(source, &Default::default(), &[Axis::parse("d=1,2").unwrap()], 1, &|| {}).unwrap();
/// let e = plot_svg(&result, "d", "ttft").unwrap_err();
/// assert!(matches!(e, PlotError::UnknownObservation { .. }));
/// assert_eq!(e.to_string(), "`ttft` is not an observation of the program (there are: r)");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PlotError {
    /// `x` is not one of the sweep's axes.
    UnknownParameter {
        /// The name asked for.
        name: String,
        /// The axes there are.
        parameters: Vec<String>,
    },
    /// `y` is not an observation of the program.
    UnknownObservation {
        /// The name asked for.
        name: String,
        /// The observations there are.
        observations: Vec<String>,
    },
    /// No point has a mean of `y` to draw.
    NothingToDraw(String),
    /// The drawing backend failed.
    Draw(String),
}

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlotError::UnknownParameter { name, parameters } => write!(
                f,
                "`{name}` is not a --grid parameter (there are: {})",
                parameters.join(", ")
            ),
            PlotError::UnknownObservation { name, observations } => write!(
                f,
                "`{name}` is not an observation of the program (there are: {})",
                observations.join(", ")
            ),
            PlotError::NothingToDraw(y) => write!(f, "no point has a mean of `{y}` to draw"),
            PlotError::Draw(message) => write!(f, "cannot draw the plot: {message}"),
        }
    }
}

impl std::error::Error for PlotError {}

/// One line: its label and its (x, mean, half-width) points sorted by x.
type Line = (String, Vec<(f64, f64, Option<f64>)>);

/// The lines to draw: the points grouped by their values of every axis but
/// `x`, groups in order of first appearance.
fn lines(sweep: &Sweep, xi: usize, y: &str) -> Vec<Line> {
    let mut groups: Vec<(Vec<f64>, Line)> = Vec::new();
    for p in &sweep.points {
        let others: Vec<f64> = (0..p.values.len())
            .filter(|&i| i != xi)
            .map(|i| p.values[i])
            .collect();
        let Some(estimate) = p.result.observation(y) else {
            continue;
        };
        let Some(mean) = estimate.mean else {
            continue;
        };
        let at = match groups.iter().position(|(k, _)| *k == others) {
            Some(at) => at,
            None => {
                let label: Vec<String> = sweep
                    .parameters
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != xi)
                    .zip(&others)
                    .map(|((_, name), v)| format!("{name}={v}"))
                    .collect();
                let label = if label.is_empty() {
                    y.to_string()
                } else {
                    label.join(", ")
                };
                groups.push((others, (label, Vec::new())));
                groups.len() - 1
            }
        };
        groups[at].1.1.push((p.values[xi], mean, estimate.ci));
    }
    let mut lines: Vec<Line> = groups.into_iter().map(|(_, line)| line).collect();
    for (_, points) in &mut lines {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// `lo..hi` widened by 5% each side (by 1 around a single value).
fn padded(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - pad)..(hi + pad)
}

/// Draws the mean of observation `y` against axis `x` as an SVG document
/// (900 × 600): a line per value of the other axes, a vertical bar of ±
/// the 95% half-width at every point that has one.
///
/// ```
/// use serq::study::{Axis, plot_svg, sweep};
/// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (d); observe response = now; } run { horizon 10; }";
/// let axes = [Axis::parse("d=1,2,3").unwrap()];
/// let result = sweep(source, &Default::default(), &axes, 2, &|| {}).unwrap();
/// let svg = plot_svg(&result, "d", "response").unwrap();
/// assert!(svg.starts_with("<svg") && svg.contains("response"));
/// assert!(plot_svg(&result, "lam", "response").is_err());
/// ```
pub fn plot_svg(sweep: &Sweep, x: &str, y: &str) -> Result<String, PlotError> {
    let Some(xi) = sweep.parameters.iter().position(|p| p == x) else {
        return Err(PlotError::UnknownParameter {
            name: x.to_string(),
            parameters: sweep.parameters.clone(),
        });
    };
    let known = sweep
        .points
        .iter()
        .any(|p| p.result.observation(y).is_some());
    if !known {
        let observations = sweep
            .points
            .first()
            .map(|p| {
                p.result
                    .observations
                    .iter()
                    .map(|o| o.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        return Err(PlotError::UnknownObservation {
            name: y.to_string(),
            observations,
        });
    }
    let lines = lines(sweep, xi, y);
    let all = lines.iter().flat_map(|(_, points)| points);
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(px, m, ci) in all {
        let h = ci.filter(|c| c.is_finite()).unwrap_or(0.0);
        x0 = x0.min(px);
        x1 = x1.max(px);
        y0 = y0.min(m - h);
        y1 = y1.max(m + h);
    }
    if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite()) {
        return Err(PlotError::NothingToDraw(y.to_string()));
    }
    let mut svg = String::new();
    draw(&mut svg, &lines, (padded(x0, x1), padded(y0, y1)), x, y)
        .map_err(|e| PlotError::Draw(e.to_string()))?;
    Ok(svg)
}

/// The lines' colours (Tableau 10), distinct on white and in grey.
const LINE_COLORS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// Draws the chart into `svg`.
fn draw(
    svg: &mut String,
    lines: &[Line],
    (xs, ys): (std::ops::Range<f64>, std::ops::Range<f64>),
    x: &str,
    y: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("mean {y} against {x} (bars: 95% CI)"),
            ("sans-serif", 22),
        )
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(xs, ys)?;
    chart
        .configure_mesh()
        .x_desc(x)
        .y_desc(format!("mean {y}"))
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;
    for (i, (label, points)) in lines.iter().enumerate() {
        let (r, g, b) = LINE_COLORS[i % LINE_COLORS.len()];
        let color = RGBColor(r, g, b);
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(px, m, _)| (px, m)),
                color.stroke_width(2),
            ))?
            .label(label.as_str())
            .legend(move |(lx, ly)| {
                PathElement::new(vec![(lx, ly), (lx + 20, ly)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .iter()
                .map(|&(px, m, _)| Circle::new((px, m), 3, color.filled())),
        )?;
        chart.draw_series(points.iter().filter_map(|&(px, m, ci)| {
            let h = ci.filter(|c| c.is_finite())?;
            Some(ErrorBar::new_vertical(
                px,
                m - h,
                m,
                m + h,
                color.stroke_width(1),
                8,
            ))
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
