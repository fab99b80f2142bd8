//! The integration tests of `cpbench-problems`, one module per topic, in one test binary (one
//! link instead of one per file: see `docs/architecture.md`, "Tests").

mod global_matrix_free;
mod io;
mod joints;
mod projection_props;
mod robotics;
mod siconos_global;
mod unit;
