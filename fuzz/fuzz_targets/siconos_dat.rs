//! Siconos local `.dat` files: friction problems (fc3d, fc2d) and LCPs.
//!
//! The input is read as the CLI reads a file (detection, declared-size check, reader,
//! default options), then in memory as each local format.
#![no_main]
use cpbench_fuzz::{api_load_as, cli_load};
use cpbench_problems::io::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cli_load("fuzz.dat", data);
    api_load_as("fuzz.dat", data, Format::SiconosFc3d);
    api_load_as("fuzz.dat", data, Format::SiconosLcp);
});
