//! Trajectories (issue 32): `generate` writes the contact identities and the index, `run
//! --trajectory` replays the steps cold and warm-started by contact identity, and a broken
//! trajectory folder is refused with the step and the file named.

use cpbench_granular::contact::{ContactFrames, ContactId, PartnerId};
use cpbench_harness::solve::SolverSpec;
use cpbench_harness::trajectory::{self, map_warm_start, StartMode, Trajectory};
use cpbench_problems::io::LoadOptions;
use cpbench_solvers::ExecSettings;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::support::{cpbench, error, stdout_of};

/// A fill of 2 x 10 x 2 spheres, 40 steps, every step exported as `.npz` into `dir`.
fn generate(dir: &Path) {
    stdout_of(&mut cpbench(&format!(
        "generate --scene fill --size 2 --steps 40 --export-every 1 --format npz --out {}",
        dir.display()
    )));
}

/// `cpbench run ARGS --out OUT`: what it prints (asserting success).
fn run_to(args: &str, out: &Path) -> String {
    stdout_of(cpbench(&format!("run {args}")).arg("--out").arg(out))
}

/// The built-in trajectory of `scene`, generated into a temporary folder (the returned guard)
/// and loaded with `opts`.
fn builtin(scene: &str, opts: &LoadOptions) -> (tempfile::TempDir, Trajectory) {
    let b = cpbench_harness::trajectory_suite::BUILTIN
        .iter()
        .find(|b| b.scene == scene)
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    cpbench_harness::trajectory_suite::generate_builtin(b, tmp.path()).unwrap();
    let traj = Trajectory::load(tmp.path(), opts).unwrap();
    (tmp, traj)
}

/// The executor's defaults at tolerance `tol`.
fn exec(tol: f64) -> ExecSettings {
    ExecSettings {
        tol,
        ..Default::default()
    }
}

