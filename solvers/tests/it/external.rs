//! External solvers (`cpbench_solvers::external`): the definitions file, name resolution,
//! argv placeholders, the files a program writes, and the process runner (exit codes, the group
//! kill at the limit, escaped descendants, output tails).

/// The definitions file ([`cpbench_solvers::external::defs`]).
mod defs {
    use cpbench_problems::ProblemClass;
    use cpbench_solvers::external::{DefsError, ExternalDefs, InstanceFormat, OutputFormat};
    use std::path::Path;

    fn parse(text: &str) -> Result<ExternalDefs, DefsError> {
        ExternalDefs::parse(text, Path::new("defs.json"))
    }

    #[test]
    fn a_full_definition_is_read() {
        let d = parse(
            r#"{"solvers": {"pg": {"command": ["python3", "pg.py", "{instance}", "{gamma}"],
                "format": "npz", "output": "npy", "classes": ["ccp", "box"], "time_limit": 60,
                "description": "projected gradient", "env": {"OMP_NUM_THREADS": "1"}}}}"#,
        )
        .unwrap();
        let pg = &d.solvers["pg"];
        assert_eq!(pg.command, ["python3", "pg.py", "{instance}", "{gamma}"]);
        assert_eq!(pg.format, InstanceFormat::Npz);
        assert_eq!(pg.output, OutputFormat::Npy);
        assert_eq!(
            pg.classes,
            Some(vec![ProblemClass::Ccp, ProblemClass::BoxQp])
        );
        assert_eq!(pg.time_limit, Some(60.0));
        assert_eq!(pg.env["OMP_NUM_THREADS"], "1");
        assert_eq!(d.known_names(), "ext:pg, from defs.json");
    }

    #[test]
    fn errors_name_the_file_the_solver_and_the_field() {
        let msg = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(
            msg(r#"{"solvers": {"x": {"command": ["a"], "format": "csv", "output": "npy"}}}"#),
            "defs.json: solver 'x': field 'format': expected one of npz, bundle, fclib, mtx, \
             found \"csv\""
        );
        assert_eq!(
            msg(r#"{"solvers": {"x": {"command": [], "format": "npz", "output": "npy"}}}"#),
            "defs.json: solver 'x': field 'command': expected a non-empty array of strings \
             (argv, no shell), found an empty array"
        );
        assert_eq!(
            msg(r#"{"solvers": {"x": {"command": ["a"], "format": "npz"}}}"#),
            "defs.json: solver 'x': field 'output': missing (expected one of npy, mtx)"
        );
        assert_eq!(
            msg(
                r#"{"solvers": {"x": {"command": ["a"], "format": "npz", "output": "npy",
                "time_limit": -1}}}"#
            ),
            "defs.json: solver 'x': field 'time_limit': expected a positive number of \
             seconds, found -1"
        );
        assert!(msg(
            r#"{"solvers": {"x": {"command": ["a"], "format": "npz", "output": "npy",
                "classes": ["qp"]}}}"#
        )
        .starts_with("defs.json: solver 'x': field 'classes': expected class names (lcp, box"));
        assert_eq!(
            msg(
                r#"{"solvers": {"x": {"command": ["a"], "format": "npz", "output": "npy",
                "cmd": 1}}}"#
            ),
            "defs.json: solver 'x': field 'cmd': unknown field (known: command, format, \
             output, classes, time_limit, description, env)"
        );
        assert_eq!(
            msg(r#"{"solver": {}}"#),
            "defs.json: field 'solver': unknown field (the file holds only \"solvers\")"
        );
        // issue 30: a NUL byte was reported at spawn time without naming env; a key twice
        assert_eq!(
            msg(
                r#"{"solvers": {"x": {"command": ["a"], "format": "npz", "output": "npy",
                "env": {"A": "1\u0000"}}}}"#
            ),
            "defs.json: solver 'x': field 'env': variable 'A' holds a NUL byte (\\u0000) in \
             its value, which no environment can carry"
        );
        assert_eq!(
            msg(
                r#"{"solvers": {"x": {"command": ["a\u0000"], "format": "npz", "output": "npy"}}}"#
            ),
            "defs.json: solver 'x': field 'command': element 0 holds a NUL byte (\\u0000), \
             which no argument can carry"
        );
        assert!(msg(
            r#"{"solvers": {"x": {"command": ["a"], "format": "npz", "output": "npy",
            "format": "npz"}}}"#
        )
        .contains("the key \"format\" is given twice"));
        assert!(msg(r#"{"solvers": {"a b": {}}}"#).contains("solver name 'a b'"));
        assert!(msg("{").starts_with("defs.json: not valid JSON: "));
    }
}

