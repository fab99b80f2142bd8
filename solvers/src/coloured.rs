//! Gauss-Seidel sweeps colour after colour, the blocks of one colour in parallel (issue 34,
//! item 2), for `pgs` and `nsgs` at scale.
//!
//! The blocks are grouped by the greedy colouring of `N`'s block graph
//! ([`cpbench_problems::colouring::Colouring`]): blocks of one colour are not coupled, so each
//! one's update reads only blocks of other colours. A sweep takes the colours in order; for
//! each it (1) computes the new value of every block of the colour from the current iterate,
//! in parallel on the current rayon pool (tasks of [`TASK_BLOCKS`] blocks, written into a
//! buffer), then (2) writes them back in block order and reports each change to the row state
//! (the matrix-free storage's velocity `v += M^-1 D_c delta`, sequential). Step (1) reads only
//! values that step (2) of an earlier colour wrote, so the sweep is the same, to the bit, for
//! any number of threads; it is a Gauss-Seidel sweep in colour order, not in block order, so
//! its iterates differ from the sequential sweep's (the same fixed points, another path).
//! Nothing is allocated per sweep (the buffer holds the largest colour).
//!
//! **Cost.** On the symmetric block storage every off-diagonal block `N_cd` is needed by the
//! update of `c` and by that of `d`. The sequential sweep reads it from memory once: in block
//! order it accumulates each row's lower terms from the stored rows already visited
//! ([`cpbench_problems::Instance::begin_ordered_sweep`]), so it streams the stored blocks in
//! storage order. The coloured sweep meets `c` and `d` in different colour passes and reads
//! the lower blocks through the transposed index, scattered in memory, so it reads each block
//! from memory twice and half of them out of order. Measured on the scale suite's pyramids
//! (release build, 2-core machine, quiet (load below 1.5 with the runs), 12 colours, medians
//! of 3): 121,680 contacts, 100 sweeps, 0.83 s sequential against 5.86 s coloured on 2
//! threads; 998,560 contacts, 20 sweeps, 1.67 s against 11.3 s. The sequential sweep is
//! therefore the default ([`SweepOrder::Sequential`]); the coloured one could pay only with
//! many more cores than the machine the suite was measured on has.
//! [`SweepOrder::Auto`] sweeps sequentially below [`COLOURED_MIN_BLOCKS`] blocks and by
//! colours from there on.

use cpbench_problems::colouring::Colouring;
use cpbench_problems::Instance;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How a Gauss-Seidel solver orders its sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SweepOrder {
    /// One block after the other, in block order (or the solver's shuffled order): the
    /// default (module docs: the coloured sweep is slower on 2 cores).
    #[default]
    Sequential,
    /// Colour after colour, the blocks of a colour in parallel (module docs of
    /// [`crate::coloured`]): deterministic for any thread count, other iterates than
    /// `sequential`.
    Coloured,
    /// `coloured` from [`COLOURED_MIN_BLOCKS`] blocks on, `sequential` below.
    Auto,
}

impl SweepOrder {
    /// Whether a problem of `blocks` blocks is swept by colours.
    pub fn is_coloured(self, blocks: usize) -> bool {
        match self {
            SweepOrder::Sequential => false,
            SweepOrder::Coloured => true,
            SweepOrder::Auto => blocks >= COLOURED_MIN_BLOCKS,
        }
    }
}

/// The block count from which [`SweepOrder::Auto`] sweeps by colours: 50,000 (above every
/// instance of the default suite; the scale suite's pyramids of 1e5 and 1e6 contacts).
pub const COLOURED_MIN_BLOCKS: usize = 50_000;

/// Blocks per parallel task of a colour.
pub const TASK_BLOCKS: usize = 256;

/// The colouring of an instance and the buffer of one colour's new values.
#[derive(Clone, Debug, Default)]
pub struct ColouredSweep {
    colouring: Colouring,
    buf: Vec<f64>,
    bs: usize,
}

impl ColouredSweep {
    /// The greedy colouring of `inst` ([`Colouring::greedy`]) and a buffer for its largest
    /// colour (`bs` values per block).
    pub fn new(inst: &Instance, bs: usize) -> Self {
        let colouring = Colouring::greedy(inst);
        let buf = vec![0.0; colouring.largest() * bs];
        Self { colouring, buf, bs }
    }

    /// Number of colours.
    pub fn colours(&self) -> usize {
        self.colouring.colours()
    }

    /// One sweep over `gamma` (length `bs` times the blocks): for each colour,
    /// `update(c, gamma, state, out)` writes the new value of block `c` (length `bs`) from the
    /// current `gamma` and returns a count (local iterations); the blocks of the colour run in
    /// parallel. Then each block is written back in block order and
    /// `changed(c, delta, state)` gets its change. Returns the sum of the counts.
    pub fn sweep<S, U, C>(
        &mut self,
        gamma: &mut [f64],
        state: &mut S,
        update: U,
        mut changed: C,
    ) -> u64
    where
        S: Sync,
        U: Fn(usize, &[f64], &S, &mut [f64]) -> u64 + Sync,
        C: FnMut(usize, &[f64], &mut S),
    {
        let bs = self.bs;
        let mut total = 0;
        for k in 0..self.colouring.colours() {
            let members = self.colouring.members(k);
            let buf = &mut self.buf[..members.len() * bs];
            let (g, st) = (&*gamma, &*state);
            total += buf
                .par_chunks_mut(TASK_BLOCKS * bs)
                .zip(members.par_chunks(TASK_BLOCKS))
                .map(|(out, blocks)| {
                    let mut count = 0;
                    for (o, &c) in out.chunks_exact_mut(bs).zip(blocks) {
                        count += update(c as usize, g, st, o);
                    }
                    count
                })
                .sum::<u64>();
            let mut delta = [0.0f64; 3];
            for (new, &c) in buf.chunks_exact(bs).zip(members) {
                let c = c as usize;
                let x = &mut gamma[bs * c..bs * c + bs];
                for i in 0..bs {
                    delta[i] = new[i] - x[i];
                    x[i] = new[i];
                }
                changed(c, &delta[..bs], state);
            }
        }
        total
    }
}
