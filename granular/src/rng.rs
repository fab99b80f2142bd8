//! SplitMix64, the scenes' seeded generator: the one of [`cpbench_problems::rng`], re-exported here so that
//! every scene is reproducible bit for bit from its seed.

pub use cpbench_problems::rng::SplitMix64;
