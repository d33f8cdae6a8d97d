//! A sweep drawn as SVG: one observation's mean against one axis, one line
//! per combination of the other axes, with 95% CI bars.
//!
//! Invariant: the drawing is a pure function of the sweep's rows (lines in
//! order of first appearance of their parameters, points sorted by x), so a
//! file read back draws as the sweep that wrote it; it uses
//! plotters' SVG backend only, whose text is SVG `<text>`, so no font
//! library is loaded.

use plotters::prelude::*;

use super::rows::Cell;
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
/// assert_eq!(e.to_string(), "`ttft` is neither an observation nor a column of the sweep \
///                            (observations: r)");
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
    /// `y` is neither an observation nor a column of the sweep.
    UnknownObservation {
        /// The name asked for.
        name: String,
        /// The observations there are.
        observations: Vec<String>,
        /// The closest name, if it looks like a typo of one.
        closest: Option<String>,
    },
    /// No point has a value of `y` to draw.
    NothingToDraw(String),
    /// `--log-y` with a value that is not above 0.
    NotPositive(String),
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
            PlotError::UnknownObservation {
                name,
                observations,
                closest,
            } => {
                write!(
                    f,
                    "`{name}` is neither an observation nor a column of the sweep (observations: {})",
                    observations.join(", ")
                )?;
                match closest {
                    Some(c) => write!(f, "; did you mean `{c}`?"),
                    None => Ok(()),
                }
            }
            PlotError::NothingToDraw(y) => write!(f, "no point has a value of `{y}` to draw"),
            PlotError::NotPositive(y) => write!(
                f,
                "--log-y needs values above 0, and `{y}` has one at or below 0"
            ),
            PlotError::Draw(message) => write!(f, "cannot draw the plot: {message}"),
        }
    }
}

impl std::error::Error for PlotError {}

/// What `y` draws: the column of its value and, when there is one, of its
/// 95% half-width. `y` is an observation (its mean, `NAME.mean` and
/// `NAME.ci`) or any column (`ttft.p99` with `ttft.p99_ci`, `D[0].util`).
///
/// ```
/// use serq::study::plot_columns;
/// let columns = ["lam", "replications", "stable", "ttft.mean", "ttft.ci", "ttft.p99",
///                "ttft.p99_ci", "D.util"].map(String::from);
/// assert_eq!(plot_columns(&columns, "ttft"), Ok((3, Some(4))));
/// assert_eq!(plot_columns(&columns, "ttft.p99"), Ok((5, Some(6))));
/// assert_eq!(plot_columns(&columns, "D.util"), Ok((7, None)));
/// let typo = plot_columns(&columns, "tfft").unwrap_err().to_string();
/// assert!(typo.ends_with("did you mean `ttft`?"), "{typo}");
/// ```
pub fn plot_columns(columns: &[String], y: &str) -> Result<(usize, Option<usize>), PlotError> {
    let at = |name: &str| columns.iter().position(|c| c == name);
    if let Some(value) = at(&format!("{y}.mean")) {
        return Ok((value, at(&format!("{y}.ci"))));
    }
    if let Some(value) = at(y) {
        let ci = match y.strip_suffix(".mean") {
            Some(obs) => at(&format!("{obs}.ci")),
            None => at(&format!("{y}.ci")).or_else(|| at(&format!("{y}_ci"))),
        };
        return Ok((value, ci));
    }
    let observations: Vec<String> = columns
        .iter()
        .filter_map(|c| c.strip_suffix(".mean").map(String::from))
        .collect();
    let candidates = observations
        .iter()
        .map(String::as_str)
        .chain(columns.iter().map(String::as_str));
    Err(PlotError::UnknownObservation {
        name: y.to_string(),
        closest: crate::link::closest(y, candidates).map(String::from),
        observations,
    })
}

/// How a plot is drawn beyond its x and y.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotOptions {
    /// Draw y on a logarithmic scale (every value must be above 0).
    pub log_y: bool,
    /// Draw a horizontal dashed line at this y, labelled `target`.
    pub target: Option<f64>,
    /// The x axis's unit, shown after its name: `lam (req/s)`.
    pub x_unit: Option<String>,
    /// The y axis's unit, shown after its name: `mean response (s)`.
    pub y_unit: Option<String>,
}

/// An axis's name with its unit, if it has one: `lam (req/s)`.
fn with_unit(name: &str, unit: Option<&str>) -> String {
    match unit {
        Some(u) if !u.is_empty() => format!("{name} ({u})"),
        _ => name.to_string(),
    }
}

/// One point of a line: x, the value, its half-width, and whether the
/// point was judged unstable.
type Dot = (f64, f64, Option<f64>, bool);

/// One line: its label and its points sorted by x.
type Line = (String, Vec<Dot>);

