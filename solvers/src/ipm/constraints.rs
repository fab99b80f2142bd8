//! The constraint operator of the interior point: the conic form `s = G x + h` in `C` of each
//! problem class (see the module docs of [`super`]).

use cpbench_problems::{ConicPiece, ConstraintSet};

/// One bound row `s = c x_j + h` with `c = +-1`.
#[derive(Clone, Copy, Debug)]
pub(super) struct BoundRow {
    pub(super) j: usize,
    pub(super) c: f64,
    pub(super) h: f64,
}

/// One cone block `s = (mu x_b, x_{b+1}, x_{b+2})`.
#[derive(Clone, Copy, Debug)]
pub(super) struct ConeBlock {
    pub(super) b: usize,
    pub(super) mu: f64,
}

/// `G` and `h`: the half-line rows first (`s[0..m_rows]`), then one 3-row block per cone.
#[derive(Clone, Debug, Default)]
pub(super) struct ConicForm {
    pub(super) rows: Vec<BoundRow>,
    pub(super) cones: Vec<ConeBlock>,
}

/// What [`ConicForm::build`] derives from a constraint set besides the form itself.
pub(super) struct Layout {
    /// Variables fixed by the constraints (`lo = hi`, tangents of a `mu = 0` contact).
    pub(super) fixed: Vec<bool>,
    /// First variable of each 3x3 cone block of `G^T W^-2 G`.
    pub(super) blocks: Vec<usize>,
}

impl ConicForm {
    /// Rebuild the form of `set` over `n` variables (reusing the storage).
    pub(super) fn build(&mut self, set: &ConstraintSet, n: usize) -> Layout {
        self.rows.clear();
        self.cones.clear();
        let mut fixed = vec![false; n];
        let mut blocks = Vec::new();
        // from the set's conic pieces (`ConstraintSet::conic_pieces`), in the order of the
        // unknowns
        for p in set.conic_pieces(n) {
            match p {
                ConicPiece::HalfLine { j } => self.rows.push(BoundRow { j, c: 1.0, h: 0.0 }),
                ConicPiece::Interval { j, lo: l, hi: h } => {
                    if l == h {
                        fixed[j] = true;
                        continue;
                    }
                    if l.is_finite() {
                        self.rows.push(BoundRow { j, c: 1.0, h: -l });
                    }
                    if h.is_finite() {
                        self.rows.push(BoundRow { j, c: -1.0, h });
                    }
                }
                ConicPiece::Cone { b, mu: m, .. } => {
                    if m > 0.0 {
                        self.cones.push(ConeBlock { b, mu: m });
                        blocks.push(b);
                    } else {
                        self.rows.push(BoundRow {
                            j: b,
                            c: 1.0,
                            h: 0.0,
                        });
                        fixed[b + 1] = true;
                        fixed[b + 2] = true;
                    }
                }
                // Not reached: ipm refuses the BLCP (not a QP, `Ipm::supports`); its bounds
                // couple x_n and x_t, which single-variable bound rows cannot express. No rows.
                ConicPiece::FrictionPyramid { .. } => {}
            }
        }
        Layout { fixed, blocks }
    }

    /// Number of half-line rows.
    pub(super) fn m_rows(&self) -> usize {
        self.rows.len()
    }

    /// Number of rows of `G` (half-lines plus 3 per cone).
    pub(super) fn dim(&self) -> usize {
        self.rows.len() + 3 * self.cones.len()
    }

    /// Barrier degree `nu`.
    pub(super) fn nu(&self) -> f64 {
        (self.rows.len() + self.cones.len()).max(1) as f64
    }

    /// `s = G x + h`.
    pub(super) fn slack(&self, x: &[f64], s: &mut [f64]) {
        self.g_apply(x, s);
        for (k, row) in self.rows.iter().enumerate() {
            s[k] += row.h;
        }
    }

    /// `ds = G dx` (no offset).
    pub(super) fn g_apply(&self, dx: &[f64], ds: &mut [f64]) {
        let m = self.m_rows();
        for (k, row) in self.rows.iter().enumerate() {
            ds[k] = row.c * dx[row.j];
        }
        for (c, cb) in self.cones.iter().enumerate() {
            let o = m + 3 * c;
            ds[o] = cb.mu * dx[cb.b];
            ds[o + 1] = dx[cb.b + 1];
            ds[o + 2] = dx[cb.b + 2];
        }
    }

    /// `out += alpha G^T y`.
    pub(super) fn gt_add(&self, y: &[f64], out: &mut [f64], alpha: f64) {
        let m = self.m_rows();
        for (k, row) in self.rows.iter().enumerate() {
            out[row.j] += alpha * row.c * y[k];
        }
        for (c, cb) in self.cones.iter().enumerate() {
            let o = m + 3 * c;
            out[cb.b] += alpha * cb.mu * y[o];
            out[cb.b + 1] += alpha * y[o + 1];
            out[cb.b + 2] += alpha * y[o + 2];
        }
    }
}
