//! Siconos global friction problems (`tests/fixtures/gfc3d/GFC3D_*.dat`), condensed to the
//! local Coulomb problem and solved by `nsgs` and `nsn-ac`, against Siconos' own solutions.
//!
//! Reference numbers: Siconos 4.4 (Debian python3-siconos), measured with
//! `scripts/peer_siconos_global.py --tol 1e-14 --print-solutions`:
//! `gfc3d_driver` with `SICONOS_GLOBAL_FRICTION_3D_NSGS_WR` (error <= 1.3e-16 on every file);
//! `u = H^T v + b` and `v = M^-1 (q + H r)` computed with numpy from Siconos' parsed `M`, `H`,
//! `q`, `b` and its `r`.

// The reference numbers are printed with 17 significant digits (round-trip exact).
#![allow(clippy::excessive_precision)]

use cpbench_problems::io::siconos_global::read_global;
use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use cpbench_problems::linalg::norm2;
use cpbench_problems::{Instance, ProblemClass};
use cpbench_solvers::Status;
use cpbench_test_support::{fixture, solve};

/// Siconos' solution of one file: reactions `r`, local velocities `u`, global velocities `v`.
struct SiconosSolution {
    file: &'static str,
    dofs: usize,
    r: [f64; 3],
    u: [f64; 3],
    /// First three entries of `v` (all of `v` is checked through `M v = q + H r`).
    v3: [f64; 3],
}

const SICONOS: &[SiconosSolution] = &[
    SiconosSolution {
        file: "GFC3D_Example0.dat",
        dofs: 9,
        r: [1.0, 5.54700196225229175e-02, 8.32050294337843832e-02],
        u: [0.0, -3.88905996075495430e+00, -5.83358994113243146e+00],
        v3: [-2.0, -2.94452998037747715e+00, -2.91679497056621573e+00],
    },
    SiconosSolution {
        file: "GFC3D_Example00.dat",
        dofs: 3,
        r: [1.0, 7.07106781186547517e-02, 7.07106781186547517e-02],
        u: [0.0, -9.29289321881345276e-01, -9.29289321881345276e-01],
        v3: [0.0, -9.29289321881345276e-01, -9.29289321881345276e-01],
    },
    SiconosSolution {
        file: "GFC3D_Example00_badly_scaled.dat",
        dofs: 3,
        r: [1.0, 9.99999993827297706e-02, 1.11109875794882077e-05],
        u: [0.0, -9.00000000617270257e-01, -9.99988889012420559e-05],
        v3: [0.0, -9.00000000617270257e-01, -9.99988889012420559e-05],
    },
    SiconosSolution {
        file: "GFC3D_Example0_SBM.dat",
        dofs: 9,
        r: [1.0, 5.54700196225229175e-02, 8.32050294337843832e-02],
        u: [0.0, -3.88905996075495430e+00, -5.83358994113243146e+00],
        v3: [-2.0, -2.94452998037747715e+00, -2.91679497056621573e+00],
    },
    SiconosSolution {
        file: "GFC3D_Example1.dat",
        dofs: 3,
        r: [
            2.44161219211328451e+01,
            9.24356736142776292e+00,
            7.97453540036367325e+00,
        ],
        u: [0.0, -9.19137335213584983e+00, -7.92950700834674649e+00],
        v3: [
            2.50000000000000089e+00,
            8.08626647864150394e-01,
            -2.42950700834674604e+00,
        ],
    },
    SiconosSolution {
        file: "GFC3D_OneContact.dat",
        dofs: 39,
        r: [
            6.28336539644929332e-02,
            -2.78075136847873959e-02,
            -1.46205061575436293e-02,
        ],
        u: [0.0, 2.83488322261319335e-02, 1.49051181209367712e-02],
        v3: [
            -1.58790304748189538e-02,
            7.04104904237725488e-04,
            8.75743886009362673e-04,
        ],
    },
];