#[test]
fn warm_start_maps_answers_by_contact_identity() {
    let id = |a, b, f| ContactId { a, b, feature: f };
    let (p, q, r) = (
        id(0, PartnerId::Body(1), 0),
        id(0, PartnerId::Wall(2), 0),
        id(3, PartnerId::Body(1), 0),
    );
    let prev = HashMap::from([(p, vec![1.0, 2.0, 3.0]), (q, vec![4.0, 5.0, 6.0])]);
    // q persists (second place now), p vanished, r is new
    let (start, persisted) = map_warm_start(&prev, &[r, q], 3);
    assert_eq!(start, [0.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    assert_eq!(persisted, 1);
    // identities print and parse back (the contacts file's `b` column)
    let text = trajectory::contacts_csv(&[p, q, r], None);
    assert_eq!(text, "a,b,feature\n0,1,0\n0,w2,0\n3,1,0\n");
    let (back, frames) = trajectory::parse_contacts(&text, Path::new("x.csv"), 1).unwrap();
    assert_eq!((back.as_slice(), frames), (&[p, q, r][..], None));
}

/// Through the world: contact q's answer (1, 2, 3) on the frame n = z, u = x, w = y is the
/// world impulse (2, 3, 1); on the next step q's tangents have turned by 90 degrees about the
/// normal (u' = y, w' = -x), so it starts at (1, 3, -2), where copying contact coordinates
/// would start it at (1, 2, 3). The frames print and parse back bit for bit.
#[test]
fn world_frame_warm_start_follows_a_turned_tangent_frame() {
    let id = |a, b| ContactId { a, b, feature: 0 };
    let (q, r) = (id(0, PartnerId::Wall(2)), id(3, PartnerId::Body(1)));
    let before = ContactFrames {
        block_size: 3,
        dim: 3,
        directions: vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    };
    let world = trajectory::world_impulses(&[1.0, 2.0, 3.0], &before);
    assert_eq!(world, [vec![2.0, 3.0, 1.0]]);
    let after = ContactFrames {
        block_size: 3,
        dim: 3,
        directions: vec![
            0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, // r (new)
            0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.1, // q, w' slightly off: -x + 0.1 z
        ],
    };
    let prev = HashMap::from([(q, world[0].clone())]);
    let (start, persisted) = trajectory::map_world_warm_start(&prev, &[r, q], &after);
    assert_eq!(persisted, 1);
    assert_eq!(start, [0.0, 0.0, 0.0, 1.0, 3.0, -2.0 + 0.1]);
    let text = trajectory::contacts_csv(&[r, q], Some(&after));
    assert!(text.starts_with("a,b,feature,e0x,e0y,e0z,e1x,e1y,e1z,e2x,e2y,e2z\n3,1,0,0.0,"));
    let (ids, frames) = trajectory::parse_contacts(&text, Path::new("x.csv"), 1).unwrap();
    assert_eq!((ids, frames), (vec![r, q], Some(after)));
}

#[test]
fn replay_warm_starts_from_the_mapped_answer_and_agrees_with_cold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traj");
    generate(&dir);
    let traj = Trajectory::load(&dir, &LoadOptions::default()).unwrap();
    assert!(traj.steps.len() >= 30, "{} steps", traj.steps.len());
    let rows = trajectory::replay(&traj, &[SolverSpec::named("apgd")], &exec(1e-8)).unwrap();
    assert_eq!(rows.len(), 2 * traj.steps.len());
    let (cold, warm): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.mode == StartMode::Cold);
    let mut persisted_total = 0;
    for (k, st) in traj.steps.iter().enumerate() {
        let (c, w) = (cold[k], warm[k]);
        assert!(c.success && w.success, "step {}: {c:?} {w:?}", st.step);
        // the contacts that persist from the previous step, counted from the files
        let expected = match k {
            0 => 0,
            _ => {
                let before: HashSet<_> = traj.steps[k - 1].ids.iter().collect();
                st.ids.iter().filter(|i| before.contains(i)).count()
            }
        };
        assert_eq!(w.persisted, expected, "step {}", st.step);
        assert_eq!(c.persisted, 0);
        persisted_total += expected;
        // cold and warm reach the same answer to the tolerance: the CCP is a convex QP, its
        // optimal value is unique (the answers need not be)
        let obj = |g: &[f64]| cpbench_problems::residuals(&st.instance, g).objective;
        let (oc, ow) = (obj(&c.gamma), obj(&w.gamma));
        assert!(
            (oc - ow).abs() <= 1e-6 * oc.abs().max(1e-12),
            "step {}: objective {oc:e} cold, {ow:e} warm",
            st.step
        );
    }
    assert!(persisted_total > 100, "{persisted_total}");
    // the warm run's start at a persisting contact is its previous answer: replaying a
    // trajectory whose second step is the first one again (same contacts) starts step 2 at
    // step 1's answer, which already meets the tolerance: zero iterations, checked
    let k = cold
        .iter()
        .position(|r| r.contacts >= 4 && r.gamma.iter().any(|&x| x > 0.0))
        .expect("a step with impulses");
    let first = &traj.steps[k];
    let copy = tmp.path().join("repeat");
    std::fs::create_dir_all(&copy).unwrap();
    let inst = format!("{}_step{:04}__ccp.npz", traj.scene, first.step);
    let contacts = format!("{}_step{:04}.contacts.csv", traj.scene, first.step);
    for f in [&inst, &contacts] {
        std::fs::copy(dir.join(f), copy.join(f)).unwrap();
    }
    let entry = |step| trajectory::IndexStep {
        step,
        instance: inst.clone(),
        contacts: contacts.clone(),
        contacts_count: first.ids.len(),
    };
    trajectory::write_index(&copy, "repeat", vec![entry(1), entry(2)]).unwrap();
    let rep = Trajectory::load(&copy, &LoadOptions::default()).unwrap();
    for solver in ["pgs", "apgd", "ipm"] {
        let rows = trajectory::replay(&rep, &[SolverSpec::named(solver)], &exec(1e-6)).unwrap();
        let w2 = rows
            .iter()
            .find(|r| r.mode == StartMode::Warm && r.step == 2)
            .unwrap();
        let w1 = rows
            .iter()
            .find(|r| r.mode == StartMode::Warm && r.step == 1)
            .unwrap();
        assert!(w1.iterations > 0, "{solver}: {w1:?}");
        assert_eq!(w2.persisted, first.ids.len());
        assert_eq!(
            (w2.iterations, w2.status.as_str()),
            (0, "converged"),
            "{solver}"
        );
        assert!(w2.success);
        assert_eq!(w2.gamma, w1.gamma, "{solver}: the answer is the start");
        let c2 = rows
            .iter()
            .find(|r| r.mode == StartMode::Cold && r.step == 2)
            .unwrap();
        assert!(c2.iterations > 0, "{solver}: cold starts from zero");
    }
}

