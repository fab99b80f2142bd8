//! [`RawInstance`] (an [`Instance`] shared with Python) and the functions that make and write
//! one: [`load`] (every format `cpbench` reads), [`from_arrays`] (CSC arrays and vectors from
//! NumPy) and [`save`] (bundle, fclib, `.npz`).

use crate::buffer::{Buffer, Field};
use crate::errors::{invalid, py_err};
use cpbench_problems::io::{ClassChoice, LoadOptions, OutputFormat};
use cpbench_problems::{ConstraintSet, CscMatrix, Instance, Provenance, ValidationOptions};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// An instance `(N, r, K)` owned by Rust and shared (`Arc`) with the buffers and solves made
/// from it. Immutable. The Python class `cpbench.Instance` wraps it.
#[pyclass(frozen, module = "cpbench._cpbench")]
pub struct RawInstance {
    /// The instance.
    pub inner: Arc<Instance>,
}

impl RawInstance {
    /// Share `inst` with Python.
    pub fn new(inst: Instance) -> Self {
        Self {
            inner: Arc::new(inst),
        }
    }
}

/// The class choice `cls` as the CLI's `--class` spells it (`ccp` when `None`). Errors:
/// `CpbenchError` with the CLI's message for an invalid value.
pub fn class_choice(cls: Option<&str>) -> PyResult<ClassChoice> {
    match cls {
        None => Ok(ClassChoice::default()),
        Some(c) => c.parse::<ClassChoice>().map_err(py_err),
    }
}

#[pymethods]
impl RawInstance {
    /// A read-only buffer of `name` (`r`, `mu`, `lo`, `hi`, and `N`'s CSR arrays `indptr`,
    /// `indices`, `data`), or `None` when the instance has no such array (`mu` without
    /// friction, `lo` / `hi` without a box). Errors: `CpbenchError` for another name.
    fn buffer(&self, name: &str) -> PyResult<Option<Buffer>> {
        let field = Field::parse(name).ok_or_else(|| {
            invalid(format!(
                "unknown array '{name}' (r, mu, lo, hi, indptr, indices, data)"
            ))
        })?;
        Ok(field
            .present(&self.inner)
            .then(|| Buffer::of_instance(self.inner.clone(), field)))
    }

    /// Number of unknowns `n`.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }

    /// Stored entries of `N` (both triangles).
    #[getter]
    fn nnz(&self) -> usize {
        self.inner.nnz()
    }

