//! The integration tests of `cpbench-solvers`, one module per topic, in one test binary (one
//! link instead of one per file: see `docs/architecture.md`, "Tests").

mod admm;
mod bb;
mod blcp;
mod chunked;
mod clarabel;
mod coulomb;
mod driven;
mod executor;
mod external;
mod fc2d;
mod fixed_point;
mod ipm;
mod joints;
mod kernels;
mod lcp_newton;
mod lcp_pivoting;
mod mprgp;
mod nsgs;
mod nsn;
mod pgs_anderson;
mod registry;
mod siconos_global;
mod small_problems;
mod status;
mod support;
mod vi;
