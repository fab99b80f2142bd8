//! Small kernels shared by the solvers' `init` and `step` code: the 3x3 diagonal blocks of `N`
//! and their eigenvalue bounds, the inverse of an SPD 3x3 block, the gather of one block of `N gamma + r` along the stored
//! columns, and the check that an instance's class is one a solver handles. The power
//! iteration lives in [`cpbench_problems::linalg::power_iteration`] (the problems crate needs
//! it too).
//!
//! Every kernel keeps the operation order of the code it replaced, so results are bit for bit
//! those of the per-solver copies.
//!
//! The chunked vector passes of the first-order solvers (apgd, spgqp, bb, jacobi, mprgp/mpgp): a vector of `n`
//! unknowns is cut into [`vec_chunk`]`(n)`-long chunks of whole blocks; a vector below
//! [`PAR_MIN_LEN`] unknowns is one chunk, run on the calling thread in a plain loop's order, and
//! a longer one is split into [`PAR_CHUNK`]-long chunks run in parallel on the current rayon
//! pool. A reduction sums each chunk in index order, then the chunks' partial sums in chunk order
//! ([`sum_in_order`]): its value depends on `n` only, never on the number of threads.

use crate::problem::Problem;
use crate::solver::Solver;
use crate::status::SolverError;
use cpbench_problems::{CscMatrix, Definiteness, Instance, ProblemClass};
use nalgebra::Matrix3;

/// The counter `vector_bytes` of the first-order solvers (apgd, spgqp, pgs with its Anderson
/// step): the bytes of length-`n` vectors their own passes stream, `8 n` per vector a pass
/// reads and per vector it writes, each counted once per pass (the least traffic of the
/// passes as written: a model, not a measurement). The operand and result of the counted
/// `N`-products are not included (the scale report adds `16 n` bytes and the operator's bytes
/// per product). `passes` is the number of such vector reads and writes.
#[inline]
pub fn vector_bytes(n: usize, passes: u64) -> f64 {
    8.0 * n as f64 * passes as f64
}

/// Vectors shorter than this many unknowns are one chunk ([`vec_chunk`]): one sequential pass,
/// in the order of a plain loop.
pub const PAR_MIN_LEN: usize = 65_536;

/// The chunk length of the parallel vector passes above [`PAR_MIN_LEN`] unknowns: 12,288
/// elements, whole blocks of 1, 2 or 3 unknowns (12,288 is divisible by 2 and by 3), 96 KiB of
/// one vector.
pub const PAR_CHUNK: usize = 12_288;

/// The chunk length of the vector passes over `n` unknowns: `n` itself (at least 1) below
/// [`PAR_MIN_LEN`], one sequential chunk; [`PAR_CHUNK`] from there on, chunks run in parallel on
/// the current rayon pool. The chunks depend on `n` only, never on the number of threads.
#[inline]
pub fn vec_chunk(n: usize) -> usize {
    if n < PAR_MIN_LEN {
        n.max(1)
    } else {
        PAR_CHUNK
    }
}

/// The number of chunks of [`vec_chunk`]`(n)` over `n` unknowns (1 for `n = 0`): the length of a
/// solver's per-chunk partial sums.
#[inline]
pub fn vec_chunks(n: usize) -> usize {
    n.div_ceil(vec_chunk(n)).max(1)
}

/// The sum of per-chunk partial sums in chunk order, starting from the first chunk's value
/// (`((p_0 + p_1) + p_2) + ...`; `-0.0` for none, the empty sum of `Iterator::sum`): one chunk
/// gives its own value bit for bit, and the result depends on the chunking, never on the
/// number of threads that computed the parts.
#[inline]
pub fn sum_in_order(parts: impl IntoIterator<Item = f64>) -> f64 {
    let mut it = parts.into_iter();
    let Some(mut s) = it.next() else {
        return -0.0;
    };
    for p in it {
        s += p;
    }
    s
}

/// The 3x3 diagonal block `N_cc` (rows and columns `3c..3c+3`) of `mat`, row-major.
/// Panics (internal use) when `3c + 3 > n`.
pub fn diag_block3(mat: &CscMatrix, c: usize) -> [f64; 9] {
    let o = 3 * c;
    let mut b = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            b[3 * i + j] = mat.get(o + i, o + j);
        }
    }
    b
}

