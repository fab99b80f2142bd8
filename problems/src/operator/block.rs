//! Symmetric block-sparse storage of `N`: the upper triangle by block rows, `bs x bs` blocks
//! (3 for 3-D Coulomb cones, 2 for 2-D (planar) cones, 1 for LCP and box QP) stored row-major,
//! `u32` block-column indices ([`BLOCK_SIZES`]).
//!
//! # Bytes
//! A 3x3 block costs 72 bytes of values and 4 of index; only blocks `(I, J)` with `J >= I` are
//! stored, so a product reads about `76 (nnz(N) / 9 + n / 3) / 2` bytes instead of the
//! `16 nnz(N)` of full CSC storage with `usize` indices (pyramid-40: about 100 MB instead of
//! 380 MB). A 2x2 block costs 32 + 4 bytes: about `36 (nnz(N) / 4 + n / 2) / 2` bytes, some
//! 4.5 bytes per entry of `N` (3.6 times less than CSC when the blocks are full).
//!
//! # Product
//! `y = N x` visits every stored block once: `y_I += B_IJ x_J` (gather) and, off the diagonal,
//! `y_J += B_IJ^T x_I` (scatter). The block rows are cut into one chunk per thread of the rayon
//! pool (balanced by stored blocks, fixed when the matrix is built); a chunk writes its own rows
//! of `y` directly and its scatters below its last row into a private spill buffer that covers
//! only the rows its blocks reach (known from the structure); the spills are then added. The
//! summation order depends on the chunk count only, so results are deterministic for a given
//! number of threads. Buffers come from a pool kept in the matrix: no allocation per product
//! after the first.
//!
//! # Row access
//! Gauss-Seidel-type solvers need `(N x)_I` for one block row with the current `x`:
//! [`BlockSymMatrix::block_row_product`] adds the stored row (`J >= I`) and the blocks
//! `B_KI^T x_K` of the rows `K < I` found through a transposed index of the structure (built
//! once on first use: 8 bytes per stored off-diagonal block, no second copy of the values).
//! The lower terms come first, in increasing `K`, then the stored row.
//!
//! A sweep that visits the block rows in increasing order can skip the transposed index (whose
//! blocks lie scattered in memory): after row `K` is updated, [`BlockSymMatrix::scatter_row`]
//! adds `B_KJ^T x_K` to an accumulator of every later row `J` from the stored row `K`, still in
//! cache, and [`BlockSymMatrix::block_row_product_from`] starts row `I` from its accumulator.
//! Each stored block is then read from memory once per sweep, in storage order, and the terms
//! are added in the same order as by [`BlockSymMatrix::block_row_product`], so both give the
//! same value bit for bit ([`crate::Instance::begin_ordered_sweep`]).
//!
//! A sweep in another order (the colours of a coloured Gauss-Seidel sweep) cannot accumulate
//! the lower terms that way. [`BlockSymMatrix::whole_rows`] copies `N` once by whole block rows
//! (both triangles) in the sweep's row order ([`WholeRows`]), so each row is read from one
//! place and a colour's rows lie one after the other; [`WholeRows::row_product`] sums in the
//! order of [`BlockSymMatrix::block_row_product`] (the same value bit for bit). It costs about
//! the storage's bytes again ([`BlockSymMatrix::whole_rows_bytes`]).
//!
//! # Exactness
//! Built from a CSC matrix, each block remembers which of its entries were stored (a `bs^2`-bit
//! mask), so [`BlockSymMatrix::to_csc`] gives back the same structure and values bit for bit,
//! and the content hash of an instance does not depend on its storage.

use crate::error::{ProblemError, Result};
use crate::linalg::CscMatrix;
use bytemuck::Pod;
use rayon::prelude::*;
use std::sync::{Mutex, OnceLock};

/// Stored blocks above which the block storage pays over CSC in the automatic choice
/// ([`crate::Instance`]), measured with `benches/scale.rs`: below it a product takes well under
/// a millisecond either way and CSC keeps earlier results bit-identical.
pub const BLOCK_MIN_NNZ: usize = 2_000_000;

/// Stored blocks per chunk below which a product runs serially.
const PAR_MIN_BLOCKS_PER_CHUNK: usize = 20_000;

/// One chunk of block rows for the parallel product.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// First block row.
    start: usize,
    /// One past the last block row.
    end: usize,
    /// One past the largest block column its blocks reach (`>= end`).
    reach: usize,
}

/// Transposed structure index: for block row `J`, the stored blocks `(K, J)` with `K < J`.
#[derive(Clone, Debug)]
struct LowerIndex {
    ptr: Vec<usize>,
    /// `(K, p)`: row of the block and its position in the block arrays.
    entries: Vec<(u32, u32)>,
}

/// Symmetric block-sparse matrix, upper triangle stored (see the module documentation).
#[derive(Clone, Debug)]
pub struct BlockSymMatrix {
    bs: usize,
    nb: usize,
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    vals: Vec<f64>,
    /// Stored entries of each block (bit `a bs + b`), `None` when every block is full.
    mask: Option<Vec<u16>>,
    chunks: Vec<Chunk>,
    pool: SpillPool,
    lower: OnceLock<LowerIndex>,
}

/// The product's spill buffers, kept between products; a clone starts with an empty pool.
#[derive(Debug, Default)]
struct SpillPool(Mutex<Vec<Vec<f64>>>);

impl Clone for SpillPool {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl SpillPool {
    /// A pooled buffer (empty when none is left or the lock is poisoned).
    fn take(&self) -> Vec<f64> {
        self.0
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default()
    }

