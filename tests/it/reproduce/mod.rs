//! Issue 15: every `cpbench reproduce` recipe runs at its quick size and asserts the numbers
//! it can (one module per recipe).

mod acary;
mod cannonball;
mod cli;
mod common;
mod mazhar;
mod melanz;
mod permon;
mod sliding;
mod stacking;