/// The symmetric part `(B + B^T) / 2` of a row-major 3x3 block.
pub fn sym_part3(b: &[f64; 9]) -> [f64; 9] {
    let mut s = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            s[3 * i + j] = 0.5 * (b[3 * i + j] + b[3 * j + i]);
        }
    }
    s
}

/// `tr(B) / 3` of a row-major 3x3 block: the mean eigenvalue, a lower bound of
/// `lambda_max(B)` for a symmetric `B` (Chrono's and Siconos' per-contact scale).
pub fn trace_mean3(b: &[f64; 9]) -> f64 {
    Matrix3::from_row_slice(b).trace() / 3.0
}

/// Largest eigenvalue of a symmetric row-major 3x3 block (nalgebra's symmetric
/// eigen-decomposition; the block must be symmetric, see [`sym_part3`]).
pub fn lambda_max3(b: &[f64; 9]) -> f64 {
    Matrix3::from_row_slice(b).symmetric_eigenvalues().max()
}

/// `tr(B) / bs` of a row-major `bs x bs` block (`bs` 2 or 3, in the first `bs^2` entries of
/// `b`): [`trace_mean3`] for 3, `(b_00 + b_11) / 2` for a 2-D contact's block.
pub fn trace_mean(b: &[f64; 9], bs: usize) -> f64 {
    if bs == 2 {
        (b[0] + b[3]) / 2.0
    } else {
        trace_mean3(b)
    }
}

/// The inverse block scales per unknown: `1 / d_c` for each of the `bs` unknowns of block
/// `c`, 0 for a block whose scale `d_c` vanishes (the block is frozen); projected Jacobi's
/// diagonal `B`.
pub fn inverse_block_scales(d: &[f64], bs: usize) -> Vec<f64> {
    d.iter()
        .flat_map(|&dc| {
            let inv = if dc > 0.0 { 1.0 / dc } else { 0.0 };
            std::iter::repeat_n(inv, bs)
        })
        .collect()
}

/// Largest eigenvalue of a symmetric row-major `bs x bs` block (`bs` 2 or 3, first `bs^2`
/// entries of `b`): [`lambda_max3`] for 3; for 2 the closed form
/// `(a + d) / 2 + sqrt(((a - d) / 2)^2 + b^2)` of `[[a, b], [b, d]]`.
pub fn lambda_max(b: &[f64; 9], bs: usize) -> f64 {
    if bs == 2 {
        let (a, c, d) = (b[0], 0.5 * (b[1] + b[2]), b[3]);
        0.5 * (a + d) + (0.25 * (a - d) * (a - d) + c * c).sqrt()
    } else {
        lambda_max3(b)
    }
}

/// The diagonal blocks `B = W_cc` of an instance's contacts (`bs` 2 or 3, row-major in the
/// first `bs^2` entries, as [`Instance::diag_block`] gives them) with the local steps
/// `1 / scale(sym B, bs)` of the Gauss-Seidel-type solvers (nsgs, tfp, pfp), where `scale` is
/// [`lambda_max`] or [`trace_mean`]; a block whose scale is not positive and finite gets the
/// step 0 (the contact stays where it is). Shapes: `n / bs` blocks and steps.
pub fn local_blocks(
    inst: &Instance,
    bs: usize,
    scale: fn(&[f64; 9], usize) -> f64,
) -> (Vec<[f64; 9]>, Vec<f64>) {
    let nc = inst.n() / bs.max(1);
    let mut blocks = Vec::with_capacity(nc);
    let mut steps = Vec::with_capacity(nc);
    for c in 0..nc {
        let b = inst.diag_block(c);
        // the 2-D forms read the symmetric part themselves
        let l = if bs == 2 {
            scale(&b, 2)
        } else {
            scale(&sym_part3(&b), 3)
        };
        blocks.push(b);
        steps.push(if l > 0.0 && l.is_finite() {
            1.0 / l
        } else {
            0.0
        });
    }
    (blocks, steps)
}

