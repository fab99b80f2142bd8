//! The tests of `cpbench_problems::constraints` (until now its `#[cfg(test)]` module in
//! `problems/src/constraints/mod.rs`).

use cpbench_problems::constraints::*;
use cpbench_problems::error::ProblemError;

#[test]
fn validate_rejects_bad_sets() {
    let c = ConstraintSet::coulomb(vec![0.5, -0.1]);
    assert!(matches!(
        c.validate(6),
        Err(ProblemError::NegativeMu { contact: 1, .. })
    ));
    assert!(matches!(
        c.validate(5),
        Err(ProblemError::NotMultipleOfThree { n: 5 })
    ));
    let b = ConstraintSet::Box {
        lo: vec![0.0, 2.0],
        hi: vec![1.0, 1.0],
    };
    assert!(matches!(
        b.validate(2),
        Err(ProblemError::EmptyBox { index: 1, .. })
    ));
    let b = ConstraintSet::Box {
        lo: vec![f64::NEG_INFINITY],
        hi: vec![f64::INFINITY],
    };
    assert!(b.validate(1).is_ok());
}

#[test]
fn class_table_is_in_enum_order() {
    for (i, e) in CLASSES.iter().enumerate() {
        assert_eq!(e.class as usize, i, "{}", e.name);
        assert_eq!(ProblemClass::from_name(e.name), Some(e.class));
    }
    assert_eq!(ProblemClass::ALL.len(), CLASSES.len());
    let qp: Vec<ProblemClass> = CLASSES
        .iter()
        .filter(|e| e.is_qp)
        .map(|e| e.class)
        .collect();
    assert_eq!(ProblemClass::QP.to_vec(), qp);
    assert!([ProblemClass::Lcp, ProblemClass::BoxQp, ProblemClass::Ccp]
        .iter()
        .all(|c| ProblemClass::QP.contains(c)));
    assert_eq!(ProblemClass::from_name("nope"), None);
}

#[test]
fn conic_pieces_and_data() {
    let b = ConstraintSet::Box {
        lo: vec![0.0, -1.0],
        hi: vec![0.0, f64::INFINITY],
    };
    assert_eq!(
        b.conic_pieces(2),
        vec![
            ConicPiece::Interval {
                j: 0,
                lo: 0.0,
                hi: 0.0
            },
            ConicPiece::Interval {
                j: 1,
                lo: -1.0,
                hi: f64::INFINITY
            }
        ]
    );
    assert_eq!(b.data_named("hi"), Some(&[0.0, f64::INFINITY][..]));
    assert_eq!(b.data_named("mu"), None);
    let k = ConstraintSet::coulomb_dim(vec![0.5, 0.0], 2);
    assert_eq!(
        k.conic_pieces(4),
        vec![
            ConicPiece::Cone {
                b: 0,
                mu: 0.5,
                dim: 2
            },
            ConicPiece::Cone {
                b: 2,
                mu: 0.0,
                dim: 2
            }
        ]
    );
    assert_eq!(k.data(), vec![("mu", &[0.5, 0.0][..])]);
    assert_eq!(
        ConstraintSet::NonNegative.conic_pieces(2),
        vec![ConicPiece::HalfLine { j: 0 }, ConicPiece::HalfLine { j: 1 }]
    );
    assert!(ConstraintSet::NonNegative.data().is_empty());
    let fb = ConstraintSet::FrictionBox { mu: vec![0.3] };
    assert_eq!(
        fb.conic_pieces(3),
        vec![ConicPiece::FrictionPyramid { b: 0, mu: 0.3 }]
    );
}

