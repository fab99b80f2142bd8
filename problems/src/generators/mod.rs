//! Instance generators: classic box-QP / LCP test problems. (cpbench's granular-dynamics time
//! stepper is the `cpbench-granular` crate.)

pub mod boxqp;
pub mod murty;