fn coulomb(file: &str) -> Instance {
    let opts = LoadOptions {
        class: ClassChoice::Coulomb,
        ..Default::default()
    };
    load(&fixture(&format!("gfc3d/{file}")), &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm2(&d) / norm2(b).max(f64::MIN_POSITIVE)
}

/// `u = W r + q` of the condensed instance.
fn local_velocity(inst: &Instance, r: &[f64]) -> Vec<f64> {
    let mut u = vec![0.0; r.len()];
    inst.csc().matvec(r, &mut u);
    u.iter_mut().zip(inst.r()).for_each(|(x, q)| *x += q);
    u
}

#[test]
fn nsgs_and_nsn_ac_match_siconos_gfc3d_solutions() {
    for s in SICONOS {
        let inst = coulomb(s.file);
        assert_eq!(
            (inst.n(), inst.class()),
            (3, ProblemClass::Coulomb),
            "{}",
            s.file
        );
        let p = &inst.provenance().parameters;
        assert_eq!(p["dofs"], s.dofs.to_string(), "{}", s.file);
        assert_eq!(p["contacts"], "1", "{}", s.file);
        assert_eq!(inst.provenance().format, "siconos-global");
        let raw = read_global(
            &fixture(&format!("gfc3d/{}", s.file)),
            &std::fs::read(fixture(&format!("gfc3d/{}", s.file))).unwrap(),
        )
        .unwrap();
        for solver in ["nsgs", "nsn-ac"] {
            let a = solve(solver, &inst, 1e-12, 10_000);
            assert_eq!(a.status, Status::Converged, "{solver} {}", s.file);
            assert!(a.residuals.fc3d_error <= 1e-12, "{solver} {}", s.file);
            let r = &a.gamma;
            let u = local_velocity(&inst, r);
            // the comparison table of scripts/peer_siconos_global.py (`-- --nocapture`)
            eprintln!(
                "{:34} {solver:7} fc3d error {:9.3e} iterations {:4} time {:9.3e} s | rel. \
                 diff. to Siconos r {:9.3e} u {:9.3e}",
                s.file,
                a.residuals.fc3d_error,
                a.iterations,
                a.time_s,
                rel_diff(r, &s.r),
                rel_diff(&u, &s.u)
            );
            assert!(rel_diff(r, &s.r) <= 1e-8, "{solver} {}: r {r:?}", s.file);
            assert!(rel_diff(&u, &s.u) <= 1e-8, "{solver} {}: u {u:?}", s.file);
            // global velocity from our r, v = M^-1 (q + H r): its first entries against
            // Siconos' v, and all of it through u = H^T v + b against Siconos' u
            let mut hr = vec![0.0; raw.dofs()];
            raw.h.matvec(r, &mut hr);
            let rhs: Vec<f64> = hr.iter().zip(&raw.q).map(|(a, b)| a + b).collect();
            let v = solve_small_dense(&raw.m, &rhs);
            assert!(
                rel_diff(&v[..3], &s.v3) <= 1e-8,
                "{solver} {}: v {:?}",
                s.file,
                &v[..3]
            );
            // and u = H^T v + b with that v
            let mut htv = vec![0.0; 3];
            raw.h.transpose().matvec(&v, &mut htv);
            let u2: Vec<f64> = htv.iter().zip(&raw.b).map(|(a, b)| a + b).collect();
            assert!(
                rel_diff(&u2, &s.u) <= 1e-8,
                "{solver} {}: H^T v + b",
                s.file
            );
        }
    }
}

/// `M^-1 y` for the small `M` of these files (Gaussian elimination with partial pivoting on a
/// dense copy; at most 39 x 39 here).
fn solve_small_dense(m: &cpbench_problems::CscMatrix, y: &[f64]) -> Vec<f64> {
    let n = m.nrows();
    let mut a: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| m.get(i, j)).collect())
        .collect();
    let mut x = y.to_vec();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
            .unwrap();
        a.swap(k, p);
        x.swap(k, p);
        let (top, rest) = a.split_at_mut(k + 1);
        let pivot = &top[k];
        for (i, row) in rest.iter_mut().enumerate() {
            let f = row[k] / pivot[k];
            row.iter_mut()
                .zip(pivot)
                .skip(k)
                .for_each(|(v, p)| *v -= f * p);
            x[k + 1 + i] -= f * x[k];
        }
    }
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k][j] * x[j]).sum();
        x[k] = (x[k] - s) / a[k][k];
    }
    x
}

