//! Line plots (PNG and SVG) with plotters: convergence curves, performance profiles and grid
//! overviews, sized for a paper.
//!
//! - Size and resolution: [`FigureOptions`] (inches and dots per inch, as in matplotlib); text
//!   sizes are in points, so a figure keeps its proportions at any resolution. PNGs carry their
//!   resolution (`pHYs` chunk) so that LaTeX places them at their size in inches; SVGs are
//!   written at 96 px per inch (CSS) with text as `<text>` elements in the font family
//!   `DejaVu Sans, sans-serif` (never converted to paths).
//! - Text is drawn with the embedded DejaVu Sans font (`assets/`), so no system font library is
//!   needed.
//! - Log axes are drawn as linear axes over `log10` / `log2` of the data; the ticks are computed
//!   here ([`ticks`]) and written by one formatter ([`tick_labels`]) whose labels never repeat.
//! - Every series of a figure has its own colour (Okabe-Ito), dash pattern and marker
//!   ([`style_parts`], [`assign_styles`]: never two alike within a figure), so lines on top of
//!   each other, grey-scale prints and colour-blind readers stay served. A non-monotone
//!   convergence trace is drawn as its running best residual (what the solver would return if
//!   stopped there), with the range of every iterate's residual shaded behind every line at a
//!   capped opacity ([`BAND_ALPHA`]). Long series are drawn first and short ones last, on top.
//! - Legends sit below the plot area (one shared legend below a grid), never over the data.

use crate::error::{HarnessError, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::ops::Range;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

/// Font family of every text: DejaVu Sans (embedded) for the PNGs; SVG viewers use it when
/// installed, else their sans-serif font.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

/// Register the embedded DejaVu Sans as [`FAMILY`] for plotters (once per process).
pub(crate) fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        // The font is valid (a test draws with it); a failure would only drop text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, bytes);
    });
}

/// x scale of convergence plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum XScale {
    /// Logarithmic when the solvers' final counts (or times) of a figure differ by more than
    /// [`AUTO_LOG_RATIO`] (e.g. an interior-point method's 20 iterations next to a first-order
    /// method's 20 000), and on a time axis ([`LinePlot::convergence`]'s `x_is_time`) when the traced times span
    /// more than two decades (fast solvers are not squeezed against zero); linear otherwise.
    #[default]
    Auto,
    /// Always linear.
    Linear,
    /// Always logarithmic (values `<= 0`, e.g. iteration 0, are drawn at the axis' left end).
    Log,
}

/// [`XScale::Auto`] switches to a log x axis above this ratio of the largest to the smallest
/// final x of a figure's series.
pub const AUTO_LOG_RATIO: f64 = 100.0;

impl XScale {
    /// Parse `auto`, `linear` or `log`; `None` otherwise.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "linear" | "lin" => Some(Self::Linear),
            "log" => Some(Self::Log),
            _ => None,
        }
    }
}

/// Size and resolution of figures, and the x scale of convergence plots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FigureOptions {
    /// Width and height of one figure in inches (default 6.4 x 4.0). A cell of an overview grid
    /// is 0.55 x 0.6 of it.
    pub size_in: (f64, f64),
    /// Resolution of the PNGs, dots per inch (default 150: 960 x 600 px). SVGs are written at
    /// 96 px per inch, the CSS unit.
    pub dpi: u32,
    /// x scale of convergence plots.
    pub x_scale: XScale,
}

impl Default for FigureOptions {
    fn default() -> Self {
        Self {
            size_in: (6.4, 4.0),
            dpi: 150,
            x_scale: XScale::Auto,
        }
    }
}

impl FigureOptions {
    /// Parse a figure size `WxH` in inches (e.g. `3.5x2.5`), each in `[1, 40]`. Errors: a
    /// message naming the value.
    pub fn parse_size(s: &str) -> std::result::Result<(f64, f64), String> {
        let bad = || format!("figure size '{s}': expected WxH in inches, e.g. 6.4x4, each 1 to 40");
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let w: f64 = w.trim().parse().map_err(|_| bad())?;
        let h: f64 = h.trim().parse().map_err(|_| bad())?;
        if !(1.0..=40.0).contains(&w) || !(1.0..=40.0).contains(&h) {
            return Err(bad());
        }
        Ok((w, h))
    }

    /// Check a resolution: `dpi` in `[30, 1200]`. Errors: a message naming the value.
    pub fn check_dpi(dpi: i64) -> std::result::Result<u32, String> {
        if (30..=1200).contains(&dpi) {
            Ok(dpi as u32)
        } else {
            Err(format!("--dpi {dpi}: expected 30 to 1200 dots per inch"))
        }
    }

    fn px(&self, scale: (f64, f64), per_in: f64) -> (u32, u32) {
        (
            (self.size_in.0 * scale.0 * per_in).round().max(50.0) as u32,
            (self.size_in.1 * scale.1 * per_in).round().max(50.0) as u32,
        )
    }
}

/// SVG pixels per inch (CSS).
const SVG_PER_IN: f64 = 96.0;

/// One line: a legend label and `(x, y)` points in data units.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label (solver name).
    pub label: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// Palette and line-style index (keeps a solver's colour and dashes across plots); `None`:
    /// the series' position.
    pub color: Option<usize>,
}

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Linear.
    Linear,
    /// Logarithmic, decades labelled `1e-6` etc. Values `<= 0` are drawn at the axis' low end.
    Log10,
    /// Logarithmic base 2 (performance-profile ratios), labelled `1, 2, 4, ...`.
    Log2,
}