/// The lines to draw: the rows grouped by their values of every axis but
/// `x`, groups in order of first appearance.
fn lines(
    parameters: &[String],
    rows: &[Vec<Cell>],
    xi: usize,
    (yi, ci): (usize, Option<usize>),
    stable: Option<usize>,
    y: &str,
) -> Vec<Line> {
    let mut groups: Vec<(Vec<Option<f64>>, Line)> = Vec::new();
    for row in rows {
        let others: Vec<Option<f64>> = (0..parameters.len())
            .filter(|&i| i != xi)
            .map(|i| row[i].number())
            .collect();
        let (Some(px), Some(value)) = (row[xi].number(), row[yi].number()) else {
            continue;
        };
        let half = ci.and_then(|c| row[c].number());
        let unstable = stable.is_some_and(|s| row[s] == Cell::Flag(Some(false)));
        let at = match groups.iter().position(|(k, _)| *k == others) {
            Some(at) => at,
            None => {
                let label: Vec<String> = parameters
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != xi)
                    .zip(&others)
                    .map(|((_, name), v)| format!("{name}={}", v.unwrap_or(f64::NAN)))
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
        groups[at].1.1.push((px, value, half, unstable));
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

/// Draws observation `y`'s mean (or the column `y`) against axis `x` as an
/// SVG document (900 × 600): a line per value of the other axes, a vertical
/// bar of ± the 95% half-width at every point that has one, and a red ring
/// around every point judged unstable.
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
    plot_rows(
        &sweep.parameters,
        &sweep.columns(),
        &sweep.rows(),
        x,
        y,
        PlotOptions::default(),
    )
}

/// Draws as [`plot_svg`] does, from rows (a sweep's, or a file's read back
/// with [`SweepPlan::read_rows`](super::SweepPlan::read_rows)), with options.
pub fn plot_rows(
    parameters: &[String],
    columns: &[String],
    rows: &[Vec<Cell>],
    x: &str,
    y: &str,
    options: PlotOptions,
) -> Result<String, PlotError> {
    let Some(xi) = parameters.iter().position(|p| p == x) else {
        return Err(PlotError::UnknownParameter {
            name: x.to_string(),
            parameters: parameters.to_vec(),
        });
    };
    let y_columns = plot_columns(columns, y)?;
    let stable = columns.iter().position(|c| c == "stable");
    let lines = lines(parameters, rows, xi, y_columns, stable, y);
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(px, m, ci, _) in lines.iter().flat_map(|(_, points)| points) {
        if options.log_y && m <= 0.0 {
            return Err(PlotError::NotPositive(y.to_string()));
        }
        let h = ci.filter(|c| c.is_finite()).unwrap_or(0.0);
        x0 = x0.min(px);
        x1 = x1.max(px);
        // On a log scale a bar reaching 0 or below is cut at the value's tenth.
        let low = if options.log_y && m - h <= 0.0 {
            m / 10.0
        } else {
            m - h
        };
        y0 = y0.min(low);
        y1 = y1.max(m + h);
    }
    if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite()) {
        return Err(PlotError::NothingToDraw(y.to_string()));
    }
    if let Some(t) = options.target.filter(|t| t.is_finite()) {
        y0 = y0.min(t);
        y1 = y1.max(t);
    }
    let mut svg = String::new();
    let title = match y_columns.1.is_some() {
        true => format!("{} against {x} (bars: 95% CI)", y_label(y)),
        false => format!("{} against {x}", y_label(y)),
    };
    let x_desc = with_unit(x, options.x_unit.as_deref());
    let y_desc = with_unit(&y_label(y), options.y_unit.as_deref());
    let result = if options.log_y {
        let ys = (y0 / 1.2)..(y1 * 1.2);
        draw(
            &mut svg,
            &lines,
            padded(x0, x1),
            ys.log_scale(),
            (&x_desc, &y_desc),
            &title,
            options.target,
        )
    } else {
        draw(
            &mut svg,
            &lines,
            padded(x0, x1),
            padded(y0, y1),
            (&x_desc, &y_desc),
            &title,
            options.target,
        )
    };
    result.map_err(|e| PlotError::Draw(e.to_string()))?;
    Ok(svg)
}

/// The y axis's name: `mean NAME` for an observation, the column otherwise.
fn y_label(y: &str) -> String {
    if y.contains('.') {
        y.to_string()
    } else {
        format!("mean {y}")
    }
}

/// The lines' colours (Tableau 10 without its red, which is the unstable
/// rings' colour alone: the second line was that red), distinct on white.
const LINE_COLORS: [(u8, u8, u8); 9] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of the rings around unstable points, used by no line.
const UNSTABLE: RGBColor = RGBColor(200, 0, 0);

/// The chart's size, the legend below it left out.
const CHART: (u32, u32) = (900, 600);

/// One legend entry: its swatch (a line, or an unstable ring) and text.
enum Swatch {
    Line(RGBColor),
    Ring,
    Target,
}

/// The target line's grey.
const TARGET: RGBColor = RGBColor(60, 60, 60);

/// Where each legend entry stands below the chart, rows of entries
/// wrapped at the chart's width: ((x, y) of each entry's left middle, the
/// legend's height).
fn legend_places(labels: &[String]) -> (Vec<(i32, i32)>, u32) {
    let (mut x, mut y) = (20, 16);
    let mut places = Vec::new();
    for label in labels {
        // A swatch of 30 px, the text (about 8 px a character), a gap.
        let w = 30 + 8 * label.chars().count() as i32 + 24;
        if x > 20 && x + w > CHART.0 as i32 - 20 {
            x = 20;
            y += 22;
        }
        places.push((x, y));
        x += w;
    }
    let height = if labels.is_empty() { 0 } else { y as u32 + 16 };
    (places, height)
}

/// Draws the chart into `svg`, y linear or logarithmic.
#[allow(clippy::too_many_arguments)]
fn draw<Y>(
    svg: &mut String,
    lines: &[Line],
    xs: std::ops::Range<f64>,
    ys: Y,
    (x_desc, y_desc): (&str, &str),
    title: &str,
    target: Option<f64>,
) -> Result<(), Box<dyn std::error::Error>>
where
    Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let x_range = xs.clone();
    let has_unstable = lines.iter().flat_map(|(_, p)| p).any(|p| p.3);
    let mut entries: Vec<(String, Swatch)> = lines
        .iter()
        .enumerate()
        .map(|(i, (label, _))| {
            let (r, g, b) = LINE_COLORS[i % LINE_COLORS.len()];
            (label.clone(), Swatch::Line(RGBColor(r, g, b)))
        })
        .collect();
    if let Some(t) = target.filter(|t| t.is_finite()) {
        entries.push((format!("target {t}"), Swatch::Target));
    }
    if has_unstable {
        entries.push(("unstable: live sessions grow".to_string(), Swatch::Ring));
    }
    let labels: Vec<String> = entries.iter().map(|(l, _)| l.clone()).collect();
    let (places, legend_h) = legend_places(&labels);
    // The legend stands below the chart, where it covers no line.
    let root = SVGBackend::with_string(svg, (CHART.0, CHART.1 + legend_h)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(CHART.1);
    for ((label, swatch), &(lx, ly)) in entries.iter().zip(&places) {
        match swatch {
            Swatch::Line(color) => {
                lower.draw(&PathElement::new(
                    vec![(lx, ly), (lx + 22, ly)],
                    color.stroke_width(2),
                ))?;
                lower.draw(&Circle::new((lx + 11, ly), 3, color.filled()))?;
            }
            Swatch::Ring => lower.draw(&Circle::new((lx + 11, ly), 6, UNSTABLE.stroke_width(2)))?,
            Swatch::Target => {
                for dash in [lx, lx + 16] {
                    lower.draw(&PathElement::new(
                        vec![(dash, ly), (dash + 7, ly)],
                        TARGET.stroke_width(2),
                    ))?;
                }
            }
        }
        lower.draw(&Text::new(
            label.as_str(),
            (lx + 30, ly - 7),
            ("sans-serif", 14).into_font(),
        ))?;
    }
    let mut chart = ChartBuilder::on(&upper)
        .caption(title, ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(xs, ys)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()?;
    for (i, (_, points)) in lines.iter().enumerate() {
        let (r, g, b) = LINE_COLORS[i % LINE_COLORS.len()];
        let color = RGBColor(r, g, b);
        chart.draw_series(LineSeries::new(
            points.iter().map(|&(px, m, _, _)| (px, m)),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|&(px, m, _, _)| Circle::new((px, m), 3, color.filled())),
        )?;
        chart.draw_series(points.iter().filter_map(|&(px, m, ci, _)| {
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
    if let Some(t) = target.filter(|t| t.is_finite()) {
        // A dashed line: short segments across the x range.
        let (a, b) = (x_range.start, x_range.end);
        let n = 60;
        let step = (b - a) / n as f64;
        chart.draw_series((0..n).step_by(2).map(|i| {
            let from = a + i as f64 * step;
            PathElement::new(vec![(from, t), (from + step, t)], TARGET.stroke_width(2))
        }))?;
    }
    let unstable: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|(_, points)| points)
        .filter(|p| p.3)
        .map(|&(px, m, _, _)| (px, m))
        .collect();
    chart.draw_series(
        unstable
            .iter()
            .map(|&p| Circle::new(p, 8, UNSTABLE.stroke_width(2))),
    )?;
    root.present()?;
    Ok(())
}