/// The inverse of a row-major `bs x bs` block (`bs` 2 or 3, the first `bs^2` entries of `b`,
/// as [`Instance::diag_block`] gives them), `None` when it is singular or nearly so
/// (`|det| <= 1e-12 max|b_ij|^bs`) or not finite. Cramer's rule (adjugate over determinant).
pub fn inverse_block(b: &[f64; 9], bs: usize) -> Option<[f64; 9]> {
    let scale = b[..bs * bs].iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mut inv = [0.0; 9];
    let det = if bs == 2 {
        let det = b[0] * b[3] - b[1] * b[2];
        inv[..4].copy_from_slice(&[b[3] / det, -b[1] / det, -b[2] / det, b[0] / det]);
        det
    } else {
        let m = Matrix3::from_row_slice(b);
        let det = m.determinant();
        let i = m.try_inverse()?;
        for r in 0..3 {
            for c in 0..3 {
                inv[3 * r + c] = i[(r, c)];
            }
        }
        det
    };
    let ok = det.abs() > 1e-12 * scale.powi(bs as i32) && inv.iter().all(|v| v.is_finite());
    (ok && scale > 0.0).then_some(inv)
}

/// The exact local solves of the bilateral (joint) blocks of `inst`
/// ([`cpbench_problems::ConstraintSet::joints`]): the inverse of each joint block's `N_cc`
/// ([`inverse_block`]; `None` where it is singular, and the solver falls back to its scaled
/// step there). Empty without joints. Shapes: one entry per joint block.
pub fn joint_inverses(inst: &Instance) -> Vec<Option<[f64; 9]>> {
    let bs = inst.constraints().block_size();
    (0..inst.constraints().joints())
        .map(|c| inverse_block(&inst.diag_block(c), bs))
        .collect()
}

/// The exact local step of a free (joint) block: `x <- x - omega N_cc^-1 g`, `g` the block's
/// `(N x + r)_c` with the latest values, `inv` = `N_cc^-1` row-major in the first `bs^2`
/// entries. With `omega = 1` the block's velocity `u_c` becomes 0: the solution of
/// `N_cc x_c = -(r_c + sum_{d != c} N_cd x_d)` (Gauss-Seidel on an equality row). Shapes: `x`,
/// `g` of length `bs` (2 or 3).
#[inline]
pub fn free_block_step(inv: &[f64; 9], g: &[f64], omega: f64, x: &mut [f64]) {
    let bs = x.len();
    for i in 0..bs {
        let s: f64 = (0..bs).map(|j| inv[bs * i + j] * g[j]).sum();
        x[i] -= omega * s;
    }
}

/// The end of one local projection iteration (NSGS's and the Tresca fixed point's local
/// solvers): `g = v` (the first `D` entries), and whether the step was small,
/// `||v - g_old|| <= tol ||v||` (`||v||` floored at 1e-150). Sums in the order `0..D`.
#[inline]
pub fn take_local_step<const D: usize>(g: &mut [f64], v: &[f64; D], tol: f64) -> bool {
    let (mut d2, mut n2) = (0.0, 0.0);
    for i in 0..D {
        d2 += (v[i] - g[i]).powi(2);
        n2 += v[i] * v[i];
    }
    g[..D].copy_from_slice(v);
    d2 <= tol * tol * n2.max(1e-300)
}

/// `out[i] = r[o + i] + sum_k mat[k, o + i] x[k]` for `i < out.len()`: one block of
/// `N x + r` at offset `o`, gathered along the stored columns `o..o + out.len()` of `mat`
/// (for the symmetric `N` column `j` is row `j`; for a non-symmetric `W` pass
/// [`Instance::row_matrix`]). Shapes: `r`, `x` of length `n`; `out` at most 3 long in the
/// solvers' use. Allocation free; accumulates in storage order, starting from `r`.
#[inline]
pub fn gather_block(mat: &CscMatrix, r: &[f64], x: &[f64], o: usize, out: &mut [f64]) {
    let (cp, ri, va) = (mat.col_ptr(), mat.row_idx(), mat.values());
    for (i, oi) in out.iter_mut().enumerate() {
        let (a, b) = (cp[o + i], cp[o + i + 1]);
        let mut s = r[o + i];
        for (&k, &v) in ri[a..b].iter().zip(&va[a..b]) {
            s += v * x[k];
        }
        *oi = s;
    }
}

/// How a Gauss-Seidel sweep reads block rows of `N`, resolved once per sweep: straight from
/// the CSC columns ([`gather_block`], the storage's own order) or through
/// [`Instance::block_row`] on the block and matrix-free storages.
pub struct RowSource<'a> {
    inst: &'a Instance,
    /// `(col_ptr, row_idx, values)` of the CSC storage.
    csc: Option<(&'a [usize], &'a [usize], &'a [f64])>,
    r: &'a [f64],
}

