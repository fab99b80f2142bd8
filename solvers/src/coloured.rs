//! Gauss-Seidel sweeps colour after colour, the blocks of one colour in parallel (issue 34,
//! item 2), for `pgs`, `psor` and `nsgs` at scale.
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
//! storage order. The coloured sweep meets `c` and `d` in different colour passes, so it reads
//! every off-diagonal block twice. Read through the storage's transposed index (until git
//! 0712ed9), the lower blocks of a row lie scattered in memory. Instead, on the block storage,
//! [`ColouredSweep::new`] copies `N` once by whole block rows in colour order
//! ([`BlockSymMatrix::whole_rows`]: every block of a row, both triangles, colour 0's rows
//! first, then colour 1's, ...), so each colour pass streams its rows in storage order; a
//! row's terms are summed in the order of the transposed index's row, so the iterates are the
//! same bit for bit. The copy holds `2 stored - diagonal` blocks, about twice the storage's
//! bytes (203 MB beside the storage's 106 MB at 121,680 contacts, 1.72 GB beside 0.90 GB at
//! 998,560), predicted ([`BlockSymMatrix::whole_rows_bytes`]) and checked with the storage
//! against the memory limit before it is allocated; over the limit the rows are read
//! through the transposed index as before, the solver's message says so, and its counter
//! `colour_layout` is 0 (1 with the copy, whose bytes are `coloured_rows_bytes`). The CSC and
//! matrix-free storages are read as before. Building the copy is one parallel pass at `init`.
//!
//! Measured with `pgs` on the scale suite's pyramids (release build, 12 colours, solver time
//! including `init`; `cpbench run --instances FILE --operator block --solvers pgs --settings
//! '{"pgs": {"sweep": "coloured"}}' --tol 1e-300 --max-iter K --check-every K --jobs J`,
//! where `--jobs 2` gives the solve a pool of 2 threads and `--jobs 1`, the default, one;
//! the sequential sweep runs on one thread either way), on a 2-core machine, load average
//! 0.7-1.7 with the runs (2.0-2.3 for the sequential and transposed-index runs of 998,560
//! contacts on one thread: those two are indicative); medians of 3 at 121,680 contacts,
//! single runs at 998,560:
//!
//! | contacts | sweeps | threads | sequential | coloured, transposed index | coloured, whole rows |
//! | --- | --- | --- | --- | --- | --- |
//! | 121,680 | 100 | 1 | 0.86 s | 6.44 s | 1.65 s |
//! | 121,680 | 100 | 2 | | 3.18 s | 0.91 s |
//! | 998,560 | 20 | 1 | 1.91 s | 11.35 s | 4.54 s |
//! | 998,560 | 20 | 2 | | 6.44 s | 2.82 s |
//!
//! Per sweep (against runs of 10, resp. 2, sweeps), at 121,680 contacts: sequential 8.1 ms
//! (106 MB read, 13.1 GB/s); coloured through the transposed index 64 ms on one thread and
//! 31 ms on two; on whole rows 14.6 ms on one thread (203 MB, 13.9 GB/s) and 7.8 ms on two
//! (25.9 GB/s), after an `init` (colouring, transposed index, copy) of 0.20 s, resp. 0.13 s.
//! At 998,560: sequential 83 ms (0.90 GB, 10.8 GB/s); through the index 550 ms on one
//! thread; on whole rows 139 ms on one thread (1.72 GB, 12.3 GB/s) and 87 ms on two (19.7
//! GB/s), `init` 1.75 s, resp. 1.08 s, against 0.36 s without the copy. The iterates (the
//! residuals after 2, 10, 20 and 100 sweeps) are those of the transposed index to every
//! digit. So the whole rows make the coloured sweep 4 to 4.4 times faster; it still reads
//! twice the sequential sweep's bytes, and on this machine its two threads only match the
//! sequential sweep per sweep (7.8 against 8.1 ms, 87 against 83 ms), after an `init` worth
//! 13 to 16 sequential sweeps, and on other iterates. The sequential sweep therefore stays
//! the default ([`SweepOrder::Sequential`]) and [`SweepOrder::Auto`] keeps its threshold; the
//! coloured sweep can pay only where more cores bring more bandwidth than this machine has.
//! [`SweepOrder::Auto`] sweeps sequentially below [`COLOURED_MIN_BLOCKS`] blocks and by
//! colours from there on.

