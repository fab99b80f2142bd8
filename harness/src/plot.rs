//! Line plots (PNG and SVG) with plotters: convergence curves, performance profiles and grid
//! overviews. Text is drawn with the embedded DejaVu Sans font (`assets/`), so no system font
//! library is needed. Log axes are drawn as linear axes over `log10` / `log2` of the data with
//! labels written back in data units, which keeps one drawing path for every plot.

use crate::error::{HarnessError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

/// Register the embedded DejaVu Sans as `sans-serif` for plotters (once per process).
pub(crate) fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        // The font is valid (a test draws with it); a failure would only drop text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

/// One line: a legend label and `(x, y)` points in data units.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label (solver name).
    pub label: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// Palette index (keeps a solver's colour across plots); `None`: the series' position.
    pub color: Option<usize>,
}

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Linear.
    Linear,
    /// Logarithmic, decades labelled `1e-6` etc. Values `<= 0` are drawn at `1e-17`.
    Log10,
    /// Logarithmic base 2 (performance-profile ratios), labelled `1, 2, 4, ...`.
    Log2,
}

impl Axis {
    fn fwd(self, v: f64) -> f64 {
        match self {
            Axis::Linear => v,
            Axis::Log10 => v.max(1e-17).log10(),
            Axis::Log2 => v.max(1e-300).log2(),
        }
    }

    fn label(self, t: f64) -> String {
        match self {
            Axis::Linear => {
                if t.abs() >= 1e4 || (t != 0.0 && t.abs() < 1e-2) {
                    format!("{t:.0e}")
                } else if t.fract() == 0.0 {
                    format!("{t:.0}")
                } else {
                    format!("{t:.2}")
                }
            }
            Axis::Log10 => {
                if (t - t.round()).abs() < 1e-9 {
                    format!("1e{}", t.round() as i64)
                } else {
                    format!("{:.0e}", 10f64.powf(t))
                }
            }
            Axis::Log2 => {
                let v = 2f64.powf(t);
                if v >= 100.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.3}")
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_string()
                }
            }
        }
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
    /// Lines, coloured in order from the Tableau 10 palette.
    pub series: Vec<Series>,
    /// A horizontal dashed reference line (e.g. the tolerance), with its legend label.
    pub hline: Option<(f64, String)>,
    /// x scale.
    pub x_axis: Axis,
    /// y scale.
    pub y_axis: Axis,
    /// Fixed y range in data units (otherwise from the data, widened to whole decades on log axes).
    pub y_range: Option<(f64, f64)>,
    /// Put the legend in the lower right corner (performance profiles end at the top right).
    pub legend_lower_right: bool,
}

impl LinePlot {
    /// A convergence plot: `x` linear, residual on a log10 axis, tolerance line.
    pub fn convergence(
        title: String,
        x_label: &str,
        y_label: String,
        series: Vec<Series>,
        tol: Option<f64>,
    ) -> Self {
        Self {
            title,
            x_label: x_label.to_string(),
            y_label,
            series,
            hline: tol.map(|t| (t, format!("tol {t:.0e}"))),
            x_axis: Axis::Linear,
            y_axis: Axis::Log10,
            y_range: None,
            legend_lower_right: false,
        }
    }
}

/// Tableau 10 colours (distinguishable, print well).
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];
const SIZE: (u32, u32) = (960, 620);

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

/// Draw `plot` to `png` and `svg` (960 x 620 px).
pub fn draw_plot(plot: &LinePlot, png: &Path, svg: &Path) -> Result<()> {
    register_font();
    ensure_parent(png)?;
    ensure_parent(svg)?;
    draw_on(BitMapBackend::new(png, SIZE).into_drawing_area(), plot, 1.0).map_err(plot_err(png))?;
    draw_on(SVGBackend::new(svg, SIZE).into_drawing_area(), plot, 1.0).map_err(plot_err(svg))?;
    Ok(())
}

