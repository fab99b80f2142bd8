//! Siconos global friction problems (`GFC3D_*`, `gfc2d_*`: `M`, `H`, `q`, `b`, `mu`),
//! condensed to a local problem on reading.
//!
//! The input is read as the CLI reads a file (detection, declared-size check, reader,
//! default options), then in memory as a global problem.
#![no_main]
use cpbench_fuzz::{api_load_as, cli_load};
use cpbench_problems::io::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cli_load("fuzz.dat", data);
    api_load_as("fuzz.dat", data, Format::SiconosGlobal);
});
