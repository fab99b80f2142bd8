//! Classic box-constrained QP test problems (PERMON `ex1`, MINPACK-2 journal bearing, ...).
