//! The integration tests of the `cpbench` binary and the whole workspace, one module per topic, in one test binary (one
//! link instead of one per file: see `docs/architecture.md`, "Tests").

mod architecture;
mod clarabel_oracle;
mod cli;
mod cli_errors;
mod closed_loop;
mod compliance;
mod contactbench;
mod default_suite;
mod ellipsoids;
mod external;
mod generate;
mod generate_penalty;
mod generate_planar;
mod granular;
mod granular_scale;
mod granular_support;
mod harness;
mod hinges;
mod hostile;
mod ipm_limits;
mod joints;
mod lcp_pivoting_cli;
mod npz;
mod operators;
mod operators_2d;
mod output_names;
mod permon;
mod report_fidelity;
mod reproduce;
mod scale;
mod scale_suite;
mod support;
mod trajectory;
mod variants;