impl Axis {
    /// A data value in axis units: `v` itself on a linear axis, `log10(v)` on a
    /// [`Axis::Log10`] axis and `log2(v)` on a [`Axis::Log2`] axis, with `v` first raised to
    /// `1e-17` (`1e-300` for `Log2`) so that zero and negative values land at the low end
    /// instead of giving `-inf` or NaN.
    pub fn fwd(self, v: f64) -> f64 {
        match self {
            Axis::Linear => v,
            Axis::Log10 => v.max(1e-17).log10(),
            Axis::Log2 => v.max(1e-300).log2(),
        }
    }

    fn is_log(self) -> bool {
        self != Axis::Linear
    }
}

/// Tick positions of an axis over `[lo, hi]` in axis units (`log10` / `log2` of the data on
/// log axes): on a linear axis multiples of a 1-2-5 step (4 to 10 ticks), on log axes whole
/// powers of 10 / 2 (every k-th one when there are more than 9).
pub fn ticks(axis: Axis, lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let step = match axis {
        Axis::Linear => nice_step((hi - lo) / 6.0),
        _ => ((hi.floor() - lo.ceil()) / 8.0).ceil().max(1.0),
    };
    let (k0, k1) = ((lo / step - 1e-9).ceil(), (hi / step + 1e-9).floor());
    let mut out = Vec::new();
    let mut k = k0;
    while k <= k1 {
        let t = k * step;
        out.push(if t.abs() < 1e-12 * step { 0.0 } else { t });
        k += 1.0;
    }
    out
}

/// The smallest 1-2-5 multiple of a power of ten `>= raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * mag)
}

/// Labels of `ticks` (positions in axis units, as [`ticks`] gives them), distinct whenever the
/// ticks are: linear axes print integers (`10000`, `12000`) or as many decimals as the step
/// needs, and switch to scientific notation (`1.2e6`) for magnitudes `>= 1e6` or `< 1e-3`;
/// `Log10` prints `1e-8`, `1e-6`, ..., `1`, `10`, `1e2`; `Log2` prints `1`, `2`, `4`, `8`.
/// Whenever two labels would coincide the precision grows until they differ.
pub fn tick_labels(axis: Axis, ticks: &[f64]) -> Vec<String> {
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let one = |t: f64, extra: i32| -> String {
        match axis {
            Axis::Linear => {
                let maxabs = ticks.iter().fold(0f64, |a, v| a.max(v.abs()));
                let sci = maxabs >= 1e6 || (maxabs > 0.0 && maxabs < 1e-3);
                let step_exp = if step.is_finite() {
                    (step.log10() + 1e-9).floor() as i32
                } else {
                    0
                };
                if sci {
                    if t == 0.0 {
                        return "0".into();
                    }
                    let e = (t.abs().log10() + 1e-9).floor() as i32;
                    let d = (e - step_exp + extra).max(0) as usize;
                    trim_sci(&format!("{t:.d$e}"))
                } else {
                    let d = (-step_exp + extra).max(0) as usize;
                    format!("{t:.d$}")
                }
            }
            Axis::Log10 => {
                let k = t.round();
                if (t - k).abs() < 1e-9 && extra == 0 {
                    match k as i64 {
                        0 => "1".into(),
                        1 => "10".into(),
                        k => format!("1e{k}"),
                    }
                } else {
                    let d = (extra.max(1)) as usize;
                    trim_sci(&format!("{:.d$e}", 10f64.powf(t)))
                }
            }
            Axis::Log2 => {
                let v = 2f64.powf(t);
                if (t - t.round()).abs() < 1e-9 && t >= 0.0 && extra == 0 {
                    format!("{:.0}", v)
                } else {
                    let d = (3 + extra) as usize;
                    let s = format!("{v:.d$}");
                    s.trim_end_matches('0').trim_end_matches('.').to_string()
                }
            }
        }
    };
    for extra in 0..12 {
        let labels: Vec<String> = ticks.iter().map(|&t| one(t, extra)).collect();
        let mut sorted = labels.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() == labels.len() {
            return labels;
        }
    }
    ticks.iter().map(|t| format!("{t:e}")).collect()
}

/// `1.50e6` -> `1.5e6`, `2.0e-7` -> `2e-7`.
fn trim_sci(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s.to_string(),
    }
}

/// A line plot.
#[derive(Clone, Debug)]
pub struct LinePlot {
    /// Title.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Lines; colour, dashes and marker from their `color` index ([`style_parts`],
    /// [`assign_styles`]).
    pub series: Vec<Series>,
    /// A horizontal dashed reference line (e.g. the tolerance), with its legend label.
    pub hline: Option<(f64, String)>,
    /// x scale.
    pub x_axis: Axis,
    /// y scale.
    pub y_axis: Axis,
    /// Fixed y range in data units (otherwise from the data, widened to whole decades on log axes).
    pub y_range: Option<(f64, f64)>,
    /// Draw non-monotone series as their running minimum, with the raw series' range shaded behind
    /// (convergence plots); a series of at most two points is then drawn as its points, no
    /// line (an external solver's trace: the start and the answer, no iterates between).
    pub best_so_far: bool,
    /// Mark every data point (the style's marker, a dot for styles without one) instead of
    /// seven markers spread along each line: for plots of few measured points (the scale
    /// figure).
    pub markers_at_points: bool,
    /// Runs that did not reach the target (a sweep's failures): `(series label, x)`, drawn as
    /// a cross in the series' colour at the top edge of the plot area (one row per series),
    /// with a legend note.
    pub failed: Vec<(String, f64)>,
}

