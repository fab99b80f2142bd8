//! Assembly of the contact problem: the Jacobian blocks, `N = D^T M^-1 D` (sparse, exactly
//! symmetric), `r = b + D^T M^-1 k`, and the velocity update `v = M^-1 (k + D gamma)`
//! (docs/formulation.md section 1, steps 2-5; Tasora & Anitescu 2011, eqs. 13-18; Heyn et al. 2013).
//!
//! Each contact side `s` (body `A`, and body `B` when it is a movable sphere) keeps the scaled
//! block `W_{c,s} = M_s^{-1/2} D_{c,s}` (6 x 3: three columns for the directions `n, u, w`,
//! translational rows `+-d / sqrt(m)`, rotational rows `+-(A^T (r x d)) / sqrt(J)`). Then
//!
//! - `N_{c2,c} = sum over bodies x shared by c and c2 of W_{c2,x}^T W_{c,x}` (3 x 3 block),
//!   non-zero only when the contacts share a body; fixed bodies and planes have no rows;
//! - `r_c = b_c + sum_x W_{c,x}^T (M^{1/2} v_free)_x` with `v_free = M^-1 k = v + h M^-1 f`;
//! - `v_x(t+h) = v_free,x + M_x^{-1/2} sum_c W_{c,x} gamma_c`.
//!
//! `N` is written straight into compressed-sparse-column arrays (no triplets, no sort, no
//! dense matrix): a structure pass merges the two sorted contact lists of a contact's bodies
//! into its sorted neighbour list, a value pass computes each block `N_{c2,c}` with `c2 >= c`
//! once and stores it in column block `c` and its transpose in column block `c2`, so `N` is
//! exactly (bitwise) symmetric. Work and memory are O(sum over contacts of the neighbour
//! count); every buffer is reused across steps.
//!
//! Large problems skip the CSC form: [`Assembly::delassus_blocks`] writes the upper triangle
//! straight into the block storage ([`BlockSymMatrix`]): block row `c` holds the blocks
//! `N_{c,c2}`, `c2 >= c`, computed with the same arithmetic as the CSC path (so its CSC form
//! is the CSC path's matrix bit for bit), in parallel over block rows (each row writes only
//! its own blocks). The matrix-free export needs only `D` and `M` ([`movable_jacobian`]).
//! Every parallel pass writes disjoint pieces of its output in a fixed order, so the results
//! do not depend on the number of threads.

use super::bodies::Body;
use super::narrow::{Contact, Partner};
use cpbench_problems::error::Result as PResult;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::BlockSymMatrix;
use nalgebra::Vector3;
use rayon::prelude::*;
use std::ops::Range;

/// Contacts (or block rows) per task of the parallel passes (also the planar stepper's,
/// [`crate::planar`]).
pub(crate) const GRAIN: usize = 2048;

/// Sentinel for "no movable body on this side".
const NONE: u32 = u32::MAX;

/// Scaled Jacobian block of one contact side: three columns (directions n, u, w), each
/// `(trans / sqrt(m), rot / sqrt(J))`.
type Side = [[f64; 6]; 3];

#[inline(always)]
fn dot6(a: &[f64; 6], b: &[f64; 6]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]
}

/// Reusable assembly buffers.
#[derive(Clone, Debug, Default)]
pub struct Assembly {
    side_body: Vec<[u32; 2]>,
    w: Vec<[Side; 2]>,
    /// Per body: `M^{1/2} v_free` (6 numbers).
    sv: Vec<[f64; 6]>,
    /// Per body: `M^{1/2} v(t)` (6 numbers), filled by [`Assembly::restitution`] only.
    sv0: Vec<[f64; 6]>,
    body_ptr: Vec<u32>,
    cursor: Vec<u32>,
    body_list: Vec<(u32, u8)>,
    nbr_ptr: Vec<usize>,
    nbr: Vec<u32>,
    nbr_code: Vec<u8>,
    mirror: Vec<u32>,
    /// Number of bodies the body lists (`body_ptr`, `body_list`) were built for since the
    /// last [`Assembly::jacobian`].
    lists_for: Option<usize>,
}

/// `bs` is 1 (frictionless) or 3 (3-D cones). Errors:
/// [`cpbench_problems::ProblemError::UnsupportedBlockSize`] naming `bs`.
fn check_block_size(bs: usize) -> PResult<()> {
    if bs != 1 && bs != 3 {
        return Err(cpbench_problems::ProblemError::UnsupportedBlockSize {
            found: bs,
            expected: "1 or 3 (3-D contacts)".into(),
        });
    }
    Ok(())
}

