//! Issue 15: every `cpbench reproduce` recipe runs at its quick size and asserts the numbers
//! it can (one module per recipe); `formulations`, `step_traces`, `timings` and `verdicts` test
//! the parts of `cpbench-reproduce` the recipes share (they were its unit tests).

mod acary;
mod cannonball;
mod cli;
mod common;
mod contactbench;
mod formulations;
mod mazhar;
mod melanz;
mod permon;
mod sliding;
mod stacking;
mod step_traces;
mod timings;
mod verdicts;