impl LinePlot {
    /// A plain line plot of `series` on the given axes: no reference line, the y range from
    /// the data, every line drawn as measured with markers spread along it, no failures.
    pub fn lines(
        title: &str,
        x_label: &str,
        y_label: &str,
        series: Vec<Series>,
        x_axis: Axis,
        y_axis: Axis,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            hline: None,
            x_axis,
            y_axis,
            y_range: None,
            best_so_far: false,
            markers_at_points: false,
            failed: Vec::new(),
        }
    }

    /// A convergence plot: residual on a log10 axis against `x` (linear or log by `x_scale`,
    /// see [`XScale`]; the x label says "log scale" when it is), tolerance line, non-monotone
    /// traces as their running best. `x_is_time`: `x` is a time (s), whose automatic scale
    /// also turns logarithmic when the traced times span more than two decades.
    pub fn convergence(
        title: String,
        x_label: &str,
        y_label: String,
        series: Vec<Series>,
        tol: Option<f64>,
        x_scale: XScale,
        x_is_time: bool,
    ) -> Self {
        let log = match x_scale {
            XScale::Linear => false,
            XScale::Log => series.iter().flat_map(|s| &s.points).any(|p| p.0 > 0.0),
            XScale::Auto => wants_log_x(&series) || (x_is_time && spans_decades(&series, 2.0)),
        };
        Self {
            title,
            x_label: if log {
                format!("{x_label} (log scale)")
            } else {
                x_label.to_string()
            },
            y_label,
            series,
            hline: tol.map(|t| (t, format!("tol {}", fmt_num(t)))),
            x_axis: if log { Axis::Log10 } else { Axis::Linear },
            y_axis: Axis::Log10,
            y_range: None,
            best_so_far: true,
            markers_at_points: false,
            failed: Vec::new(),
        }
    }
}

/// Whether [`XScale::Auto`] picks a log x axis for `series`: the largest final x exceeds
/// [`AUTO_LOG_RATIO`] times the smallest positive final x.
pub fn wants_log_x(series: &[Series]) -> bool {
    let ends: Vec<f64> = series
        .iter()
        .filter_map(|s| s.points.iter().map(|p| p.0).reduce(f64::max))
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect();
    let (lo, hi) = ends
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    ends.len() >= 2 && hi > AUTO_LOG_RATIO * lo
}

/// Whether the positive x values of `series` span more than `decades` decades (largest over
/// smallest positive).
pub fn spans_decades(series: &[Series], decades: f64) -> bool {
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0 && x.is_finite())
        .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
    hi > 10f64.powf(decades) * lo
}

/// A number in the shortest exact scientific form: `1e-6`, `2.5e-7`.
pub fn fmt_num(v: f64) -> String {
    format!("{v:e}")
}

/// The Okabe & Ito (2008) colour-blind-safe palette without its yellow (unreadable as a thin
/// line on white), in the order blue, vermillion, bluish green, orange, reddish purple, sky
/// blue, black.
const PALETTE: [(u8, u8, u8); 7] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (230, 159, 0),
    (204, 121, 167),
    (86, 180, 233),
    (0, 0, 0),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dash {
    Solid,
    Dashed,
    Dotted,
}

const DASHES: [Dash; 3] = [Dash::Solid, Dash::Dashed, Dash::Dotted];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    None,
    Circle,
    Triangle,
    Square,
    Cross,
}

const MARKERS: [Marker; 5] = [
    Marker::None,
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Cross,
];

/// The number of distinct series styles: style `i` has colour `i mod 7`, dash `i mod 3` and
/// marker `i mod 5` (7, 3 and 5 are coprime, so styles `0..105` differ pairwise, and
/// neighbouring styles differ in all three: lines stay apart in greyscale too).
pub const N_STYLES: usize = 105;

/// Colour `(r, g, b)`, dash (`solid`, `dashed`, `dotted`) and marker (`none`, `circle`,
/// `triangle`, `square`, `cross`) of series style `i` (see [`N_STYLES`]).
pub fn style_parts(i: usize) -> ((u8, u8, u8), &'static str, &'static str) {
    let dash = match DASHES[i % DASHES.len()] {
        Dash::Solid => "solid",
        Dash::Dashed => "dashed",
        Dash::Dotted => "dotted",
    };
    let marker = match MARKERS[i % MARKERS.len()] {
        Marker::None => "none",
        Marker::Circle => "circle",
        Marker::Triangle => "triangle",
        Marker::Square => "square",
        Marker::Cross => "cross",
    };
    (PALETTE[i % PALETTE.len()], dash, marker)
}

fn marker_of(style: usize) -> Marker {
    MARKERS[style % MARKERS.len()]
}

/// The style of every series of `plots` (a figure, or the cells of a grid sharing one legend),
/// by label: a series keeps its preferred style (its `color`, else its position) unless an
/// earlier label of the figure took it, then gets the next free one (modulo [`N_STYLES`]); one
/// label has one style in all cells. So no two labels of a figure share colour, dash and
/// marker (up to 105 labels), and a solver keeps its style across figures where it can.
pub fn assign_styles(plots: &[LinePlot]) -> Vec<Vec<usize>> {
    let mut by_label: Vec<(&str, usize)> = Vec::new();
    let mut taken = [false; N_STYLES];
    plots
        .iter()
        .map(|p| {
            p.series
                .iter()
                .enumerate()
                .map(|(i, ser)| {
                    if let Some((_, st)) = by_label.iter().find(|(l, _)| *l == ser.label) {
                        return *st;
                    }
                    let want = ser.color.unwrap_or(i) % N_STYLES;
                    let st = (0..N_STYLES)
                        .map(|k| (want + k) % N_STYLES)
                        .find(|&k| !taken[k])
                        .unwrap_or(want);
                    taken[st] = true;
                    by_label.push((&ser.label, st));
                    st
                })
                .collect()
        })
        .collect()
}

fn ensure_parent(p: &Path) -> Result<()> {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).map_err(|e| HarnessError::io(d, e))?;
    }
    Ok(())
}

fn plot_err(path: &Path) -> impl Fn(String) -> HarnessError + '_ {
    move |e| HarnessError::Plot {
        path: path.to_path_buf(),
        message: e,
    }
}