#[test]
fn run_trajectory_writes_the_per_step_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traj");
    generate(&dir);
    let out = tmp.path().join("out");
    let table = run_to(
        &format!("--trajectory {} --solvers pgs,nsgs-admm", dir.display()),
        &out,
    );
    // nsgs-admm refuses the CCP steps: no rows; pgs cold and warm
    assert!(table.contains("pgs    cold"), "{table}");
    assert!(table.contains("pgs    warm"), "{table}");
    assert!(!table.contains("nsgs-admm"), "{table}");
    let steps = std::fs::read_to_string(out.join("replay_steps.csv")).unwrap();
    assert!(steps.starts_with(trajectory::STEPS_HEADER));
    let stats = std::fs::read_to_string(out.join("replay_stats.csv")).unwrap();
    assert_eq!(stats.lines().count(), 3, "{stats}");
    assert!(stats.starts_with(trajectory::STATS_HEADER));
    // the figure (iterations per step, cumulative time, ECDF), a PNG and an SVG
    let png = std::fs::read(out.join("replay.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert!(out.join("replay.svg").exists());
    let md = std::fs::read_to_string(out.join("replay.md")).unwrap();
    assert!(
        md.contains("| pgs | cold | ") && md.contains("](replay.png)"),
        "{md}"
    );
}

#[test]
fn broken_trajectory_folders_name_the_step_and_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traj");
    generate(&dir);
    let run = |d: &Path| {
        cpbench(&format!(
            "run --trajectory {} --out {}/o",
            d.display(),
            d.display()
        ))
    };
    let fresh = |name: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
            }
        }
        d
    };
    // (folder, the file changed, how, what the error says)
    let drop_last_line = |t: &str| {
        let mut lines: Vec<&str> = t.lines().collect();
        lines.pop();
        lines.join("\n") + "\n"
    };
    type Edit<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;
    let cases: [(&str, &str, Edit, &[&str]); 5] = [
        (
            "missing",
            "fill-2_step0005__ccp.npz",
            Box::new(|_| None),
            &[
                "fill-2_step0005__ccp.npz (step 5)",
                "cannot load the instance",
            ],
        ),
        (
            "corrupt",
            "fill-2_step0007__ccp.npz",
            Box::new(|_| Some("not a zip".into())),
            &[
                "fill-2_step0007__ccp.npz (step 7)",
                "cannot load the instance",
            ],
        ),
        (
            // identities that do not match their step's contacts (one row dropped)
            "ids",
            "fill-2_step0009.contacts.csv",
            Box::new(|t| Some(drop_last_line(t))),
            &[
                "fill-2_step0009.contacts.csv (step 9)",
                "but the index says",
            ],
        ),
        (
            // a frame component that is not a number (the last of the first contact's)
            "bad-frame",
            "fill-2_step0003.contacts.csv",
            Box::new(|t| {
                let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
                let cut = lines[1].rfind(',').unwrap();
                lines[1] = format!("{},abc", &lines[1][..cut]);
                Some(lines.join("\n") + "\n")
            }),
            &[
                "fill-2_step0003.contacts.csv (step 3)",
                "line 2: e2z: expected a finite number, found \"abc\"",
            ],
        ),
        (
            "bad-id",
            "fill-2_step0003.contacts.csv",
            Box::new(|t| Some(t.replacen(",w", ",x", 1))),
            &[
                "fill-2_step0003.contacts.csv (step 3)",
                "b: expected a body index or w<wall index>",
            ],
        ),
    ];
    for (name, file, edit, needles) in cases {
        let d = fresh(name);
        let f = d.join(file);
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        match edit(&text) {
            Some(t) => std::fs::write(&f, t).unwrap(),
            None => std::fs::remove_file(&f).unwrap(),
        }
        error(&mut run(&d), needles);
    }
    // no index
    let d = fresh("no-index");
    std::fs::remove_file(d.join("trajectory.json")).unwrap();
    error(&mut run(&d), &["trajectory.json", "cannot read the index"]);
}

