//! `horak-trinkle2019-stacking`: the column stands, the direct LCP solve leaves no
//! penetration, the 30-sweep models leave some.
