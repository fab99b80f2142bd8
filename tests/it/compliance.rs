//! Compliant contact (issue 33 item 2): `Instance::with_compliance` (`(N + R, r)`), its
//! record in `.npz` and bundle files, the stepper's SAP and MuJoCo mappings
//! (`cpbench_granular::compliance`) against the answers they imply, and bad input.
//!
//! Known answers: a sphere resting on a floor under SAP's compliance settles at Hooke's
//! penetration `m g / k` (at rest `u_n = 0` gives `R_n gamma_n + Phi / (h + tau_d) = 0` with
//! `gamma_n = m g h`, so `Phi = -gamma_n / (h k)`); under MuJoCo's at `(1 - d) g timeconst^2
//! dampratio^2` (`v0 = 0`: `R gamma_n + h K d Phi = 0` with `R = (1 - d) / (d m)`); both limits
//! of the module documentation give the rigid problem back; compliant answers tend to the
//! rigid one as `R -> 0`.

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::{Body, ContactCompliance, Plane, SimParams, Simulation};
use cpbench_problems::io::{load, npz, LoadOptions};
use cpbench_problems::{Instance, ValidationOptions};
use cpbench_solvers::SolveResult;
use cpbench_test_support::{fixture, rel_l2_diff as rel_diff};

use crate::granular_support::{params, sim, solver, G};
use crate::support::{cpbench, error};

/// `name` run to `tol` (nat_map_rel_2) from zero, 50000 iterations at most.
fn solve(name: &str, inst: &Instance, tol: f64) -> SolveResult {
    cpbench_test_support::solve(name, inst, tol, 50_000)
}

/// A sphere of mass 2 kg and radius 0.1 m resting on the floor with `compliance`, after
/// `steps` steps of `h = 1e-2` s: its penetration (m).
fn resting_penetration(compliance: ContactCompliance, steps: usize) -> f64 {
    let r = 0.1;
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let ball = Body::sphere(Vector3::new(0.0, r, 0.0), r, 2.0).unwrap();
    let p = SimParams {
        compliance: Some(compliance),
        ..params(1e-2, 0.3, 1e-2)
    };
    let mut s = sim(vec![ball], vec![floor], p);
    let mut sol = solver("pgs", 1e-12);
    for _ in 0..steps {
        s.step(&mut sol).unwrap();
    }
    let b = &s.world().bodies[0];
    assert!(b.vel.norm() < 1e-8, "not at rest: |v| = {:e}", b.vel.norm());
    // the impulse still carries the weight
    assert!((s.last_impulses()[0] - 2.0 * G * 1e-2).abs() < 1e-10);
    r - b.pos.y
}

#[test]
fn a_resting_sphere_sinks_to_hookes_penetration() {
    // SAP: m g / k, with k = 1e4 N/m (tau_d = 0.05 s damps the oscillation)
    let sap = ContactCompliance::parse("sap:1e4,0.05").unwrap();
    let pen = resting_penetration(sap, 400);
    let hooke = 2.0 * G / 1e4;
    assert!((pen - hooke).abs() < 1e-6 * hooke, "{pen:e} vs {hooke:e}");
    // MuJoCo: (1 - d) g timeconst^2 dampratio^2 with d = 0.9, solref (0.02, 1)
    let mj = ContactCompliance::parse("mujoco:0.9,0.02,1").unwrap();
    let pen = resting_penetration(mj, 400);
    let expected = 0.1 * G * 0.02 * 0.02;
    assert!(
        (pen - expected).abs() < 1e-6 * expected,
        "{pen:e} vs {expected:e}"
    );
}

