//! One module per subcommand.

pub mod args;
pub mod check;
pub mod generate;
pub mod info;
pub mod merge;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod simulate;
pub mod solvers;
