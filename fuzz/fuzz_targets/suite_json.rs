//! Suite files (`cpbench run --suite FILE.json`).
//!
//! The input is written to `suite.json` in the scratch folder and read with
//! `Suite::from_file`, as the CLI reads `--suite FILE`: strict JSON (a key given twice is an
//! error), the schema, relative paths joined to the file's folder. The instances it lists are
//! not loaded: their paths come from the input and could name any file on the machine (the
//! instance readers have targets of their own).
#![no_main]
use cpbench_fuzz::write_scratch;
use cpbench_harness::Suite;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = write_scratch("suite.json", data);
    if let Ok(suite) = Suite::from_file(&path) {
        assert!(
            !suite.entries.is_empty() || !suite.trajectories.is_empty(),
            "a suite file without instances and trajectories is an error"
        );
        for t in &suite.trajectories {
            assert!(t.join("trajectory.json").is_file(), "checked when read");
        }
        for e in &suite.entries {
            let _ = e.source_name();
            let _ = e.class.to_string();
        }
    }
});