    /// Give a buffer back to the pool.
    fn put(&self, buf: Vec<f64>) {
        if let Ok(mut p) = self.0.lock() {
            p.push(buf);
        }
    }
}

impl BlockSymMatrix {
    /// Build from the upper triangle by block rows.
    ///
    /// `bs` is 1, 2 or 3 ([`BLOCK_SIZES`]); `nb` block rows (`n = bs nb`); `row_ptr` (length `nb + 1`, starting at 0,
    /// non-decreasing) delimits the blocks of each row; `col[p] >= row` are block columns,
    /// strictly increasing within a row; `vals` holds `bs * bs` numbers per block, row-major
    /// (`vals[p bs^2 + a bs + b] = N[bs I + a, bs J + b]`). The diagonal blocks must be
    /// symmetric (they are used as stored for both triangles). Errors:
    /// [`ProblemError::UnsupportedBlockSize`] (`bs`), [`ProblemError::SizeMismatch`] (lengths,
    /// more than `u32::MAX` blocks or rows),
    /// [`ProblemError::IndexOutOfRange`] (a column below the diagonal, out of range or not
    /// increasing), [`ProblemError::NonFinite`].
    pub fn from_upper_parts(
        bs: usize,
        nb: usize,
        row_ptr: Vec<usize>,
        col: Vec<u32>,
        vals: Vec<f64>,
    ) -> Result<Self> {
        let mismatch = |what: &str, expected: usize, found: usize| ProblemError::SizeMismatch {
            what: what.into(),
            expected,
            found,
        };
        check_block_size(bs)?;
        if nb > u32::MAX as usize || col.len() > u32::MAX as usize {
            return Err(mismatch(
                "blocks (u32 indices)",
                u32::MAX as usize,
                col.len().max(nb),
            ));
        }
        if row_ptr.len() != nb + 1 {
            return Err(mismatch("block row pointers", nb + 1, row_ptr.len()));
        }
        if row_ptr[0] != 0 || row_ptr[nb] != col.len() {
            return Err(mismatch("blocks (row_ptr[nb])", col.len(), row_ptr[nb]));
        }
        if vals.len() != col.len() * bs * bs {
            return Err(mismatch("block values", col.len() * bs * bs, vals.len()));
        }
        for i in 0..nb {
            let (a, b) = (row_ptr[i], row_ptr[i + 1]);
            if b < a {
                return Err(mismatch("block row pointers (non-decreasing)", a, b));
            }
            let mut prev: Option<u32> = None;
            for &j in &col[a..b] {
                let bad = (j as usize) < i || j as usize >= nb || prev.is_some_and(|p| j <= p);
                if bad {
                    return Err(ProblemError::IndexOutOfRange {
                        what: "block columns (upper triangle, increasing within a row)".into(),
                        row: i,
                        col: j as usize,
                        nrows: nb,
                        ncols: nb,
                    });
                }
                prev = Some(j);
            }
        }
        if let Some(p) = vals.iter().position(|v| !v.is_finite()) {
            return Err(ProblemError::NonFinite {
                what: "N (block values)".into(),
                position: format!("block {}, entry {}", p / (bs * bs), p % (bs * bs)),
                value: vals[p],
            });
        }
        let chunks = plan(&row_ptr, &col, rayon::current_num_threads());
        Ok(Self {
            bs,
            nb,
            row_ptr,
            col,
            vals,
            mask: None,
            chunks,
            pool: SpillPool::default(),
            lower: OnceLock::new(),
        })
    }