/// Draw `plot` to `png` and `svg` at the size and resolution of `fig`, the legend below the
/// plot area. A legend taller than [`LEGEND_SHARE`] of the figure (many series) makes the
/// figure taller instead of squeezing the plot area: the plot keeps `1 - LEGEND_SHARE` of the
/// height `fig` asks for.
pub fn draw_plot(plot: &LinePlot, png: &Path, svg: &Path, fig: &FigureOptions) -> Result<()> {
    register_font();
    ensure_parent(png)?;
    ensure_parent(svg)?;
    let (pw, ph) = fig.px((1.0, 1.0), f64::from(fig.dpi));
    let s_png = f64::from(fig.dpi) / 72.0;
    let s_svg = SVG_PER_IN / 72.0;
    let grow = legend_growth(plot, (pw, ph), s_png).map_err(plot_err(png))?;
    let taller = |(w, h): (u32, u32)| (w, (f64::from(h) * grow).round() as u32);
    draw_single(
        BitMapBackend::new(png, taller((pw, ph))).into_drawing_area(),
        plot,
        s_png,
    )
    .map_err(plot_err(png))?;
    set_png_dpi(png, fig.dpi)?;
    draw_single(
        SVGBackend::new(svg, taller(fig.px((1.0, 1.0), SVG_PER_IN))).into_drawing_area(),
        plot,
        s_svg,
    )
    .map_err(plot_err(svg))?;
    Ok(())
}

/// The largest share of a single figure's height its legend takes before the figure grows.
pub const LEGEND_SHARE: f64 = 0.4;

/// The factor (`>= 1`) by which a single figure of `size` pixels at scale `s` grows so that
/// its legend takes at most [`LEGEND_SHARE`] of the plot's nominal height beside it: 1 for
/// every legend up to that share (the figure keeps the size asked for). The legend is laid
/// out on an in-memory canvas of the same size (text sizes scale with `s`, so the factor
/// holds for the SVG too).
fn legend_growth(plot: &LinePlot, size: (u32, u32), s: f64) -> std::result::Result<f64, String> {
    let mut buf = vec![0u8; size.0 as usize * size.1 as usize * 3];
    let area = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
    let styles = assign_styles(std::slice::from_ref(plot));
    let entries = legend_entries(std::slice::from_ref(plot), &styles);
    let lh = f64::from(legend_height(&area, &entries, size.0, s)?);
    let h = f64::from(size.1);
    Ok(((1.0 - LEGEND_SHARE) + lh / h).max(1.0))
}

fn draw_single<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    plot: &LinePlot,
    s: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let styles = assign_styles(std::slice::from_ref(plot));
    let entries = legend_entries(std::slice::from_ref(plot), &styles);
    let (w, h) = root.dim_in_pixel();
    let lh = legend_height(&root, &entries, w, s)?;
    let (top, bottom) = root.split_vertically(h.saturating_sub(lh) as i32);
    draw_on(&top, plot, &styles[0], s)?;
    draw_legend(&bottom, &entries, s)?;
    root.present().map_err(e)
}

/// Draw several plots in a grid of `cols` columns (an overview of a whole suite), with a
/// common title and one legend below, to `png` and `svg`; each cell is 0.55 x 0.6 of the
/// figure size of `fig`.
pub fn draw_grid(
    title: &str,
    plots: &[LinePlot],
    cols: usize,
    png: &Path,
    svg: &Path,
    fig: &FigureOptions,
) -> Result<()> {
    register_font();
    ensure_parent(png)?;
    ensure_parent(svg)?;
    let cols = cols.max(1);
    let rows = plots.len().div_ceil(cols).max(1);
    let cell = (0.55 * cols as f64, 0.6 * rows as f64 + 0.25);
    fn grid<DB: DrawingBackend>(
        root: DrawingArea<DB, Shift>,
        title: &str,
        plots: &[LinePlot],
        rows: usize,
        cols: usize,
        s: f64,
    ) -> std::result::Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(title, (FAMILY, pt(s, 12.0))).map_err(e)?;
        let styles = assign_styles(plots);
        let entries = legend_entries(plots, &styles);
        let (w, h) = root.dim_in_pixel();
        let lh = legend_height(&root, &entries, w, s)?;
        let (body, legend) = root.split_vertically(h.saturating_sub(lh) as i32);
        for ((area, p), st) in body
            .split_evenly((rows, cols))
            .into_iter()
            .zip(plots)
            .zip(&styles)
        {
            draw_on(&area, p, st, s * 0.85)?;
        }
        draw_legend(&legend, &entries, s)?;
        root.present().map_err(e)
    }
    grid(
        BitMapBackend::new(png, fig.px(cell, f64::from(fig.dpi))).into_drawing_area(),
        title,
        plots,
        rows,
        cols,
        f64::from(fig.dpi) / 72.0,
    )
    .map_err(plot_err(png))?;
    set_png_dpi(png, fig.dpi)?;
    grid(
        SVGBackend::new(svg, fig.px(cell, SVG_PER_IN)).into_drawing_area(),
        title,
        plots,
        rows,
        cols,
        SVG_PER_IN / 72.0,
    )
    .map_err(plot_err(svg))?;
    Ok(())
}

/// Points to pixels at `s` pixels per point.
fn pt(s: f64, v: f64) -> i32 {
    (v * s).round().max(1.0) as i32
}

/// The running minimum of `y` (the best residual so far).
pub fn running_min(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut best = f64::INFINITY;
    points
        .iter()
        .map(|&(x, y)| {
            if y < best || best.is_nan() {
                best = y;
            }
            (x, best)
        })
        .collect()
}

