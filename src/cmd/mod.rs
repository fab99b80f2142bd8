//! One module per subcommand.

pub mod info;
pub mod run;
