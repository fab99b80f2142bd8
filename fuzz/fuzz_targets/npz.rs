//! cpbench's binary instances: `.npy` arrays in an uncompressed `.npz` (ZIP).
//!
//! The input is read as the CLI reads a file (ZIP signature detection, then the archive
//! streamed from the file), then in memory (`load_bytes`, a cursor over the bytes).
#![no_main]
use cpbench_fuzz::{api_load_as, cli_load};
use cpbench_problems::io::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cli_load("fuzz.npz", data);
    api_load_as("fuzz.npz", data, Format::Npz);
});
