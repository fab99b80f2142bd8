//! Memory bandwidth of the machine: a STREAM-style triad (McCalpin, "Memory bandwidth and
//! machine balance in current high performance computers", IEEE TCCA Newsletter, 1995),
//! `a[i] = b[i] + s * c[i]`, over three arrays much larger than any cache, in parallel over
//! the threads of the current rayon pool. The `N`-product of a large instance streams its
//! operator from memory, so `operator_bytes / bandwidth` is the least time one product can
//! take (the line drawn in the report's scale figure).
//!
//! Bytes are counted as STREAM counts them: `3 x 8` per element (read `b`, read `c`, write
//! `a`). The write-allocate read of `a` that a cache without streaming stores performs is
//! *not* counted, so on such machines the figure is about 3/4 of the traffic the memory bus
//! really carries, and a bandwidth-bound kernel can appear to beat it by up to 4/3.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::Instant;

/// Elements of each array of [`triad_bandwidth`]: `8 Mi` doubles = 64 MiB per array, 192 MiB
/// in all (larger than the last-level cache of current server CPUs, 32-256 MiB split across
/// chiplets).
pub const TRIAD_LEN: usize = 8 << 20;

/// Timed repetitions of [`triad_bandwidth`]; the best one counts.
pub const TRIAD_REPEATS: usize = 5;

/// A triad measurement ([`triad`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Triad {
    /// Best bandwidth over the repetitions, GB/s (1e9 bytes per second, `3 x 8` bytes per
    /// element; write-allocate traffic not counted).
    pub gbs: f64,
    /// Threads of the rayon pool the kernel ran on.
    pub threads: usize,
    /// Elements of each of the three arrays.
    pub len: usize,
    /// Timed repetitions.
    pub repeats: usize,
}

/// Triad bandwidth in GB/s with the default sizes ([`TRIAD_LEN`], [`TRIAD_REPEATS`]) on the
/// current rayon pool (call it inside `pool.install` to measure another pool). Takes about
/// 0.1-0.5 s and 192 MiB of memory for that time. Always positive and finite.
pub fn triad_bandwidth() -> f64 {
    triad(TRIAD_LEN, TRIAD_REPEATS).gbs
}

/// The triad `a[i] = b[i] + s c[i]` over arrays of `len` doubles (at least 1), `repeats`
/// timed passes (at least 1) after one untimed pass that touches every page, in parallel
/// over the current rayon pool in chunks of 64 Ki elements; the best pass counts. The
/// arrays are allocated and freed here. Never fails; a pass too fast for the clock is
/// counted as 1 ns.
pub fn triad(len: usize, repeats: usize) -> Triad {
    let len = len.max(1);
    let repeats = repeats.max(1);
    const CHUNK: usize = 1 << 16;
    // first touch in parallel, so that pages land near the threads that use them
    let mut a = vec![0.0f64; len];
    let mut b = vec![0.0f64; len];
    let mut c = vec![0.0f64; len];
    b.par_chunks_mut(CHUNK)
        .zip(c.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, (bs, cs))| {
            for (i, (x, y)) in bs.iter_mut().zip(cs.iter_mut()).enumerate() {
                *x = 1.0 + ((k * CHUNK + i) % 7) as f64;
                *y = 0.5;
            }
        });
    let pass = |a: &mut [f64], s: f64| {
        a.par_chunks_mut(CHUNK)
            .zip(b.par_chunks(CHUNK))
            .zip(c.par_chunks(CHUNK))
            .for_each(|((aa, bb), cc)| {
                for ((x, &y), &z) in aa.iter_mut().zip(bb).zip(cc) {
                    *x = y + s * z;
                }
            });
    };
    pass(&mut a, 3.0);
    let mut best = f64::INFINITY;
    for k in 0..repeats {
        let t = Instant::now();
        pass(&mut a, black_box(3.0 + k as f64));
        best = best.min(t.elapsed().as_secs_f64().max(1e-9));
        black_box(&a);
    }
    Triad {
        gbs: (3 * 8 * len) as f64 / best / 1e9,
        threads: rayon::current_num_threads(),
        len,
        repeats,
    }
}
