//! Line plots (`cpbench_harness::plot`): PNG and SVG output, ticks and their labels, styles,
//! decimation and the envelope band, figure options.

use cpbench_harness::plot::{
    assign_styles, crc32, decimate, draw_grid, draw_plot, envelope, is_non_monotone, running_min,
    style_parts, tick_labels, ticks, wants_log_x, Axis, FigureOptions, LinePlot, Series, XScale,
    N_STYLES,
};

fn conv() -> LinePlot {
    LinePlot::convergence(
        "test".into(),
        "iteration",
        "residual".into(),
        vec![
            Series {
                label: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 1e-3), (2.0, 0.0)],
                color: None,
            },
            Series {
                label: "zigzag".into(),
                points: (0..3000)
                    .map(|k| (k as f64, if k % 2 == 0 { 1.0 } else { 1e-4 }))
                    .collect(),
                color: Some(3),
            },
        ],
        Some(1e-6),
        XScale::Linear,
        false,
    )
}

/// A 4 x 3 in figure at 100 dpi (400 x 300 px).
fn fig_4x3() -> FigureOptions {
    FigureOptions {
        size_in: (4.0, 3.0),
        dpi: 100,
        ..Default::default()
    }
}

/// `plot` drawn with [`fig_4x3`] into `dir` as `name.png` / `name.svg`: the PNG's bytes, its
/// width and height in pixels (IHDR) and the SVG's text.
fn draw_4x3(plot: &LinePlot, dir: &std::path::Path, name: &str) -> (Vec<u8>, u32, u32, String) {
    let (png, svg) = (
        dir.join(format!("{name}.png")),
        dir.join(format!("{name}.svg")),
    );
    draw_plot(plot, &png, &svg, &fig_4x3()).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (bytes, w, h, std::fs::read_to_string(&svg).unwrap())
}

#[test]
fn draws_png_and_svg_with_text_and_dpi() {
    let dir = tempfile::tempdir().unwrap();
    let plot = conv();
    let fig = fig_4x3();
    let (bytes, w, h, text) = draw_4x3(&plot, dir.path(), "p");
    // 400 x 300 px (IHDR width / height) and 100 dpi = 3937 dots per metre (pHYs)
    assert_eq!((w, h), (400, 300));
    assert_eq!(&bytes[37..41], b"pHYs");
    assert_eq!(u32::from_be_bytes(bytes[41..45].try_into().unwrap()), 3937);
    assert!(text.contains("<text"), "no text elements in the SVG");
    assert!(text.contains("font-family=\"DejaVu Sans, sans-serif\""));
    let texts: Vec<&str> = text.lines().filter(|l| !l.starts_with('<')).collect();
    assert!(
        texts.contains(&"iteration") && texts.contains(&"1e-6"),
        "{texts:?}"
    );
    assert!(text.contains("width=\"384\""), "4 in at 96 px per inch");
    draw_grid(
        "grid",
        &[plot.clone(), plot],
        2,
        &dir.path().join("g.png"),
        &dir.path().join("g.svg"),
        &fig,
    )
    .unwrap();
    let g = std::fs::read_to_string(dir.path().join("g.svg")).unwrap();
    // one shared legend: each label once
    assert_eq!(g.lines().filter(|l| *l == "zigzag").count(), 1);
}

#[test]
fn png_crc_is_the_standard_one() {
    // CRC-32 of "IEND" as every PNG ends with it
    assert_eq!(crc32(b"IEND"), 0xAE42_6082);
}

fn distinct(v: &[String]) -> bool {
    let mut s = v.to_vec();
    s.sort();
    s.dedup();
    s.len() == v.len()
}