/// Whether `y` rises anywhere by more than 5% over its running minimum (a non-monotone trace).
pub fn is_non_monotone(points: &[(f64, f64)]) -> bool {
    let mut best = f64::INFINITY;
    for &(_, y) in points {
        if y > 1.05 * best {
            return true;
        }
        best = best.min(y);
    }
    false
}

/// Opacity of the shaded band of a non-monotone trace's iterates (its running minimum is the
/// line): low enough that the band never hides another series.
pub const BAND_ALPHA: f64 = 0.12;

/// The band of `pts` (x nondecreasing, axis units over `[x0, x1]`) as a closed outline: per
/// one of `bins` columns the highest `y` left to right, then the lowest right to left (a
/// column's `x` is the mean of its first and last point).
pub fn envelope(pts: &[(f64, f64)], x0: f64, x1: f64, bins: usize) -> Vec<(f64, f64)> {
    let mut cols: Vec<(f64, f64, f64)> = Vec::new(); // (x, lo, hi)
    let width = (x1 - x0).max(f64::MIN_POSITIVE);
    let col = |x: f64| (((x - x0) / width) * bins.max(1) as f64).floor() as i64;
    let mut i = 0;
    while i < pts.len() {
        let c = col(pts[i].0);
        let (mut lo, mut hi) = (pts[i].1, pts[i].1);
        let mut j = i;
        while j < pts.len() && col(pts[j].0) == c {
            lo = lo.min(pts[j].1);
            hi = hi.max(pts[j].1);
            j += 1;
        }
        cols.push((0.5 * (pts[i].0 + pts[j - 1].0), lo, hi));
        i = j;
    }
    cols.iter()
        .map(|c| (c.0, c.2))
        .chain(cols.iter().rev().map(|c| (c.0, c.1)))
        .collect()
}

/// Thin out `pts` (x nondecreasing, in axis units over `[x0, x1]`) to at most four points per
/// one of `bins` columns: the first, lowest, highest and last of each, in order, so the drawn
/// envelope is the same.
pub fn decimate(pts: &[(f64, f64)], x0: f64, x1: f64, bins: usize) -> Vec<(f64, f64)> {
    if pts.len() <= 4 * bins || x1 <= x0 {
        return pts.to_vec();
    }
    let col = |x: f64| (((x - x0) / (x1 - x0)) * bins as f64).floor() as i64;
    let mut out = Vec::with_capacity(4 * bins);
    let mut i = 0;
    while i < pts.len() {
        let c = col(pts[i].0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < pts.len() && col(pts[j].0) == c {
            if pts[j].1 < pts[lo].1 {
                lo = j;
            }
            if pts[j].1 > pts[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut idx = vec![i, lo, hi, j - 1];
        idx.sort_unstable();
        idx.dedup();
        out.extend(idx.into_iter().map(|k| pts[k]));
        i = j;
    }
    out
}

/// A legend entry: label, style index, whether it is the reference line.
struct Entry {
    label: String,
    style: usize,
    hline: bool,
    faint: bool,
    /// The note on failure crosses ([`LinePlot::failed`]).
    fail: bool,
}

impl Entry {
    /// A note (on shaded bands or failure crosses): a row of its own below the grid.
    fn note(&self) -> bool {
        self.faint || self.fail
    }
}

fn legend_entries(plots: &[LinePlot], styles: &[Vec<usize>]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut faint = false;
    for (p, st) in plots.iter().zip(styles) {
        for (i, s) in p.series.iter().enumerate() {
            // a series with nothing to draw (a refused run, an empty trace) gets no entry
            if !s.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()) {
                continue;
            }
            let style = st[i];
            let nm = p.best_so_far && is_non_monotone(&s.points);
            faint |= nm;
            match out.iter_mut().find(|e| !e.hline && e.label == s.label) {
                Some(_) => {}
                None => out.push(Entry {
                    label: s.label.clone(),
                    style,
                    hline: false,
                    faint: false,
                    fail: false,
                }),
            }
        }
    }
    let mut hls: Vec<String> = Vec::new();
    for p in plots {
        if let Some((_, l)) = &p.hline {
            if !hls.contains(l) {
                hls.push(l.clone());
            }
        }
    }
    for l in hls {
        out.push(Entry {
            label: l,
            style: 0,
            hline: true,
            faint: false,
            fail: false,
        });
    }
    if plots.iter().any(|p| !p.failed.is_empty()) {
        out.push(Entry {
            label: "x at the top edge: not solved (no cost to the tolerance)".into(),
            style: 0,
            hline: false,
            faint: false,
            fail: true,
        });
    }
    if faint {
        out.push(Entry {
            label: "shaded: range of every iterate of a non-monotone method (line: best so far)"
                .into(),
            style: 7,
            hline: false,
            faint: true,
            fail: false,
        });
    }
    out
}

fn legend_font(s: f64) -> TextStyle<'static> {
    (FAMILY, pt(s, 9.0)).into_font().color(&BLACK)
}

/// Columns, cell width and row height of the legend of `entries` across `w` pixels (the
/// note on faint lines, if any, takes a row of its own below).
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    w: u32,
    s: f64,
) -> std::result::Result<(usize, i32, i32), String> {
    let font = legend_font(s);
    let mut widest = 0u32;
    let grid: Vec<&Entry> = entries.iter().filter(|e| !e.note()).collect();
    for en in &grid {
        let (tw, _) = area
            .estimate_text_size(&en.label, &font)
            .map_err(|x| x.to_string())?;
        widest = widest.max(tw);
    }
    let cell = widest as i32 + pt(s, 36.0);
    let cols = ((w as i32 - pt(s, 16.0)) / cell.max(1)).max(1) as usize;
    Ok((cols.min(grid.len().max(1)), cell, pt(s, 14.0)))
}