/// The built-in resting pyramid: 100 steps of 72 contacts each, every contact persisting from
/// one step to the next; no default solver reaches its iteration cap on any step, cold or warm.
#[test]
fn builtin_resting_pyramid_is_a_trajectory_of_one_contact_set() {
    let (_tmp, traj) = builtin("pyramid", &LoadOptions::default());
    assert_eq!(traj.steps.len(), 100);
    assert!(traj
        .steps
        .iter()
        .all(|s| s.ids == traj.steps[0].ids && s.ids.len() == 72));
    let specs: Vec<SolverSpec> = ["pgs", "apgd", "spgqp", "ipm"]
        .into_iter()
        .map(SolverSpec::named)
        .collect();
    assert!(
        traj.steps.iter().all(|s| s.frames.is_some()),
        "version 2: frames"
    );
    let rows = trajectory::replay(&traj, &specs, &exec(1e-6)).unwrap();
    assert_eq!(rows.len(), 2 * 4 * 100);
    for r in &rows {
        assert!(r.success && r.iterations < 20_000, "{r:?}");
        if r.mode == StartMode::Warm && r.step > 1 {
            assert_eq!(r.persisted, 72);
        }
    }
    // warm-started through the world frame, the first-order solvers need a few iterations a
    // step where they need 50 to 80 from zero (measured medians: pgs 1 against 82, apgd 2
    // against 52, spgqp 2 against 61; copying contact coordinates, before frames were stored,
    // gave 62, 51 and 52: the pyramid's tangent frames switch their axis between steps)
    let stats = trajectory::replay_stats(&rows);
    for solver in ["pgs", "apgd", "spgqp"] {
        let median = |mode| {
            stats
                .iter()
                .find(|t| t.solver == solver && t.mode == mode)
                .unwrap()
                .iterations[0]
        };
        let (cold, warm) = (median(StartMode::Cold), median(StartMode::Warm));
        assert!(
            warm <= 5.0 && 10.0 * warm <= cold,
            "{solver}: {warm} warm, {cold} cold"
        );
    }
}

/// `nsgs-admm` hands over to ADMM only when NSGS is slow by the executor's residual: on the
/// built-in settling fill, read as Coulomb problems, NSGS never stalls, so `nsgs-admm` is NSGS
/// step for step, cold and warm (equal iterations on every step). Judged by the relative change
/// of the reactions, as before, it switched on 5 warm-started steps and took 90 to 135
/// iterations there where NSGS alone took 35 to 43.
#[test]
fn nsgs_admm_does_not_switch_on_a_warm_started_fill() {
    let opts = LoadOptions {
        class: cpbench_problems::io::ClassChoice::Coulomb,
        ..Default::default()
    };
    let (_tmp, traj) = builtin("fill", &opts);
    let specs = [SolverSpec::named("nsgs"), SolverSpec::named("nsgs-admm")];
    let rows = trajectory::replay(&traj, &specs, &exec(1e-6)).unwrap();
    let (nsgs, hybrid): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.solver == "nsgs");
    assert_eq!(nsgs.len(), 2 * traj.steps.len());
    for (a, h) in nsgs.iter().zip(&hybrid) {
        assert_eq!((a.mode, a.step), (h.mode, h.step));
        assert!(a.success && h.success, "{a:?} {h:?}");
        assert_eq!(a.iterations, h.iterations, "step {} {:?}", a.step, a.mode);
    }
}