/// Length `len`, keeping (not re-filling) the entries already there: every entry is
/// overwritten by the caller, so only a grown tail is initialised.
pub(crate) fn set_len<T: Clone>(v: &mut Vec<T>, len: usize, fill: T) {
    if v.len() > len {
        v.truncate(len);
    } else if v.capacity() < len {
        // a fresh allocation: zeros come from the allocator (untouched pages), so the first
        // touch (page faults) happens in the parallel fill, not in a sequential memset
        *v = vec![fill; len];
    } else {
        v.resize(len, fill);
    }
}

/// Run `f(rows, piece)` over `rows` cut into tasks of about [`GRAIN`] rows on the rayon pool,
/// `piece` the part of `data` that holds those rows (`per` entries per unit of `ptr`: row `i`
/// owns `data[per (ptr[i] - ptr[rows.start]) .. per (ptr[i + 1] - ptr[rows.start])]` of its
/// piece). The tasks own disjoint pieces: no locks, no atomics, no allocation.
pub(crate) fn for_rows<T, F>(data: &mut [T], ptr: &[usize], per: usize, rows: Range<usize>, f: &F)
where
    T: Send,
    F: Fn(Range<usize>, &mut [T]) + Sync,
{
    if rows.len() <= GRAIN {
        f(rows, data);
        return;
    }
    let mid = rows.start + rows.len() / 2;
    let cut = per * (ptr[mid] - ptr[rows.start]);
    let (a, b) = data.split_at_mut(cut);
    rayon::join(
        || for_rows(a, ptr, per, rows.start..mid, f),
        || for_rows(b, ptr, per, mid..rows.end, f),
    );
}

/// The contact Jacobian restricted to the movable bodies and the diagonal of their mass
/// matrix, for the matrix-free operator `N = D^T M^-1 D`
/// ([`cpbench_problems::operator::MatrixFree`]).
///
/// `D` is `6 nm x bs nc` (`nm` movable bodies, numbered in body order; fixed bodies and planes
/// have no rows): column `bs c + k` holds `-d_k` and `-A_A^T (r_A x d_k)` in the six rows of
/// body `A` and the same with `+` and `r_B` in those of a movable `B` (`d_k` the directions
/// `n, u, w`, lever arms `r` in m, rotated into the body frame as in the assembly), so
/// translational rows are dimensionless and rotational rows in m. `M` (length `6 nm`) is the
/// mass (kg) three times, then the principal inertia (kg m^2) in the body frame. Built in
/// parallel over contacts, deterministic. Errors: [`cpbench_problems::ProblemError`] from the
/// checked [`CscMatrix::from_csc_parts`] when the state is not finite.
pub fn movable_jacobian(
    bodies: &[Body],
    contacts: &[Contact],
    bs: usize,
) -> PResult<(CscMatrix, Vec<f64>)> {
    let mut index = vec![NONE; bodies.len()];
    let mut m_diag = Vec::new();
    for (i, b) in bodies.iter().enumerate() {
        if !b.fixed {
            index[i] = (m_diag.len() / 6) as u32;
            m_diag.extend_from_slice(&[
                b.mass,
                b.mass,
                b.mass,
                b.inertia.x,
                b.inertia.y,
                b.inertia.z,
            ]);
        }
    }
    let nc = contacts.len();
    // the movable bodies of each contact, in row order
    let sides: Vec<[u32; 2]> = contacts
        .par_iter()
        .with_min_len(GRAIN)
        .map(|c| {
            let a = index[c.a];
            let b = match c.b {
                Partner::Body(j) => index[j],
                Partner::Plane(_) => NONE,
            };
            [a, b]
        })
        .collect();
    // entries per contact: 6 per body side per column
    let mut cptr = Vec::with_capacity(nc + 1);
    cptr.push(0usize);
    for sd in &sides {
        let k = sd.iter().filter(|&&x| x != NONE).count();
        cptr.push(cptr.last().copied().unwrap_or(0) + 6 * k * bs);
    }
    let nnz = cptr[nc];
    let mut col_ptr = Vec::with_capacity(bs * nc + 1);
    for c in 0..nc {
        let per = (cptr[c + 1] - cptr[c]) / bs;
        for k in 0..bs {
            col_ptr.push(cptr[c] + k * per);
        }
    }
    col_ptr.push(nnz);
    let mut row_idx = vec![0usize; nnz];
    let mut values = vec![0.0f64; nnz];
    for_rows(
        &mut row_idx,
        &cptr,
        1,
        0..nc,
        &|rows: Range<usize>, out: &mut [usize]| {
            let mut p = 0;
            for c in rows {
                let [a, b] = sides[c];
                let mut order = [a, b];
                if b != NONE && b < a {
                    order = [b, a];
                }
                for _ in 0..bs {
                    for &x in order.iter().filter(|&&x| x != NONE) {
                        for i in 0..6 {
                            out[p] = 6 * x as usize + i;
                            p += 1;
                        }
                    }
                }
            }
        },
    );
    for_rows(
        &mut values,
        &cptr,
        1,
        0..nc,
        &|rows: Range<usize>, out: &mut [f64]| {
            let mut p = 0;
            for c in rows {
                let ct = &contacts[c];
                let [a, b] = sides[c];
                let body_b = match ct.b {
                    Partner::Body(j) if b != NONE => Some(&bodies[j]),
                    _ => None,
                };
                // (body, sign) in row order
                let mut order = [(Some(&bodies[ct.a]), -1.0), (body_b, 1.0)];
                if b != NONE && b < a {
                    order.swap(0, 1);
                }
                let dirs = [ct.n, ct.u, ct.w];
                for d in dirs.iter().take(bs) {
                    for (x, sign) in order {
                        let Some(x) = x else { continue };
                        // a body without rotation has no rotational coupling
                        let rot = if x.rotates {
                            x.rot.inverse_transform_vector(&(ct.point - x.pos).cross(d))
                        } else {
                            Vector3::zeros()
                        };
                        for v in [d.x, d.y, d.z, rot.x, rot.y, rot.z] {
                            out[p] = sign * v;
                            p += 1;
                        }
                    }
                }
            }
        },
    );
    let d = CscMatrix::from_csc_parts(m_diag.len(), bs * nc, col_ptr, row_idx, values)?;
    Ok((d, m_diag))
}

