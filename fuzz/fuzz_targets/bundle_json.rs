//! Bundles: `instance.json` with its MatrixMarket files.
//!
//! The input holds the files of a bundle separated by NUL bytes, in this order:
//! `instance.json`, `N.mtx`, `r.mtx`, `D.mtx`, `M_diag.mtx` (the last two for a matrix-free
//! bundle); a file the input does not reach is absent. They are written into a folder of the
//! scratch directory and the folder is read as the CLI reads an instance path (`load` of a
//! directory: `read_bundle`, then the class the options ask for): once with the CLI's default
//! options, once with [`cpbench_fuzz::options_for`] the input. `fuzz/seed.sh` makes the seeds
//! from `tests/fixtures/bundles/*/` and `fuzz/seeds/bundle_json/*/`.
#![no_main]
use cpbench_fuzz::{exercise, options_for, scratch_dir, split_parts};
use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use libfuzzer_sys::fuzz_target;

const FILES: [&str; 5] = ["instance.json", "N.mtx", "r.mtx", "D.mtx", "M_diag.mtx"];

fuzz_target!(|data: &[u8]| {
    let dir = scratch_dir().join("bundle");
    std::fs::create_dir_all(&dir).expect("create the bundle folder");
    let parts = split_parts(data, FILES.len());
    for (i, name) in FILES.iter().enumerate() {
        let p = dir.join(name);
        match parts.get(i) {
            Some(bytes) => std::fs::write(&p, bytes).expect("write a bundle file"),
            None => {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    if let Ok(inst) = load(&dir, &LoadOptions::default()) {
        exercise(&inst);
    }
    let opts = options_for(data);
    if opts.class != ClassChoice::Ccp || opts.validation.symmetrize {
        if let Ok(inst) = load(&dir, &opts) {
            exercise(&inst);
        }
    }
});
