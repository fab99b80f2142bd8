//! `cpbench generate --model penalty`: the penalty stepper writes `trajectory.csv` (one row of
//! observables per step of the scene's `h`) and no instances; the options that only the
//! complementarity stepper has, and bad penalty parameters, are errors.

use cpbench_granular::penalty::PENALTY_TRAJECTORY_HEADER;

use crate::support::{cpbench, failure, stdout_of};

#[test]
fn cli_generate_penalty_writes_the_trajectory_only() {
    let dir = tempfile::tempdir().unwrap();
    for law in ["linear", "hertz"] {
        let out = dir.path().join(law);
        let stdout = stdout_of(
            cpbench(&format!(
                "generate --scene fill --size 2 --steps 150 --model penalty --penalty-law {law} \
                 --out"
            ))
            .arg(&out),
        );
        assert!(stdout.contains("pile height"), "{stdout}");
        let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some(PENALTY_TRAJECTORY_HEADER));
        let rows: Vec<Vec<f64>> = lines
            .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(rows.len(), 150);
        let last = rows.last().unwrap();
        // 150 steps of the scene's h = 1e-2 s
        assert!((last[1] - 1.5).abs() < 1e-9, "time {}", last[1]);
        // spheres of radius 0.4 fell from up to 9.5 m: after 1.5 s they lie in the box bottom
        // (10 layers of 4 in a 2 x 2 box, so below the 10 layer tops of 0.8 m), overlapping by
        // less than 5% of the radius, with Verlet steps resolving the contact (>= 20 per h)
        let max_pen = rows.iter().fold(0.0f64, |m, r| m.max(r[4]));
        assert!(
            max_pen > 0.0 && max_pen < 0.05 * 0.4,
            "{law}: overlap {max_pen}"
        );
        assert!(
            last[5] < 8.0 + 1e-9 && last[5] > 0.8,
            "{law}: pile {}",
            last[5]
        );
        assert!(last[6] >= 20.0, "{law}: {} substeps", last[6]);
        assert!(last[2] < rows[50][2], "{law}: kinetic energy not falling");
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.contains("__")),
            "instances written: {names:?}"
        );
    }
    // options of the complementarity stepper and bad parameters are errors
    for bad in [
        vec!["--vtk"],
        vec!["--save-state"],
        vec!["--penalty-restitution", "0"],
        vec!["--penalty-steps-per-contact", "5"],
        vec!["--penalty-stiffness", "-1"],
    ] {
        let (_, err) = failure(
            cpbench("generate --scene fill --size 2 --steps 2 --model penalty --out")
                .arg(dir.path().join("bad"))
                .args(&bad),
        );
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
    }
}