/// `GFC3D_Example00`: `M = I`, `H = I`, `q = (-1, -1, -1)`, `b = 0`, `mu = 0.1`, so `W = I` and
/// `q_loc = q`. The contact slides: `u_n = 0` needs `r_n = 1`, and `r_T = -mu r_n u_T / |u_T|`
/// with `u_T = q_T + r_T` along `(-1, -1)`: `r_T = (0.1 / sqrt 2) (1, 1)`,
/// `u_T = (-1 + 0.1 / sqrt 2) (1, 1)`. `GFC3D_OneContact` (39 dofs): whatever the solution, the
/// Coulomb law must hold at the one contact: `u_n = 0` with `r_n > 0` and sliding, `r_T`
/// on the cone boundary and opposite to `u_T`.
#[test]
fn one_contact_analytic_checks() {
    let inst = coulomb("GFC3D_Example00.dat");
    let a = solve("nsn-ac", &inst, 1e-14, 100);
    let c = 0.1 / 2f64.sqrt();
    for (x, y) in a.gamma.iter().zip([1.0, c, c]) {
        assert!((x - y).abs() < 1e-13, "{:?}", a.gamma);
    }
    let inst = coulomb("GFC3D_OneContact.dat");
    let raw_mu = {
        let p = fixture("gfc3d/GFC3D_OneContact.dat");
        read_global(&p, &std::fs::read(&p).unwrap()).unwrap().mu[0]
    };
    let a = solve("nsn-ac", &inst, 1e-14, 100);
    assert_eq!(a.status, Status::Converged);
    let r = &a.gamma;
    let u = local_velocity(&inst, r);
    let ut = (u[1] * u[1] + u[2] * u[2]).sqrt();
    let rt = (r[1] * r[1] + r[2] * r[2]).sqrt();
    assert!(r[0] > 0.06 && ut > 0.03, "{r:?} {u:?}");
    assert!(u[0].abs() < 1e-14, "u_n = {}", u[0]);
    assert!(
        (rt - raw_mu * r[0]).abs() < 1e-14,
        "|r_T| = {rt}, mu r_n = {}",
        raw_mu * r[0]
    );
    for k in 1..3 {
        assert!(
            (r[k] + raw_mu * r[0] * u[k] / ut).abs() < 1e-13,
            "{r:?} {u:?}"
        );
    }
}

/// The CCP relaxation of the condensed problems: `ipm` and `pgs` agree on the objective
/// `1/2 r^T W r + q^T r` (to 1e-8 relative); with one contact, the CCP solution differs from
/// the Coulomb one only when the contact slides (Anitescu's relaxation separates it).
#[test]
fn ccp_relaxation_ipm_and_pgs_agree() {
    let opts = LoadOptions::default();
    for s in SICONOS {
        let inst = load(&fixture(&format!("gfc3d/{}", s.file)), &opts).unwrap();
        assert_eq!(inst.class(), ProblemClass::Ccp);
        let a = solve("ipm", &inst, 1e-10, 200);
        let b = solve("pgs", &inst, 1e-10, 100_000);
        assert_eq!(a.status, Status::Converged, "ipm {}", s.file);
        assert_eq!(b.status, Status::Converged, "pgs {}", s.file);
        let (oa, ob) = (a.residuals.objective, b.residuals.objective);
        assert!(
            (oa - ob).abs() <= 1e-8 * oa.abs().max(1.0),
            "{}: ipm {oa} pgs {ob}",
            s.file
        );
    }
}