impl<'a> RowSource<'a> {
    /// The row access of `inst`'s storage.
    pub fn new(inst: &'a Instance) -> Self {
        let csc = (inst.operator_kind() == cpbench_problems::OperatorKind::Csc).then(|| {
            let m = inst.row_matrix();
            (m.col_ptr(), m.row_idx(), m.values())
        });
        Self {
            inst,
            csc,
            r: inst.r(),
        }
    }

    /// `out = (N x + r)_c`, block `c` (length `out.len()`, the block size) with the current
    /// `x`; `st` is the row state kept current by [`RowSource::changed`]. On CSC the same
    /// arithmetic as [`gather_block`] (storage order, starting from `r`). Allocation free.
    #[inline(always)]
    pub fn gather(&self, st: &cpbench_problems::RowState, x: &[f64], c: usize, out: &mut [f64]) {
        let bs = out.len();
        let o = bs * c;
        match self.csc {
            Some((cp, ri, va)) => {
                for (i, oi) in out.iter_mut().enumerate() {
                    let (a, b) = (cp[o + i], cp[o + i + 1]);
                    let mut s = self.r[o + i];
                    for (&k, &v) in ri[a..b].iter().zip(&va[a..b]) {
                        s += v * x[k];
                    }
                    *oi = s;
                }
            }
            None => {
                self.inst.block_row(c, x, st, out);
                for (o, ri) in out.iter_mut().zip(&self.r[o..o + bs]) {
                    *o += ri;
                }
            }
        }
    }

    /// `out = (N x + r)_c` from a whole-row copy of `N` ([`cpbench_problems::operator::WholeRows`],
    /// block `c` at position `p` of its row order): the row's product, then `r_c` added, as
    /// [`RowSource::gather`] does on the block storage, so the value is the same bit for bit.
    /// Shapes: `x` of length `n`, `out` of length `bs`. Allocation free.
    #[inline(always)]
    pub fn gather_whole(
        &self,
        rows: &cpbench_problems::operator::WholeRows,
        p: usize,
        x: &[f64],
        c: usize,
        out: &mut [f64],
    ) {
        let bs = out.len();
        let o = bs * c;
        rows.row_product(p, x, out);
        for (o, ri) in out.iter_mut().zip(&self.r[o..o + bs]) {
            *o += ri;
        }
    }

    /// Whether block changes must be reported ([`RowSource::changed`]): only the matrix-free
    /// storage keeps a state (the velocity).
    #[inline(always)]
    pub fn tracks_changes(&self) -> bool {
        self.csc.is_none()
    }

    /// Block `c` of `x` holds its final value of an ordered sweep
    /// ([`Instance::begin_ordered_sweep`], [`Instance::block_done`]): its terms go to the later
    /// rows' accumulated lower terms on the block storage; nothing on the others.
    #[inline(always)]
    pub fn done(&self, c: usize, x: &[f64], st: &mut cpbench_problems::RowState) {
        if self.csc.is_none() {
            self.inst.block_done(c, x, st);
        }
    }

    /// Block `c` of `x` changed by `delta`: update the row state (the velocity on the
    /// matrix-free storage; nothing on the others).
    #[inline(always)]
    pub fn changed(&self, c: usize, delta: &[f64], st: &mut cpbench_problems::RowState) {
        if self.csc.is_none() {
            self.inst.block_changed(c, delta, st);
        }
    }
}

/// Debug builds: after a sequential sweep over the `nb` blocks of `inst` in block order, the
/// ordered sweep on the block storage covered every row
/// ([`Instance::begin_ordered_sweep`]; a row out of order would have fallen back to the
/// transposed index silently: exact, but slower). Nothing in release builds.
#[inline(always)]
pub fn debug_assert_ordered(inst: &Instance, st: &cpbench_problems::RowState, nb: usize) {
    debug_assert!(
        inst.block_matrix().is_none() || st.ordered_next() == Some(nb),
        "ordered sweep ended at {:?} of {nb} rows",
        st.ordered_next()
    );
}

