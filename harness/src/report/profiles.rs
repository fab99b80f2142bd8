//! Performance profiles (Dolan & More, Math. Program. 91, 2002) of one settings profile.

use super::metrics::{excluded, ratios, Metric};
use super::ProfileCtx;
use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::plot::{draw_plot, Axis, LinePlot, Series};
use std::fmt::Write as _;

/// The "Performance profiles" section of a profile: by time, iterations and `N`-products, each
/// as `report/profile_<metric>[__<profile>].png/.svg` with the CSV of its steps (`solver,tau,rho`).
/// Profiles by iterations and `N`-products cover only the solvers whose cost those counts
/// measure ([`super::metrics::measures_cost`]); the text names the others and why. The tau
/// axis is log2, ticks at powers of two, up to the power of two above 1.2 times the largest
/// finite ratio. Errors: I/O errors, plotting errors.
pub(super) fn performance_profiles(md: &mut String, ctx: &ProfileCtx) -> Result<()> {
    let (outs, solvers, suffix, rdir) = (&ctx.outs, ctx.solvers, &ctx.group_suffix, ctx.rdir);
    let _ = writeln!(md, "### Performance profiles\n");
    for m in Metric::ALL {
        let (rat, nprob) = ratios(outs, solvers, m);
        let rmax = rat
            .values()
            .flatten()
            .filter(|r| r.is_finite())
            .fold(1.0f64, |a, &b| a.max(b));
        let tmax = 2f64.powf((rmax * 1.2).log2().ceil().max(1.0));
        let mut csv = String::from("solver,tau,rho\n");
        let series: Vec<Series> = solvers
            .iter()
            .filter(|s| rat.get(*s).is_some_and(|v| !v.is_empty()))
            .map(|s| {
                let rs = &rat[s];
                // over the problems the solver took: a refusal is not a run
                let np = rs.len().max(1) as f64;
                let mut pts = vec![(1.0, rs.iter().filter(|&&r| r <= 1.0).count() as f64 / np)];
                for (i, &r) in rs.iter().enumerate() {
                    if r.is_finite() && r > 1.0 {
                        pts.push((r, pts.last().map(|p| p.1).unwrap_or(0.0)));
                        pts.push((r, (i + 1) as f64 / np));
                    }
                }
                pts.push((tmax, pts.last().map(|p| p.1).unwrap_or(0.0)));
                for p in &pts {
                    let _ = writeln!(csv, "{s},{},{}", p.0, p.1);
                }
                Series {
                    label: if rs.len() < nprob {
                        format!("{s} (took {} of {nprob})", rs.len())
                    } else {
                        s.clone()
                    },
                    points: pts,
                    color: solvers.iter().position(|x| x == s),
                }
            })
            .collect();
        let name = format!("profile_{}{suffix}", m.as_str());
        write_atomic(&rdir.join(format!("{name}.csv")), csv.as_bytes())?;
        let title = format!(
            "Performance profile by {}, {} problems ({})",
            m.as_str(),
            nprob,
            ctx.tol_title
        );
        let plot = LinePlot {
            y_range: Some((0.0, 1.02)),
            ..LinePlot::lines(
                &title,
                "tau (ratio to the best solver, log2 scale)",
                "share of problems solved within tau",
                series,
                Axis::Log2,
                Axis::Linear,
            )
        };
        draw_plot(
            &plot,
            &rdir.join(format!("{name}.png")),
            &rdir.join(format!("{name}.svg")),
            &ctx.opts.figure,
        )?;
        let _ = writeln!(
            md,
            "![profile by {m}](report/{name}.png)\n\n[SVG](report/{name}.svg) · [CSV](report/{name}.csv)\n",
            m = m.as_str()
        );
        let took_fewer: Vec<String> = rat
            .iter()
            .filter(|(_, v)| !v.is_empty() && v.len() < nprob)
            .map(|(s, v)| format!("`{s}` {} of {nprob}", v.len()))
            .collect();
        if !took_fewer.is_empty() {
            let _ = writeln!(
                md,
                "Solvers that refused some problems are profiled over the problems they took \
                 (rho = share of those solved within tau; ratios to the best solver that took \
                 the problem): {}.\n",
                took_fewer.join(", ")
            );
        }
        let gone = excluded(outs, solvers, m);
        if !gone.is_empty() {
            let _ = writeln!(
                md,
                "Left out of the profile by {}: {}.\n",
                m.as_str(),
                gone.iter()
                    .map(|(s, why)| format!("`{s}` ({why})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(())
}
