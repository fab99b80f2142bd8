//! The integration tests of `cpbench-granular` (`penalty_alloc` stays a binary of its own: its counting global allocator would count every other test), one module per topic, in one test binary (one
//! link instead of one per file: see `docs/architecture.md`, "Tests").

mod assembly;
mod bodies;
mod detection;
mod ellipsoid;
mod penalty;
mod planar;
mod planar_blocks;
mod restitution;
mod scenes;
mod snapshot;
