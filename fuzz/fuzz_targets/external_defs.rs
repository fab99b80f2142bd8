//! External solver definitions (`cpbench run --external FILE`, docs/external.md).
//!
//! The input is written to `defs.json` in the scratch folder and read with
//! `ExternalDefs::load`, as the CLI does; each solver it defines is then resolved as
//! `--solvers ext:NAME` resolves it (`external::resolve`), and its settings, cost model and
//! `known_names` are asked for, as `cpbench solvers` lists them, and whether it would take a
//! tiny LCP (`refusal`: the classes, the program looked up in the file's folder and on `PATH`).
//! No program is started.
#![no_main]
use cpbench_fuzz::write_scratch;
use cpbench_problems::io::{load_bytes, Format, LoadOptions};
use cpbench_problems::Instance;
use cpbench_solvers::external::{self, ExternalDefs};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A 2 x 2 LCP to ask a solver whether it would take it (class, program found).
fn tiny_lcp() -> &'static Instance {
    static I: OnceLock<Instance> = OnceLock::new();
    I.get_or_init(|| {
        load_bytes(
            "tiny.dat",
            b"2\n0\n2\n2\n2 2\n1 0 0 1\n-1 -1\n",
            Format::SiconosLcp,
            &LoadOptions::default(),
        )
        .expect("the tiny LCP reads")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = write_scratch("defs.json", data);
    let Ok(defs) = ExternalDefs::load(&path) else {
        return;
    };
    let _ = defs.known_names();
    for name in defs.solvers.keys() {
        match external::resolve(&format!("ext:{name}"), Some(&defs)) {
            Some(Ok(s)) => {
                let _ = s.name();
                let _ = s.settings();
                let _ = s.cost();
                let _ = s.refusal(tiny_lcp());
            }
            other => panic!(
                "ext:{name} is defined but resolves to {:?}",
                other.map(|r| r.err())
            ),
        }
    }
    // a name the file does not define is an error naming the file's solvers
    assert!(matches!(
        external::resolve("ext:\u{1}undefined", Some(&defs)),
        Some(Err(_))
    ));
});