/// A disc of mass 2 kg and radius 0.1 m resting on the floor of the planar stepper with
/// `compliance`, after `steps` steps of `h = 1e-2` s: its penetration (m).
fn resting_disc_penetration(compliance: ContactCompliance, steps: usize) -> f64 {
    use cpbench_granular::nalgebra::Vector2;
    use cpbench_granular::planar::{bonds::BondSet, Disc, PlanarParams, PlanarSimulation, Wall};
    let r = 0.1;
    let disc = Disc::new(Vector2::new(0.0, r), r, 2.0).unwrap();
    let p = PlanarParams {
        h: 1e-2,
        envelope: 1e-2,
        compliance: Some(compliance),
        ..Default::default()
    };
    let mut s = PlanarSimulation::new(
        vec![disc],
        vec![Wall::floor(0.0)],
        BondSet::new(),
        p,
        "disc",
        Default::default(),
        None,
    )
    .unwrap();
    let mut sol = solver("pgs", 1e-12);
    for _ in 0..steps {
        s.step(&mut sol).unwrap();
    }
    let d = &s.discs()[0];
    assert!(d.vel.norm() < 1e-8, "not at rest: |v| = {:e}", d.vel.norm());
    assert!((s.last_impulses()[0] - 2.0 * G * 1e-2).abs() < 1e-10);
    let inst = s.last_instance().unwrap();
    assert!(inst.compliance().is_some_and(|rc| rc[0] > 0.0));
    r - d.pos.y
}

/// The planar stepper's compliant contact: a resting disc sinks to the sphere's two depths
/// (the same formulas on 2-D blocks), Hooke's `m g / k` under SAP and `(1 - d) g timeconst^2
/// dampratio^2` under MuJoCo, to 1e-6 relative.
#[test]
fn a_resting_disc_sinks_to_the_same_depths() {
    let pen = resting_disc_penetration(ContactCompliance::parse("sap:1e4,0.05").unwrap(), 400);
    let hooke = 2.0 * G / 1e4;
    assert!((pen - hooke).abs() < 1e-6 * hooke, "{pen:e} vs {hooke:e}");
    let pen = resting_disc_penetration(ContactCompliance::parse("mujoco:0.9,0.02,1").unwrap(), 400);
    let expected = 0.1 * G * 0.02 * 0.02;
    assert!(
        (pen - expected).abs() < 1e-6 * expected,
        "{pen:e} vs {expected:e}"
    );
    // the command line: a planar scene takes --compliance and its exports record R
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gen");
    cpbench_test_support::succeed(
        cpbench(
            "generate --scene disc-hopper --size 30 --steps 100 --export-every 100 --format npz \
             --compliance sap:1e5,0.01 --out",
        )
        .arg(&out),
    );
    let inst = load(
        &out.join("disc-hopper-30_step0100__ccp.npz"),
        &LoadOptions::default(),
    )
    .unwrap();
    let rc = inst.compliance().expect("R recorded");
    assert!(rc.len() == inst.n() && rc.iter().step_by(2).all(|&x| x > 0.0));
}

/// A column of three touching spheres on a floor, falling at 0.3 m/s (so that `v0 != 0`),
/// with `compliance`; the problem of its first step.
fn column(compliance: Option<ContactCompliance>) -> Instance {
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let bodies = (0..3)
        .map(|i| {
            let mut b = Body::sphere(
                Vector3::new(0.0, 0.1 + 0.2 * i as f64 - 1e-4, 0.0),
                0.1,
                1.0,
            )
            .unwrap();
            b.vel = Vector3::new(0.05, -0.3, 0.0);
            b
        })
        .collect();
    let p = SimParams {
        compliance,
        ..params(1e-2, 0.4, 1e-2)
    };
    let mut s: Simulation = sim(bodies, vec![floor], p);
    s.build_instance().unwrap().unwrap().clone()
}

#[test]
fn the_mappings_give_the_rigid_problem_back_in_their_limits() {
    let rigid = column(None);
    assert!(rigid.compliance().is_none());
    let h = 1e-2;
    for (spec, tol) in [
        ("sap:1e14,0,0", 1e-12),
        // timeconst = 2 h, dampratio = 1/2, d -> 1
        (&format!("mujoco:{},{},0.5", 1.0 - 1e-9, 2.0 * h)[..], 1e-7),
    ] {
        let c = column(Some(ContactCompliance::parse(spec).unwrap()));
        let rc = c.compliance().expect("recorded");
        assert_eq!(rc.len(), rigid.n());
        assert!(
            rc.iter().all(|&x| (0.0..1e-7).contains(&x)),
            "{spec}: {rc:?}"
        );
        assert!(
            rel_diff(c.r(), rigid.r()) < tol,
            "{spec}: r {:e}",
            rel_diff(c.r(), rigid.r())
        );
        assert_eq!(
            c.provenance().parameters.get("compliance").map(|s| &s[..3]),
            Some(&spec[..3])
        );
    }
    // a real compliance: R_n = 1 / (h k (h + tau_d)) on every normal row, sigma w on the others
    let c = column(Some(ContactCompliance::parse("sap:1e4,0.05,1e-3").unwrap()));
    let rc = c.compliance().unwrap();
    let rn = 1.0 / (h * 1e4 * (h + 0.05));
    for (k, b) in rc.chunks(3).enumerate() {
        assert!((b[0] - rn).abs() < 1e-15 * rn, "contact {k}: {b:?}");
        let w = rigid.diag_block(k);
        let rms = w.iter().map(|x| x * x).sum::<f64>().sqrt() / 3.0;
        assert!((b[1] - 1e-3 * rms).abs() < 1e-15 && b[1] == b[2], "{b:?}");
        // N + R on the diagonal, the rest of the block unchanged
        let wc = c.diag_block(k);
        for i in 0..9 {
            let add = if i % 4 == 0 { b[i / 4] } else { 0.0 };
            assert!((wc[i] - w[i] - add).abs() < 1e-14, "contact {k} entry {i}");
        }
    }
}

