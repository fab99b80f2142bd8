//! 2-D friction cones for solvers written for 3-D ones: an exact embedding.
//!
//! A 2-D Coulomb instance (`d = 2`, Siconos' fc2d: blocks `(x_n, x_t)`, `|x_t| <= mu x_n`) is
//! solved as the 3-D instance with one more tangent per contact, decoupled and zero:
//! `N' = P N P^T + E`, `r' = P r`, where `P` puts unknown `2c + a` at `3c + a` and `E` is the
//! identity on the added unknowns `3c + 2`. The answer is read back through `P^T`.
//!
//! The embedding is exact for both classes:
//! - CCP (`min 1/2 x^T N x + r^T x`, `x in K`): for any feasible `x'`, dropping its added
//!   tangent keeps it feasible (`|x_t1| <= ||x_t|| <= mu x_n`) and lowers the objective by
//!   `x_t2^2 / 2`, so every minimiser has `x_t2 = 0` and restricts to a minimiser of the 2-D
//!   problem, and conversely.
//! - Coulomb problem: the added velocity is `u_t2 = r_t2`; a sliding contact has
//!   `r_t = -mu r_n u_T / ||u_T||`, so `r_t2 = -k r_t2` with `k > 0`, and a sticking one
//!   `u_T = 0`: both force `r_t2 = 0`, and then `||u_T|| = |u_t1|`: the 3-D law is the 2-D law.
//!
//! [`Embed2d`] wraps any solver; a solver that handles 2-D cones itself
//! ([`Solver::handles_cone_dim`]) and every 3-D or non-cone instance pass straight through
//! (same arithmetic, bit for bit). Cost: one more stored entry per contact in `N'`; the
//! products of the inner solve are counted on the outer problem. The registry's
//! [`crate::registry::build`] wraps every solver it builds.

use crate::problem::Problem;
use crate::solver::{Solver, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::{
    ConstraintSet, CscMatrix, Instance, ProblemClass, Provenance, ValidationOptions,
};

/// A solver, made to take 2-D cone instances through the 3-D embedding (module docs).
pub struct Embed2d {
    inner: Box<dyn Solver + Send>,
    embedded: Option<Embedded>,
}

/// The 3-D instance and the inner solver's state.
struct Embedded {
    instance: Instance,
    state: IterState,
}

impl Embed2d {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Solver + Send>) -> Self {
        Self {
            inner,
            embedded: None,
        }
    }
}

/// The 3-D embedding `(P N P^T + E, P r)` of a 2-D cone instance (module docs), of the same
/// class. Errors: those of building the instance (none for a valid 2-D instance).
pub fn embed_3d(inst: &Instance) -> Result<Instance, SolverError> {
    let mu = inst.constraints().friction().unwrap_or(&[]).to_vec();
    let nc = mu.len();
    let map = |i: usize| 3 * (i / 2) + i % 2;
    let n = inst.csc();
    let mut t = Vec::with_capacity(n.nnz() + nc);
    for j in 0..n.ncols() {
        let (ri, va) = n.col(j);
        for (&i, &v) in ri.iter().zip(va) {
            t.push((map(i), map(j), v));
        }
    }
    for c in 0..nc {
        t.push((3 * c + 2, 3 * c + 2, 1.0));
    }
    let err = |e: cpbench_problems::ProblemError| {
        SolverError::Numerical(format!("3-D embedding of a 2-D instance: {e}"))
    };
    let w = CscMatrix::from_triplets(3 * nc, 3 * nc, &t).map_err(err)?;
    let mut r = vec![0.0; 3 * nc];
    for (i, &v) in inst.r().iter().enumerate() {
        r[map(i)] = v;
    }
    let name = format!("{}__embedded3d", inst.name());
    let (prov, opts) = (Provenance::default(), ValidationOptions::default());
    // the joint blocks stay free (their added unknown is decoupled and zero, as a cone's)
    let k = ConstraintSet::coulomb_jointed(mu, 3, inst.constraints().joints());
    let out = if inst.class() == ProblemClass::Coulomb {
        Instance::new_coulomb_set(name, w, r, k, prov, opts)
    } else {
        Instance::new(name, w, r, k, prov, opts)
    };
    out.map_err(err)
}

impl Embedded {
    /// Copy the inner iterate back into the outer state (`P^T x'`).
    fn restrict(&self, outer: &mut IterState) {
        for (c, blk) in outer.gamma.chunks_exact_mut(2).enumerate() {
            blk[0] = self.state.gamma[3 * c];
            blk[1] = self.state.gamma[3 * c + 1];
        }
        outer.grad_fresh = false;
    }
}

/// A problem on `instance` with the outer problem's deadline and memory limit.
fn inner_problem<'a>(instance: &'a Instance, outer: &Problem) -> Problem<'a> {
    let mut p = Problem::new(instance);
    p.set_deadline(outer.deadline());
    p.set_memory_limit(outer.memory_limit());
    p
}

impl Solver for Embed2d {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn supports(&self, class: ProblemClass) -> bool {
        self.inner.supports(class)
    }

    fn handles_cone_dim(&self, dim: usize) -> bool {
        dim == 2 || self.inner.handles_cone_dim(dim)
    }

    fn solves_general_lcp(&self) -> bool {
        self.inner.solves_general_lcp()
    }

    fn takes_joints(&self) -> bool {
        self.inner.takes_joints()
    }

    fn refusal(&self, instance: &Instance) -> Option<String> {
        self.inner.refusal(instance)
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let two_d = inst.constraints().cone_dim() == Some(2);
        if !two_d || self.inner.handles_cone_dim(2) {
            self.embedded = None;
            return self.inner.init(problem, state);
        }
        let instance = embed_3d(inst)?;
        let mut g = vec![0.0; instance.n()];
        for (c, blk) in state.gamma.chunks_exact(2).enumerate() {
            g[3 * c] = blk[0];
            g[3 * c + 1] = blk[1];
        }
        let mut e = Embedded {
            instance,
            state: IterState::new(g),
        };
        e.state.iteration = state.iteration;
        let p = inner_problem(&e.instance, problem);
        let res = self.inner.init(&p, &mut e.state);
        problem.add_matvecs(p.matvecs());
        e.restrict(state);
        self.embedded = Some(e);
        res
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let Some(e) = self.embedded.as_mut() else {
            return self.inner.step(problem, state);
        };
        e.state.iteration = state.iteration;
        e.state.grad_fresh = false;
        let p = inner_problem(&e.instance, problem);
        let out = self.inner.step(&p, &mut e.state);
        problem.add_matvecs(p.matvecs());
        e.restrict(state);
        out
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        self.inner.counters()
    }

    fn message(&self) -> Option<String> {
        let m = self.inner.message();
        match (&self.embedded, m) {
            (Some(_), Some(m)) => Some(format!("{m} (2-D cones solved as the 3-D embedding)")),
            (Some(_), None) => Some("2-D cones solved as the 3-D embedding".into()),
            (None, m) => m,
        }
    }

    fn iter_info(&self) -> crate::observer::IterInfo {
        self.inner.iter_info()
    }
}