    /// Convert a symmetric CSC matrix (full storage, as held by an instance) with block size
    /// `bs`. Reads the lower triangle of `N` (by symmetry the transposed upper one); a block is
    /// stored when any of its entries is. Errors: [`ProblemError::NotSquare`],
    /// [`ProblemError::UnsupportedBlockSize`], [`ProblemError::NotMultipleOfThree`] for `bs = 3`
    /// and `n` not a multiple of 3, [`ProblemError::NotMultipleOfConeDim`] for `bs = 2` and `n`
    /// odd, and those of
    /// [`BlockSymMatrix::from_upper_parts`].
    pub fn from_csc(m: &CscMatrix, bs: usize) -> Result<Self> {
        if m.nrows() != m.ncols() {
            return Err(ProblemError::NotSquare {
                nrows: m.nrows(),
                ncols: m.ncols(),
            });
        }
        check_block_size(bs)?;
        let n = m.nrows();
        if n % bs != 0 {
            return Err(if bs == 3 {
                ProblemError::NotMultipleOfThree { n }
            } else {
                ProblemError::NotMultipleOfConeDim { n, dim: bs }
            });
        }
        let nb = n / bs;
        let (cp, ri, va) = (m.col_ptr(), m.row_idx(), m.values());
        // structure: the block rows J >= I met in the columns of block column I (= block row
        // I of the upper triangle by symmetry), sorted
        let mut mark = vec![u32::MAX; nb];
        let mut row_ptr = Vec::with_capacity(nb + 1);
        let mut col: Vec<u32> = Vec::new();
        row_ptr.push(0);
        for bi in 0..nb {
            let start = col.len();
            for c in bs * bi..bs * bi + bs {
                for &r in &ri[cp[c]..cp[c + 1]] {
                    let bj = r / bs;
                    if bj >= bi && mark[bj] != bi as u32 {
                        mark[bj] = bi as u32;
                        col.push(bj as u32);
                    }
                }
            }
            // columns are sorted, so the merged list of (at most bs) sorted lists needs a sort
            if bs > 1 {
                col[start..].sort_unstable();
            }
            row_ptr.push(col.len());
        }
        // values: block (I, J), entry (a, b) = N[bs I + a, bs J + b] = N[bs J + b, bs I + a],
        // found in column bs I + a at row bs J + b
        let bb = bs * bs;
        let mut vals = vec![0.0; col.len() * bb];
        let mut mask = vec![0u16; col.len()];
        let mut pos = vec![0usize; nb];
        for bi in 0..nb {
            for p in row_ptr[bi]..row_ptr[bi + 1] {
                pos[col[p] as usize] = p;
            }
            for a in 0..bs {
                let c = bs * bi + a;
                for (&r, &v) in ri[cp[c]..cp[c + 1]].iter().zip(&va[cp[c]..cp[c + 1]]) {
                    let bj = r / bs;
                    if bj >= bi {
                        let b = r % bs;
                        let p = pos[bj];
                        vals[p * bb + a * bs + b] = v;
                        mask[p] |= 1 << (a * bs + b);
                    }
                }
            }
        }
        let full = (1u16 << bb) - 1;
        // a diagonal block keeps only the stored lower triangle's mirror: complete it from
        // the upper entries (read from the lower ones by symmetry) so it is symmetric
        for bi in 0..nb {
            let p = row_ptr[bi];
            if p < row_ptr[bi + 1] && col[p] as usize == bi {
                let blk = &mut vals[p * bb..(p + 1) * bb];
                let mut mk = mask[p];
                for a in 0..bs {
                    for b in 0..a {
                        // (a, b) below the diagonal of the block was read from column
                        // bs I + a, row bs I + b; mirror it to (b, a)
                        if mk & (1 << (a * bs + b)) != 0 {
                            blk[b * bs + a] = blk[a * bs + b];
                            mk |= 1 << (b * bs + a);
                        } else if mk & (1 << (b * bs + a)) != 0 {
                            blk[a * bs + b] = blk[b * bs + a];
                            mk |= 1 << (a * bs + b);
                        }
                    }
                }
                mask[p] = mk;
            }
        }
        let mut out = Self::from_upper_parts(bs, nb, row_ptr, col, vals)?;
        if mask.iter().any(|&k| k != full) {
            out.mask = Some(mask);
        }
        Ok(out)
    }

    /// Block size (1, 2 or 3).
    pub fn block_size(&self) -> usize {
        self.bs
    }

    /// Dimension `n` of `N`.
    pub fn n(&self) -> usize {
        self.bs * self.nb
    }

    /// Number of block rows (`n / bs`).
    pub fn n_block_rows(&self) -> usize {
        self.nb
    }

    /// Number of entries of the full matrix `N` (both triangles) as CSC would store them:
    /// `bs^2 (2 stored - diagonal blocks)` for full blocks, exact with the stored masks.
    pub fn full_nnz(&self) -> usize {
        let mut total = 0usize;
        for i in 0..self.nb {
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                let k = self.mask_of(p).count_ones() as usize;
                total += if self.col[p] as usize == i { k } else { 2 * k };
            }
        }
        total
    }