/// Issue 34 item 5: the CCP of every global fixture solved on its matrix-free form (`H` and
/// `M` kept, `N = H^T M^-1 H` never formed) and on its condensed form (`W` formed) gives the
/// same answer to 1e-9: `apgd` (products only) and `pgs`, sequential and coloured
/// (Gauss-Seidel rows: the velocity `v = M^-1 H gamma` for a diagonal or block-diagonal `M`,
/// the rows of `W` formed once for a general `M`: CubeH8, GFC3D_OneContact). (`nsgs` solves
/// the Coulomb problem: `coulomb_problems_of_global_files_kept_matrix_free`.)
#[test]
fn matrix_free_and_condensed_global_problems_give_the_same_answer() {
    use cpbench_problems::io::{load_with, GlobalForm};
    let files = [
        "gfc3d/GFC3D_Example0.dat",
        "gfc3d/GFC3D_Example00.dat",
        "gfc3d/GFC3D_Example00_badly_scaled.dat",
        "gfc3d/GFC3D_Example0_SBM.dat",
        "gfc3d/GFC3D_Example1.dat",
        "gfc3d/GFC3D_OneContact.dat",
        "fc2d/gfc2d_granularflowonwall_00069_00350.dat",
        "fclib/Box_Stacks-i0122-82-5.hdf5",
        "fclib/CubeH8.hdf5",
        "fclib/Spheres-i099-356-679.hdf5",
    ];
    let coloured = serde_json::json!({ "sweep": "coloured" });
    let run = |solver: &str, settings: Option<&serde_json::Value>, inst: &Instance| {
        let mut b = cpbench_solvers::registry::build(solver, settings).unwrap();
        let exec = cpbench_solvers::ExecSettings {
            tol: 1e-13,
            max_iter: 200_000,
            ..Default::default()
        };
        cpbench_solvers::Executor::new(exec)
            .run(b.solver.as_mut(), inst, None, &mut [])
            .unwrap()
    };
    for f in files {
        let opts = LoadOptions::default();
        let cond = load(&fixture(f), &opts).unwrap();
        let free = load_with(&fixture(f), &opts, GlobalForm::MatrixFree).unwrap();
        assert!(free.matrix_free().is_some(), "{f}");
        for (solver, settings) in [("apgd", None), ("pgs", None), ("pgs", Some(&coloured))] {
            let a = run(solver, settings, &cond);
            let b = run(solver, settings, &free);
            assert_eq!(a.status, Status::Converged, "{f} {solver} {:?}", a.message);
            assert_eq!(b.status, Status::Converged, "{f} {solver} {:?}", b.message);
            let d = rel_diff(&b.gamma, &a.gamma);
            assert!(d <= 1e-9, "{f} {solver}: relative difference {d:e}");
        }
    }
}

