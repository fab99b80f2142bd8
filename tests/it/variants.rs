//! Solver variants side by side, refusals before a run and a folder sweep that keeps going,
//! through the CLI (issue 12's "done when" items).

use cpbench_harness::manifest::Manifest;
use cpbench_test_support::{fixture, succeed};

use crate::support::{
    cpbench, error, lossy, output, run_fixtures, stdout_of, summary_rows, temp_res, typed_error,
};

/// `pgs, pgs@omega=0.8, pgs@omega=1.3` on three files: three rows per file with their own
/// settings, three traces per file, the manifest keeps the three variants, the plots exist;
/// a later run with a variants file and a sweep adds its variants to the same folder, and
/// plain `pgs` with other settings into that folder is refused (then replaced with --rerun).
#[test]
fn three_variants_of_one_solver_coexist() {
    let (_dir, out) = temp_res();
    let (o, rows) = run_fixtures(
        &mut cpbench("run --solvers pgs,pgs@omega=0.8,pgs@omega=1.3"),
        &[
            "lcp/lcp_mmc.dat",
            "siconos-fc3d/NESpheres_10_1.dat",
            "fclib/Spheres-i099-356-679.hdf5",
        ],
        &out,
    );
    assert_eq!(rows.len(), 9);
    // the run ends with its report: report.md is written and the console's last lines are
    // the report's summary, one sentence per profile and class, as in report.md
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let text = lossy(&o.stdout);
    let tail: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("report: "))
        .skip(1)
        .collect();
    assert_eq!(tail.len(), 2, "{text}");
    for line in &tail {
        assert!(line.starts_with("Profile `default`, class `"), "{line}");
        assert!(line.contains("by time (shifted geometric mean"), "{line}");
        assert!(md.contains(line), "{line} not in report.md");
    }
    let omega = |r: &cpbench_harness::results::SummaryRow| -> f64 {
        let v: serde_json::Value = serde_json::from_str(&r.settings).unwrap();
        v["settings"]["omega"].as_f64().unwrap()
    };
    for chunk in rows.chunks(3) {
        let labels: Vec<&str> = chunk.iter().map(|r| r.solver.as_str()).collect();
        assert_eq!(labels, ["pgs", "pgs@omega=0.8", "pgs@omega=1.3"]);
        assert!(chunk.iter().all(|r| r.base_solver == "pgs" && r.success));
        assert_eq!(chunk.iter().map(omega).collect::<Vec<_>>(), [1.0, 0.8, 1.3]);
        // different settings, different work: over-relaxation changes the iteration count
        assert_ne!(chunk[0].iterations, chunk[1].iterations);
        assert_ne!(chunk[0].settings_hash, chunk[1].settings_hash);
    }
    let traces = std::fs::read_dir(out.join("traces")).unwrap().count();
    assert_eq!(traces, 9);
    assert!(out.join("traces/lcp_mmc__pgs@omega=0.8.csv").exists());
    assert!(out.join("plots/lcp_mmc.png").exists());
    let m = Manifest::read(&out).unwrap();
    let labels: Vec<&str> = m.solvers.iter().map(|s| s.label()).collect();
    assert_eq!(labels, ["pgs", "pgs@omega=0.8", "pgs@omega=1.3"]);

    // `cpbench run --no-plots [--rerun] --instances lcp_mmc.dat ARGS --out OUT`
    let mmc = |rerun: &str, args: &[&str]| {
        let mut c = cpbench(&format!("run --no-plots {rerun} --instances"));
        c.arg(fixture("lcp/lcp_mmc.dat"))
            .args(args)
            .arg("--out")
            .arg(&out);
        c
    };
    // a variants file (inline) and a sweep join the folder; the manifest keeps all variants
    let variants = r#"{"pgs-slow": {"solver": "pgs", "omega": 0.5}}"#;
    let sweep = "pgs-slow,jacobi@lambda=0.5:1:0.5";
    succeed(&mut mmc("", &["--variants", variants, "--solvers", sweep]));
    let rows = summary_rows(&out);
    assert_eq!(rows.len(), 12);
    let m = Manifest::read(&out).unwrap();
    let labels: Vec<&str> = m.solvers.iter().map(|s| s.label()).collect();
    assert_eq!(
        labels,
        [
            "pgs",
            "pgs@omega=0.8",
            "pgs@omega=1.3",
            "pgs-slow",
            "jacobi@lambda=0.5",
            "jacobi@lambda=1"
        ]
    );
    let slow = rows.iter().find(|r| r.solver == "pgs-slow").unwrap();
    assert_eq!(omega(slow), 0.5);

    // plain `pgs` with other settings into the same folder: refused, naming the way out
    let other = [
        "--solvers",
        "pgs",
        "--settings",
        r#"{"pgs": {"omega": 0.9}}"#,
    ];
    error(&mut mmc("", &other), &["other settings", "--rerun"]);
    succeed(&mut mmc("--rerun", &other));
    let rows = summary_rows(&out);
    let pgs: Vec<_> = rows
        .iter()
        .filter(|r| r.solver == "pgs" && r.instance == "lcp_mmc")
        .collect();
    assert_eq!(pgs.len(), 1);
    assert_eq!(omega(pgs[0]), 0.9);
}