    /// Take the matrix apart into `(row_ptr, col, vals)` as given to
    /// [`BlockSymMatrix::from_upper_parts`] (e.g. to reuse their storage for the next matrix;
    /// the per-entry masks of a matrix built by [`BlockSymMatrix::from_csc`] are dropped).
    pub fn into_upper_parts(self) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
        (self.row_ptr, self.col, self.vals)
    }

    /// Bytes one product reads from the storage: values, block columns and row pointers.
    pub fn bytes(&self) -> u64 {
        (self.vals.len() * 8 + self.col.len() * 4 + self.row_ptr.len() * 8) as u64
    }

    /// Block row pointers (length `nb + 1`).
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// Block columns of the stored blocks (`>=` their row).
    pub fn cols(&self) -> &[u32] {
        &self.col
    }

    /// Block values, `bs^2` per block, row-major.
    pub fn values(&self) -> &[f64] {
        &self.vals
    }

    /// True when the matrix was built by [`BlockSymMatrix::from_csc`] from a matrix that
    /// leaves some entries of its stored blocks out: each block then remembers which entries
    /// were stored (a `bs^2`-bit mask, module documentation), so that [`BlockSymMatrix::to_csc`] and
    /// [`BlockSymMatrix::full_nnz`] give back that pattern. False when every block is full
    /// (always for `bs = 1`).
    pub fn has_entry_masks(&self) -> bool {
        self.mask.is_some()
    }

    /// Cut the block rows for the parallel product at `bounds` (block-row indices, `0` first,
    /// `n_block_rows()` last, strictly increasing: one chunk per consecutive pair) instead of
    /// the cut made at construction (one chunk per thread of the rayon pool, a single chunk for
    /// a matrix too small to pay for threads). The product is the same up to the summation
    /// order, which depends on the chunks only; a matrix that small can so run, and be
    /// measured or checked, on the parallel path.
    ///
    /// # Panics
    /// When `bounds` are not such a cut.
    pub fn with_chunk_bounds(mut self, bounds: &[usize]) -> Self {
        assert!(
            bounds.len() >= 2
                && bounds[0] == 0
                && bounds[bounds.len() - 1] == self.nb
                && bounds.windows(2).all(|w| w[0] < w[1]),
            "chunk bounds {bounds:?} must run from 0 to the {} block rows, strictly increasing",
            self.nb
        );
        let (rp, c) = (&self.row_ptr, &self.col);
        self.chunks = bounds
            .windows(2)
            .map(|w| Chunk {
                start: w[0],
                end: w[1],
                reach: c[rp[w[0]]..rp[w[1]]]
                    .iter()
                    .map(|&j| j as usize + 1)
                    .max()
                    .unwrap_or(w[1])
                    .max(w[1]),
            })
            .collect();
        self
    }

    fn mask_of(&self, p: usize) -> u16 {
        self.mask
            .as_ref()
            .map_or((1u16 << (self.bs * self.bs)) - 1, |m| m[p])
    }

    /// Diagonal block `I` (row-major, `bs^2` numbers; zero when not stored).
    pub fn diag_block(&self, i: usize) -> [f64; 9] {
        let mut out = [0.0; 9];
        let p = self.row_ptr[i];
        let bb = self.bs * self.bs;
        if p < self.row_ptr[i + 1] && self.col[p] as usize == i {
            out[..bb].copy_from_slice(&self.vals[p * bb..(p + 1) * bb]);
        }
        out
    }

    /// `y = N x`. Shapes: `x`, `y` of length `n`. Allocation free after the first call (spill
    /// buffers are pooled); parallel over the chunks fixed at construction.
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.n());
        assert_eq!(y.len(), self.n());
        if self.chunks.len() <= 1 {
            let all = Chunk {
                start: 0,
                end: self.nb,
                reach: self.nb,
            };
            match self.bs {
                3 => self.chunk_product::<3>(all, x, y, &mut []),
                2 => self.chunk_product::<2>(all, x, y, &mut []),
                _ => self.chunk_product::<1>(all, x, y, &mut []),
            }
            return;
        }
        let spill_len: usize = self
            .chunks
            .iter()
            .map(|c| self.bs * (c.reach - c.end))
            .sum();
        let mut spill = self.pool.take();
        spill.resize(spill_len, 0.0);
        match self.bs {
            3 => self.par_product::<3>(&self.chunks, x, y, &mut spill),
            2 => self.par_product::<2>(&self.chunks, x, y, &mut spill),
            _ => self.par_product::<1>(&self.chunks, x, y, &mut spill),
        }
        // add the spills, in chunk order, over disjoint pieces of y
        let bs = self.bs;
        let chunks = &self.chunks;
        let spill_ref = &spill;
        y.par_chunks_mut(bs * 4096)
            .enumerate()
            .for_each(|(piece, yp)| {
                let lo = piece * 4096 * bs;
                let hi = lo + yp.len();
                let mut off = 0;
                for c in chunks {
                    let (s0, s1) = (bs * c.end, bs * c.reach);
                    let (a, b) = (s0.max(lo), s1.min(hi));
                    if a < b {
                        let src = &spill_ref[off + a - s0..off + b - s0];
                        for (d, s) in yp[a - lo..b - lo].iter_mut().zip(src) {
                            *d += s;
                        }
                    }
                    off += s1 - s0;
                }
            });
        self.pool.put(spill);
    }

    /// Recursive split of the chunks over `rayon::join`: `y` and `spill` are cut at chunk
    /// boundaries, so every task owns its pieces (no allocation, no atomics).
    fn par_product<const BS: usize>(
        &self,
        chunks: &[Chunk],
        x: &[f64],
        y: &mut [f64],
        spill: &mut [f64],
    ) where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        if chunks.len() == 1 {
            self.chunk_product::<BS>(chunks[0], x, y, spill);
            return;
        }
        let mid = chunks.len() / 2;
        let (left, right) = chunks.split_at(mid);
        let y_cut = BS * (right[0].start - chunks[0].start);
        let s_cut: usize = left.iter().map(|c| BS * (c.reach - c.end)).sum();
        let (y0, y1) = y.split_at_mut(y_cut);
        let (s0, s1) = spill.split_at_mut(s_cut);
        rayon::join(
            || self.par_product::<BS>(left, x, y0, s0),
            || self.par_product::<BS>(right, x, y1, s1),
        );
    }

    /// Product of the block rows of one chunk: `y` holds its rows (`start..end`), `spill` the
    /// rows `end..reach`; both are overwritten. On fixed-size arrays (`BS` 1, 2 or 3), so the
    /// inner products compile to straight-line code without bounds checks; each block's row
    /// `a` is summed as `b_a0 x_0 + b_a1 x_1 + ...` (left to right) before it is added, the
    /// order the 3x3 and 1x1 products always had.
    #[inline]
    fn chunk_product<const BS: usize>(&self, c: Chunk, x: &[f64], y: &mut [f64], spill: &mut [f64])
    where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        y.iter_mut().for_each(|v| *v = 0.0);
        spill.iter_mut().for_each(|v| *v = 0.0);
        let xb: &[[f64; BS]] = as_blocks(x);
        let (yb, sb) = (as_blocks_mut::<BS>(y), as_blocks_mut::<BS>(spill));
        let (p0, p1) = (self.row_ptr[c.start], self.row_ptr[c.end]);
        let vals = as_matrices::<BS>(&self.vals[BS * BS * p0..BS * BS * p1]);
        for i in c.start..c.end {
            let (q0, q1) = (self.row_ptr[i] - p0, self.row_ptr[i + 1] - p0);
            let xi = xb[i];
            let mut yi = [0.0f64; BS];
            let cols = &self.col[p0 + q0..p0 + q1];
            for (&j, b) in cols.iter().zip(&vals[q0..q1]) {
                let j = j as usize;
                let xj = xb[j];
                for a in 0..BS {
                    let mut s = b[a][0] * xj[0];
                    for k in 1..BS {
                        s += b[a][k] * xj[k];
                    }
                    yi[a] += s;
                }
                if j != i {
                    let t = if j < c.end {
                        &mut yb[j - c.start]
                    } else {
                        &mut sb[j - c.end]
                    };
                    for a in 0..BS {
                        let mut s = b[0][a] * xi[0];
                        for k in 1..BS {
                            s += b[k][a] * xi[k];
                        }
                        t[a] += s;
                    }
                }
            }
            let own = &mut yb[i - c.start];
            for a in 0..BS {
                own[a] += yi[a];
            }
        }
    }

    fn lower(&self) -> &LowerIndex {
        self.lower.get_or_init(|| {
            let mut ptr = vec![0usize; self.nb + 1];
            for i in 0..self.nb {
                for &j in &self.col[self.row_ptr[i]..self.row_ptr[i + 1]] {
                    if j as usize != i {
                        ptr[j as usize + 1] += 1;
                    }
                }
            }
            for j in 0..self.nb {
                ptr[j + 1] += ptr[j];
            }
            let mut cursor = ptr.clone();
            let mut entries = vec![(0u32, 0u32); ptr[self.nb]];
            for i in 0..self.nb {
                for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let j = self.col[p] as usize;
                    if j != i {
                        entries[cursor[j]] = (i as u32, p as u32);
                        cursor[j] += 1;
                    }
                }
            }
            LowerIndex { ptr, entries }
        })
    }

    /// Build the transposed structure index now (it is otherwise built by the first call of
    /// [`BlockSymMatrix::block_row_product`] or [`BlockSymMatrix::to_csc`]).
    pub fn prepare_rows(&self) {
        self.lower();
    }

    /// `out = (N x)_I`, block row `I` with the current `x` (length `bs`): the stored blocks of
    /// row `I` and, through the transposed index, `B_KI^T x_K` for `K < I`, every term added
    /// to `out` on its own, in storage order. Shapes: `x` of length `n`, `out` of length `bs`.
    #[inline]
    pub fn block_row_product(&self, i: usize, x: &[f64], out: &mut [f64]) {
        match self.bs {
            3 => self.block_row_product_n::<3>(i, x, out),
            2 => self.block_row_product_n::<2>(i, x, out),
            _ => self.block_row_product_n::<1>(i, x, out),
        }
    }

    /// The block rows coupled to block row `I` by a stored block (`N_IJ` or `N_JI` stored,
    /// `J != I`), appended to `out` in storage order (the stored row, then the transposed
    /// index); no duplicates, as each block is stored once. Builds the transposed index on
    /// first use ([`BlockSymMatrix::prepare_rows`]).
    pub fn block_neighbours(&self, i: usize, out: &mut Vec<u32>) {
        for &j in &self.col[self.row_ptr[i]..self.row_ptr[i + 1]] {
            if j as usize != i {
                out.push(j);
            }
        }
        let low = self.lower();
        out.extend(
            low.entries[low.ptr[i]..low.ptr[i + 1]]
                .iter()
                .map(|&(k, _)| k),
        );
    }

    /// `out = (N x)_I` as [`BlockSymMatrix::block_row_product`], with the lower terms
    /// `sum_{K < I} B_KI^T x_K` taken from `lower` (block `I` of it, length `bs`) instead of
    /// the transposed index: bit for bit the same value when `lower` was accumulated by
    /// [`BlockSymMatrix::scatter_row`] from zero over the rows `K < I` in increasing order with
    /// their current `x`. Shapes: `x` and `lower` of length `n`, `out` of length `bs`.
    #[inline]
    pub fn block_row_product_from(&self, i: usize, x: &[f64], lower: &[f64], out: &mut [f64]) {
        match self.bs {
            3 => self.upper_row_n::<3>(i, x, lower, out),
            2 => self.upper_row_n::<2>(i, x, lower, out),
            _ => self.upper_row_n::<1>(i, x, lower, out),
        }
    }

    /// `acc_J += B_KJ^T x_K` for every stored off-diagonal block `(K, J)` of row `K`: the
    /// lower terms of the later rows `J > K` from the stored row `K`, each component
    /// accumulated term by term as [`BlockSymMatrix::block_row_product`] adds them. Shapes:
    /// `x` and `acc` of length `n`. Allocation free.
    #[inline]
    pub fn scatter_row(&self, k: usize, x: &[f64], acc: &mut [f64]) {
        match self.bs {
            3 => self.scatter_row_n::<3>(k, x, acc),
            2 => self.scatter_row_n::<2>(k, x, acc),
            _ => self.scatter_row_n::<1>(k, x, acc),
        }
    }

    /// [`BlockSymMatrix::block_row_product`] on fixed-size arrays (`BS` 1, 2 or 3): the lower
    /// terms through the transposed index in increasing `K`, then the stored row.
    #[inline]
    fn block_row_product_n<const BS: usize>(&self, i: usize, x: &[f64], out: &mut [f64])
    where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        let xb = as_blocks::<BS>(x);
        let vb = as_matrices::<BS>(&self.vals);
        let mut o = [0.0f64; BS];
        let low = self.lower();
        for &(k, p) in &low.entries[low.ptr[i]..low.ptr[i + 1]] {
            let blk = &vb[p as usize];
            let xk = &xb[k as usize];
            for (c, oc) in o.iter_mut().enumerate() {
                for r in 0..BS {
                    *oc += blk[r][c] * xk[r];
                }
            }
        }
        self.add_stored_row::<BS>(i, xb, vb, &mut o);
        out[..BS].copy_from_slice(&o);
    }

    /// [`BlockSymMatrix::block_row_product_from`] on fixed-size arrays.
    #[inline]
    fn upper_row_n<const BS: usize>(&self, i: usize, x: &[f64], lower: &[f64], out: &mut [f64])
    where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        let xb = as_blocks::<BS>(x);
        let vb = as_matrices::<BS>(&self.vals);
        let mut o = as_blocks::<BS>(lower)[i];
        self.add_stored_row::<BS>(i, xb, vb, &mut o);
        out[..BS].copy_from_slice(&o);
    }

    /// `o += sum_{J >= I} B_IJ x_J` over the stored row `I` ([`add_row_blocks`]).
    #[inline(always)]
    fn add_stored_row<const BS: usize>(
        &self,
        i: usize,
        xb: &[[f64; BS]],
        vb: &[[[f64; BS]; BS]],
        o: &mut [f64; BS],
    ) {
        let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
        add_row_blocks::<BS>(&vb[a..b], &self.col[a..b], xb, o);
    }

    /// [`BlockSymMatrix::scatter_row`] on fixed-size arrays.
    #[inline]
    fn scatter_row_n<const BS: usize>(&self, k: usize, x: &[f64], acc: &mut [f64])
    where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        let xk = as_blocks::<BS>(x)[k];
        let vb = as_matrices::<BS>(&self.vals);
        let ab = as_blocks_mut::<BS>(acc);
        let (a, b) = (self.row_ptr[k], self.row_ptr[k + 1]);
        for (blk, &j) in vb[a..b].iter().zip(&self.col[a..b]) {
            let j = j as usize;
            if j == k {
                continue;
            }
            let aj = &mut ab[j];
            for (c, oc) in aj.iter_mut().enumerate() {
                for r in 0..BS {
                    *oc += blk[r][c] * xk[r];
                }
            }
        }
    }

    /// Number of stored diagonal blocks (`N_II` kept; at most `nb`).
    fn stored_diagonal_blocks(&self) -> usize {
        (0..self.nb)
            .filter(|&i| {
                let p = self.row_ptr[i];
                p < self.row_ptr[i + 1] && self.col[p] as usize == i
            })
            .count()
    }

    /// Bytes [`BlockSymMatrix::whole_rows`] allocates, predicted before it allocates them: the
    /// copy ([`WholeRows::bytes`]: `(2 stored - diagonal)` blocks of `8 bs^2 + 4` bytes, 16 bytes
    /// per block row) and, when not built yet, the transposed index it reads (8 bytes per
    /// stored off-diagonal block, 8 per block row; kept by the matrix afterwards, as the
    /// transposed row access builds it too). For 3x3 blocks about twice [`BlockSymMatrix::bytes`].
    pub fn whole_rows_bytes(&self) -> u64 {
        let diag = self.stored_diagonal_blocks();
        let off = self.col.len() - diag;
        let blocks = (self.col.len() + off) as u64;
        let copy = blocks * (8 * (self.bs * self.bs) as u64 + 4) + 16 * self.nb as u64 + 8;
        let index = if self.lower.get().is_some() {
            0
        } else {
            8 * off as u64 + 8 * (self.nb as u64 + 1)
        };
        copy + index
    }

    /// A copy of `N` by whole block rows taken in `order` (a permutation of the block rows,
    /// e.g. a colouring's colour order, [`crate::colouring::Colouring::order`]): position `p`
    /// holds every block `N_IJ` of row `I = order[p]`, the lower ones (`J < I`, read through
    /// the transposed index and stored transposed, `N_IJ = B_JI^T`) in increasing `J`, then
    /// the stored row (`J >= I`) in storage order, so [`WholeRows::row_product`] streams one
    /// row from one place and sums its terms in the order of
    /// [`BlockSymMatrix::block_row_product`]: the same value bit for bit. Memory:
    /// [`BlockSymMatrix::whole_rows_bytes`]; the caller checks it against its budget first.
    /// The rows are copied in parallel on the current rayon pool (plain copies: the result does
    /// not depend on the threads). Errors: [`ProblemError::SizeMismatch`] when `order` is not
    /// a permutation of `0..nb`.
    pub fn whole_rows(&self, order: &[u32]) -> Result<WholeRows> {
        let nb = self.nb;
        let mut seen = vec![false; nb];
        let perm = order.len() == nb
            && order
                .iter()
                .all(|&i| (i as usize) < nb && !std::mem::replace(&mut seen[i as usize], true));
        if !perm {
            return Err(ProblemError::SizeMismatch {
                what: "whole-row order (a permutation of the block rows)".into(),
                expected: nb,
                found: order.len(),
            });
        }
        drop(seen);
        let low = self.lower();
        let (bs, bb) = (self.bs, self.bs * self.bs);
        let mut row_ptr = Vec::with_capacity(nb + 1);
        let mut split = Vec::with_capacity(nb);
        row_ptr.push(0usize);
        for &i in order {
            let i = i as usize;
            let lower = low.ptr[i + 1] - low.ptr[i];
            let upper = self.row_ptr[i + 1] - self.row_ptr[i];
            let start = row_ptr[row_ptr.len() - 1];
            split.push(start + lower);
            row_ptr.push(start + lower + upper);
        }
        let total = row_ptr[nb];
        // zeroed by the allocator (fresh pages, no pass over them here): the parallel fill
        // below is the first to touch them
        let mut vals: Vec<f64> = vec![0.0; total * bb];
        let mut col: Vec<u32> = vec![0; total];
        // cut the positions into pieces of WHOLE_ROWS_PIECE rows, each piece owning its slices
        let mut pieces = Vec::with_capacity(nb.div_ceil(WHOLE_ROWS_PIECE));
        let (mut vrest, mut crest) = (&mut vals[..], &mut col[..]);
        for p0 in (0..nb).step_by(WHOLE_ROWS_PIECE) {
            let p1 = (p0 + WHOLE_ROWS_PIECE).min(nb);
            let len = row_ptr[p1] - row_ptr[p0];
            let (v, vr) = std::mem::take(&mut vrest).split_at_mut(len * bb);
            let (c, cr) = std::mem::take(&mut crest).split_at_mut(len);
            (vrest, crest) = (vr, cr);
            pieces.push((p0, p1, v, c));
        }
        pieces.into_par_iter().for_each(|(p0, p1, v, c)| {
            let base = row_ptr[p0];
            for (p, &i) in order.iter().enumerate().take(p1).skip(p0) {
                let i = i as usize;
                let mut q = row_ptr[p] - base;
                for &(k, at) in &low.entries[low.ptr[i]..low.ptr[i + 1]] {
                    let src = &self.vals[at as usize * bb..(at as usize + 1) * bb];
                    let dst = &mut v[q * bb..(q + 1) * bb];
                    for a in 0..bs {
                        for b in 0..bs {
                            dst[a * bs + b] = src[b * bs + a];
                        }
                    }
                    c[q] = k;
                    q += 1;
                }
                let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
                v[q * bb..(q + b - a) * bb].copy_from_slice(&self.vals[a * bb..b * bb]);
                c[q..q + b - a].copy_from_slice(&self.col[a..b]);
            }
        });
        Ok(WholeRows {
            bs,
            row_ptr,
            split,
            col,
            vals,
        })
    }

    /// The full symmetric CSC matrix (both triangles), with exactly the entries it was built
    /// from (see the module documentation).
    pub fn to_csc(&self) -> Result<CscMatrix> {
        let (bs, bb, nb) = (self.bs, self.bs * self.bs, self.nb);
        let low = self.lower();
        let nnz = self.full_nnz();
        let mut col_ptr = Vec::with_capacity(bs * nb + 1);
        let mut row_idx = Vec::with_capacity(nnz);
        let mut values = Vec::with_capacity(nnz);
        col_ptr.push(0);
        for bj in 0..nb {
            for b in 0..bs {
                // column bs J + b: rows from blocks (K, J), K < J (entry (a, b) of B_KJ), then
                // from blocks (J, L), L >= J (entry (b, a) of B_JL, by symmetry)
                for &(k, p) in &low.entries[low.ptr[bj]..low.ptr[bj + 1]] {
                    let (k, p) = (k as usize, p as usize);
                    let mk = self.mask_of(p);
                    for a in 0..bs {
                        if mk & (1 << (a * bs + b)) != 0 {
                            row_idx.push(bs * k + a);
                            values.push(self.vals[p * bb + a * bs + b]);
                        }
                    }
                }
                for p in self.row_ptr[bj]..self.row_ptr[bj + 1] {
                    let l = self.col[p] as usize;
                    let mk = self.mask_of(p);
                    for a in 0..bs {
                        if mk & (1 << (b * bs + a)) != 0 {
                            row_idx.push(bs * l + a);
                            values.push(self.vals[p * bb + b * bs + a]);
                        }
                    }
                }
                col_ptr.push(row_idx.len());
            }
        }
        CscMatrix::from_csc_parts(bs * nb, bs * nb, col_ptr, row_idx, values)
    }
}

