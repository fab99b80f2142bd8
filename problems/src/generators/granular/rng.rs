//! SplitMix64, the scenes' seeded generator: the one of [`crate::rng`], re-exported here so that
//! every scene is reproducible bit for bit from its seed.

pub use crate::rng::SplitMix64;
