//! Broad phase: a uniform grid (cell list) with spatial hashing, O(n) for bounded density
//! (Matulewski 2010: "Podzial na komorki ... z N^2 zmienia sie w N"; Teschner
//! et al. 2003, "Optimized spatial hashing for collision detection of deformable objects").
//!
//! The cell edge is `2 r_max + envelope`, so every pair whose gap can be below the envelope
//! lies in the same or in adjacent cells (27 cells per query). Cells are hashed into a table of
//! `2^k >= 2 nb` buckets, filled by a counting sort (no per-body allocation, no `HashMap`), so
//! the memory is O(nb) whatever the extent of the scene. Hash collisions only add candidates,
//! which the narrow phase rejects by distance. Only movable bodies query the grid: a movable
//! body pairs with movable bodies of larger index and with every fixed body, so each pair is
//! found exactly once and fixed-fixed pairs cost nothing.
//!
//! The queries run in parallel over fixed chunks of bodies, each into its own buffer, and the
//! buffers are concatenated in chunk order, so the output does not depend on the number of
//! threads.
//!
//! Contacts come out sorted by `(A, partner)` where `A` is the querying body and the partner
//! code is the body index or `nb + plane index` ([`contact_key`]); the stepper's warm start
//! relies on this order.

use super::bodies::{Body, Plane};
use super::ellipsoid::EllipsoidError;
use super::narrow::{body_body, body_plane, Contact, Partner};
use rayon::prelude::*;

/// Bodies per query task of [`BroadPhase::detect`]: the bodies are cut into chunks of this
/// many, queried in parallel and their contacts concatenated in chunk order (a fixed cut, so
/// the output order does not depend on the number of threads).
pub const QUERY_CHUNK: usize = 1024;

/// Output and scratch of one query task, kept across steps.
#[derive(Clone, Debug, Default)]
struct QueryBuf {
    out: Vec<Contact>,
    cand: Vec<u32>,
    candidates: usize,
    /// First narrow-phase failure of the task: `(A, B, error)`.
    failure: Option<(usize, usize, EllipsoidError)>,
}

/// Warm-start key of a contact: `(A << 32) | partner`, partner = body index or `nb + plane`.
/// Contacts produced by [`BroadPhase::detect`] are sorted by this key.
#[inline]
pub fn contact_key(c: &Contact, nb: usize) -> u64 {
    let p = match c.b {
        Partner::Body(j) => j,
        Partner::Plane(p) => nb + p,
    };
    ((c.a as u64) << 32) | p as u64
}

/// Reusable buffers of the hashed uniform grid. All vectors keep their capacity across steps.
#[derive(Clone, Debug, Default)]
pub struct BroadPhase {
    cell: f64,
    bits: u32,
    start: Vec<u32>,
    cursor: Vec<u32>,
    sorted: Vec<u32>,
    bucket: Vec<u32>,
    cells: Vec<[i64; 3]>,
    chunks: Vec<QueryBuf>,
    /// Candidate pairs tested in the last [`BroadPhase::detect`] (diagnostics).
    pub candidates: usize,
}

#[inline]
fn hash_cell(c: [i64; 3], bits: u32) -> u32 {
    let h = (c[0] as u64).wrapping_mul(73_856_093)
        ^ (c[1] as u64).wrapping_mul(19_349_663)
        ^ (c[2] as u64).wrapping_mul(83_492_791);
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as u32
}

impl BroadPhase {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The first narrow-phase failure of the last [`BroadPhase::detect`] in body order, as
    /// `(A, B, error)`: an ellipsoid pair whose distance computation failed
    /// ([`crate::narrow::body_body`]); the pair is then missing from the contacts, so the
    /// stepper turns it into [`crate::GranularError::Geometry`]. `None` when every pair was
    /// decided.
    pub fn failure(&self) -> Option<(usize, usize, EllipsoidError)> {
        self.chunks.iter().find_map(|b| b.failure.clone())
    }

    /// Cell edge used by the last [`BroadPhase::detect`] (m).
    pub fn cell_size(&self) -> f64 {
        self.cell
    }