/// Block rows per parallel piece of [`BlockSymMatrix::whole_rows`].
const WHOLE_ROWS_PIECE: usize = 4096;

/// `N` by whole block rows in a chosen row order ([`BlockSymMatrix::whole_rows`]): block-CSR
/// over positions `p = 0..nb` (row `order[p]` of `N`), both triangles of every row, so a run
/// of consecutive positions (a colour of a coloured Gauss-Seidel sweep) is contiguous in
/// memory. About twice the bytes of the symmetric storage it is copied from
/// ([`WholeRows::bytes`]).
#[derive(Clone, Debug)]
pub struct WholeRows {
    bs: usize,
    /// Blocks of position `p`: `row_ptr[p]..row_ptr[p + 1]` (length `nb + 1`).
    row_ptr: Vec<usize>,
    /// First block of the stored (upper, `J >= I`) part of position `p`; the blocks before it
    /// are the lower ones (length `nb`).
    split: Vec<usize>,
    /// Block column `J` of every block.
    col: Vec<u32>,
    /// `bs^2` values per block, row-major: `N_IJ` itself (lower blocks transposed from the
    /// stored `B_JI`).
    vals: Vec<f64>,
}

impl WholeRows {
    /// Block size (1, 2 or 3).
    pub fn block_size(&self) -> usize {
        self.bs
    }

