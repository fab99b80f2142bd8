//! The figure of a trajectory replay (issue 32, item 4): per solver, cold against warm, the
//! iterations of every step, the cumulative solver time along the trajectory, and the
//! distribution (ECDF) of the per-step iterations.

use crate::error::Result;
use crate::plot::{draw_grid, Axis, FigureOptions, LinePlot, Series};
use crate::trajectory::{ReplayRow, StartMode};
use std::path::{Path, PathBuf};

/// One line per solver and mode (`pgs cold`, `pgs warm`), in the order of `rows`, with the
/// points `points(steps)` of its rows in step order; the colour index is the line's position.
fn lines(rows: &[ReplayRow], points: impl Fn(&[&ReplayRow]) -> Vec<(f64, f64)>) -> Vec<Series> {
    let mut keys: Vec<(String, StartMode)> = Vec::new();
    for r in rows {
        if !keys.iter().any(|(s, m)| *s == r.solver && *m == r.mode) {
            keys.push((r.solver.clone(), r.mode));
        }
    }
    keys.iter()
        .enumerate()
        .map(|(i, (solver, mode))| {
            let mine: Vec<&ReplayRow> = rows
                .iter()
                .filter(|r| r.solver == *solver && r.mode == *mode)
                .collect();
            Series {
                label: format!("{solver} {}", mode.as_str()),
                points: points(&mine),
                color: Some(i),
            }
        })
        .collect()
}

/// Draw `replay.png` and `replay.svg` into `out`: three panels, (1) iterations per step
/// against the simulation step (log scale from 0.5; a step that ended after 0 iterations is
/// drawn at 0.5), (2) cumulative solver time (s) against the step, (3) the fraction of
/// steps solved within `x` iterations (ECDF, log x). Returns the PNG's path. Errors: drawing
/// and I/O.
pub fn draw_replay(
    out: &Path,
    scene: &str,
    rows: &[ReplayRow],
    fig: &FigureOptions,
) -> Result<PathBuf> {
    let per_step = lines(rows, |r| {
        r.iter()
            .map(|x| (x.step as f64, (x.iterations as f64).max(0.5)))
            .collect()
    });
    let cumulative = lines(rows, |r| {
        let mut t = 0.0;
        r.iter()
            .map(|x| {
                t += x.time_s;
                (x.step as f64, t)
            })
            .collect()
    });
    let ecdf = lines(rows, |r| {
        let mut it: Vec<f64> = r.iter().map(|x| x.iterations as f64).collect();
        it.sort_by(f64::total_cmp);
        let n = it.len() as f64;
        it.iter()
            .enumerate()
            .map(|(k, &i)| (i.max(0.5), (k + 1) as f64 / n))
            .collect()
    });
    let most = rows.iter().map(|r| r.iterations).max().unwrap_or(1).max(1) as f64;
    let mut iterations = LinePlot::lines(
        "iterations per step",
        "step",
        "iterations (log scale; 0 drawn at 0.5)",
        per_step,
        Axis::Linear,
        Axis::Log10,
    );
    iterations.y_range = Some((0.5, 2.0 * most));
    let plots = [
        iterations,
        LinePlot::lines(
            "cumulative solver time",
            "step",
            "time [s]",
            cumulative,
            Axis::Linear,
            Axis::Linear,
        ),
        LinePlot::lines(
            "steps within x iterations (ECDF)",
            "iterations (log scale; 0 drawn at 0.5)",
            "fraction of steps",
            ecdf,
            Axis::Log10,
            Axis::Linear,
        ),
    ];
    let png = out.join("replay.png");
    draw_grid(
        &format!("trajectory {scene}: cold (from zero) and warm (previous answer) starts"),
        &plots,
        3,
        &png,
        &out.join("replay.svg"),
        fig,
    )?;
    Ok(png)
}