    /// Instance name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Class name: `lcp`, `box`, `ccp`, `coulomb` or `blcp`.
    #[getter]
    fn cls(&self) -> &'static str {
        self.inner.class().as_str()
    }

    /// Content hash (SHA-256 hex of class, `N`, `r` and the constraint data).
    #[getter]
    fn hash(&self) -> String {
        self.inner.hash().to_string()
    }

    /// Unknowns per contact of Coulomb cones (2 or 3), 3 for friction boxes, `None` otherwise.
    #[getter]
    fn cone_dim(&self) -> Option<usize> {
        // the block size of a set with friction (cones: their dimension; friction boxes: 3)
        let k = self.inner.constraints();
        k.friction().map(|_| k.block_size())
    }

    /// Number of contacts (length of `mu`) of a frictional instance, `None` otherwise.
    #[getter]
    fn contacts(&self) -> Option<usize> {
        self.inner.constraints().friction().map(<[f64]>::len)
    }

    /// Number of bilateral (joint) blocks: the first blocks of the cones (docs/formulation.md,
    /// "Bilateral rows"); 0 without joints or without cones.
    #[getter]
    fn joints(&self) -> usize {
        self.inner.constraints().joints()
    }

    /// Whether `N` is stored symmetric.
    #[getter]
    fn symmetric(&self) -> bool {
        self.inner.is_symmetric()
    }

    /// Storage behind `N`-products: `csc`, `block` or `matrix-free`.
    #[getter]
    fn operator(&self) -> String {
        self.inner.operator_kind().as_str().to_string()
    }

    /// The provenance as JSON text.
    #[getter]
    fn provenance_json(&self) -> String {
        serde_json::to_string(self.inner.provenance()).unwrap_or_else(|_| "{}".into())
    }

    /// The diagonal compliance `R` included in `N` (length `n`), `None` for a rigid problem
    /// ([`Instance::compliance`]).
    #[getter]
    fn compliance(&self) -> Option<Vec<f64>> {
        self.inner.compliance().map(<[f64]>::to_vec)
    }

    /// The compliant problem `(N + R, r)` ([`Instance::with_compliance`]; `compliance` of
    /// length `n`, entries `>= 0`), a new instance. Errors: `CpbenchError` naming the first bad
    /// entry or the wrong length.
    fn with_compliance(&self, compliance: PyBuffer<f64>, py: Python<'_>) -> PyResult<Self> {
        let c = compliance.to_vec(py)?;
        let inst = (*self.inner).clone().with_compliance(c).map_err(py_err)?;
        Ok(Self::new(inst))
    }

    /// Projection of `gamma` (length `n`) onto the instance's set `K`; returns a new buffer.
    /// Errors: `CpbenchError` for a wrong length.
    fn project(&self, gamma: PyBuffer<f64>, py: Python<'_>) -> PyResult<Buffer> {
        let mut g = gamma.to_vec(py)?;
        if g.len() != self.inner.n() {
            return Err(invalid(format!(
                "gamma has length {}, instance has n = {}",
                g.len(),
                self.inner.n()
            )));
        }
        self.inner.constraints().project(&mut g);
        Ok(Buffer::owned(g))
    }

    /// `N x` (length `n`), one product on the instance's storage. Errors: `CpbenchError` for
    /// a wrong length.
    fn matvec(&self, x: PyBuffer<f64>, py: Python<'_>) -> PyResult<Buffer> {
        let x = x.to_vec(py)?;
        if x.len() != self.inner.n() {
            return Err(invalid(format!(
                "x has length {}, instance has n = {}",
                x.len(),
                self.inner.n()
            )));
        }
        let mut y = vec![0.0; x.len()];
        self.inner.matvec(&x, &mut y);
        Ok(Buffer::owned(y))
    }
}

/// Read an instance file or bundle folder of any format `cpbench` reads (fclib HDF5, Siconos
/// `.dat`, bundle, `.npz`), with `cls` as `--class`, `symmetrize` as `--symmetrize` and
/// `operator` as `--operator` (`auto`, `csc`, `block` or `matrix-free`; `matrix-free` keeps a
/// global file's `M` and `H` for the CCP and the Coulomb problem, docs/cli.md "Storage of N").
/// Errors: the reader's, with the CLI's message (`CpbenchFileNotFoundError` for a missing path);
/// an unknown `operator`, and a storage the instance cannot take (a stored `N` made
/// matrix-free), as `CpbenchError`.
#[pyfunction]
#[pyo3(signature = (path, cls=None, symmetrize=false, operator=None))]
pub fn load(
    py: Python<'_>,
    path: PathBuf,
    cls: Option<&str>,
    symmetrize: bool,
    operator: Option<&str>,
) -> PyResult<RawInstance> {
    use cpbench_problems::io::{load_with, GlobalForm};
    use cpbench_problems::OperatorKind;
    let opts = LoadOptions {
        class: class_choice(cls)?,
        validation: ValidationOptions {
            symmetrize,
            ..Default::default()
        },
    };
    let kind = match operator.unwrap_or("auto") {
        "auto" => None,
        "csc" => Some(OperatorKind::Csc),
        "block" => Some(OperatorKind::Block),
        "matrix-free" => Some(OperatorKind::MatrixFree),
        other => {
            return Err(invalid(format!(
                "invalid operator '{other}': expected auto, csc, block or matrix-free"
            )))
        }
    };
    let global = match kind {
        Some(OperatorKind::MatrixFree) => GlobalForm::MatrixFree,
        _ => GlobalForm::Condensed,
    };
    let inst = py
        .detach(|| {
            let inst = load_with(&path, &opts, global)?;
            match kind {
                Some(k) => inst.with_operator(k),
                None => Ok(inst),
            }
        })
        .map_err(py_err)?;
    Ok(RawInstance::new(inst))
}

