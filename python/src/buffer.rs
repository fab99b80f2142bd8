//! [`Buffer`]: a read-only, one-dimensional buffer-protocol view of memory that Rust owns (an
//! array of an [`Instance`], or a vector such as a solve's answer), so that
//! `numpy.frombuffer(buf, dtype)` wraps it without copying. The buffer object keeps its
//! owner alive (an `Arc<Instance>`, or the vector itself) as long as any NumPy array made from
//! it exists (NumPy holds the buffer object as the array's `base`).

use cpbench_problems::Instance;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_int, c_void, CStr};
use std::sync::Arc;

/// Which array of an [`Instance`] a [`Buffer`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `r` (length `n`, float64).
    R,
    /// Friction coefficients `mu` (length `contacts`, float64): cones and friction boxes.
    Mu,
    /// Lower bounds of a box QP (length `n`, float64).
    Lo,
    /// Upper bounds of a box QP (length `n`, float64).
    Hi,
    /// Row pointers of `N` in CSR form (length `n + 1`, int64): the column pointers of
    /// [`Instance::row_matrix`], whose columns are the rows of `N`.
    Indptr,
    /// Column indices of `N` in CSR form (length `nnz`, int64).
    Indices,
    /// Values of `N` in CSR form (length `nnz`, float64).
    Data,
}

impl Field {
    /// The field called `name` (`r`, `mu`, `lo`, `hi`, `indptr`, `indices`, `data`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "r" => Field::R,
            "mu" => Field::Mu,
            "lo" => Field::Lo,
            "hi" => Field::Hi,
            "indptr" => Field::Indptr,
            "indices" => Field::Indices,
            "data" => Field::Data,
            _ => return None,
        })
    }

    /// Whether `inst` has this field (`mu` needs friction, `lo` / `hi` a box).
    pub fn present(self, inst: &Instance) -> bool {
        match self {
            Field::Mu => inst.constraints().friction().is_some(),
            Field::Lo | Field::Hi => inst.constraints().data_named("lo").is_some(),
            _ => true,
        }
    }
}

/// What a [`Buffer`] shows.
#[derive(Debug)]
enum Source {
    /// An array of a shared instance.
    Instance(Arc<Instance>, Field),
    /// A float vector of its own.
    Owned(Vec<f64>),
    /// An integer vector of its own (shown as int64).
    OwnedInt(Vec<i64>),
}

/// A read-only one-dimensional buffer (Python buffer protocol, format `d` for float64 or `q`
/// for the int64 index arrays of `N`) over Rust-owned memory; see the module documentation.
/// Made by `RawInstance.buffer(name)` and by the solve functions; wrap it with
/// `numpy.frombuffer(buf, dtype=buf.dtype)`.
#[pyclass(frozen, module = "cpbench._cpbench")]
pub struct Buffer {
    source: Source,
    /// Element count (the view's shape).
    shape: isize,
    /// Bytes per element (the view's stride).
    stride: isize,
}

// The index arrays are `usize`: shown as int64 (`q`) on the 64-bit targets the package
// builds for.
const _: () = assert!(std::mem::size_of::<usize>() == 8, "64-bit targets only");

impl Buffer {
    /// A view of `field` of `inst` (the caller checks [`Field::present`]). `N`'s arrays are
    /// formed first if the instance is on another storage (kept by the instance).
    pub fn of_instance(inst: Arc<Instance>, field: Field) -> Self {
        let len = slice_of(&inst, field).1;
        Self {
            source: Source::Instance(inst, field),
            shape: len as isize,
            stride: 8,
        }
    }

    /// A view of a vector of its own.
    pub fn owned(v: Vec<f64>) -> Self {
        let len = v.len() as isize;
        Self {
            source: Source::Owned(v),
            shape: len,
            stride: 8,
        }
    }

    /// A view of an integer vector of its own (int64).
    pub fn owned_int(v: Vec<i64>) -> Self {
        let len = v.len() as isize;
        Self {
            source: Source::OwnedInt(v),
            shape: len,
            stride: 8,
        }
    }

    /// Start, length and whether the elements are integers.
    fn raw(&self) -> (*const c_void, usize, bool) {
        match &self.source {
            Source::Instance(inst, f) => slice_of(inst, *f),
            Source::Owned(v) => (v.as_ptr().cast(), v.len(), false),
            Source::OwnedInt(v) => (v.as_ptr().cast(), v.len(), true),
        }
    }
}

/// The memory of `field` of `inst`: start, element count, and whether it holds indices.
fn slice_of(inst: &Instance, field: Field) -> (*const c_void, usize, bool) {
    let f = |s: &[f64]| (s.as_ptr().cast::<c_void>(), s.len(), false);
    let u = |s: &[usize]| (s.as_ptr().cast::<c_void>(), s.len(), true);
    match field {
        Field::R => f(inst.r()),
        Field::Mu => f(inst.constraints().friction().unwrap_or(&[])),
        Field::Lo | Field::Hi => {
            let name = if field == Field::Lo { "lo" } else { "hi" };
            f(inst.constraints().data_named(name).unwrap_or(&[]))
        }
        Field::Indptr => u(inst.row_matrix().col_ptr()),
        Field::Indices => u(inst.row_matrix().row_idx()),
        Field::Data => f(inst.row_matrix().values()),
    }
}

#[pymethods]
impl Buffer {
    /// The NumPy dtype name of the elements: `"float64"` or `"int64"`.
    #[getter]
    fn dtype(&self) -> &'static str {
        if self.raw().2 {
            "int64"
        } else {
            "float64"
        }
    }

    /// Number of elements.
    fn __len__(&self) -> usize {
        self.shape as usize
    }

    /// The buffer protocol: a read-only, C-contiguous, one-dimensional view. Errors:
    /// `BufferError` when a writable buffer is requested.
    ///
    /// # Safety
    /// Called by Python with a valid `view` to fill.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        if (flags & ffi::PyBUF_WRITABLE) == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err(
                "cpbench arrays are read-only (copy them to modify)",
            ));
        }
        let me = slf.get();
        let (ptr, len, index) = me.raw();
        let format: &'static CStr = if index { c"q" } else { c"d" };
        // SAFETY: `view` is valid (checked above); the pointers stored in it point into
        // `slf`'s own fields (`shape`, `stride`) or its owner's arrays, alive as long as
        // `view.obj` (a strong reference to `slf`) is held; the format is a static string
        // that consumers do not modify (no `__releasebuffer__` needed).
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = ptr as *mut c_void;
            (*view).len = (len * 8) as isize;
            (*view).readonly = 1;
            (*view).itemsize = 8;
            (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
                format.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
                &me.shape as *const isize as *mut isize
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
                &me.stride as *const isize as *mut isize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }
}
