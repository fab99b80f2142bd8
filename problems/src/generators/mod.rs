//! Instance generators: classic box-QP test problems ([`boxqp`]) and seeded random general
//! LCPs with known solutions ([`lcp`]). (cpbench's granular-dynamics time
//! stepper is the `cpbench-granular` crate.)

pub mod boxqp;
pub mod lcp;
