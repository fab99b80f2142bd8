//! Convergence plots (PNG and SVG) with plotters; text is drawn with the embedded DejaVu Sans
//! font (`assets/`), so no system font library is needed.

use crate::error::{HarnessError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        // The font is valid (checked by the tests); ignore a second registration.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

/// One line of a convergence plot: a label and `(x, residual)` points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label (solver name).
    pub label: String,
    /// Points; residuals `<= 0` are drawn at the plot floor.
    pub points: Vec<(f64, f64)>,
}

/// What a convergence plot shows.
#[derive(Clone, Debug)]
pub struct ConvergencePlot {
    /// Title (instance name, class, size).
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Lines.
    pub series: Vec<Series>,
    /// Tolerance drawn as a horizontal dashed line.
    pub tol: Option<f64>,
}

const FLOOR: f64 = 1e-17;
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

/// Draw `plot` to `png` and `svg`.
pub fn draw_convergence(plot: &ConvergencePlot, png: &Path, svg: &Path) -> Result<()> {
    register_font();
    for p in [png, svg] {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| HarnessError::io(d, e))?;
        }
    }
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: String| HarnessError::Plot {
            path: path.clone(),
            message: e,
        }
    };
    draw(BitMapBackend::new(png, SIZE).into_drawing_area(), plot).map_err(err(png))?;
    draw(SVGBackend::new(svg, SIZE).into_drawing_area(), plot).map_err(err(svg))?;
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    plot: &ConvergencePlot,
) -> std::result::Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let xmax = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let ys = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1.max(FLOOR)))
        .chain(plot.tol);
    let (mut ymin, mut ymax) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    if !ymin.is_finite() || ymax <= 0.0 {
        (ymin, ymax) = (1e-10, 1.0);
    }
    let (ymin, ymax) = (
        10f64.powf(ymin.log10().floor()),
        10f64.powf(ymax.log10().ceil().max(ymin.log10().floor() + 1.0)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(&plot.title, ("sans-serif", 22))
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..xmax * 1.02, (ymin..ymax).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(e)?;
    if let Some(tol) = plot.tol {
        let style = ShapeStyle::from(&BLACK.mix(0.5)).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, tol), (xmax * 1.02, tol)],
                8,
                6,
                style,
            ))
            .map_err(e)?
            .label(format!("tol {tol:.0e}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    for (i, s) in plot.series.iter().enumerate() {
        let (r, g, b) = PALETTE[i % PALETTE.len()];
        // 1-px lines: plotters draws wider polylines with miter joins, which spike at the
        // sharp zig-zags of non-monotone methods and would fake residual values.
        let style = ShapeStyle::from(&RGBColor(r, g, b)).stroke_width(1);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|&(x, y)| (x, y.max(FLOOR))),
                style,
            ))
            .map_err(e)?
            .label(&s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}