/// Draw several plots in a grid of `cols` columns (an overview of a whole suite), with a
/// common title, to `png` and `svg`.
pub fn draw_grid(
    title: &str,
    plots: &[LinePlot],
    cols: usize,
    png: &Path,
    svg: &Path,
) -> Result<()> {
    register_font();
    ensure_parent(png)?;
    ensure_parent(svg)?;
    let cols = cols.max(1);
    let rows = plots.len().div_ceil(cols).max(1);
    let size = (440 * cols as u32, 320 * rows as u32 + 50);
    fn grid<DB: DrawingBackend>(
        root: DrawingArea<DB, Shift>,
        title: &str,
        plots: &[LinePlot],
        rows: usize,
        cols: usize,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(title, ("sans-serif", 26))
            .map_err(|e| e.to_string())?;
        for (area, p) in root.split_evenly((rows, cols)).into_iter().zip(plots) {
            draw_on(area, p, 0.7)?;
        }
        root.present().map_err(|e| e.to_string())
    }
    grid(
        BitMapBackend::new(png, size).into_drawing_area(),
        title,
        plots,
        rows,
        cols,
    )
    .map_err(plot_err(png))?;
    grid(
        SVGBackend::new(svg, size).into_drawing_area(),
        title,
        plots,
        rows,
        cols,
    )
    .map_err(plot_err(svg))?;
    Ok(())
}

fn range(vals: impl Iterator<Item = f64>, axis: Axis) -> (f64, f64) {
    let (lo, hi) = vals
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    match axis {
        Axis::Log10 => {
            let (lo, hi) = (lo.floor(), hi.ceil());
            (lo, if hi > lo { hi } else { lo + 1.0 })
        }
        _ => {
            if hi > lo {
                (lo, hi + 0.02 * (hi - lo))
            } else {
                (lo - 0.5, lo + 0.5)
            }
        }
    }
}

fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    plot: &LinePlot,
    scale: f64,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let px = |v: i32| (f64::from(v) * scale).round() as i32;
    root.fill(&WHITE).map_err(e)?;
    let (xa, ya) = (plot.x_axis, plot.y_axis);
    let xs = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| xa.fwd(p.0)));
    let (x0, x1) = range(xs, xa);
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
    let mut chart = ChartBuilder::on(&root)
        .caption(&plot.title, ("sans-serif", px(22)))
        .margin(px(16))
        .x_label_area_size(px(50))
        .y_label_area_size(px(80))
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style(("sans-serif", px(18)))
        .label_style(("sans-serif", px(15)))
        .x_label_formatter(&|v| xa.label(*v))
        .y_label_formatter(&|v| ya.label(*v))
        .draw()
        .map_err(e)?;
    if let Some((h, label)) = &plot.hline {
        let style = ShapeStyle::from(&BLACK.mix(0.5)).stroke_width(1);
        let hy = ya.fwd(*h);
        chart
            .draw_series(DashedLineSeries::new(vec![(x0, hy), (x1, hy)], 8, 6, style))
            .map_err(e)?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    for (i, s) in plot.series.iter().enumerate() {
        let (r, g, b) = PALETTE[s.color.unwrap_or(i) % PALETTE.len()];
        // 1-px lines: plotters draws wider polylines with miter joins, which spike at the
        // sharp zig-zags of non-monotone methods and would fake residual values.
        let style = ShapeStyle::from(&RGBColor(r, g, b)).stroke_width(1);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (xa.fwd(x), ya.fwd(y)))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        chart
            .draw_series(LineSeries::new(pts, style))
            .map_err(e)?
            .label(&s.label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], style.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", px(16)))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(if plot.legend_lower_right {
            SeriesLabelPosition::LowerRight
        } else {
            SeriesLabelPosition::UpperRight
        })
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_png_and_svg_with_the_embedded_font() {
        let dir = tempfile::tempdir().unwrap();
        let plot = LinePlot::convergence(
            "test".into(),
            "iteration",
            "residual".into(),
            vec![Series {
                label: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 1e-3), (2.0, 0.0)],
                color: None,
            }],
            Some(1e-6),
        );
        let (png, svg) = (dir.path().join("p.png"), dir.path().join("p.svg"));
        draw_plot(&plot, &png, &svg).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains("iteration") && text.contains("1e-6"),
            "labels missing from the SVG"
        );
        draw_grid(
            "grid",
            &[plot.clone(), plot],
            2,
            &dir.path().join("g.png"),
            &dir.path().join("g.svg"),
        )
        .unwrap();
    }

    #[test]
    fn log_axis_labels() {
        assert_eq!(Axis::Log10.label(-6.0), "1e-6");
        assert_eq!(Axis::Log2.label(0.0), "1");
        assert_eq!(Axis::Log2.label(3.0), "8");
        assert_eq!(Axis::Log10.fwd(0.0), -17.0);
    }
}
