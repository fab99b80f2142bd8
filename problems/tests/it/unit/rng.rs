//! The tests of `cpbench_problems::rng` (until now its `#[cfg(test)]` module in
//! `problems/src/rng.rs`).

use cpbench_problems::rng::*;

#[test]
fn reference_values_and_range() {
    // First outputs of splitmix64.c seeded with 1234567.
    let mut r = SplitMix64::new(1234567);
    assert_eq!(r.next_u64(), 6457827717110365317);
    assert_eq!(r.next_u64(), 3203168211198807973);
    let mut r = SplitMix64::new(7);
    for _ in 0..1000 {
        let x = r.uniform(-0.1, 0.1);
        assert!((-0.1..0.1).contains(&x));
        assert!(r.index_to(4) <= 4);
    }
}

#[test]
fn uniform_is_the_53_bit_quotient() {
    // multiplying by 2^-53 and dividing by 2^53 give the same bits
    let (mut a, mut b) = (SplitMix64::new(99), SplitMix64::new(99));
    for _ in 0..1000 {
        let want = (b.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        assert_eq!(a.next_f64().to_bits(), want.to_bits());
    }
    let mut r = SplitMix64::new(3);
    let z = r.normal();
    assert!(z.is_finite() && z.abs() < 10.0, "{z}");
}