/// Free velocity `v_free = M^-1 k = v + h M^-1 f_ext` of a movable body, with `f_ext` gravity
/// (`m g`) and the gyroscopic torque `-omega x J omega` (zero for spheres). Returns
/// `(v, omega)`, SI units.
#[inline]
pub fn free_velocity(b: &Body, h: f64, gravity: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    if !b.rotates {
        return (b.vel + h * gravity, Vector3::zeros());
    }
    let jw = b.omega.component_mul(&b.inertia);
    let tau = -b.omega.cross(&jw);
    (
        b.vel + h * gravity,
        b.omega + h * tau.component_div(&b.inertia),
    )
}

impl Assembly {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Compute the scaled Jacobian blocks of all contacts and `M^{1/2} v_free` of all bodies
    /// (`vfree[i] = (v, omega)` from [`free_velocity`], ignored for fixed bodies).
    pub fn jacobian(
        &mut self,
        bodies: &[Body],
        contacts: &[Contact],
        vfree: &[(Vector3<f64>, Vector3<f64>)],
    ) {
        self.lists_for = None;
        self.sv.clear();
        for (b, (v, om)) in bodies.iter().zip(vfree) {
            let sm = b.mass.sqrt();
            let sj = b.inertia.map(f64::sqrt);
            self.sv.push([
                sm * v.x,
                sm * v.y,
                sm * v.z,
                sj.x * om.x,
                sj.y * om.y,
                sj.z * om.z,
            ]);
        }
        let zero: Side = [[0.0; 6]; 3];
        let nc = contacts.len();
        set_len(&mut self.side_body, nc, [NONE; 2]);
        set_len(&mut self.w, nc, [zero; 2]);
        self.side_body
            .par_iter_mut()
            .zip(self.w.par_iter_mut())
            .zip(contacts.par_iter())
            .with_min_len(GRAIN)
            .for_each(|((sb, w), c)| {
                let dirs = [c.n, c.u, c.w];
                let side = |x: &Body, sign: f64| -> Side {
                    let mut s = zero;
                    let r = c.point - x.pos;
                    let ism = sign / x.mass.sqrt();
                    let isj = sign * x.inv_sqrt_inertia();
                    for (k, d) in dirs.iter().enumerate() {
                        let rot = x.rot.inverse_transform_vector(&r.cross(d));
                        s[k] = [
                            d.x * ism,
                            d.y * ism,
                            d.z * ism,
                            rot.x * isj.x,
                            rot.y * isj.y,
                            rot.z * isj.z,
                        ];
                    }
                    s
                };
                let wa = side(&bodies[c.a], -1.0);
                let (bb, wb) = match c.b {
                    Partner::Body(j) if !bodies[j].fixed => (j as u32, side(&bodies[j], 1.0)),
                    _ => (NONE, zero),
                };
                *sb = [c.a as u32, bb];
                *w = [wa, wb];
            });
    }