use crate::kernels::RowSource;
use cpbench_problems::colouring::Colouring;
use cpbench_problems::memory::human_bytes;
#[cfg(doc)]
use cpbench_problems::operator::BlockSymMatrix;
use cpbench_problems::operator::WholeRows;
use cpbench_problems::{Instance, RowState};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How a Gauss-Seidel solver orders its sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SweepOrder {
    /// One block after the other, in block order (or the solver's shuffled order): the
    /// default (module docs: on 2 cores the coloured sweep is at best as fast per sweep, after a
    /// dearer `init`).
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

/// The colouring of an instance, the buffer of one colour's new values and, on the block
/// storage, the whole-row copy of `N` in colour order (module docs).
#[derive(Clone, Debug, Default)]
pub struct ColouredSweep {
    colouring: Colouring,
    buf: Vec<f64>,
    bs: usize,
    /// `N` by whole block rows in the colouring's order ([`BlockSymMatrix::whole_rows`]);
    /// `None`: the rows come from the instance's storage ([`RowSource::gather`]).
    layout: Option<WholeRows>,
    /// Why the block storage's rows are read through its transposed index after all (the copy
    /// would not fit the memory budget), for the solve's message.
    note: Option<String>,
}

/// What the update of one block of a colour reads: the block, the current iterate and its
/// row of `N gamma + r` ([`ColourRow::gather`]).
pub struct ColourRow<'a> {
    c: usize,
    /// Position of the block in the colouring's order (its row in the whole-row copy).
    pos: usize,
    gamma: &'a [f64],
    st: &'a RowState,
    rows: &'a RowSource<'a>,
    layout: Option<&'a WholeRows>,
}

impl ColourRow<'_> {
    /// The block `c`.
    #[inline(always)]
    pub fn block(&self) -> usize {
        self.c
    }

    /// The current iterate (length `n`): the colours before this one already updated.
    #[inline(always)]
    pub fn gamma(&self) -> &[f64] {
        self.gamma
    }

    /// `out = (N gamma + r)_c` (length `bs`) at the current iterate: from the whole-row copy
    /// on the block storage ([`RowSource::gather_whole`]), else from the instance's storage
    /// ([`RowSource::gather`]); the same value bit for bit either way. Allocation free.
    #[inline(always)]
    pub fn gather(&self, out: &mut [f64]) {
        match self.layout {
            Some(w) => self.rows.gather_whole(w, self.pos, self.gamma, self.c, out),
            None => self.rows.gather(self.st, self.gamma, self.c, out),
        }
    }
}