#[test]
fn dispatch_answers_per_class() {
    let k = ConstraintSet::coulomb(vec![0.5, 0.25, 0.75]);
    assert_eq!(k.qp_class(), ProblemClass::Ccp);
    assert_eq!(k.block_size(), 3);
    assert_eq!(k.friction(), Some(&[0.5, 0.25, 0.75][..]));
    assert_eq!(k.parameters(), (&[0.5, 0.25, 0.75][..], &[][..]));
    assert_eq!(
        k.summary(),
        vec![
            ("cones", "3-D (d = 3)".to_string()),
            ("mu range", "[0.25, 0.75]".to_string())
        ]
    );
    assert_eq!(k.cone_dim(), Some(3));
    // 2-D cones: blocks of 2, n % 2, the JSON says the dimension, old JSON reads as 3-D
    let k2 = ConstraintSet::coulomb_dim(vec![0.5, 0.25], 2);
    assert_eq!((k2.block_size(), k2.cone_dim()), (2, Some(2)));
    assert!(k2.validate(4).is_ok());
    assert!(matches!(
        k2.validate(5),
        Err(ProblemError::NotMultipleOfConeDim { n: 5, dim: 2 })
    ));
    assert!(matches!(
        k2.validate(6),
        Err(ProblemError::SizeMismatch { expected: 3, .. })
    ));
    assert!(matches!(
        ConstraintSet::coulomb_dim(vec![0.5], 4).validate(4),
        Err(ProblemError::UnsupportedConeDim { dim: 4 })
    ));
    let mut x = [1.0, 3.0, -1.0, 0.0];
    k2.project(&mut x);
    assert_eq!(x, [2.0, 1.0, 0.0, 0.0]);
    let j2 = serde_json::to_string(&k2).unwrap();
    assert_eq!(j2, r#"{"type":"coulomb_cones","mu":[0.5,0.25],"dim":2}"#);
    assert_eq!(serde_json::from_str::<ConstraintSet>(&j2).unwrap(), k2);
    let j3 = serde_json::to_string(&k).unwrap();
    assert_eq!(j3, r#"{"type":"coulomb_cones","mu":[0.5,0.25,0.75]}"#);
    assert_eq!(serde_json::from_str::<ConstraintSet>(&j3).unwrap(), k);
    assert_eq!(k2.summary()[0], ("cones", "2-D (d = 2)".to_string()));
    let b = ConstraintSet::Box {
        lo: vec![-1.0, 0.0],
        hi: vec![1.0, f64::INFINITY],
    };
    assert_eq!(b.qp_class(), ProblemClass::BoxQp);
    assert_eq!(b.friction(), None);
    assert_eq!(
        b.parameters(),
        (&[-1.0, 0.0][..], &[1.0, f64::INFINITY][..])
    );
    assert!(b.summary().is_empty());
    let mut x = [3.0, -2.0];
    b.project(&mut x);
    assert_eq!(x, [1.0, 0.0]);
    // box projected gradient: at lo min(g, 0), free g
    let mut out = [0.0];
    b.projected_gradient_block(1, &[0.0], &[2.0], &mut out);
    assert_eq!(out, [0.0]);
    b.projected_gradient_block(0, &[0.5], &[2.0], &mut out);
    assert_eq!(out, [2.0]);
    let fb = ConstraintSet::FrictionBox { mu: vec![0.5] };
    assert_eq!((fb.qp_class(), fb.block_size()), (ProblemClass::Blcp, 3));
    assert!(!ProblemClass::Blcp.is_qp() && ProblemClass::Blcp.as_str() == "blcp");
    assert_eq!(fb.friction(), Some(&[0.5][..]));
    let mut x = [1.0, 0.8, -0.2];
    fb.project(&mut x);
    assert_eq!(x, [1.0, 0.5, -0.2]);
    assert!(fb.validate(4).is_err() && fb.validate(3).is_ok());
    let l = ConstraintSet::NonNegative;
    assert_eq!(l.qp_class(), ProblemClass::Lcp);
    let mut y = [-1.0, 2.0];
    l.project(&mut y);
    assert_eq!(y, [0.0, 2.0]);
    l.projected_gradient_block(0, &[0.0], &[3.0], &mut out);
    assert_eq!(out, [0.0]);
    l.projected_gradient_block(0, &[0.0], &[-3.0], &mut out);
    assert_eq!(out, [-3.0]);
}

/// `project_blocks(first, chunk)` is `project` on that part of the vector, bit for bit, for
/// every set (the chunked passes of APGD and SPG-QP project a chunk of whole blocks at a time),
/// and the default per-block form of `SetFamily` agrees with each family's override.
#[test]
fn project_blocks_is_project_on_a_chunk() {
    let n = 36;
    let mut s = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    };
    let x: Vec<f64> = (0..n).map(|_| next()).collect();
    let lo: Vec<f64> = (0..n).map(|i| -0.5 - (i % 3) as f64 * 0.25).collect();
    let hi: Vec<f64> = (0..n).map(|i| 0.3 + (i % 5) as f64 * 0.2).collect();
    let mu3: Vec<f64> = (0..n / 3).map(|c| 0.1 * c as f64).collect();
    let mu2: Vec<f64> = (0..n / 2).map(|c| 0.05 * c as f64).collect();
    let sets = [
        ConstraintSet::NonNegative,
        ConstraintSet::Box { lo, hi },
        ConstraintSet::coulomb(mu3.clone()),
        ConstraintSet::coulomb_dim(mu2, 2),
        ConstraintSet::FrictionBox { mu: mu3 },
    ];
    for k in &sets {
        let bs = k.block_size();
        let mut whole = x.clone();
        k.project(&mut whole);
        // chunks of 6 and 12 unknowns (whole blocks of 1, 2 and 3) covering the vector
        for (start, len) in [(0, 6), (6, 12), (18, 6), (24, 12)] {
            let mut part = x[start..start + len].to_vec();
            k.project_blocks(start / bs, &mut part);
            let mut per_block = x[start..start + len].to_vec();
            for (i, xb) in per_block.chunks_exact_mut(bs).enumerate() {
                k.project_block(start / bs + i, xb);
            }
            for i in 0..len {
                assert_eq!(
                    part[i].to_bits(),
                    whole[start + i].to_bits(),
                    "{:?} at {}",
                    k.qp_class(),
                    start + i
                );
                assert_eq!(per_block[i].to_bits(), whole[start + i].to_bits());
            }
        }
    }
}