fn legend_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    w: u32,
    s: f64,
) -> std::result::Result<u32, String> {
    if entries.is_empty() {
        return Ok(0);
    }
    let (cols, _, row) = legend_layout(area, entries, w, s)?;
    let n = entries.iter().filter(|e| !e.note()).count();
    let notes = entries.iter().filter(|e| e.note()).count();
    let rows = (n.div_ceil(cols) + notes) as i32;
    Ok((rows * row + pt(s, 10.0)) as u32)
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    s: f64,
) -> std::result::Result<(), String> {
    if entries.is_empty() {
        return Ok(());
    }
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (w, _) = area.dim_in_pixel();
    let (cols, cell, row) = legend_layout(area, entries, w, s)?;
    let used = cols as i32 * cell;
    let left = ((w as i32 - used) / 2).max(0);
    let sample = pt(s, 24.0);
    let ordered: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.note())
        .chain(entries.iter().filter(|e| e.note()))
        .collect();
    let n_grid = entries.iter().filter(|e| !e.note()).count();
    let grid_rows = n_grid.div_ceil(cols);
    for (k, en) in ordered.iter().enumerate() {
        let (c, r) = if en.note() {
            // notes: one row each, below the grid of entries
            (0, (grid_rows + k - n_grid) as i32)
        } else {
            ((k % cols) as i32, (k / cols) as i32)
        };
        let x = left + c * cell;
        let y = pt(s, 4.0) + r * row + row / 2;
        let line = vec![(x, y), (x + sample, y)];
        if en.hline {
            let st = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(pt(s, 0.6) as u32);
            area.draw(&DashedPathElement::new(line, pt(s, 4.0), pt(s, 3.0), st))
                .map_err(e)?;
        } else if en.fail {
            let st = ShapeStyle::from(&BLACK).stroke_width(pt(s, 0.9) as u32);
            area.draw(&Cross::new((x + sample / 2, y), pt(s, 3.0), st))
                .map_err(e)?;
        } else if en.faint {
            let h = pt(s, 3.0);
            area.draw(&Rectangle::new(
                [(x, y - h), (x + sample, y + h)],
                BLACK.mix(BAND_ALPHA).filled(),
            ))
            .map_err(e)?;
        } else {
            draw_styled(area, &line, en.style, s)?;
            let m = marker_of(en.style);
            draw_marker(area, (x + sample / 2, y), m, en.style, s)?;
        }
        area.draw_text(
            &en.label,
            &legend_font(s).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            )),
            (x + sample + pt(s, 5.0), y),
        )
        .map_err(e)?;
    }
    Ok(())
}

fn color_of(style: usize) -> RGBColor {
    let (r, g, b) = PALETTE[style % PALETTE.len()];
    RGBColor(r, g, b)
}

fn line_style(style: usize, s: f64) -> ShapeStyle {
    ShapeStyle::from(&color_of(style)).stroke_width(pt(s, 0.75) as u32)
}

/// Draw a polyline in pixel coordinates of `area` with the dash pattern of `style`.
fn draw_styled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(i32, i32)],
    style: usize,
    s: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let st = line_style(style, s);
    let w = st.stroke_width as i32;
    match DASHES[style % DASHES.len()] {
        Dash::Solid => area.draw(&PathElement::new(pts.to_vec(), st)).map_err(e),
        Dash::Dashed => area
            .draw(&DashedPathElement::new(
                pts.iter().copied(),
                pt(s, 5.0),
                pt(s, 2.5),
                st,
            ))
            .map_err(e),
        Dash::Dotted => area
            .draw(&DashedPathElement::new(
                pts.iter().copied(),
                w.max(1),
                pt(s, 2.0),
                st,
            ))
            .map_err(e),
    }
}

fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: (i32, i32),
    m: Marker,
    style: usize,
    s: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let r = pt(s, 2.6);
    let fill = ShapeStyle::from(&color_of(style)).filled();
    let stroke = line_style(style, s);
    match m {
        Marker::None => Ok(()),
        Marker::Circle => area.draw(&Circle::new(c, r, fill)).map_err(e),
        Marker::Triangle => area.draw(&TriangleMarker::new(c, r + 1, fill)).map_err(e),
        Marker::Square => area
            .draw(&Rectangle::new(
                [(c.0 - r + 1, c.1 - r + 1), (c.0 + r - 1, c.1 + r - 1)],
                fill,
            ))
            .map_err(e),
        Marker::Cross => area.draw(&Cross::new(c, r, stroke)).map_err(e),
    }
}

/// x and y ranges (axis units) of `plot`'s data: on log axes over positive values only and
/// widened to whole powers; on linear axes with a 2% margin at the top.
fn range(vals: impl Iterator<Item = f64>, axis: Axis) -> (f64, f64) {
    let (lo, hi) = vals
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if axis.is_log() {
        let (lo, hi) = (lo.floor(), hi.ceil());
        (lo, if hi > lo { hi } else { lo + 1.0 })
    } else if hi > lo {
        (lo, hi + 0.02 * (hi - lo))
    } else {
        (lo - 0.5, lo + 0.5)
    }
}

