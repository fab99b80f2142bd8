//! fclib HDF5 files (`/fclib_local`, `/fclib_global` condensed).
//!
//! The input is read as the CLI reads a file (HDF5 signature detection, reader, default
//! options), then in memory as an fclib file.
#![no_main]
use cpbench_fuzz::{api_load_as, cli_load};
use cpbench_problems::io::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cli_load("fuzz.hdf5", data);
    api_load_as("fuzz.hdf5", data, Format::FclibHdf5);
});
