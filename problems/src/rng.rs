//! The one seeded random number generator of cpbench: SplitMix64 (Steele, Lea & Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014; constants of Vigna's reference
//! `splitmix64.c`). Tiny, explicitly seeded and platform independent, so that every generated
//! instance, scene and shuffled sweep order is reproducible bit for bit from its seed. Used by
//! the generators (random box QPs, granular scenes) and by solvers that draw (NSGS' shuffled
//! contact order). Not cryptographic; period `2^64`.

use std::f64::consts::PI;

/// SplitMix64 state (64 bits).
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Generator seeded with `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Standard normal by Box-Muller: two uniform draws give one value (the sine partner is
    /// discarded).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
    }

    /// Uniform index in `0..=i` by reduction modulo `i + 1` (the slight modulo bias is part of
    /// the reproducible sequence; fine for shuffling).
    #[inline]
    pub fn index_to(&mut self, i: usize) -> usize {
        (self.next_u64() % (i as u64 + 1)) as usize
    }
}