    /// Body -> (contact, side) lists sorted by contact (`body_ptr`, `body_list`), built once
    /// per [`Assembly::jacobian`] for `nb` bodies.
    fn body_lists(&mut self, nb: usize) {
        if self.lists_for == Some(nb) {
            return;
        }
        self.body_ptr.clear();
        self.body_ptr.resize(nb + 1, 0);
        for sb in &self.side_body {
            for &x in sb {
                if x != NONE {
                    self.body_ptr[x as usize + 1] += 1;
                }
            }
        }
        for i in 0..nb {
            self.body_ptr[i + 1] += self.body_ptr[i];
        }
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.body_ptr[..nb]);
        self.body_list.clear();
        self.body_list.resize(self.body_ptr[nb] as usize, (0, 0));
        for (c, sb) in self.side_body.iter().enumerate() {
            for (s, &x) in sb.iter().enumerate() {
                if x != NONE {
                    let k = &mut self.cursor[x as usize];
                    self.body_list[*k as usize] = (c as u32, s as u8);
                    *k += 1;
                }
            }
        }
        self.lists_for = Some(nb);
    }

    /// Stored entries of the full `N` (both triangles, as the CSC path stores it) for block
    /// size `bs`, from the blocks of the last [`Assembly::jacobian`] over `nb` bodies, without
    /// assembling it: two contacts share at most one body, so contact `c` has
    /// `1 + sum over its bodies x of (k_x - 1)` neighbours (`k_x` the contacts of body `x`),
    /// and `nnz = bs^2 (nc + sum_x k_x (k_x - 1))`. O(nc + nb).
    pub fn delassus_nnz(&mut self, nb: usize, bs: usize) -> usize {
        self.body_lists(nb);
        let pairs: usize = self
            .body_ptr
            .windows(2)
            .map(|w| {
                let k = (w[1] - w[0]) as usize;
                k * k.saturating_sub(1)
            })
            .sum();
        bs * bs * (self.side_body.len() + pairs)
    }

    /// The contacts `c2 >= c` that share a body with contact `c` (`c` itself first), in
    /// increasing order: the merge of the tails of its bodies' sorted contact lists.
    #[inline]
    fn upper_neighbours(&self, c: usize, mut f: impl FnMut(u32)) {
        let empty: &[(u32, u8)] = &[];
        let tail = |x: u32| -> &[(u32, u8)] {
            if x == NONE {
                return empty;
            }
            let x = x as usize;
            let l = &self.body_list[self.body_ptr[x] as usize..self.body_ptr[x + 1] as usize];
            &l[l.partition_point(|e| (e.0 as usize) < c)..]
        };
        let sb = self.side_body[c];
        merge_contacts(tail(sb[0]), tail(sb[1]), &mut f);
    }

    /// `N = D^T M^-1 D` on the block storage ([`BlockSymMatrix`], upper triangle by block
    /// rows, `bs x bs` blocks), from the blocks of the last [`Assembly::jacobian`] over `nb`
    /// bodies, never forming CSC arrays. Its entries are those of [`Assembly::delassus`] bit
    /// for bit (same sums in the same order; `to_csc()` gives that matrix back).
    ///
    /// Parallel and deterministic: the block-row lengths are counted per contact, a prefix
    /// sum places the rows, then every row writes its own block columns and values.
    /// `recycle` may hold a previous matrix ([`BlockSymMatrix::into_upper_parts`] is used to
    /// reuse its storage). Errors: [`cpbench_problems::ProblemError::UnsupportedBlockSize`]
    /// for `bs` other than 1 or 3, [`cpbench_problems::ProblemError::SizeMismatch`] for more
    /// than `u32::MAX` contacts or blocks, and
    /// [`cpbench_problems::ProblemError::NonFinite`] when the state was not finite.
    pub fn delassus_blocks(
        &mut self,
        nb: usize,
        bs: usize,
        recycle: Option<BlockSymMatrix>,
    ) -> PResult<BlockSymMatrix> {
        check_block_size(bs)?;
        let nc = self.side_body.len();
        if nc > u32::MAX as usize {
            return Err(cpbench_problems::ProblemError::SizeMismatch {
                what: "contacts (u32 block indices)".into(),
                expected: u32::MAX as usize,
                found: nc,
            });
        }
        self.body_lists(nb);
        let (mut row_ptr, mut col, mut vals) = match recycle {
            Some(m) => m.into_upper_parts(),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        let me = &*self;
        upper_structure(nc, &mut row_ptr, &mut col, |c, f| me.upper_neighbours(c, f));
        let blocks = row_ptr[nc];
        set_len(&mut vals, bs * bs * blocks, 0.0);
        if bs == 3 {
            for_rows(&mut vals, &row_ptr, 9, 0..nc, &|rows, out| {
                me.block_rows::<3>(rows, &row_ptr, &col, out)
            });
        } else {
            for_rows(&mut vals, &row_ptr, 1, 0..nc, &|rows, out| {
                me.block_rows::<1>(rows, &row_ptr, &col, out)
            });
        }
        BlockSymMatrix::from_upper_parts(bs, nc, row_ptr, col, vals)
    }

    /// Values of block rows `rows` into `out` (their blocks, row-major): block `(c, c2)` is
    /// `N_{c,c2} = N_{c2,c}^T`, with `N_{c2,c}` summed over the shared bodies in the side
    /// order of `c`, exactly as [`Assembly::fill_values`] does.
    fn block_rows<const BS: usize>(
        &self,
        rows: Range<usize>,
        row_ptr: &[usize],
        col: &[u32],
        out: &mut [f64],
    ) {
        let base = row_ptr[rows.start];
        for c in rows {
            let sb = self.side_body[c];
            let wc = &self.w[c];
            for p in row_ptr[c]..row_ptr[c + 1] {
                let c2 = col[p] as usize;
                let sb2 = self.side_body[c2];
                let w2 = &self.w[c2];
                let mut blk = [[0.0f64; BS]; BS];
                for (sc, b) in wc.iter().enumerate() {
                    let x = sb[sc];
                    if x == NONE {
                        continue;
                    }
                    let s2 = if sb2[0] == x {
                        0
                    } else if sb2[1] == x {
                        1
                    } else {
                        continue;
                    };
                    let a = &w2[s2];
                    for (k, row) in blk.iter_mut().enumerate() {
                        for (l, v) in row.iter_mut().enumerate() {
                            *v += dot6(&a[k], &b[l]);
                        }
                    }
                }
                let o = &mut out[BS * BS * (p - base)..BS * BS * (p - base + 1)];
                for (k, row) in blk.iter().enumerate() {
                    for (l, &v) in row.iter().enumerate() {
                        o[l * BS + k] = v;
                    }
                }
            }
        }
    }

    /// `N = D^T M^-1 D` for block size `bs` (3: all directions, CCP; 1: normals only, LCP),
    /// `bs nc x bs nc`, exactly symmetric, from the blocks of the last [`Assembly::jacobian`].
    /// `nb` is the number of bodies the blocks were built for. Errors:
    /// [`cpbench_problems::ProblemError::UnsupportedBlockSize`] for `bs` other than 1 or 3, and
    /// [`cpbench_problems::ProblemError::NonFinite`] from the checked [`CscMatrix::from_csc_parts`] when
    /// the state was not finite.
    ///
    /// `recycle` may hold the arrays of a previous matrix (from
    /// [`CscMatrix::into_csc_parts`]); their storage is reused, so a simulation does not
    /// fault in fresh pages for `N` every step.
    pub fn delassus(
        &mut self,
        nb: usize,
        bs: usize,
        recycle: Option<CscMatrix>,
    ) -> PResult<CscMatrix> {
        check_block_size(bs)?;
        self.body_lists(nb);
        let nc = self.side_body.len();
        // structure: sorted neighbour list of every contact (merge of its bodies' lists)
        self.nbr_ptr.clear();
        self.nbr.clear();
        self.nbr_code.clear();
        self.nbr_ptr.push(0);
        let empty: &[(u32, u8)] = &[];
        for sb in &self.side_body {
            let list = |x: u32| -> &[(u32, u8)] {
                if x == NONE {
                    empty
                } else {
                    let x = x as usize;
                    &self.body_list[self.body_ptr[x] as usize..self.body_ptr[x + 1] as usize]
                }
            };
            let (l0, l1) = (list(sb[0]), list(sb[1]));
            let (mut i0, mut i1) = (0, 0);
            while i0 < l0.len() || i1 < l1.len() {
                let c0 = l0.get(i0).map_or(u32::MAX, |e| e.0);
                let c1 = l1.get(i1).map_or(u32::MAX, |e| e.0);
                if c0 < c1 {
                    self.nbr.push(c0);
                    self.nbr_code.push(l0[i0].1 + 1);
                    i0 += 1;
                } else if c1 < c0 {
                    self.nbr.push(c1);
                    self.nbr_code.push((l1[i1].1 + 1) << 2);
                    i1 += 1;
                } else {
                    self.nbr.push(c0);
                    self.nbr_code.push((l0[i0].1 + 1) | ((l1[i1].1 + 1) << 2));
                    i0 += 1;
                    i1 += 1;
                }
            }
            self.nbr_ptr.push(self.nbr.len());
        }
        let nnz = bs * bs * self.nbr.len();
        let (mut col_ptr, mut row_idx, mut values) = match recycle {
            Some(m) => m.into_csc_parts(),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        col_ptr.clear();
        row_idx.clear();
        values.clear();
        // every entry is written exactly once below (blocks c2 >= c directly, c2 < c as
        // mirrors), so the fill value is irrelevant
        values.resize(nnz, 0.0);
        for c in 0..nc {
            let (p0, p1) = (self.nbr_ptr[c], self.nbr_ptr[c + 1]);
            let deg = p1 - p0;
            let base = bs * bs * p0;
            for l in 0..bs {
                col_ptr.push(base + l * bs * deg);
                for &c2 in &self.nbr[p0..p1] {
                    for k in 0..bs {
                        row_idx.push(bs * c2 as usize + k);
                    }
                }
            }
        }
        col_ptr.push(nnz);
        // values: each block once, mirrored
        if bs == 3 {
            self.fill_values::<3>(&mut values);
        } else {
            self.fill_values::<1>(&mut values);
        }
        CscMatrix::from_csc_parts(bs * nc, bs * nc, col_ptr, row_idx, values)
    }

    /// Value pass of [`Assembly::delassus`] for block size `BS`: block `N_{c2,c}` for every
    /// neighbour `c2 >= c` of `c` is computed once and written to column block `c` and, as
    /// its transpose, to column block `c2`. The position of `c` in the neighbour list of `c2`
    /// is the number of contacts below `c` already seen next to `c2` (contacts are visited in
    /// increasing order and the lists are sorted), kept in `mirror`.
    fn fill_values<const BS: usize>(&mut self, values: &mut [f64]) {
        let nc = self.side_body.len();
        self.mirror.clear();
        self.mirror.resize(nc, 0);
        for c in 0..nc {
            let (p0, p1) = (self.nbr_ptr[c], self.nbr_ptr[c + 1]);
            let deg = p1 - p0;
            let base = BS * BS * p0;
            let wc = &self.w[c];
            for p in 0..deg {
                let c2 = self.nbr[p0 + p] as usize;
                if c2 < c {
                    continue;
                }
                let code = self.nbr_code[p0 + p];
                let w2 = &self.w[c2];
                let mut blk = [[0.0f64; BS]; BS];
                for (sc, b) in wc.iter().enumerate() {
                    let s2 = (code >> (2 * sc)) & 3;
                    if s2 == 0 {
                        continue;
                    }
                    let a = &w2[(s2 - 1) as usize];
                    for (k, row) in blk.iter_mut().enumerate() {
                        for (l, v) in row.iter_mut().enumerate() {
                            *v += dot6(&a[k], &b[l]);
                        }
                    }
                }
                for (k, row) in blk.iter().enumerate() {
                    for (l, &v) in row.iter().enumerate() {
                        values[base + l * BS * deg + BS * p + k] = v;
                    }
                }
                if c2 != c {
                    let q0 = self.nbr_ptr[c2];
                    let deg2 = self.nbr_ptr[c2 + 1] - q0;
                    let q = self.mirror[c2] as usize;
                    self.mirror[c2] += 1;
                    debug_assert_eq!(self.nbr[q0 + q] as usize, c);
                    let base2 = BS * BS * q0;
                    for (k, row) in blk.iter().enumerate() {
                        for (l, &v) in row.iter().enumerate() {
                            values[base2 + k * BS * deg2 + BS * q + l] = v;
                        }
                    }
                }
            }
        }
    }

    /// `r = b + D^T v_free` (length `bs nc`) into `r`, with `b_c = (gap_c / h, 0, 0)`
    /// (with restitution, [`Assembly::restitution`] then rewrites the impacting normal rows).
    pub fn rhs(&self, contacts: &[Contact], h: f64, bs: usize, r: &mut Vec<f64>) {
        set_len(r, bs * contacts.len(), 0.0);
        r.par_chunks_mut(bs)
            .zip(contacts.par_iter())
            .enumerate()
            .with_min_len(GRAIN)
            .for_each(|(c, (rc, ct))| {
                for (k, out) in rc.iter_mut().enumerate() {
                    let mut v = if k == 0 { ct.gap / h } else { 0.0 };
                    for s in 0..2 {
                        let x = self.side_body[c][s];
                        if x != NONE {
                            v += dot6(&self.w[c][s][k], &self.sv[x as usize]);
                        }
                    }
                    *out = v;
                }
            });
    }

    /// Newton's impact law in the constant term of the normal rows (Moreau 1988, "Unilateral
    /// contact and dry friction in finite freedom dynamics", CISM 302; Acary & Brogliato 2008,
    /// "Numerical Methods for Nonsmooth Dynamical Systems", ch. 10, the Moreau-Jean
    /// scheme with Newton's impact law): after [`Assembly::rhs`], for every contact `c` that
    /// *impacts*, replace `r_c,n = Phi_c / h + v_n,free` by
    ///
    /// ```text
    /// r_c,n = e v_n(t) + v_n,free,   so that   g_c,n = v_n(t+h) + e v_n(t) >= 0  _|_  gamma_c,n >= 0,
    /// ```
    ///
    /// `v_n(t)` the relative normal velocity at the start of the step, `(D^T v(t))` of the
    /// normal column, from the same scaled Jacobian blocks as `r` (`bodies` must hold the
    /// velocities `v(t)` the blocks of the last [`Assembly::jacobian`] were built with).
    /// Contact `c` impacts when `v_n(t) < -threshold` (it closes faster than the threshold)
    /// and `r_c,n < 0` (its free motion would close the gap within the step, so the gap row
    /// would act). Tangential rows are not changed (no tangential restitution).
    ///
    /// The gap term `Phi / h` is dropped on impacting rows, as in Moreau's and Acary &
    /// Brogliato's velocity-level law (active contacts carry the impact law alone): kept, it
    /// would either stop the body at contact within the step and absorb the impact (`Phi > 0`,
    /// the envelope sees contacts before they touch) or add a push-out velocity `-Phi / h`
    /// that is not part of the law (`Phi < 0`). The price is a position error below `h
    /// |v_n(t)|`: an impacting body rebounds from where it is at the start of the step (its
    /// gap then is in `[0, h |v_n,free|)`). Non-impacting contacts (resting, slow or
    /// separating) keep `Phi / h`. With `e = 0` the impacting rows read `v_n(t+h) >= 0` (no
    /// bounce); the stepper calls this method only when `e > 0`, so the default scheme is
    /// unchanged bit for bit.
    ///
    /// `r` holds the `bs nc` entries written by [`Assembly::rhs`] for the contacts of the
    /// last [`Assembly::jacobian`] (a shorter `r` is changed on its contacts only); `e` in `[0, 1]`, `threshold >= 0` (m/s) as checked by
    /// [`crate::SimParams::validate`]. Returns the number of impacting contacts. Allocates
    /// only when the number of bodies grows.
    pub fn restitution(
        &mut self,
        bodies: &[Body],
        bs: usize,
        e: f64,
        threshold: f64,
        r: &mut [f64],
    ) -> usize {
        self.scaled_start_velocities(bodies);
        let mut impacts = 0;
        for (c, (sb, rn)) in self
            .side_body
            .iter()
            .zip(r.iter_mut().step_by(bs.max(1)))
            .enumerate()
        {
            if *rn >= 0.0 {
                continue;
            }
            let (mut vn0, mut vnf) = (0.0, 0.0);
            for (&x, side) in sb.iter().zip(&self.w[c]) {
                if x != NONE {
                    vn0 += dot6(&side[0], &self.sv0[x as usize]);
                    vnf += dot6(&side[0], &self.sv[x as usize]);
                }
            }
            if vn0 < -threshold {
                *rn = e * vn0 + vnf;
                impacts += 1;
            }
        }
        impacts
    }

    /// The contacts' velocities at the start of the step, `v0 = D^T v(t)` (length `bs nc`,
    /// normal first per contact), from the scaled Jacobian blocks of the last
    /// [`Assembly::jacobian`] and the bodies' velocities `v(t)` (as [`Assembly::restitution`]
    /// reads them). For MuJoCo's compliance ([`crate::compliance`]). Allocates only when the
    /// numbers of bodies or contacts grow.
    pub fn start_velocities(&mut self, bodies: &[Body], bs: usize, out: &mut Vec<f64>) {
        self.scaled_start_velocities(bodies);
        set_len(out, bs * self.side_body.len(), 0.0);
        for (c, (sb, oc)) in self
            .side_body
            .iter()
            .zip(out.chunks_mut(bs.max(1)))
            .enumerate()
        {
            for (k, o) in oc.iter_mut().enumerate() {
                *o = sb
                    .iter()
                    .zip(&self.w[c])
                    .filter(|(&x, _)| x != NONE)
                    .map(|(&x, side)| dot6(&side[k], &self.sv0[x as usize]))
                    .sum();
            }
        }
    }

    /// `sv0 = M^(1/2) v(t)` per body (the scaling of the Jacobian blocks).
    fn scaled_start_velocities(&mut self, bodies: &[Body]) {
        self.sv0.clear();
        self.sv0.extend(bodies.iter().map(|b| {
            let sm = b.mass.sqrt();
            let sj = b.inertia.map(f64::sqrt);
            [
                sm * b.vel.x,
                sm * b.vel.y,
                sm * b.vel.z,
                sj.x * b.omega.x,
                sj.y * b.omega.y,
                sj.z * b.omega.z,
            ]
        }));
    }

    /// Velocity update: set every movable body's velocity to `v_free + M^-1 D gamma`
    /// (`gamma` of length `bs nc`). Fixed bodies keep zero velocity.
    pub fn update_velocities(
        &self,
        bodies: &mut [Body],
        vfree: &[(Vector3<f64>, Vector3<f64>)],
        gamma: &[f64],
        bs: usize,
    ) {
        for (b, (v, om)) in bodies.iter_mut().zip(vfree) {
            if b.fixed {
                b.vel = Vector3::zeros();
                b.omega = Vector3::zeros();
            } else {
                b.vel = *v;
                b.omega = *om;
            }
        }
        for (c, sb) in self.side_body.iter().enumerate() {
            let g = &gamma[bs * c..bs * c + bs];
            for (s, &x) in sb.iter().enumerate() {
                if x == NONE {
                    continue;
                }
                let mut t = [0.0f64; 6];
                for (k, gk) in g.iter().enumerate() {
                    for (ti, wi) in t.iter_mut().zip(&self.w[c][s][k]) {
                        *ti += wi * gk;
                    }
                }
                let b = &mut bodies[x as usize];
                let ism = 1.0 / b.mass.sqrt();
                b.vel += Vector3::new(t[0], t[1], t[2]) * ism;
                b.omega += Vector3::new(t[3], t[4], t[5]).component_mul(&b.inv_sqrt_inertia());
            }
        }
    }

    /// Number of stored entries `N` will have for block size `bs` (after
    /// [`Assembly::delassus`]).
    pub fn nnz(&self, bs: usize) -> usize {
        bs * bs * self.nbr.len()
    }
}

/// The block-row structure of the upper triangle of `N` over `nc` contacts into `row_ptr`
/// (length `nc + 1`) and `col` (block columns, row by row): `neighbours(c, f)` calls `f` with
/// the contacts `c2 >= c` coupled to `c`, in increasing order (`c` itself first). Row lengths
/// are counted in parallel, a prefix sum places the rows, then the rows are filled in
/// parallel (deterministic); the vectors' storage is reused. Shared by the 3-D and planar
/// steppers' direct block assembly.
pub(crate) fn upper_structure<F>(
    nc: usize,
    row_ptr: &mut Vec<usize>,
    col: &mut Vec<u32>,
    neighbours: F,
) where
    F: Fn(usize, &mut dyn FnMut(u32)) + Sync,
{
    set_len(row_ptr, nc + 1, 0);
    row_ptr[0] = 0;
    row_ptr[1..]
        .par_iter_mut()
        .enumerate()
        .with_min_len(GRAIN)
        .for_each(|(c, len)| {
            let mut k = 0;
            neighbours(c, &mut |_| k += 1);
            *len = k;
        });
    for c in 0..nc {
        row_ptr[c + 1] += row_ptr[c];
    }
    set_len(col, row_ptr[nc], 0);
    for_rows(
        col,
        row_ptr,
        1,
        0..nc,
        &|rows: Range<usize>, out: &mut [u32]| {
            let mut k = 0;
            for c in rows {
                neighbours(c, &mut |c2| {
                    out[k] = c2;
                    k += 1;
                });
            }
        },
    );
}

/// The contacts of two incidence lists (`(contact, side)` pairs sorted by contact) in
/// increasing order, each once (a contact in both lists is one reported): the merge behind
/// the block rows of the 3-D and planar steppers' direct block assembly.
#[inline]
pub(crate) fn merge_contacts(
    l0: &[(u32, u8)],
    l1: &[(u32, u8)],
    f: &mut (impl FnMut(u32) + ?Sized),
) {
    let (mut i0, mut i1) = (0, 0);
    while i0 < l0.len() || i1 < l1.len() {
        let c0 = l0.get(i0).map_or(u32::MAX, |e| e.0);
        let c1 = l1.get(i1).map_or(u32::MAX, |e| e.0);
        f(c0.min(c1));
        if c0 <= c1 {
            i0 += 1;
        }
        if c1 <= c0 {
            i1 += 1;
        }
    }
}