/// `Ok` when `solver` supports `class`, else [`SolverError::WrongClass`] naming the classes it
/// does support (of [`ProblemClass::ALL`]).
pub fn check_class(solver: &dyn Solver, class: ProblemClass) -> Result<(), SolverError> {
    if solver.supports(class) {
        return Ok(());
    }
    Err(SolverError::WrongClass {
        solver: solver.name(),
        class,
        supported: ProblemClass::ALL
            .into_iter()
            .filter(|&c| solver.supports(c))
            .collect(),
    })
}

/// Why `solver` cannot take `instance`: its class ([`check_class`]'s message), joint blocks
/// it does not take ([`joints_refusal`]), a QP solver on
/// a QP class whose `N` is non-symmetric, or on an LCP whose `N` is indefinite
/// ([`Solver::solves_general_lcp`], [`cpbench_problems::Instance::definiteness`]), or the
/// solver's own [`Solver::refusal`]; `None` when it can. The executor and the harness's pre-run
/// listing both use this one test.
pub fn refusal(solver: &dyn Solver, instance: &cpbench_problems::Instance) -> Option<String> {
    if let Err(e) = check_class(solver, instance.class()) {
        return Some(e.to_string());
    }
    if let Some(reason) = joints_refusal(solver.name(), solver.takes_joints(), instance) {
        return Some(reason);
    }
    let class = instance.class();
    if class.is_qp() && !solver.solves_general_lcp() {
        const LCP_SOLVERS: &str = "lemke, newton-fb, psor or enum";
        if !instance.is_symmetric() {
            let asym = instance
                .provenance()
                .parameters
                .get("asymmetry")
                .map(String::as_str)
                .unwrap_or("> 0");
            return Some(format!(
                "{} solves convex QPs, and N is not symmetric (relative asymmetry {asym}): \
                 a general LCP; use {LCP_SOLVERS}",
                solver.name()
            ));
        }
        if let Definiteness::Indefinite { min_eig } = instance.definiteness() {
            return Some(format!(
                "{} solves convex QPs, and the LCP matrix is indefinite (min eigenvalue \
                 {min_eig:.3e}); use {LCP_SOLVERS}",
                solver.name()
            ));
        }
    }
    solver.refusal(instance)
}

/// The solvers that take bilateral (joint) blocks ([`Solver::takes_joints`]), for messages.
pub const JOINT_SOLVERS: &str =
    "pgs, jacobi, nsgs, apgd, spgqp, bb, mpgp, admm, ipm, or on a compliant problem sap or primal-cg";

/// Why a solver named `name` that does (`takes`) or does not take joints cannot take
/// `instance`: `Some` when the instance has joint blocks
/// ([`cpbench_problems::ConstraintSet::joints`]) and the solver does not take them. Shared by
/// [`refusal`] and the driven solvers' executor.
pub fn joints_refusal(name: &str, takes: bool, instance: &Instance) -> Option<String> {
    let joints = instance.constraints().joints();
    (joints > 0 && !takes).then(|| {
        format!(
            "{name} does not take bilateral (joint) rows ({joints} joint blocks: equality \
             constraints its method has no step for); use {JOINT_SOLVERS}"
        )
    })
}

/// The friction coefficients `mu` (one per contact) of a [`ProblemClass::Coulomb`] instance,
/// for the Coulomb solvers' `step`; [`SolverError::WrongClass`] for any other class.
pub fn coulomb_mu<'a>(solver: &dyn Solver, inst: &'a Instance) -> Result<&'a [f64], SolverError> {
    check_class(solver, inst.class())?;
    match inst.constraints().friction() {
        Some(mu) if inst.class() == ProblemClass::Coulomb => Ok(mu),
        _ => Err(SolverError::WrongClass {
            solver: solver.name(),
            class: inst.class(),
            supported: vec![ProblemClass::Coulomb],
        }),
    }
}

/// What a Coulomb solver's `step` reads of `problem`: the friction coefficients `mu` (one per
/// contact, [`coulomb_mu`]: [`SolverError::WrongClass`] for any other class) and the block
/// size (3, or 2 for 2-D contacts).
pub fn coulomb_blocks<'a>(
    solver: &dyn Solver,
    problem: &'a Problem,
) -> Result<(&'a [f64], usize), SolverError> {
    let mu = coulomb_mu(solver, problem.instance())?;
    Ok((mu, problem.constraints().block_size()))
}