/// A folder with one unreadable file among good ones: the run finishes the good ones, records
/// a `load_error` row with the message, exits non-zero; `--fail-fast` stops at the bad file.
/// Solvers that cannot take an instance are announced before the run and get `unsupported`
/// rows with the reason.
#[test]
fn a_folder_sweep_keeps_going_and_refusals_are_announced() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for f in ["lcp_mmc.dat", "lcp_deudeu.dat"] {
        std::fs::copy(fixture("lcp").join(f), data.join(f)).unwrap();
    }
    std::fs::write(data.join("broken.dat"), "3\n1 2\nnot a number\n").unwrap();
    let out = dir.path().join("res");
    let sweep = || {
        let mut c = cpbench("run --no-plots --solvers pgs,nsgs --instances");
        c.arg(&data).arg("--out").arg(&out);
        c
    };
    let o = output(&mut sweep());
    typed_error(
        &o,
        &[
            "1 of 3 inputs did not load",
            "skipped as unsupported (2 pairs",
            "nsgs on 2 instances (lcp_deudeu, lcp_mmc)",
        ],
    );
    let stdout = lossy(&o.stdout);
    assert!(stdout.contains("does not support class lcp"), "{stdout}");
    let rows = summary_rows(&out);
    assert_eq!(rows.len(), 5);
    let bad: Vec<_> = rows
        .iter()
        .filter(|r| r.status.as_str() == "load_error")
        .collect();
    assert_eq!(bad.len(), 1);
    assert!(bad[0].instance.ends_with("broken.dat") && !bad[0].success);
    assert!(
        bad[0].message.contains("unrecognised format"),
        "{}",
        bad[0].message
    );
    let solved: Vec<_> = rows.iter().filter(|r| r.solver == "pgs").collect();
    assert!(solved.len() == 2 && solved.iter().all(|r| r.success));
    let refused: Vec<_> = rows.iter().filter(|r| r.solver == "nsgs").collect();
    assert!(refused
        .iter()
        .all(|r| r.status.as_str() == "unsupported"
            && r.message.contains("does not support class lcp")));

    // the bad file fixed: the next run drops the load_error row and solves it
    std::fs::copy(fixture("lcp/lcp_CPS_1.dat"), data.join("broken.dat")).unwrap();
    succeed(&mut sweep());
    let rows = summary_rows(&out);
    assert!(rows.iter().all(|r| r.status.as_str() != "load_error"));
    assert_eq!(rows.len(), 6);

    std::fs::write(data.join("broken.dat"), "garbage\n").unwrap();
    error(
        cpbench("run --no-plots --fail-fast --solvers pgs --instances")
            .arg(&data)
            .arg("--out")
            .arg(dir.path().join("ff")),
        &[],
    );
    assert!(!dir.path().join("ff/summary.csv").exists());
}

