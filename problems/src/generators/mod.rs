//! Instance generators: cpbench's granular-dynamics time stepper and classic box-QP / LCP test
//! problems.

pub mod boxqp;
pub mod granular;