/// Name resolution, argv and the program's output files ([`cpbench_solvers::external`]).
mod protocol {
    use cpbench_solvers::external::{
        number, read_gamma, read_info, read_trace, resolve, ExternalDef, ExternalDefs,
        ExternalSolver, InstanceFormat, OutputFormat,
    };
    use cpbench_solvers::Status;
    use std::path::Path;

    #[test]
    fn resolve_knows_prefixes_and_lists_names() {
        assert!(resolve("pgs", None).is_none());
        let s = resolve("siconos:nsgs", None).unwrap().unwrap();
        assert_eq!(s.name(), "siconos:nsgs");
        assert_eq!(s.settings()["siconos_solver"], "SICONOS_FRICTION_3D_NSGS");
        let e = resolve("siconos:pgs", None)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("unknown solver 'siconos:pgs' (known: siconos:nsgs, siconos:nsn-ac"),
            "{e}"
        );
        let e = resolve("ext:pg", None).unwrap().unwrap_err().to_string();
        assert!(e.contains("--external FILE"), "{e}");
        let defs = ExternalDefs::parse(
            r#"{"solvers": {"pg": {"command": ["sh"], "format": "mtx", "output": "mtx"}}}"#,
            Path::new("/x/defs.json"),
        )
        .unwrap();
        let e = resolve("ext:pq", Some(&defs))
            .unwrap()
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "unknown solver 'ext:pq' (known: ext:pg, from /x/defs.json)"
        );
        let s = resolve("ext:pg", Some(&defs)).unwrap().unwrap();
        assert_eq!(s.name(), "ext:pg");
        assert_eq!(s.settings()["format"], "mtx");
    }

    #[test]
    fn placeholders_and_relative_paths_are_resolved() {
        let dir = std::env::temp_dir().join(format!("cpbench-ext-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("solve.py"), "").unwrap();
        let def = ExternalDef {
            command: [
                "python3",
                "solve.py",
                "{instance}",
                "--tol={tol}",
                "missing.txt",
                "{dir}/x",
            ]
            .map(String::from)
            .to_vec(),
            format: InstanceFormat::Npz,
            output: OutputFormat::Npy,
            classes: None,
            time_limit: None,
            description: None,
            env: Default::default(),
        };
        let s = ExternalSolver::new("ext:a", def, &dir, "defs.json".into());
        let argv = s.argv(&[
            ("instance", "/w/instance.npz".into()),
            ("tol", number(1e-8)),
            ("dir", dir.display().to_string()),
        ]);
        let d = dir.display();
        assert_eq!(
            argv,
            [
                "python3".to_string(),
                format!("{d}/solve.py"),
                "/w/instance.npz".into(),
                "--tol=1e-8".into(),
                "missing.txt".into(),
                format!("{d}/x"),
            ]
        );
        assert_eq!(number(f64::INFINITY), "inf");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn trace_info_and_gamma_files_are_read_with_clear_errors() {
        let dir = std::env::temp_dir().join(format!("cpbench-ext-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("trace.csv");
        std::fs::write(&t, "iteration,time_s,residual\n1,0.5,1e-2\n2,1.0,1e-4\n").unwrap();
        let rows = read_trace(&t).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[1].iteration, rows[1].time_s, rows[1].residual),
            (2, Some(1.0), Some(1e-4))
        );
        std::fs::write(&t, "it,time_s\n1,0.5\n").unwrap();
        assert!(read_trace(&t)
            .unwrap_err()
            .contains("no 'iteration' column"));
        let i = dir.join("info.json");
        std::fs::write(
            &i,
            r#"{"iterations": 7, "status": "converged", "message": "ok", "counters": {"a": 2},
                "time_s": 0.25}"#,
        )
        .unwrap();
        let info = read_info(&i).unwrap();
        assert_eq!(info.iterations, Some(7));
        assert_eq!(info.status, Some(Status::Converged));
        assert_eq!(info.message.as_deref(), Some("ok"));
        assert_eq!(info.counters, vec![("a".to_string(), 2.0)]);
        assert_eq!(info.time_s, Some(0.25));
        std::fs::write(&i, r#"{"counters": {"a;b=1": 2}}"#).unwrap();
        let e = read_info(&i).unwrap_err();
        assert!(e.contains("names without ';' or '=' (got 'a;b=1')"), "{e}");
        std::fs::write(&i, r#"{"status": "done"}"#).unwrap();
        let info = read_info(&i).unwrap();
        assert_eq!(info.status, None);
        assert_eq!(
            info.message.as_deref(),
            Some("info status 'done' is not a cpbench status (ignored)")
        );
        let g = dir.join("gamma.mtx");
        std::fs::write(
            &g,
            "%%MatrixMarket matrix array real general\n2 1\n1.5\n-2\n",
        )
        .unwrap();
        assert_eq!(
            read_gamma(&g, OutputFormat::Mtx, 2).unwrap(),
            vec![1.5, -2.0]
        );
        let e = read_gamma(&g, OutputFormat::Mtx, 3).unwrap_err();
        assert!(
            e.ends_with("gamma has length 2, expected a MatrixMarket array of n = 3 rows"),
            "{e}"
        );
        // a hand-written .npy: magic, version 1.0, header, two little-endian float64
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
        let pad = 64 - (10 + header.len() + 1) % 64;
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend(((header.len() + pad + 1) as u16).to_le_bytes());
        b.extend(header.as_bytes());
        b.extend(std::iter::repeat_n(b' ', pad));
        b.push(b'\n');
        b.extend(0.25f64.to_le_bytes());
        b.extend(4.0f64.to_le_bytes());
        let g = dir.join("gamma.npy");
        std::fs::write(&g, b).unwrap();
        assert_eq!(
            read_gamma(&g, OutputFormat::Npy, 2).unwrap(),
            vec![0.25, 4.0]
        );
        let e = read_gamma(&dir.join("none.npy"), OutputFormat::Npy, 2).unwrap_err();
        assert!(e.starts_with("the program did not write gamma to "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The process runner ([`cpbench_solvers::external::process`]).
mod process {
    use cpbench_solvers::external::process::{
        describe, run, tail, Ending, Finished, PIPE_GRACE, TAIL_CHARS, TOKEN_VAR,
    };
    use std::time::{Duration, Instant};

    fn sh(script: &str, limit: Option<f64>) -> Finished {
        let argv: Vec<String> = ["sh", "-c", script].map(String::from).to_vec();
        run(&argv, &std::env::temp_dir(), &[], limit).unwrap()
    }

    #[test]
    fn exit_codes_and_stderr_tails_are_kept() {
        let f = sh("echo out; echo 'oops' >&2; exit 3", None);
        match f.ending {
            Ending::Exited(s) => assert_eq!(describe(&s), "exit code 3"),
            Ending::Killed => panic!("not killed"),
        }
        assert_eq!(f.stderr_tail, "oops");
        let f = sh("kill -SEGV $$", None);
        match f.ending {
            Ending::Exited(s) => assert_eq!(describe(&s), "killed by signal 11 (SIGSEGV)"),
            Ending::Killed => panic!("not killed"),
        }
    }

    #[test]
    fn the_group_is_killed_at_the_limit_grandchildren_included() {
        let t = Instant::now();
        // the grandchild holds the pipe: without the group kill the drain would wait 30 s
        let f = sh("sleep 30 & sleep 30; echo never", Some(0.2));
        assert!(matches!(f.ending, Ending::Killed));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(f.wall >= Duration::from_millis(200));
    }

    /// Whether `pid` is alive (a zombie counts as dead).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    #[test]
    fn a_descendant_in_its_own_session_is_killed_at_the_limit_and_at_exit() {
        let dir = std::env::temp_dir().join(format!("cpbench-setsid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Run `setsid sh -c '...; exec sleep 40'{redirect} & {then}` under `limit`: the run
        // ends within 4 s and the setsid grandchild (its pid in `{case}.pid`) is gone after.
        let ending = |case: &str, redirect: &str, then: &str, limit: f64| {
            let pidfile = dir.join(format!("{case}.pid"));
            let t = Instant::now();
            let f = sh(
                &format!(
                    "setsid sh -c 'echo $$ > {}; exec sleep 40'{redirect} & {then}",
                    pidfile.display()
                ),
                Some(limit),
            );
            assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
            let pid = std::fs::read_to_string(&pidfile).unwrap();
            assert!(
                !alive(pid.trim()),
                "the setsid grandchild {pid} outlived the run"
            );
            f.ending
        };
        // the issue's case: `setsid sleep 40 &`, holding the pipes, then a normal exit
        let e = ending("exit", "", "sleep 0.3; exit 0", 5.0);
        assert!(matches!(e, Ending::Exited(s) if s.success()), "{e:?}");
        // the same with the pipes closed (so nothing waits on them) and the limit reached
        let e = ending("limit", " > /dev/null 2>&1 < /dev/null", "sleep 30", 0.5);
        assert!(matches!(e, Ending::Killed), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_escaped_descendant_holding_the_pipes_delays_the_run_by_the_grace_only() {
        // `env -u` removes the token and setsid leaves the session: the one way out; the
        // run still ends PIPE_GRACE after the program's exit
        let t = Instant::now();
        let f = sh(
            &format!("env -u {TOKEN_VAR} setsid sleep 6 & sleep 0.3; exit 0"),
            Some(20.0),
        );
        assert!(matches!(f.ending, Ending::Exited(_)));
        let took = t.elapsed();
        assert!(took < PIPE_GRACE + Duration::from_secs(2), "{took:?}");
        assert!(
            f.stderr_tail.contains("still held open"),
            "{}",
            f.stderr_tail
        );
    }

    #[test]
    fn long_output_is_cut_to_the_tail() {
        let long = "x".repeat(3 * TAIL_CHARS) + "END";
        let t = tail(long.as_bytes());
        assert!(t.ends_with("END") && t.starts_with("..."));
        assert_eq!(t.chars().count(), TAIL_CHARS + 3);
    }
}

/// The settings of `siconos:*` solvers ([`cpbench_solvers::external::siconos::SiconosOptions`]):
/// the form read and written back, and every malformed one refused with a message naming the
/// solver, the key and what was expected; `ext:` solvers take no settings; the options are in
/// the solver's settings JSON only when given.
mod siconos_options {
    use cpbench_solvers::external::siconos::{IparamValue, SiconosOptions};
    use cpbench_solvers::external::{check_settings, resolve_with_settings};
    use serde_json::json;

    fn err(v: serde_json::Value) -> String {
        SiconosOptions::parse("siconos:nsgs", &v)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn form_is_checked() {
        let v = json!({"iparam": {"SICONOS_FRICTION_3D_NSGS_RELAXATION":
            "SICONOS_FRICTION_3D_NSGS_RELAXATION_TRUE", "SICONOS_IPARAM_MAX_ITER": 7},
            "dparam": {"SICONOS_FRICTION_3D_NSGS_RELAXATION_VALUE": 0.5}});
        let o = SiconosOptions::parse("siconos:nsgs", &v).unwrap();
        assert_eq!(o.iparam["SICONOS_IPARAM_MAX_ITER"], IparamValue::Int(7));
        assert_eq!(o.dparam["SICONOS_FRICTION_3D_NSGS_RELAXATION_VALUE"], 0.5);
        assert_eq!(o.to_json(), v);
        assert!(
            SiconosOptions::parse("siconos:nsgs", &json!({"iparam": {}}))
                .unwrap()
                .is_empty()
        );
        let e = err(json!({"iparams": {}}));
        assert!(
            e.contains("'siconos:nsgs'") && e.contains("unknown key 'iparams'"),
            "{e}"
        );
        assert!(err(json!({"iparam": 3})).contains("'iparam': expected an object"));
        assert!(err(json!({"iparam": {"A": 1.5}})).contains("iparam 'A': expected an integer"));
        assert!(err(json!({"iparam": {"A": 4_000_000_000u64}})).contains("a C int"));
        assert!(err(json!({"iparam": {"A": "two words"}})).contains("iparam 'A'"));
        assert!(err(json!({"iparam": {"A": true}})).contains("iparam 'A'"));
        assert!(err(json!({"dparam": {"B": "x"}})).contains("dparam 'B': expected a finite"));
        assert!(err(json!({"dparam": {"1B": 1.0}})).contains("dparam '1B': expected the name"));
        assert!(err(json!([1])).contains("expected an object"));
        // ext: takes none; registry names are not ours; unknown siconos: names are named
        let e = check_settings("ext:pg", Some(&json!({})))
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("ext: solvers take no settings"), "{e}");
        assert!(check_settings("ext:pg", None).unwrap().is_ok());
        assert!(check_settings("pgs", Some(&json!({}))).is_none());
        assert!(check_settings("siconos:pgs", None)
            .unwrap()
            .unwrap_err()
            .to_string()
            .contains("unknown solver 'siconos:pgs'"));
        // in the settings JSON only when given
        let plain = resolve_with_settings("siconos:nsgs", None, None)
            .unwrap()
            .unwrap();
        assert!(plain.settings().get("options").is_none());
        let with = resolve_with_settings("siconos:nsgs", None, Some(&v))
            .unwrap()
            .unwrap();
        assert_eq!(with.settings()["options"], v);
        assert!(
            resolve_with_settings("siconos:nsgs", None, Some(&json!({"x": {}})))
                .unwrap()
                .is_err()
        );
    }
}