/// Issue 28: a two-setting sweep (`pgs@omega`, `jacobi@lambda`) gets a figure per setting and
/// measure in the report, and the CSV behind each figure holds exactly the summary's rows of
/// those variants (value from the settings JSON, solved = the check, the row's counts and
/// time); `sweep-plot` draws one setting and names the sweeps there when asked for another.
#[test]
fn a_sweep_figure_holds_the_summary_rows() {
    let (dir, out) = temp_res();
    run_fixtures(
        &mut cpbench("run --solvers pgs@omega=0.8:1.2:0.2,jacobi@lambda=0.5:1:0.5 --no-report"),
        &["siconos-fc3d/NESpheres_10_1.dat", "lcp/lcp_mmc.dat"],
        &out,
    );
    assert!(
        !out.join("report.md").exists(),
        "--no-report wrote a report"
    );
    succeed(cpbench("report").arg(&out));
    let rows = summary_rows(&out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("### Sweeps"), "{md}");
    for (base, key, n_var) in [("pgs", "omega", 3), ("jacobi", "lambda", 2)] {
        let stem = format!("sweep-{base}-{key}");
        // one class per instance here: the files of the two sections carry `-ccp` / `-lcp`
        let mut seen = 0;
        for class in ["ccp", "lcp"] {
            let rdir = out.join("report");
            let csv = rdir.join(format!("{stem}-{class}.csv"));
            assert!(rdir.join(format!("{stem}-iterations-{class}.png")).exists());
            assert!(rdir.join(format!("{stem}-time-{class}.svg")).exists());
            let mut r = csv::Reader::from_path(&csv).unwrap();
            let h = r.headers().unwrap().clone();
            assert_eq!(
                h.iter().collect::<Vec<_>>(),
                [
                    "instance",
                    "solver",
                    "setting",
                    "value",
                    "solved",
                    "status",
                    "iterations",
                    "matvecs",
                    "time_s"
                ]
            );
            let recs: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
            let want: Vec<_> = rows
                .iter()
                .filter(|x| x.base_solver == base && x.class_name() == class)
                .collect();
            assert_eq!(recs.len(), want.len(), "{}", csv.display());
            assert_eq!(recs.len(), n_var);
            for rec in &recs {
                let row = want
                    .iter()
                    .find(|x| x.instance == rec[0] && x.solver == rec[1])
                    .unwrap_or_else(|| panic!("{rec:?} not in the summary"));
                let s: serde_json::Value = serde_json::from_str(&row.settings).unwrap();
                assert_eq!(&rec[2], key);
                assert_eq!(
                    rec[3].parse::<f64>().unwrap(),
                    s["settings"][key].as_f64().unwrap()
                );
                assert_eq!(&rec[4], if row.success { "yes" } else { "no" });
                assert_eq!(&rec[5], row.status.as_str());
                assert_eq!(rec[6].parse::<u64>().unwrap(), row.iterations);
                assert_eq!(rec[7].parse::<u64>().unwrap(), row.matvecs);
                assert_eq!(rec[8].parse::<f64>().unwrap(), row.time_s);
            }
            seen += recs.len();
        }
        assert_eq!(seen, 2 * n_var);
    }
    // sweep-plot: one setting, one measure; another setting is refused with the list
    let text = stdout_of(
        cpbench("sweep-plot")
            .arg(&out)
            .args(["--setting", "omega", "--measure", "time", "--out"])
            .arg(dir.path().join("fig")),
    );
    assert!(text.contains("sweep-pgs-omega-time.png"));
    assert!(dir.path().join("fig/sweep-pgs-omega.csv").exists());
    error(
        cpbench("sweep-plot").arg(&out).args(["--setting", "beta"]),
        &["sweeps there: ", "lambda of jacobi", "omega of pgs"],
    );
}