/// The number `J` of bilateral (joint) blocks named by the block indices `joints` among the
/// `blocks` blocks of a cone set (docs/formulation.md, "Bilateral rows"): the storage holds
/// joints as the first `J` blocks, so `joints` must be `0..J` in any order. Errors (the message
/// for `CpbenchError`): a negative index, an index `>= blocks` (naming both), an index given
/// twice, or indices that are not the leading blocks (naming the first leading block missing).
pub fn joint_count(joints: &[i64], blocks: usize) -> Result<usize, String> {
    let mut seen = vec![false; blocks];
    for &j in joints {
        let k = usize::try_from(j).map_err(|_| format!("joints: negative block index {j}"))?;
        if k >= blocks {
            return Err(format!(
                "joints: block index {k} out of range (the cones have {blocks} blocks)"
            ));
        }
        if std::mem::replace(&mut seen[k], true) {
            return Err(format!("joints: block index {k} given twice"));
        }
    }
    let count = joints.len();
    if let Some(missing) = seen[..count].iter().position(|s| !s) {
        return Err(format!(
            "joints: the joint blocks must be the first blocks 0..{count} (the storage keeps \
             them first; reorder the unknowns), but block {missing} is not a joint"
        ));
    }
    Ok(count)
}

/// Build an instance from `N` in CSC arrays (`indptr` length `n + 1`, `indices` and `data` of
/// length `nnz`, sorted unique row indices per column), `r` (length `n`) and the set: `mu`
/// (cones, length `n / cone_dim`), or `lo` and `hi` (box, length `n`), or neither (LCP).
/// `joints`: block indices of bilateral (free) blocks of the cones, `0..J` in any order
/// ([`joint_count`]; `mu` 0 there). `cls`: `None` for the set's class, `coulomb` (the true
/// Coulomb problem on the cones) or `blcp` (friction boxes on `mu`, 3-D; refuses joints).
/// Errors: the validation's, [`joint_count`]'s, joints without `mu` (`CpbenchError`).
#[pyfunction]
#[pyo3(signature = (n, indptr, indices, data, r, mu=None, lo=None, hi=None, cls=None, name="python".to_string(), cone_dim=3, symmetrize=false, joints=None))]
#[allow(clippy::too_many_arguments)]
pub fn from_arrays(
    py: Python<'_>,
    n: usize,
    indptr: PyBuffer<i64>,
    indices: PyBuffer<i64>,
    data: PyBuffer<f64>,
    r: PyBuffer<f64>,
    mu: Option<PyBuffer<f64>>,
    lo: Option<PyBuffer<f64>>,
    hi: Option<PyBuffer<f64>>,
    cls: Option<&str>,
    name: String,
    cone_dim: usize,
    symmetrize: bool,
    joints: Option<PyBuffer<i64>>,
) -> PyResult<RawInstance> {
    let to_usize = |v: Vec<i64>, what: &str| -> PyResult<Vec<usize>> {
        v.into_iter()
            .map(|x| {
                usize::try_from(x).map_err(|_| invalid(format!("negative entry {x} in {what}")))
            })
            .collect()
    };
    let indptr = to_usize(indptr.to_vec(py)?, "indptr")?;
    let indices = to_usize(indices.to_vec(py)?, "indices")?;
    let data = data.to_vec(py)?;
    let r = r.to_vec(py)?;
    let vec = |b: Option<PyBuffer<f64>>| b.map(|b| b.to_vec(py)).transpose();
    let (mu, lo, hi) = (vec(mu)?, vec(lo)?, vec(hi)?);
    let joints = match (joints.map(|j| j.to_vec(py)).transpose()?, &mu) {
        (None, _) => 0,
        (Some(j), Some(mu)) => joint_count(&j, mu.len()).map_err(invalid)?,
        (Some(_), None) => {
            return Err(invalid(
                "joints are blocks of Coulomb cones: give mu (one entry per block, 0 on the \
                 joints)"
                    .to_string(),
            ))
        }
    };
    let opts = ValidationOptions {
        symmetrize,
        ..Default::default()
    };
    let provenance = Provenance {
        source: "python".into(),
        format: "arrays".into(),
        derivation: "as-is".into(),
        ..Default::default()
    };
    let build = move || -> Result<Instance, cpbench_problems::ProblemError> {
        let m = CscMatrix::from_csc_parts(n, n, indptr, indices, data)?;
        let set = match (mu, lo, hi) {
            (Some(mu), None, None) => ConstraintSet::coulomb_jointed(mu, cone_dim, joints),
            (None, Some(lo), Some(hi)) => ConstraintSet::Box { lo, hi },
            (None, None, None) => ConstraintSet::NonNegative,
            _ => {
                return Err(cpbench_problems::ProblemError::InvalidClass {
                    value: "arrays".into(),
                    reason: "give mu (cones), or lo and hi (a box), or none of them (LCP)".into(),
                })
            }
        };
        match (cls, set) {
            (None | Some("ccp" | "lcp" | "box"), set) => {
                let want = cls.unwrap_or(set.qp_class().as_str());
                if want != set.qp_class().as_str() {
                    return Err(cpbench_problems::ProblemError::InvalidClass {
                        value: want.into(),
                        reason: format!(
                            "the arrays given make a {} instance",
                            set.qp_class().as_str()
                        ),
                    });
                }
                Instance::new(name, m, r, set, provenance, opts)
            }
            (Some("coulomb"), set @ ConstraintSet::CoulombCones { .. }) => {
                Instance::new_coulomb_set(name, m, r, set, provenance, opts)
            }
            (Some("blcp"), set @ ConstraintSet::CoulombCones { dim: 3, .. }) => {
                // friction boxes have no free block: refuse, never drop, the joints
                set.refuse_joints(
                    "--class blcp",
                    "the boxed LCP has no free block (give no joints, or cls ccp / coulomb)",
                )?;
                let mu = set.friction().unwrap_or(&[]).to_vec();
                Instance::new_blcp(name, m, r, mu, provenance, opts)
            }
            (Some(c), _) => Err(cpbench_problems::ProblemError::InvalidClass {
                value: c.into(),
                reason: "from arrays: lcp, box, ccp, coulomb (with mu) or blcp (with mu, 3-D)"
                    .into(),
            }),
        }
    };
    let inst = py.detach(build).map_err(py_err)?;
    Ok(RawInstance::new(inst))
}

/// Write `inst` to `path`: `format` `bundle` (a folder with `N.mtx`, `r.mtx`,
/// `instance.json`), `fclib` (an fclib local problem, Coulomb-cone instances only) or `npz`
/// (NumPy arrays, SciPy's CSC layout for `N`); `None` chooses by the extension as
/// `cpbench convert` does (`.hdf5` / `.h5` fclib, `.npz` npz, else a bundle). Returns the
/// format written. Errors: the writer's (`CpbenchError`), an unknown format.
#[pyfunction]
#[pyo3(signature = (inst, path, format=None))]
pub fn save(
    py: Python<'_>,
    inst: &RawInstance,
    path: PathBuf,
    format: Option<&str>,
) -> PyResult<&'static str> {
    let fmt = match format {
        Some(name) => OutputFormat::parse(name).map_err(|e| invalid(e.to_string()))?,
        None => OutputFormat::from_path(&path),
    };
    let i = inst.inner.clone();
    py.detach(move || fmt.write(&i, &path)).map_err(py_err)?;
    Ok(fmt.as_str())
}
