//! Instance generators: classic box-QP test problems ([`boxqp`]), Murty's and Fathi's
//! exponential LCPs for Lemke's method ([`murty`]) and seeded random general LCPs with known
//! solutions ([`lcp`]). (cpbench's granular-dynamics time stepper is the `cpbench-granular`
//! crate.)

pub mod boxqp;
pub mod lcp;
pub mod murty;