/// De Saxce's shift of one contact's velocity block `u` (3 or 2 entries): `mu ||u_T||`
/// (`mu |u_t|` on a 2-D block); De Saxce & Feng 1991, the modified velocity `u + mu ||u_T||
/// e_n` of docs/formulation.md section 4. Shared by `vi-*`, the fixed points and `admm`.
#[inline]
pub fn desaxce_shift(u: &[f64], mu: f64) -> f64 {
    if u.len() == 2 {
        mu * u[1].abs()
    } else {
        mu * u[1].hypot(u[2])
    }
}

/// Inverse of a symmetric positive definite 3x3 block `m` (row-major) by its cofactors (the
/// block-Jacobi preconditioner of the interior point's conjugate gradients). A block that is
/// not positive definite (Sylvester's criterion on its leading minors), or whose determinant
/// is below `1e-14 max|m_ii|^3`, falls back to the inverse of its diagonal, 1 where a diagonal
/// entry is not positive or not finite.
pub fn inv3_spd(m: &[f64; 9]) -> [f64; 9] {
    let c00 = m[4] * m[8] - m[5] * m[7];
    let c01 = m[5] * m[6] - m[3] * m[8];
    let c02 = m[3] * m[7] - m[4] * m[6];
    let det = m[0] * c00 + m[1] * c01 + m[2] * c02;
    let scale = m[0].abs().max(m[4].abs()).max(m[8].abs());
    let pd = m[0] > 0.0 && m[0] * m[4] - m[1] * m[3] > 0.0 && det > 0.0;
    if pd && det > 1e-14 * scale * scale * scale && det.is_finite() {
        let inv = 1.0 / det;
        [
            c00 * inv,
            (m[2] * m[7] - m[1] * m[8]) * inv,
            (m[1] * m[5] - m[2] * m[4]) * inv,
            c01 * inv,
            (m[0] * m[8] - m[2] * m[6]) * inv,
            (m[2] * m[3] - m[0] * m[5]) * inv,
            c02 * inv,
            (m[1] * m[6] - m[0] * m[7]) * inv,
            (m[0] * m[4] - m[1] * m[3]) * inv,
        ]
    } else {
        let d = |v: f64| {
            if v > 0.0 && v.is_finite() {
                1.0 / v
            } else {
                1.0
            }
        };
        [d(m[0]), 0.0, 0.0, 0.0, d(m[4]), 0.0, 0.0, 0.0, d(m[8])]
    }
}

/// A compressed-sparse-column pattern from per-column row lists (each sorted and deduplicated
/// in place): `(col_ptr, row_idx)`, for the sparse Cholesky factorisations of the interior
/// point and of SAP.
pub fn csc_pattern(cols: &mut [Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut col_ptr = Vec::with_capacity(cols.len() + 1);
    let mut row_idx = Vec::new();
    col_ptr.push(0);
    for col in cols.iter_mut() {
        col.sort_unstable();
        col.dedup();
        row_idx.extend_from_slice(col);
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx)
}

/// Position of entry `(i, j)` in the pattern `(col_ptr, row_idx)` of [`csc_pattern`]. Panics
/// when the entry is not in the pattern (the caller built the pattern to hold it).
pub fn pattern_position(col_ptr: &[usize], row_idx: &[usize], i: usize, j: usize) -> usize {
    let s = &row_idx[col_ptr[j]..col_ptr[j + 1]];
    col_ptr[j] + s.binary_search(&i).expect("entry in pattern")
}

/// The symbolic sparse Cholesky factorisation (faer, AMD ordering, lower triangle) of the
/// `n x n` pattern `(col_ptr, row_idx)` ([`csc_pattern`]). Errors: faer's message.
pub fn symbolic_llt(
    n: usize,
    col_ptr: &[usize],
    row_idx: &[usize],
) -> Result<faer::sparse::linalg::cholesky::SymbolicCholesky<usize>, String> {
    use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymmetricOrdering};
    let pattern = faer::sparse::SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
    factorize_symbolic_cholesky(
        pattern,
        faer::Side::Lower,
        SymmetricOrdering::Amd,
        Default::default(),
    )
    .map_err(|e| {
        format!(
            "symbolic Cholesky: {}",
            cpbench_problems::linalg::plain_debug(&e)
        )
    })
}