/// The Coulomb problem of a global file kept matrix-free (`--class coulomb --operator
/// matrix-free`: class Coulomb on `H` and `M`, `W` never formed) against its condensed
/// reading: the same name, class and cones; `nsgs` (rows from the velocity, or from `W`
/// formed once for a general `M`) and `admm` (it factorises `W + rho I`, `W` formed on first
/// use) reach fc3d_error 1e-10 on both forms in the same iterations (measured: nsgs 2 to 55,
/// admm 7 to 2747), their answers within 1e-12 relative (measured at most 4.2e-15); the
/// `.npz` and bundle writers keep the class, the storage and the hash.
#[test]
fn coulomb_problems_of_global_files_kept_matrix_free() {
    use cpbench_problems::io::npz::{read_npz, write_npz};
    use cpbench_problems::io::{load_with, read_bundle, write_bundle, GlobalForm};
    let files = [
        "gfc3d/GFC3D_Example1.dat",
        "gfc3d/GFC3D_OneContact.dat",
        "fc2d/gfc2d_granularflowonwall_00069_00350.dat",
        "fclib/CubeH8.hdf5",
        "fclib/Spheres-i099-356-679.hdf5",
    ];
    let opts = LoadOptions {
        class: ClassChoice::Coulomb,
        ..LoadOptions::default()
    };
    let dir = std::env::temp_dir().join(format!("cpbench-coulomb-mf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in files {
        let cond = load(&fixture(f), &opts).unwrap();
        let free = load_with(&fixture(f), &opts, GlobalForm::MatrixFree).unwrap();
        assert!(free.matrix_free().is_some(), "{f}");
        assert_eq!(free.class(), ProblemClass::Coulomb, "{f}");
        assert_eq!(
            (free.name(), free.constraints()),
            (cond.name(), cond.constraints())
        );
        for solver in ["nsgs", "admm"] {
            let a = solve(solver, &cond, 1e-10, 100_000);
            let b = solve(solver, &free, 1e-10, 100_000);
            assert_eq!(a.status, Status::Converged, "{f} {solver} {:?}", a.message);
            assert_eq!(b.status, Status::Converged, "{f} {solver} {:?}", b.message);
            assert!(b.residuals.fc3d_error <= 1e-10, "{f} {solver}");
            let d = rel_diff(&b.gamma, &a.gamma);
            assert_eq!(a.iterations, b.iterations, "{f} {solver}");
            assert!(d <= 1e-12, "{f} {solver}: relative difference {d:e}");
        }
        let npz = dir.join("p.npz");
        write_npz(&free, &npz).unwrap();
        let bundle = dir.join("b");
        write_bundle(&free, &bundle).unwrap();
        for back in [
            read_npz(&npz, Default::default()).unwrap(),
            read_bundle(&bundle, Default::default()).unwrap(),
        ] {
            assert_eq!(back.class(), ProblemClass::Coulomb, "{f}");
            assert!(back.matrix_free().is_some(), "{f}");
            assert_eq!(back.hash(), free.hash(), "{f}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `sap` and `primal-cg` on global problems kept matrix-free (`M` and `H`, `W` never formed),
/// made compliant (`R = 1e-2` times the mean of `W`'s diagonal on every row): on the three
/// fixtures whose `M` is not diagonal (CubeH8's finite-element `M`, GFC3D_OneContact's general
/// `M`, GFC3D_Example1's block-diagonal `M`) both reach 1e-10 and agree with `ipm` on the
/// condensed compliant problem `(W + R, q)` to 1e-8 relative (measured: sap in 1, 8 and 6
/// iterations, 2.9e-11 to 5.2e-11 from ipm's answer; primal-cg in 69, 732 and 41, 3.9e-11 to
/// 1.4e-10).
#[test]
fn primal_solvers_take_global_problems_with_a_sparse_mass_matrix() {
    use cpbench_problems::io::{load_with, GlobalForm};
    for f in [
        "fclib/CubeH8.hdf5",
        "gfc3d/GFC3D_OneContact.dat",
        "gfc3d/GFC3D_Example1.dat",
    ] {
        let opts = LoadOptions::default();
        let free = load_with(&fixture(f), &opts, GlobalForm::MatrixFree).unwrap();
        let op = free.matrix_free().expect("kept matrix-free");
        assert!(op.mass_matrix().is_some(), "{f}: M not diagonal");
        let cond = load(&fixture(f), &opts).unwrap();
        assert_eq!(cond.class(), ProblemClass::Ccp);
        let n = cond.n();
        let wbar = (0..n).map(|j| cond.n_mat().get(j, j)).sum::<f64>() / n as f64;
        let r = vec![1e-2 * wbar; n];
        let free = free.with_compliance(r.clone()).unwrap();
        let cond = cond.with_compliance(r).unwrap();
        let reference = solve("ipm", &cond, 1e-10, 500);
        assert_eq!(reference.status, Status::Converged, "ipm on {f}");
        for name in ["sap", "primal-cg"] {
            let res = solve(name, &free, 1e-10, 2_000);
            assert_eq!(
                res.status,
                Status::Converged,
                "{name} on {f}: {:?}",
                res.message
            );
            let d = rel_diff(&res.gamma, &reference.gamma);
            assert!(d < 1e-8, "{name} on {f}: {d:e} from ipm's answer");
        }
    }
}
