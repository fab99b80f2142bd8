//! The unit tests of `cpbench-harness` (they were its `#[cfg(test)]` modules), one module per
//! module of the crate (`report_<name>`: the private submodule `<name>` of `report`, through
//! what `report` re-exports).

mod bandwidth;
mod check;
mod figures;
mod load;
mod lock;
mod manifest;
mod memory;
mod names;
mod order;
mod plot;
mod regression;
mod report;
mod report_metrics;
mod report_peer;
mod report_scale;
mod results;
mod scale;
mod simout;
mod variants;