/// A linear f64 coordinate with the ticks of [`ticks`] and no minor mesh lines.
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Self {
            inner: (lo..hi).into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

type Coords = Cartesian2d<Ticked, Ticked>;

fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &LinePlot,
    styles: &[usize],
    s: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (xa, ya) = (plot.x_axis, plot.y_axis);
    let (x0, x1, y0, y1) = data_ranges(plot);
    let (xt, yt) = (ticks(xa, x0, x1), ticks(ya, y0, y1));
    let (xl, yl) = (tick_labels(xa, &xt), tick_labels(ya, &yt));
    let lookup = |t: &[f64], l: &[String], v: f64| -> String {
        t.iter()
            .position(|&k| (k - v).abs() <= 1e-9 * (1.0 + k.abs()))
            .map(|i| l[i].clone())
            .unwrap_or_default()
    };
    let title_pt = title_size(root, &plot.title, s)?;
    let mut chart: ChartContext<'_, DB, Coords> = ChartBuilder::on(root)
        .caption(&plot.title, (FAMILY, pt(s, title_pt)))
        .margin(pt(s, 6.0))
        .margin_right(pt(s, 12.0))
        .x_label_area_size(pt(s, 30.0))
        .y_label_area_size(pt(s, 46.0))
        .build_cartesian_2d(
            Ticked::new(x0, x1, xt.clone()),
            Ticked::new(y0, y1, yt.clone()),
        )
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style((FAMILY, pt(s, 10.0)))
        .label_style((FAMILY, pt(s, 9.0)))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| lookup(&xt, &xl, *v))
        .y_label_formatter(&|v| lookup(&yt, &yl, *v))
        .draw()
        .map_err(e)?;
    if let Some((h, _)) = &plot.hline {
        let style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(pt(s, 0.6) as u32);
        let hy = ya.fwd(*h);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x0, hy), (x1, hy)],
                pt(s, 4.0),
                pt(s, 3.0),
                style,
            ))
            .map_err(e)?;
    }
    let frame = Frame {
        x0,
        x1,
        y0,
        y1,
        width: root.dim_in_pixel().0 as usize,
        base: root.get_base_pixel(),
    };
    let d = Drawing {
        root,
        chart: &chart,
        plot,
        styles,
        s,
        f: frame,
    };
    d.lines()?;
    d.failures()
}

/// The plotted ranges `(x0, x1, y0, y1)` in axis units (`Axis::fwd`) of `plot`'s data: on a log
/// x axis only positive values set the range (iteration 0 is drawn at its end) and the axis
/// ends just after the data; `plot.y_range` where given.
fn data_ranges(plot: &LinePlot) -> (f64, f64, f64, f64) {
    let (xa, ya) = (plot.x_axis, plot.y_axis);
    let (mut x0, mut x1) = range(
        plot.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(plot.failed.iter().map(|f| f.1))
            .filter(|x| !xa.is_log() || *x > 0.0)
            .map(|x| xa.fwd(x)),
        xa,
    );
    if xa == Axis::Log10 {
        // a log x axis ends just after the data, not at the next power of ten
        let hi = plot
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| p.0 > 0.0 && p.0.is_finite())
            .map(|p| xa.fwd(p.0))
            .fold(f64::NEG_INFINITY, f64::max);
        if hi.is_finite() && hi > x0 + 1.0 {
            x1 = hi + 0.03 * (hi - x0);
        }
        x0 = x0.min(x1 - 1.0);
    }
    let (y0, y1) = match plot.y_range {
        Some((a, b)) => (ya.fwd(a), ya.fwd(b)),
        None => range(
            plot.series
                .iter()
                .flat_map(|s| s.points.iter().map(move |p| ya.fwd(p.1)))
                .chain(plot.hline.as_ref().map(|h| ya.fwd(h.0))),
            ya,
        ),
    };
    (x0, x1, y0, y1)
}

/// The title's size in points: 11, shrinking by half points (down to 6) until it fits the
/// width of `root` at scale `s`.
fn title_size<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    s: f64,
) -> std::result::Result<f64, String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (w_area, _) = root.dim_in_pixel();
    let mut title_pt = 11.0;
    while title_pt > 6.0 {
        let (tw, _) = root
            .estimate_text_size(title, &(FAMILY, pt(s, title_pt)).into_font().color(&BLACK))
            .map_err(e)?;
        if (tw as i32) < w_area as i32 - pt(s, 8.0) {
            break;
        }
        title_pt -= 0.5;
    }
    Ok(title_pt)
}

/// Where the data sit on the drawing: the ranges in axis units, the plot's width in pixels and
/// the drawing area's base pixel.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    width: usize,
    base: (i32, i32),
}

/// A plot being drawn: the area, its chart, the plot, the style of each series, the scale `s`
/// and where the data sit.
struct Drawing<'a, 'c, DB: DrawingBackend> {
    root: &'a DrawingArea<DB, Shift>,
    chart: &'a ChartContext<'c, DB, Coords>,
    plot: &'a LinePlot,
    styles: &'a [usize],
    s: f64,
    f: Frame,
}

impl<DB: DrawingBackend> Drawing<'_, '_, DB> {
    /// The pixel of data point `q` (axis units) relative to the drawing area.
    fn px(&self, q: &(f64, f64)) -> (i32, i32) {
        let c = self.chart.backend_coord(q);
        (c.0 - self.f.base.0, c.1 - self.f.base.1)
    }