/// The `replay_steps.csv` of a replay without its `time_s` column (the one that varies
/// between runs).
fn steps_without_times(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let t = header.iter().position(|h| *h == "time_s").unwrap();
    text.lines()
        .map(|l| {
            l.split(',')
                .enumerate()
                .filter(|(k, _)| *k != t)
                .map(|(_, c)| c)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn suite_file_trajectory_entries_are_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traj");
    generate(&dir);
    let rover =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/siconos-fc3d/Rover4396.dat");
    // instances and a trajectory (the same folder twice: the second replay goes to `traj-2`)
    let suite = tmp.path().join("suite.json");
    std::fs::write(
        &suite,
        format!(
            r#"{{"name": "mixed", "instances": [{{"path": "{}", "symmetrize": true}}],
                "trajectories": [{{"path": "traj"}}, {{"path": "{}"}}]}}"#,
            rover.display(),
            dir.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let table = run_to(
        &format!("--suite {} --solvers pgs --no-plots", suite.display()),
        &out,
    );
    assert!(table.contains("pgs    warm"), "{table}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        summary.lines().count(),
        2,
        "one instance x one solver: {summary}"
    );
    assert!(summary.contains("Rover4396"), "{summary}");
    let stats = std::fs::read_to_string(out.join("replay/traj/replay_stats.csv")).unwrap();
    assert_eq!(stats.lines().count(), 3, "pgs cold and warm: {stats}");
    let first = steps_without_times(&out.join("replay/traj/replay_steps.csv"));
    assert_eq!(first.len(), 1 + 2 * 40, "40 steps cold and warm");
    assert_eq!(
        first,
        steps_without_times(&out.join("replay/traj-2/replay_steps.csv")),
        "the same folder replays the same"
    );
    // the same trajectory alone, with --trajectory: the same rows
    let alone = tmp.path().join("alone");
    run_to(
        &format!("--trajectory {} --solvers pgs --no-plots", dir.display()),
        &alone,
    );
    assert_eq!(first, steps_without_times(&alone.join("replay_steps.csv")));

    // a suite of trajectories alone replays them only (no summary)
    let only = tmp.path().join("only.json");
    std::fs::write(
        &only,
        r#"{"name": "t", "trajectories": [{"path": "traj"}]}"#,
    )
    .unwrap();
    let out2 = tmp.path().join("out2");
    run_to(
        &format!("--suite {} --solvers pgs --no-plots", only.display()),
        &out2,
    );
    assert!(!out2.join("summary.csv").exists());
    assert_eq!(
        first,
        steps_without_times(&out2.join("replay/traj/replay_steps.csv"))
    );
    // the run's executor options reach the replays: a stall window of 1 iteration stops some
    // of apgd's and jacobi's steps (none with the default window)
    let statuses = |w: &str| {
        let o = tmp.path().join(format!("out-w{w}"));
        run_to(
            &format!(
                "--suite {} --solvers apgd,jacobi --stall-window {w} --no-plots",
                only.display()
            ),
            &o,
        );
        std::fs::read_to_string(o.join("replay/traj/replay_steps.csv"))
            .unwrap()
            .matches(",stalled,")
            .count()
    };
    assert_eq!(statuses("5000"), 0);
    assert!(statuses("1") > 0);

    // a listed folder without trajectory.json is refused before anything runs
    let bad = tmp.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"name": "b", "trajectories": [{"path": "traj"}, {"path": "nowhere"}]}"#,
    )
    .unwrap();
    let out3 = tmp.path().join("out3");
    error(
        &mut cpbench(&format!(
            "run --suite {} --solvers pgs --out {}",
            bad.display(),
            out3.display()
        )),
        &["bad.json", "trajectories[1]", "nowhere", "trajectory.json"],
    );
    assert!(!out3.exists(), "nothing written");
    // and an empty suite is refused
    std::fs::write(&bad, r#"{"name": "b"}"#).unwrap();
    error(
        &mut cpbench(&format!(
            "run --suite {} --out {}",
            bad.display(),
            out3.display()
        )),
        &["bad.json", "no instances and no trajectories"],
    );
}