impl ColouredSweep {
    /// The greedy colouring of `inst` ([`Colouring::greedy`]), a buffer for its largest
    /// colour (`bs` values per block) and, when `inst` holds `N` in the block storage with
    /// blocks of `bs` ([`Instance::block_matrix`]), its whole-row copy in colour order
    /// ([`BlockSymMatrix::whole_rows`]) unless the copy and the storage together
    /// ([`BlockSymMatrix::whole_rows_bytes`] plus [`BlockSymMatrix::bytes`], predicted before
    /// allocating) exceed `memory_limit` (bytes, [`crate::Problem::memory_limit`]; `None`: no
    /// budget): the rows are then read through the storage's transposed index as before, and
    /// [`ColouredSweep::note`] says why.
    pub fn new(inst: &Instance, bs: usize, memory_limit: Option<u64>) -> Self {
        let colouring = Colouring::greedy(inst);
        let buf = vec![0.0; colouring.largest() * bs];
        let (mut layout, mut note) = (None, None);
        if let Some(b) = inst.block_matrix().filter(|b| b.block_size() == bs) {
            let (copy, held) = (b.whole_rows_bytes(), b.bytes());
            match memory_limit {
                Some(limit) if copy.saturating_add(held) > limit => {
                    note = Some(format!(
                        "sweep = coloured: the whole-row copy of N needs {} besides the block \
                         storage's {}, over the memory limit {}; rows read through the \
                         transposed index (slower)",
                        human_bytes(copy),
                        human_bytes(held),
                        human_bytes(limit)
                    ));
                }
                _ => match b.whole_rows(colouring.order()) {
                    Ok(w) => layout = Some(w),
                    Err(e) => {
                        note = Some(format!(
                            "sweep = coloured: no whole-row copy of N ({e}); rows read through \
                             the transposed index (slower)"
                        ))
                    }
                },
            }
        }
        Self {
            colouring,
            buf,
            bs,
            layout,
            note,
        }
    }

    /// Number of colours.
    pub fn colours(&self) -> usize {
        self.colouring.colours()
    }

    /// Bytes of the whole-row copy of `N` (0 without one).
    pub fn layout_bytes(&self) -> u64 {
        self.layout.as_ref().map_or(0, WholeRows::bytes)
    }

    /// Why the block storage is swept without its whole-row copy (the memory budget), `None`
    /// otherwise (the copy is used, or the storage is CSC or matrix-free).
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The sweep's counters for a solver's trace: `colours`; `colour_layout`, 1 when the rows
    /// come from the whole-row copy, 0 otherwise; `coloured_rows_bytes`, the copy's bytes.
    pub fn counters(&self) -> [(&'static str, f64); 3] {
        [
            ("colours", self.colours() as f64),
            ("colour_layout", f64::from(u8::from(self.layout.is_some()))),
            ("coloured_rows_bytes", self.layout_bytes() as f64),
        ]
    }

    /// One sweep over `gamma` (length `bs` times the blocks): for each colour,
    /// `update(row, out)` writes the new value of block `row.block()` (length `bs`) from the
    /// current iterate and its row ([`ColourRow::gather`]) and returns a count (local
    /// iterations); the blocks of the colour run in parallel, in tasks of [`TASK_BLOCKS`]
    /// blocks. Then each block is written back in block order and, where `rows` tracks
    /// changes (the matrix-free storage), its change goes to the row state `st`
    /// ([`RowSource::changed`]). Returns the sum of the counts. Allocation free.
    pub fn sweep<U>(
        &mut self,
        gamma: &mut [f64],
        rows: &RowSource<'_>,
        st: &mut RowState,
        update: U,
    ) -> u64
    where
        U: Fn(&ColourRow<'_>, &mut [f64]) -> u64 + Sync,
    {
        let bs = self.bs;
        let layout = self.layout.as_ref();
        let tracks = rows.tracks_changes();
        let mut total = 0;
        for k in 0..self.colouring.colours() {
            let members = self.colouring.members(k);
            let first = self.colouring.offset(k);
            let buf = &mut self.buf[..members.len() * bs];
            let (g, s) = (&*gamma, &*st);
            total += buf
                .par_chunks_mut(TASK_BLOCKS * bs)
                .zip(members.par_chunks(TASK_BLOCKS))
                .enumerate()
                .map(|(t, (out, blocks))| {
                    let mut count = 0;
                    let pos = first + t * TASK_BLOCKS;
                    for (i, (o, &c)) in out.chunks_exact_mut(bs).zip(blocks).enumerate() {
                        let row = ColourRow {
                            c: c as usize,
                            pos: pos + i,
                            gamma: g,
                            st: s,
                            rows,
                            layout,
                        };
                        count += update(&row, o);
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
                if tracks {
                    rows.changed(c, &delta[..bs], st);
                }
            }
        }
        total
    }
}