    /// The series: the shaded range of every non-monotone trace first, then the lines (longest
    /// first, shortest on top) with their markers.
    fn lines(&self) -> std::result::Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        let (root, plot, styles, s) = (self.root, self.plot, self.styles, self.s);
        let (xa, ya) = (plot.x_axis, plot.y_axis);
        let (x0, x1, y0, y1, w) = (self.f.x0, self.f.x1, self.f.y0, self.f.y1, self.f.width);
        // data -> pixel coordinates of `root`, decimated to the plot width
        let to_px = |pts: &[(f64, f64)]| -> Vec<(i32, i32)> {
            decimate(pts, x0, x1, w)
                .iter()
                .map(|p| self.px(p))
                .collect()
        };
        struct Prep {
            style: usize,
            main: Vec<(f64, f64)>,
            raw: Option<Vec<(f64, f64)>>,
            end: f64,
        }
        let mut preps: Vec<Prep> = plot
            .series
            .iter()
            .enumerate()
            .map(|(i, ser)| {
                let pts: Vec<(f64, f64)> = ser
                    .points
                    .iter()
                    .filter(|p| p.0.is_finite() && !p.1.is_nan())
                    .map(|&(x, y)| (xa.fwd(x).clamp(x0, x1), ya.fwd(y).clamp(y0, y1)))
                    .collect();
                let nm = plot.best_so_far && is_non_monotone(&ser.points);
                let main = if nm { running_min(&pts) } else { pts.clone() };
                Prep {
                    style: styles[i],
                    end: pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
                    raw: nm.then_some(pts),
                    main,
                }
            })
            .collect();
        // the shaded range of every iterate of non-monotone traces first, below every line: one
        // filled band per trace (its per-pixel-column envelope), so its opacity is BAND_ALPHA
        // however densely the iterates oscillate; then the lines, longest first, shortest on top
        for p in &preps {
            if let Some(raw) = &p.raw {
                let band: Vec<(i32, i32)> = envelope(raw, x0, x1, w)
                    .iter()
                    .map(|q| self.px(q))
                    .collect();
                if band.len() >= 3 {
                    let st = color_of(p.style).mix(BAND_ALPHA).filled();
                    root.draw(&Polygon::new(band, st)).map_err(e)?;
                }
            }
        }
        preps.sort_by(|a, b| b.end.total_cmp(&a.end));
        for p in &preps {
            let m = marker_of(p.style);
            // a convergence trace of at most two points (an external solver's start and answer,
            // no iterates between) is no curve: its points alone are drawn
            if plot.best_so_far && p.main.len() <= 2 {
                let m = if m == Marker::None { Marker::Circle } else { m };
                for q in &p.main {
                    draw_marker(root, self.px(q), m, p.style, s)?;
                }
                continue;
            }
            let px = to_px(&p.main);
            draw_styled(root, &px, p.style, s)?;
            if plot.markers_at_points {
                let m = if m == Marker::None { Marker::Circle } else { m };
                for q in &p.main {
                    draw_marker(root, self.px(q), m, p.style, s)?;
                }
            } else if m != Marker::None && !p.main.is_empty() {
                // 7 markers across the axis, shifted per style so that markers of lines on top
                // of each other do not coincide
                let off = (p.style as f64 * 0.37).fract();
                for j in 0..7 {
                    let tx = x0 + (x1 - x0) * (j as f64 + off) / 7.0;
                    if tx > p.end || tx < p.main[0].0 {
                        continue;
                    }
                    // the line's height at tx (linear between its neighbours, in axis units)
                    let k = p.main.partition_point(|q| q.0 < tx).min(p.main.len() - 1);
                    let y = if k == 0 || p.main[k].0 <= p.main[k - 1].0 {
                        p.main[k].1
                    } else {
                        let (a, b) = (p.main[k - 1], p.main[k]);
                        a.1 + (b.1 - a.1) * (tx - a.0) / (b.0 - a.0)
                    };
                    draw_marker(root, self.px(&(tx, y)), m, p.style, s)?;
                }
            }
        }
        Ok(())
    }

    /// Failures: a cross in the series' colour just below the top edge, one row per series with
    /// failures (so that crosses of two series at one x do not hide each other).
    fn failures(&self) -> std::result::Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        let (root, plot, styles, s) = (self.root, self.plot, self.styles, self.s);
        let (x0, x1, y0, y1) = (self.f.x0, self.f.x1, self.f.y0, self.f.y1);
        let mut rows_of: Vec<usize> = Vec::new();
        for (label, x) in &plot.failed {
            let Some(i) = plot.series.iter().position(|ser| &ser.label == label) else {
                continue;
            };
            if !x.is_finite() {
                continue;
            }
            let row = match rows_of.iter().position(|&k| k == i) {
                Some(r) => r,
                None => {
                    rows_of.push(i);
                    rows_of.len() - 1
                }
            };
            let q = (
                plot.x_axis.fwd(*x).clamp(x0, x1),
                y1 - (0.03 + 0.045 * row as f64) * (y1 - y0),
            );
            let st = ShapeStyle::from(&color_of(styles[i])).stroke_width(pt(s, 0.9) as u32);
            root.draw(&Cross::new(self.px(&q), pt(s, 3.2), st))
                .map_err(e)?;
        }
        Ok(())
    }
}

/// Record `dpi` in the PNG at `path` (a `pHYs` chunk after `IHDR`, in dots per metre), so that
/// LaTeX and image viewers size it in inches. A file that is no PNG or already has the chunk
/// is left as it is. Errors: I/O errors.
fn set_png_dpi(path: &Path, dpi: u32) -> Result<()> {
    let mut bytes = std::fs::read(path).map_err(|e| HarnessError::io(path, e))?;
    const SIG: &[u8] = b"\x89PNG\r\n\x1a\n";
    if bytes.len() < 33 || &bytes[..8] != SIG || &bytes[12..16] != b"IHDR" {
        return Ok(());
    }
    if bytes.windows(4).any(|w| w == b"pHYs") {
        return Ok(());
    }
    let ppm = (f64::from(dpi) / 0.0254).round() as u32;
    let mut chunk = Vec::with_capacity(21);
    chunk.extend_from_slice(&9u32.to_be_bytes());
    let mut body = b"pHYs".to_vec();
    body.extend_from_slice(&ppm.to_be_bytes());
    body.extend_from_slice(&ppm.to_be_bytes());
    body.push(1);
    chunk.extend_from_slice(&body);
    chunk.extend_from_slice(&crc32(&body).to_be_bytes());
    bytes.splice(33..33, chunk);
    std::fs::write(path, bytes).map_err(|e| HarnessError::io(path, e))
}

/// CRC-32 (ISO-HDLC, as PNG uses: reflected polynomial `0xEDB88320`, initial value and final
/// XOR `0xFFFFFFFF`) of `data`; the checksum of the `pHYs` chunk (the DPI) written into the
/// PNGs.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}