    /// Number of block rows (positions).
    pub fn n_block_rows(&self) -> usize {
        self.split.len()
    }

    /// Number of blocks held: `2 stored - diagonal` of the symmetric storage.
    pub fn n_blocks(&self) -> usize {
        self.col.len()
    }

    /// Bytes held (values, block columns, row pointers and splits); one sweep over every row
    /// reads them once (the iterate's blocks aside).
    pub fn bytes(&self) -> u64 {
        (self.vals.len() * 8 + self.col.len() * 4 + self.row_ptr.len() * 8 + self.split.len() * 8)
            as u64
    }

    /// `out = (N x)_I` for the row `I = order[p]` at position `p`, the same value bit for bit
    /// as [`BlockSymMatrix::block_row_product`]`(I, x, out)`: the lower blocks in increasing
    /// column, each term added to `out` on its own, then the upper blocks in `BS^2` running
    /// sums. Shapes: `x` of length `n`, `out` of length `bs`. Allocation free.
    #[inline]
    pub fn row_product(&self, p: usize, x: &[f64], out: &mut [f64]) {
        match self.bs {
            3 => self.row_product_n::<3>(p, x, out),
            2 => self.row_product_n::<2>(p, x, out),
            _ => self.row_product_n::<1>(p, x, out),
        }
    }

