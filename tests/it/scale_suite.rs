//! The `scale` suite end to end through the CLI, on two tiny pyramids (72 and 300 contacts):
//! `cpbench run --suite scale` generates and caches the instances, records the bandwidth and
//! the new summary columns (`peak_rss_bytes`, `operator`, `operator_bytes`); a second run
//! reads the cache; `cpbench report` draws the scale figure with its table.

use cpbench_test_support::succeed;
use std::path::Path;

use crate::support::{column, cpbench, failure, lossy, manifest, summary};

/// `cpbench run --suite scale` on the two tiny pyramids with the options `extra` into `out`,
/// asserting success; returns its standard error and output.
fn run_scale(extra: &str, out: &Path) -> (String, String) {
    let o = succeed(
        cpbench(&format!(
            "run --suite scale --scale-contacts 1e2,300 {extra} --no-plots --out"
        ))
        .arg(out),
    );
    (lossy(&o.stderr), lossy(&o.stdout))
}

#[test]
fn scale_suite_runs_caches_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (err, _) = run_scale("--scale-max-contacts 1e3", &out);
    assert!(
        err.contains("pyramid-4: 72 contacts, n = 216, generated"),
        "{err}"
    );
    assert!(
        err.contains("pyramid-6: 300 contacts, n = 900, generated"),
        "{err}"
    );

    // the cache: one .npz per size
    let cache = out.join("cache");
    let mut files: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["pyramid-4_seed1__ccp.npz", "pyramid-6_seed1__ccp.npz"]
    );

    // summary: 2 sizes x 5 solvers, with the new columns
    let (h, rows) = summary(&out);
    let at = |name: &str| h.iter().position(|c| c == name).unwrap_or(usize::MAX);
    let n = h.len();
    // the scale columns, then the repeat columns, then the five fidelity columns last
    assert_eq!(
        [at("peak_rss_bytes"), at("operator"), at("operator_bytes")],
        [n - 11, n - 10, n - 9]
    );
    assert_eq!(
        [at("repeats"), at("time_min_s"), at("time_max_s")],
        [n - 8, n - 7, n - 6]
    );
    assert_eq!(
        h.iter().skip(n - 5).collect::<Vec<_>>(),
        [
            "signorini",
            "ncp_desaxce",
            "mdp_gap",
            "spurious_velocity",
            "cone_violation"
        ]
    );
    assert_eq!(rows.len(), 10);
    let mut solvers: Vec<&str> = rows.iter().map(|r| column(&h, r, "solver")).collect();
    solvers.sort();
    solvers.dedup();
    assert_eq!(solvers, ["apgd", "ipm", "pgs", "pgs:anderson", "spgqp"]);
    for r in &rows {
        assert_eq!(column(&h, r, "operator"), "csc");
        assert_eq!(column(&h, r, "jobs"), "1");
        let bytes: u64 = column(&h, r, "operator_bytes").parse().unwrap();
        let nnz: u64 = column(&h, r, "nnz").parse().unwrap();
        let nn: u64 = column(&h, r, "n").parse().unwrap();
        // values and usize indices of every entry, and the column pointers
        assert_eq!(bytes, 16 * nnz + 8 * (nn + 1), "{r:?}");
        let it: u64 = column(&h, r, "iterations").parse().unwrap();
        assert!((1..=100).contains(&it), "{r:?}");
        if cfg!(target_os = "linux") {
            let peak: u64 = column(&h, r, "peak_rss_bytes").parse().unwrap();
            // at least the operator is resident, and less than 2 GB for these sizes
            assert!(peak > bytes && peak < 2_000_000_000, "{r:?}");
        }
    }
    // the manifest: bandwidth, one-at-a-time runs, both instances with their operator
    let m = manifest(&out);
    assert_eq!(m["suite"], "scale");
    assert!(m["bandwidth_gbs"].as_f64().unwrap() > 0.0, "{m}");
    assert!(m["bandwidth_threads"].as_u64().unwrap() >= 1);
    assert_eq!(m["whole_machine"], true);
    assert_eq!(m["exec"]["max_iter"], 100);
    let insts = m["instances"].as_array().unwrap();
    assert_eq!(insts.len(), 2, "{m}");
    for i in insts {
        assert_eq!(i["operator"], "csc");
        assert!(i["operator_bytes"].as_u64().unwrap() > 0);
    }
    if cfg!(target_os = "linux") {
        assert!(m["peak_rss_method"].as_str().unwrap().starts_with("vmhwm"));
    }

    // a second run with the same cache reads the instances (the same hashes: runs present)
    let stamp = std::fs::metadata(cache.join(&files[0]))
        .unwrap()
        .modified()
        .unwrap();
    let (err, text) = run_scale("", &out);
    assert!(
        err.contains("pyramid-4: 72 contacts, n = 216, read from the cache"),
        "{err}"
    );
    assert!(text.contains("(0 run now, 10 already present)"), "{text}");
    assert_eq!(
        std::fs::metadata(cache.join(&files[0]))
            .unwrap()
            .modified()
            .unwrap(),
        stamp
    );

    // the report draws the scale figure with its table
    succeed(cpbench("report").arg(&out));
    for f in ["report/scale.png", "report/scale.svg", "report/scale.csv"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Scale"), "{md}");
    assert!(md.contains("![scale](report/scale.png)"), "{md}");
    let table: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| 72 | 216 | csc |") || l.starts_with("| 300 | 900 | csc |"))
        .collect();
    assert_eq!(table.len(), 10, "{md}");
    // first-order rows carry a time per product, an achieved bandwidth and a peak; ipm no
    // time per product
    for l in &table {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        // cells: "", contacts, n, operator, MB, solver, iterations, s/it, s/product, GB/s, %,
        // MB/iteration, % per iteration, RSS
        let per_it: f64 = cells[7].parse().unwrap();
        assert!(per_it > 0.0, "{l}");
        if cells[5] == "ipm" {
            assert_eq!(cells[8], "-", "{l}");
            assert_eq!(cells[11], "-", "{l}");
        } else {
            let per_product: f64 = cells[8].parse().unwrap();
            let gbs: f64 = cells[9].parse().unwrap();
            assert!(per_product > 0.0 && gbs > 0.0, "{l}");
            assert!(cells[10].ends_with('%') && cells[12].ends_with('%'), "{l}");
            let mb_per_it: f64 = cells[11].parse().unwrap();
            assert!(mb_per_it > 0.0, "{l}");
        }
        if cfg!(target_os = "linux") {
            let rss: f64 = cells[13].parse().unwrap();
            assert!(rss > 0.0, "{l}");
        }
    }
    // each first-order run's counter `vector_bytes`, from the summary
    let (sh, srows) = summary(&out);
    let vector_bytes = |instance: &str, solver: &str| -> f64 {
        let row = srows
            .iter()
            .find(|r| column(&sh, r, "instance") == instance && column(&sh, r, "solver") == solver)
            .expect("the summary row of a scale.csv line");
        let counters = column(&sh, row, "counters");
        counters
            .split(';')
            .find_map(|kv| kv.strip_prefix("vector_bytes="))
            .unwrap_or_else(|| panic!("no vector_bytes in {counters}"))
            .parse()
            .unwrap()
    };
    // the CSV behind it, at full precision: s/product = time / products, achieved GB/s =
    // operator bytes / s/product, % of triad = achieved / triad
    let mut rdr = csv::Reader::from_path(out.join("report/scale.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let mut first_order = 0;
    for r in rdr.records() {
        let r = r.unwrap();
        let f = |c: &str| column(&h, &r, c).parse::<f64>().ok();
        if column(&h, &r, "solver") == "ipm" {
            assert_eq!(column(&h, &r, "s_per_product"), "");
            continue;
        }
        first_order += 1;
        let per_product = f("time_s").unwrap() / f("matvecs").unwrap();
        assert!(
            (f("s_per_product").unwrap() / per_product - 1.0).abs() < 1e-5,
            "{r:?}"
        );
        let gbs = f("operator_bytes").unwrap() / per_product / 1e9;
        assert!(
            (f("achieved_gbs").unwrap() / gbs - 1.0).abs() < 1e-5,
            "{r:?}"
        );
        let pct = 100.0 * gbs / m["bandwidth_gbs"].as_f64().unwrap();
        assert!(
            (f("pct_of_triad").unwrap() / pct - 1.0).abs() < 1e-5,
            "{r:?}"
        );
        // bytes per iteration: per product the operator and 16 n, plus the run's counted
        // vector passes, over the iterations; its % of the triad
        let it = f("iterations").unwrap();
        let products =
            f("matvecs").unwrap() * (f("operator_bytes").unwrap() + 16.0 * f("n").unwrap());
        let vb = vector_bytes(column(&h, &r, "instance"), column(&h, &r, "solver"));
        assert!(vb > 0.0, "{r:?}");
        let per_it = f("bytes_per_iteration").unwrap();
        assert!(
            (per_it / ((products + vb) / it) - 1.0).abs() < 1e-9,
            "{r:?}"
        );
        let pct_it = 100.0 * per_it
            / (f("time_s").unwrap() / it)
            / 1e9
            / m["bandwidth_gbs"].as_f64().unwrap();
        assert!(
            (f("pct_of_triad_per_iteration").unwrap() / pct_it - 1.0).abs() < 1e-5,
            "{r:?}"
        );
    }
    assert_eq!(first_order, 8);
    let csv = std::fs::read_to_string(out.join("report/scale.csv")).unwrap();
    assert_eq!(csv.lines().count(), 11);
    assert!(
        Path::new(&out.join("report/scale.png"))
            .metadata()
            .unwrap()
            .len()
            > 1000
    );
}

/// Factorising solvers run only up to their cap; the manifest keeps the solvers in the order
/// asked for, and the rows follow it.
#[test]
fn factorising_solvers_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (err, _) = run_scale(
        "--scale-factorising-max-contacts 100 --solvers apgd,ipm --max-iter 5",
        &out,
    );
    assert!(err.contains("(ipm left out above 1e2 contacts)"), "{err}");
    let (h, rows) = summary(&out);
    let got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                column(&h, r, "n").to_string(),
                column(&h, r, "solver").to_string(),
                column(&h, r, "iterations").to_string(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        got[..2],
        [s("216", "apgd", "5"), s("216", "ipm", got[1].2.as_str())]
    );
    assert_eq!(got[2..], [s("900", "apgd", "5")]);
    let m = manifest(&out);
    let labels: Vec<&str> = m["solvers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["apgd", "ipm"]);
    assert_eq!(m["instances"].as_array().unwrap().len(), 2);
}

/// Flags of the scale suite are refused elsewhere, and a cap below every size is an error.
#[test]
fn scale_flags_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    for (args, out, needle) in [
        (
            "--suite default --scale-max-contacts 1e3",
            "a",
            "apply to --suite scale only",
        ),
        (
            "--suite scale --scale-max-contacts 10",
            "b",
            "no scale size has at most 10 contacts",
        ),
    ] {
        let (_, err) = failure(cpbench(&format!("run {args} --out")).arg(dir.path().join(out)));
        assert!(err.contains(needle), "{err}");
    }
}

/// The time to a tolerance (issue 34, item 4): a scale run to 1e-6 reports, per run, the
/// first traced iteration at or below 1e-4 and 1e-6 in the relative natural map with its
/// solver time and its bandwidth bound (products x operator bytes / triad), equal to what the
/// trace itself says.
#[test]
fn scale_report_reads_the_time_to_tolerance_from_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run_scale("--solvers apgd,pgs --tol 1e-6 --max-iter 20000", &out);
    succeed(cpbench("report").arg(&out));
    let bw = manifest(&out)["bandwidth_gbs"].as_f64().unwrap();
    let mut rdr = csv::Reader::from_path(out.join("report/scale.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let mut rows = 0;
    for r in rdr.records() {
        let r = r.unwrap();
        rows += 1;
        let (inst, solver) = (column(&h, &r, "instance"), column(&h, &r, "solver"));
        // the trace's own first row at or below each tolerance
        let mut t =
            csv::Reader::from_path(out.join(format!("traces/{inst}__{solver}__custom.csv")))
                .unwrap();
        let th = t.headers().unwrap().clone();
        let trace: Vec<[f64; 3]> = t
            .records()
            .map(|x| {
                let x = x.unwrap();
                let g = |c: &str| column(&th, &x, c).parse::<f64>().unwrap();
                [g("iteration"), g("time_s"), g("nat_map_rel_2")]
            })
            .collect();
        let trace_m: Vec<f64> = {
            let mut t =
                csv::Reader::from_path(out.join(format!("traces/{inst}__{solver}__custom.csv")))
                    .unwrap();
            let th = t.headers().unwrap().clone();
            t.records()
                .map(|x| column(&th, &x.unwrap(), "matvecs").parse().unwrap())
                .collect()
        };
        let bytes: f64 = column(&h, &r, "operator_bytes").parse().unwrap();
        let mut last_it = 0.0;
        for tol in ["1e-4", "1e-6"] {
            let k = trace
                .iter()
                .position(|p| p[2] <= tol.parse::<f64>().unwrap())
                .unwrap_or_else(|| panic!("{inst} {solver}: the run reached {tol}"));
            let it: f64 = column(&h, &r, &format!("iterations_to_{tol}"))
                .parse()
                .unwrap();
            let s: f64 = column(&h, &r, &format!("time_to_{tol}_s")).parse().unwrap();
            let bound: f64 = column(&h, &r, &format!("bound_to_{tol}_s"))
                .parse()
                .unwrap();
            assert_eq!(it, trace[k][0], "{inst} {solver} {tol}");
            assert!(
                (s / trace[k][1] - 1.0).abs() < 1e-5,
                "{inst} {solver} {tol}"
            );
            let want = trace_m[k] * bytes / (bw * 1e9);
            assert!((bound / want - 1.0).abs() < 1e-5, "{inst} {solver} {tol}");
            assert!(it >= last_it && it > 0.0);
            last_it = it;
        }
    }
    assert_eq!(rows, 4, "2 sizes x 2 solvers");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("to 1e-6: it / s / bound s"), "{md}");
}