#[test]
fn compliant_answers_tend_to_the_rigid_answer_and_solvers_agree_on_them() {
    let opts = LoadOptions::default();
    let rigid = load(&fixture("siconos-fc3d/NESpheres_10_1.dat"), &opts).unwrap();
    let g0 = solve("apgd", &rigid, 1e-11).gamma;
    let diag = rigid.n_mat().diag();
    let mut gaps = Vec::new();
    for eps in [1e-2, 1e-4, 1e-6] {
        let c = rigid
            .clone()
            .with_compliance(diag.iter().map(|d| eps * d).collect())
            .unwrap();
        gaps.push(rel_diff(&solve("apgd", &c, 1e-11).gamma, &g0));
    }
    // first order in R: a hundredfold smaller R, a gap about a hundred times smaller
    assert!(gaps[0] > 1e-4 && gaps[0] < 0.1, "{gaps:?}");
    for w in gaps.windows(2) {
        let ratio = w[0] / w[1];
        assert!((30.0..300.0).contains(&ratio), "{gaps:?}");
    }
    // every CCP solver takes N + R and they agree; the Coulomb solvers on its Coulomb problem
    let c = rigid
        .clone()
        .with_compliance(diag.iter().map(|d| 0.05 * d).collect())
        .unwrap();
    let reference = solve("ipm", &c, 1e-10).gamma;
    for name in ["pgs", "apgd", "spgqp", "admm"] {
        let g = solve(name, &c, 1e-10).gamma;
        assert!(
            rel_diff(&g, &reference) < 1e-6,
            "{name}: {:e}",
            rel_diff(&g, &reference)
        );
    }
    let coulomb = c.clone().into_coulomb().unwrap();
    assert!(coulomb.compliance().is_some());
    for name in ["nsgs", "nsn-ac", "admm"] {
        let r = solve(name, &coulomb, 1e-10);
        assert_eq!(r.status, cpbench_solvers::Status::Converged, "{name}");
    }
}