    /// [`WholeRows::row_product`] on fixed-size arrays.
    #[inline]
    fn row_product_n<const BS: usize>(&self, p: usize, x: &[f64], out: &mut [f64])
    where
        [f64; BS]: Pod,
        [[f64; BS]; BS]: Pod,
    {
        let xb = as_blocks::<BS>(x);
        let (a, s, b) = (self.row_ptr[p], self.split[p], self.row_ptr[p + 1]);
        let vb = as_matrices::<BS>(&self.vals[BS * BS * a..BS * BS * b]);
        let cols = &self.col[a..b];
        let (lo, up) = vb.split_at(s - a);
        let (lc, uc) = cols.split_at(s - a);
        let mut o = [0.0f64; BS];
        // the transposed index's terms: `o_c += B_KI[r][c] x_K[r]`, here `N_IK[c][r]`
        for (blk, &k) in lo.iter().zip(lc) {
            let xk = &xb[k as usize];
            for (oc, bc) in o.iter_mut().zip(blk) {
                for r in 0..BS {
                    *oc += bc[r] * xk[r];
                }
            }
        }
        add_row_blocks::<BS>(up, uc, xb, &mut o);
        out[..BS].copy_from_slice(&o);
    }
}

/// View a slice whose length is a multiple of `BS` as `BS`-vectors (panics otherwise: an
/// internal invariant of the block layout).
fn as_blocks<const BS: usize>(v: &[f64]) -> &[[f64; BS]]
where
    [f64; BS]: Pod,
{
    bytemuck::cast_slice(v)
}