    /// Find all contacts with gap `< envelope` (m) between movable spheres, movable and fixed
    /// spheres, and movable spheres and planes; append them to `out` (cleared first) sorted by
    /// [`contact_key`]. O(nb + candidates + nb * planes).
    pub fn detect(
        &mut self,
        bodies: &[Body],
        planes: &[Plane],
        envelope: f64,
        out: &mut Vec<Contact>,
    ) {
        self.candidates = 0;
        let nb = bodies.len();
        if nb == 0 {
            out.clear();
            return;
        }
        let rmax = bodies.iter().fold(0.0f64, |m, b| m.max(b.radius));
        self.cell = 2.0 * rmax + envelope;
        let inv = 1.0 / self.cell;
        self.bits = ((2 * nb).next_power_of_two().trailing_zeros()).max(6);
        let nt = 1usize << self.bits;
        self.cells.resize(nb, [0; 3]);
        self.bucket.resize(nb, 0);
        let bits = self.bits;
        self.cells
            .par_iter_mut()
            .zip(self.bucket.par_iter_mut())
            .zip(bodies.par_iter())
            .with_min_len(QUERY_CHUNK)
            .for_each(|((c, h), b)| {
                *c = [
                    (b.pos.x * inv).floor() as i64,
                    (b.pos.y * inv).floor() as i64,
                    (b.pos.z * inv).floor() as i64,
                ];
                *h = hash_cell(*c, bits);
            });
        self.cells.truncate(nb);
        self.bucket.truncate(nb);
        self.start.clear();
        self.start.resize(nt + 1, 0);
        for &h in &self.bucket {
            self.start[h as usize + 1] += 1;
        }
        for k in 0..nt {
            self.start[k + 1] += self.start[k];
        }
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.start[..nt]);
        self.sorted.clear();
        self.sorted.resize(nb, 0);
        for (i, &h) in self.bucket.iter().enumerate() {
            let k = &mut self.cursor[h as usize];
            self.sorted[*k as usize] = i as u32;
            *k += 1;
        }
        let nchunks = nb.div_ceil(QUERY_CHUNK);
        self.chunks.resize_with(nchunks, QueryBuf::default);
        self.chunks.truncate(nchunks);
        let (start, sorted, cells) = (&self.start, &self.sorted, &self.cells);
        self.chunks.par_iter_mut().enumerate().for_each(|(k, buf)| {
            buf.out.clear();
            buf.candidates = 0;
            buf.failure = None;
            let range = k * QUERY_CHUNK..((k + 1) * QUERY_CHUNK).min(nb);
            for i in range {
                let a = &bodies[i];
                if a.fixed {
                    continue;
                }
                let c = cells[i];
                let mut buckets = [0u32; 27];
                let mut m = 0;
                for dx in -1..=1 {
                    for dy in -1..=1 {
                        for dz in -1..=1 {
                            buckets[m] = hash_cell([c[0] + dx, c[1] + dy, c[2] + dz], bits);
                            m += 1;
                        }
                    }
                }
                buckets.sort_unstable();
                buf.cand.clear();
                let mut prev = u32::MAX;
                for &h in &buckets {
                    if h == prev {
                        continue;
                    }
                    prev = h;
                    let (s, e) = (start[h as usize], start[h as usize + 1]);
                    for &j in &sorted[s as usize..e as usize] {
                        let ju = j as usize;
                        if ju == i || (ju < i && !bodies[ju].fixed) {
                            continue;
                        }
                        buf.cand.push(j);
                    }
                }
                buf.candidates += buf.cand.len();
                buf.cand.sort_unstable();
                for &j in &buf.cand {
                    let ju = j as usize;
                    match body_body(i, a, ju, &bodies[ju], envelope) {
                        Ok(Some(ct)) => buf.out.push(ct),
                        Ok(None) => {}
                        Err(e) => {
                            if buf.failure.is_none() {
                                buf.failure = Some((i, ju, e));
                            }
                        }
                    }
                }
                for (p, pl) in planes.iter().enumerate() {
                    if let Some(ct) = body_plane(i, a, p, pl, envelope) {
                        buf.out.push(ct);
                    }
                }
            }
        });
        // concatenate in chunk order, in parallel over disjoint pieces of `out`
        self.candidates = self.chunks.iter().map(|b| b.candidates).sum();
        let total: usize = self.chunks.iter().map(|b| b.out.len()).sum();
        let Some(first) = self.chunks.iter().find_map(|b| b.out.first().copied()) else {
            out.clear();
            return;
        };
        // every entry is overwritten below: only a grown tail is filled
        if out.len() > total {
            out.truncate(total);
        } else {
            out.resize(total, first);
        }
        if let [only] = &self.chunks[..] {
            // one chunk (fewer than QUERY_CHUNK bodies): a plain copy, no allocation
            out.copy_from_slice(&only.out);
            return;
        }
        let mut pieces = Vec::with_capacity(nchunks);
        let mut rest = &mut out[..];
        for b in &self.chunks {
            let (piece, tail) = rest.split_at_mut(b.out.len());
            pieces.push(piece);
            rest = tail;
        }
        pieces
            .into_par_iter()
            .zip(self.chunks.par_iter())
            .for_each(|(piece, b)| piece.copy_from_slice(&b.out));
    }
}