#[test]
fn tick_labels_never_repeat() {
    // the reported case: 10000..18000 printed as 1e4 1e4 1e4 2e4 2e4 2e4
    let t = ticks(Axis::Linear, 10_000.0, 18_000.0);
    let l = tick_labels(Axis::Linear, &t);
    assert_eq!(l, vec!["10000", "12000", "14000", "16000", "18000"]);
    let t = ticks(Axis::Linear, 0.0, 20_400.0);
    assert_eq!(
        tick_labels(Axis::Linear, &t),
        vec!["0", "5000", "10000", "15000", "20000"]
    );
    let t = ticks(Axis::Linear, 1.0e6, 1.6e6);
    let l = tick_labels(Axis::Linear, &t);
    assert_eq!(
        l,
        vec!["1e6", "1.1e6", "1.2e6", "1.3e6", "1.4e6", "1.5e6", "1.6e6"]
    );
    let t = ticks(Axis::Linear, 0.0, 0.0031);
    let l = tick_labels(Axis::Linear, &t);
    assert_eq!(l, vec!["0.000", "0.001", "0.002", "0.003"]);
    let t = ticks(Axis::Linear, 0.0, 1.02);
    assert_eq!(
        tick_labels(Axis::Linear, &t),
        vec!["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    );
    for (lo, hi) in [(3.0, 3.5), (1e-7, 3e-7), (123456.0, 123460.0), (-5.0, 5.0)] {
        let t = ticks(Axis::Linear, lo, hi);
        assert!(t.len() >= 4, "{lo}..{hi}: {t:?}");
        assert!(distinct(&tick_labels(Axis::Linear, &t)), "{lo}..{hi}");
    }
}

#[test]
fn log_tick_labels() {
    let t = ticks(Axis::Log10, -8.0, 0.0);
    assert_eq!(
        tick_labels(Axis::Log10, &t),
        vec!["1e-8", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3", "1e-2", "1e-1", "1"]
    );
    let t = ticks(Axis::Log10, -17.0, 1.0);
    assert_eq!(
        tick_labels(Axis::Log10, &t),
        vec!["1e-15", "1e-12", "1e-9", "1e-6", "1e-3", "1"]
    );
    let t = ticks(Axis::Log10, 0.0, 5.0);
    assert_eq!(
        tick_labels(Axis::Log10, &t),
        vec!["1", "10", "1e2", "1e3", "1e4", "1e5"]
    );
    // profiles: powers of two, never 1.414 or 2.828
    let t = ticks(Axis::Log2, 0.0, 22.6f64.log2());
    assert_eq!(tick_labels(Axis::Log2, &t), vec!["1", "2", "4", "8", "16"]);
    assert_eq!(Axis::Log10.fwd(0.0), -17.0);
}

#[test]
fn auto_log_x_and_running_best() {
    let s = |end: f64| Series {
        label: String::new(),
        points: vec![(0.0, 1.0), (end, 0.1)],
        color: None,
    };
    assert!(wants_log_x(&[s(20.0), s(20_000.0)]));
    assert!(!wants_log_x(&[s(200.0), s(20_000.0)]));
    let p = LinePlot::convergence(
        String::new(),
        "iteration",
        String::new(),
        vec![s(15.0), s(20_000.0)],
        None,
        XScale::Auto,
        false,
    );
    assert_eq!(p.x_axis, Axis::Log10);
    assert_eq!(p.x_label, "iteration (log scale)");
    let pts = [(0.0, 1.0), (1.0, 0.5), (2.0, 0.9), (3.0, 0.1)];
    assert!(is_non_monotone(&pts));
    assert_eq!(
        running_min(&pts),
        vec![(0.0, 1.0), (1.0, 0.5), (2.0, 0.5), (3.0, 0.1)]
    );
    assert!(!is_non_monotone(&running_min(&pts)));
}

/// `n` points `(k, y)`, `k = 0..n`, with `y` alternating `even` (even `k`) and `odd`.
fn zigzag(n: usize, even: f64, odd: f64) -> Vec<(f64, f64)> {
    (0..n)
        .map(|k| (k as f64, if k % 2 == 0 { even } else { odd }))
        .collect()
}

#[test]
fn decimation_keeps_the_envelope() {
    let pts = zigzag(10_000, 1.0, -1.0);
    let d = decimate(&pts, 0.0, 10_000.0, 100);
    assert!(d.len() <= 400, "{}", d.len());
    assert!(d.iter().any(|p| p.1 == -1.0) && d.iter().any(|p| p.1 == 1.0));
    assert_eq!(d.first(), pts.first());
    assert_eq!(d.last(), pts.last());
}

#[test]
fn figure_options() {
    assert_eq!(FigureOptions::parse_size("3.5x2.5"), Ok((3.5, 2.5)));
    assert!(FigureOptions::parse_size("960x620").is_err());
    assert!(FigureOptions::parse_size("6").is_err());
    assert_eq!(FigureOptions::check_dpi(300), Ok(300));
    assert!(FigureOptions::check_dpi(0).is_err());
    assert_eq!(XScale::parse("log"), Some(XScale::Log));
    assert_eq!(XScale::parse("x"), None);
}

/// A convergence plot `title` of `series` (residual over iterations, linear x, no reference
/// line).
fn plain(title: &str, series: Vec<Series>) -> LinePlot {
    LinePlot::convergence(
        title.into(),
        "iteration",
        "residual".into(),
        series,
        None,
        XScale::Linear,
        false,
    )
}

/// 16 series whose preferred styles collide (a sweep's `pgs@omega=...` next to other
/// solvers, indices 0..8 twice): no two share colour, dash and marker, neighbours differ in
/// all three, and a label keeps one style across the cells of a grid.
#[test]
fn sixteen_series_never_share_a_style() {
    let series: Vec<Series> = (0..16)
        .map(|k| Series {
            label: format!("s{k}"),
            points: vec![(0.0, 1.0), (1.0 + k as f64, 1e-7)],
            color: Some(k % 8),
        })
        .collect();
    let plot = plain("t", series);
    let styles = assign_styles(std::slice::from_ref(&plot));
    let parts: Vec<_> = styles[0].iter().map(|&k| style_parts(k)).collect();
    for a in 0..16 {
        for b in a + 1..16 {
            assert_ne!(parts[a], parts[b], "series {a} and {b}");
        }
    }
    // the first eight keep their preferred style; plain indices 0..16 differ in every part
    assert_eq!(&styles[0][..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(styles[0][8], 8, "s8 prefers 0 (taken): the next free style");
    for k in 0..15 {
        let (x, y) = (style_parts(k), style_parts(k + 1));
        assert!(x.0 != y.0 && x.1 != y.1 && x.2 != y.2, "{k}");
    }
    let all: std::collections::HashSet<_> = (0..N_STYLES).map(style_parts).collect();
    assert_eq!(all.len(), N_STYLES);
    // one label, one style in every cell of a grid
    let mut other = plot.clone();
    other.series.reverse();
    let two = assign_styles(&[plot.clone(), other]);
    for (i, s) in plot.series.iter().enumerate() {
        let j = 15 - i;
        assert_eq!(two[0][i], two[1][j], "{}", s.label);
    }
}

/// The band of a zigzag trace is its per-column envelope: highs left to right, lows back.
#[test]
fn envelope_is_the_columns_range() {
    let pts = zigzag(40, 0.0, -4.0);
    let band = envelope(&pts, 0.0, 40.0, 4);
    assert_eq!(band.len(), 8);
    assert_eq!(band[0], (4.5, 0.0));
    assert_eq!(band[3], (34.5, 0.0));
    assert_eq!(band[4], (34.5, -4.0));
    assert_eq!(band[7], (4.5, -4.0));
}

/// A legend of many series makes a figure taller instead of squeezing its plot area away (the
/// 31-solver performance profiles of results/coulomb-public were unreadable before): with 40
/// series at 4 x 3 in and 100 dpi the PNG is taller than 300 px and the SVG as much taller in
/// proportion, while the two-series figure above keeps its 300 px.
#[test]
fn a_tall_legend_makes_the_figure_taller() {
    let dir = tempfile::tempdir().unwrap();
    let series = (0..40)
        .map(|k| Series {
            label: format!("solver number {k}"),
            points: vec![(0.0, 1.0), (1.0, 0.5 / (k + 1) as f64)],
            color: None,
        })
        .collect();
    let plot = plain("many", series);
    let (_, w, h, text) = draw_4x3(&plot, dir.path(), "m");
    assert_eq!(w, 400);
    assert!(h > 300, "height {h}");
    let svg_h: f64 = text
        .split("height=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    // 3 in at 96 px per inch, grown by the PNG's factor (to the rounding of both)
    let factor = f64::from(h) / 300.0;
    assert!(
        (svg_h - 288.0 * factor).abs() <= 2.0,
        "{svg_h} vs {}",
        288.0 * factor
    );
}