/// Mutable [`as_blocks`].
fn as_blocks_mut<const BS: usize>(v: &mut [f64]) -> &mut [[f64; BS]]
where
    [f64; BS]: Pod,
{
    bytemuck::cast_slice_mut(v)
}

/// View block values as row-major `BS x BS` blocks (`blk[a][b]`).
fn as_matrices<const BS: usize>(v: &[f64]) -> &[[[f64; BS]; BS]]
where
    [[f64; BS]; BS]: Pod,
{
    bytemuck::cast_slice(v)
}

/// `o += sum_q B_q x_{J_q}` over the blocks `blks` of one row and their block columns `cols`:
/// one running sum per entry position `(r, k)` of the blocks, in the given order (`BS^2`
/// independent chains, not `BS`: the sweep's row is latency-bound otherwise), then
/// `o_r += ((s_r0 + s_r1) + s_r2)`. The stored row of [`BlockSymMatrix::block_row_product`]
/// and the upper part of a [`WholeRows`] row, so both sum alike.
#[inline(always)]
fn add_row_blocks<const BS: usize>(
    blks: &[[[f64; BS]; BS]],
    cols: &[u32],
    xb: &[[f64; BS]],
    o: &mut [f64; BS],
) {
    let mut sums = [[0.0f64; BS]; BS];
    for (blk, &j) in blks.iter().zip(cols) {
        let xj = &xb[j as usize];
        for (sr, br) in sums.iter_mut().zip(blk) {
            for k in 0..BS {
                sr[k] += br[k] * xj[k];
            }
        }
    }
    for (or, sr) in o.iter_mut().zip(&sums) {
        let mut t = sr[0];
        for v in &sr[1..] {
            t += v;
        }
        *or += t;
    }
}

/// The block sizes the storage takes: 1 (LCP, box QP), 2 (2-D Coulomb cones), 3 (3-D cones).
pub const BLOCK_SIZES: [usize; 3] = [1, 2, 3];

/// `Ok` for a block size of [`BLOCK_SIZES`], else [`ProblemError::UnsupportedBlockSize`]
/// naming it and the sizes taken.
pub fn check_block_size(bs: usize) -> Result<()> {
    if BLOCK_SIZES.contains(&bs) {
        return Ok(());
    }
    Err(ProblemError::UnsupportedBlockSize {
        found: bs,
        expected: "1, 2 or 3".into(),
    })
}

/// Cut the block rows into about `threads` chunks of equal stored blocks (one chunk when the
/// matrix is too small to pay for threads), and record how far each chunk's scatters reach.
fn plan(row_ptr: &[usize], col: &[u32], threads: usize) -> Vec<Chunk> {
    let nb = row_ptr.len() - 1;
    let total = col.len();
    let k = threads.min(total / PAR_MIN_BLOCKS_PER_CHUNK).max(1);
    let mut chunks = Vec::with_capacity(k);
    let mut start = 0;
    for t in 1..=k {
        let target = total * t / k;
        let mut end = if t == k {
            nb
        } else {
            row_ptr.partition_point(|&p| p < target).min(nb)
        };
        end = end.max(start);
        if end > start {
            let reach = col[row_ptr[start]..row_ptr[end]]
                .iter()
                .map(|&j| j as usize + 1)
                .max()
                .unwrap_or(end)
                .max(end);
            chunks.push(Chunk { start, end, reach });
        }
        start = end;
    }
    if chunks.is_empty() {
        chunks.push(Chunk {
            start: 0,
            end: nb,
            reach: nb,
        });
    }
    chunks
}