#[test]
fn the_compliance_survives_npz_and_bundle_files_and_bad_values_are_refused() {
    let c = column(Some(ContactCompliance::parse("sap:1e4,0.05").unwrap()));
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.npz");
    npz::write_npz(&c, &p).unwrap();
    let back = npz::read_npz(&p, ValidationOptions::default()).unwrap();
    assert_eq!(back.compliance(), c.compliance());
    assert_eq!(back.hash(), c.hash());
    let b = d.path().join("bundle");
    cpbench_problems::io::bundle::write_bundle(&c, &b).unwrap();
    let back = load(&b, &LoadOptions::default()).unwrap();
    assert_eq!(back.compliance(), c.compliance());
    assert_eq!(back.hash(), c.hash());

    // a bundle whose instance.json carries a negative compliance: file, field, row, value
    let json = b.join("instance.json");
    let text = std::fs::read_to_string(&json).unwrap();
    let at = text.find("\"compliance\": [").unwrap() + "\"compliance\": [".len();
    let at = at + text[at..].len() - text[at..].trim_start().len();
    std::fs::write(&json, format!("{}-{}", &text[..at], &text[at..])).unwrap();
    let e = load(&b, &LoadOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains("instance.json") && e.contains("compliance") && e.contains("row 0"),
        "{e}"
    );

    // the constructor: length, non-finite, negative
    let rigid = column(None);
    let n = rigid.n();
    for (bad, needle) in [
        (vec![0.0; n - 1], "compliance R has length"),
        (
            (0..n)
                .map(|i| if i == 4 { f64::NAN } else { 0.0 })
                .collect(),
            "compliance R",
        ),
        (
            (0..n).map(|i| if i == 5 { -1e-3 } else { 0.0 }).collect(),
            "compliance R at row 5 is -0.001",
        ),
    ] {
        let e = rigid.clone().with_compliance(bad).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn bad_compliance_options_are_refused_on_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    for (value, needle) in [
        ("sap:-1,0", "compliance stiffness"),
        ("sap:1e4", "sap takes K,TAU_D"),
        ("mujoco:1.5,0.02,1", "must be in (0, 1)"),
        ("spring:1,2", "unknown model 'spring'"),
        ("sap:1e4,x", "'x' is not a number"),
    ] {
        error(
            cpbench("generate --scene pyramid --size 3 --steps 1 --compliance")
                .arg(value)
                .arg("--out")
                .arg(d.path().join("o")),
            &[needle, "--compliance"],
        );
    }
    error(
        cpbench("generate --scene bounce --size 1 --steps 1 --compliance sap:1e4,0.01 --out")
            .arg(d.path().join("o2")),
        &["restitution", "compliance"],
    );
}

/// The compliant CCP of a pyramid of 4 layers (SAP's mapping, k = 1e5 N/m, tau_d = 0.01 s) at
/// step 10, on the matrix-free storage (D, M and R apart).
fn compliant_pyramid(compliance: &str) -> Instance {
    let mut scene = cpbench_granular::SceneSpec::new(cpbench_granular::SceneKind::Pyramid, 4, 1)
        .build()
        .unwrap();
    scene.world.params.compliance = Some(ContactCompliance::parse(compliance).unwrap());
    let mut s = scene.into_simulation().unwrap();
    s.set_operator(Some(cpbench_problems::operator::OperatorKind::MatrixFree));
    let mut sol = solver("apgd", 1e-8);
    for _ in 0..9 {
        s.step(&mut sol).unwrap();
    }
    let inst = s.build_instance().unwrap().unwrap().clone();
    assert!(inst.matrix_free().is_some() && inst.compliance().is_some());
    inst
}

/// SAP (Castro et al. 2022) on the compliant CCP: Newton converges in a few iterations and
/// agrees with the interior point (and APGD) to 1e-8; what SAP cannot take it refuses with the
/// reason.
#[test]
fn sap_agrees_with_ipm_on_the_compliant_ccp_and_refuses_the_rest() {
    let inst = compliant_pyramid("sap:1e5,0.01");
    let sap = solve("sap", &inst, 1e-10);
    assert_eq!(sap.status, cpbench_solvers::Status::Converged);
    assert!(sap.iterations <= 15, "{}", sap.iterations);
    // apgd's answer at the same residual is further from the solution (measured 3.1e-8)
    for (other, bound) in [("ipm", 1e-8), ("primal-cg", 1e-8), ("apgd", 1e-7)] {
        let g = solve(other, &inst, 1e-10).gamma;
        let d = rel_diff(&sap.gamma, &g);
        assert!(d < bound, "sap against {other}: {d:e}");
    }
    // a matrix-free .npz keeps D, M and R apart: R is added to the factors on reading
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("mf.npz");
    npz::write_npz(&inst, &p).unwrap();
    let back = npz::read_npz(&p, ValidationOptions::default()).unwrap();
    assert!(back.matrix_free().is_some());
    assert_eq!(
        (back.compliance(), back.hash()),
        (inst.compliance(), inst.hash())
    );
    // refusals: no factors, no compliance, unequal tangential compliances (MuJoCo's mapping)
    let formed = inst
        .clone()
        .with_operator(cpbench_problems::operator::OperatorKind::Csc)
        .unwrap();
    let rigid = column(None);
    let mujoco = compliant_pyramid("mujoco:0.9,0.02,1");
    for (i, needle) in [
        (&formed, "needs the factors D and M"),
        (&rigid, "needs the factors D and M"),
        (&mujoco, "equal tangential compliances"),
    ] {
        for name in ["sap", "primal-cg"] {
            let r = solve(name, i, 1e-8);
            assert_eq!(r.status, cpbench_solvers::Status::Unsupported, "{needle}");
            let m = r.message.unwrap_or_default();
            assert!(m.contains(needle), "{m}");
        }
    }
}

/// SAP's contact response against finite differences in its three regions (inside the cone,
/// in the polar cone, sliding): `G = -d gamma / d v` and `d cost / d v = -gamma`.
#[test]
fn sap_contact_response_matches_finite_differences() {
    use cpbench_solvers::sap::contact_response;
    let (rn, rt, mu) = (0.3, 0.02, 0.6);
    for v in [
        [-1.0, 0.01, -0.02], // pushed in, little slip: inside (stiction)
        [2.0, 0.1, 0.3],     // separating: polar cone, no impulse
        [-0.05, 1.0, -0.7],  // sliding
    ] {
        let (g, jac, cost) = contact_response(&v, rn, rt, mu);
        let h = 1e-7;
        for b in 0..3 {
            let mut vp = v;
            let mut vm = v;
            vp[b] += h;
            vm[b] -= h;
            let (gp, _, cp) = contact_response(&vp, rn, rt, mu);
            let (gm, _, cm) = contact_response(&vm, rn, rt, mu);
            assert!(
                ((cp - cm) / (2.0 * h) + g[b]).abs() < 1e-6,
                "{v:?}: dcost/dv_{b}"
            );
            for a in 0..3 {
                let fd = -(gp[a] - gm[a]) / (2.0 * h);
                assert!(
                    (fd - jac[3 * a + b]).abs() < 1e-5,
                    "{v:?}: G[{a}][{b}] {fd} vs {}",
                    jac[3 * a + b]
                );
            }
        }
        let _ = cost;
    }
}

/// `sap` and `primal-cg` take joint blocks as compliant equalities (`v + R gamma = 0`,
/// `sap::joint_response`): step 60 of the 10-link ball-joint `chain` on the matrix-free
/// storage, made compliant (`R` = 1e-3 times the mean of `N`'s diagonal on every row, joints
/// and contacts), is solved to 1e-10 by both; they agree with `ipm` on the same problem to
/// 1e-8 relative, and the joint rows' compliant velocity `((N + R) gamma + r)_j` is below
/// 1e-9 `||r||` (measured: 10 joint blocks and 10 contacts; sap 1 iteration, primal-cg 21,
/// ipm 6; both 1.8e-9 from ipm's answer).
#[test]
fn sap_and_primal_cg_take_compliant_joints() {
    use cpbench_granular::scenes::{SceneKind, SceneSpec};
    let mut s = SceneSpec::new(SceneKind::Chain, 10, 0)
        .build()
        .unwrap()
        .into_simulation()
        .unwrap();
    s.set_operator(Some(cpbench_problems::operator::OperatorKind::MatrixFree));
    let mut drive = solver("apgd", 1e-8);
    for _ in 0..60 {
        s.step(&mut drive).unwrap();
    }
    let rigid = s.last_instance().unwrap().clone();
    let nj = rigid.constraints().joints();
    assert!(nj > 0 && rigid.matrix_free().is_some() && rigid.n() > 3 * nj);
    let n = rigid.n();
    let wbar = (0..n / 3)
        .map(|c| {
            let b = rigid.diag_block(c);
            b[0] + b[4] + b[8]
        })
        .sum::<f64>()
        / n as f64;
    let inst = rigid.with_compliance(vec![1e-3 * wbar; n]).unwrap();
    let norm_r = inst.r().iter().map(|v| v * v).sum::<f64>().sqrt();
    let reference = solve("ipm", &inst, 1e-10);
    assert_eq!(reference.status, cpbench_solvers::Status::Converged);
    for name in ["sap", "primal-cg"] {
        let res = solve(name, &inst, 1e-10);
        assert_eq!(
            res.status,
            cpbench_solvers::Status::Converged,
            "{name}: {:?}",
            res.message
        );
        let d = rel_diff(&res.gamma, &reference.gamma);
        assert!(d < 1e-8, "{name}: {d:e} from ipm's answer");
        let mut u = vec![0.0; n];
        inst.gradient(&res.gamma, &mut u);
        let uj = u[..3 * nj].iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(uj <= 1e-9 * norm_r, "{name}: joint rows {uj:e}");
    }
}
