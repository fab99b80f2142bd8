//! HDF5 access for the fclib reader: typed datasets (any integer width, real or integer reals),
//! scalars, `spacedim`, size checks and fclib's sparse matrix groups, every error naming the
//! file and the HDF5 object.

use crate::error::{ProblemError, Result};
use crate::io::perr;
use crate::io::plausible_dim;
use crate::linalg::CscMatrix;
use hdf5_reader::{Datatype, H5Type, Hdf5File};
use std::path::Path;

/// An open HDF5 file and its path (for error messages).
pub(super) struct H5<'a> {
    path: &'a Path,
    file: Hdf5File,
}

impl<'a> H5<'a> {
    /// Wrap the opened `file` read from `path`.
    pub(super) fn new(path: &'a Path, file: Hdf5File) -> Self {
        Self { path, file }
    }

    /// The underlying file (for group look-ups).
    pub(super) fn file(&self) -> &Hdf5File {
        &self.file
    }

    pub(super) fn err(&self, obj: &str, msg: impl Into<String>) -> ProblemError {
        perr(self.path, format!("HDF5 object {obj}"), msg)
    }

    pub(super) fn read_as<T: H5Type + Default + Clone>(
        &self,
        ds: &hdf5_reader::Dataset,
        obj: &str,
    ) -> Result<Vec<T>> {
        let n = ds
            .num_elements()
            .map_err(|e| self.err(obj, format!("cannot read the dataspace: {e}")))?;
        // Every stored element takes its full size in the file (fclib uses no filters), so a
        // dataset declaring more bytes than the file holds is truncated or corrupt: refused
        // before allocating or reading anything.
        let file_bytes = self.file.storage().len();
        let declared_bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
        if declared_bytes > file_bytes {
            return Err(ProblemError::DatasetTooLarge {
                path: self.path.to_path_buf(),
                dataset: obj.to_string(),
                elements: n,
                declared_bytes,
                file_bytes,
            });
        }
        let mut v = vec![T::default(); n as usize];
        ds.read_into(&mut v)
            .map_err(|e| self.err(obj, format!("cannot read the data: {e}")))?;
        Ok(v)
    }

    pub(super) fn dataset(&self, obj: &str) -> Result<hdf5_reader::Dataset> {
        self.file
            .dataset(obj)
            .map_err(|e| self.err(obj, format!("missing or unreadable dataset: {e}")))
    }

    /// A dataset of an integer type that widens losslessly to `i64`, as `i64` values.
    fn read_widened<T: H5Type + Default + Clone + Into<i64>>(
        &self,
        ds: &hdf5_reader::Dataset,
        obj: &str,
    ) -> Result<Vec<i64>> {
        Ok(self
            .read_as::<T>(ds, obj)?
            .into_iter()
            .map(Into::into)
            .collect())
    }

    /// The size of the square matrix `mat` (called `name` in messages) read from `obj`.
    pub(super) fn square_size(&self, obj: &str, name: &str, mat: &CscMatrix) -> Result<usize> {
        let n = mat.nrows();
        if mat.ncols() != n {
            return Err(self.err(
                obj,
                format!("{name} must be square, found {n} x {}", mat.ncols()),
            ));
        }
        Ok(n)
    }

    /// Integer dataset of any integer width, as `i64`.
    pub(super) fn ints(&self, obj: &str) -> Result<Vec<i64>> {
        let ds = self.dataset(obj)?;
        match ds.dtype().clone() {
            Datatype::FixedPoint { size, signed, .. } => match (size, signed) {
                (1, true) => self.read_widened::<i8>(&ds, obj),
                (1, false) => self.read_widened::<u8>(&ds, obj),
                (2, true) => self.read_widened::<i16>(&ds, obj),
                (2, false) => self.read_widened::<u16>(&ds, obj),
                (4, true) => self.read_widened::<i32>(&ds, obj),
                (4, false) => self.read_widened::<u32>(&ds, obj),
                (8, true) => self.read_as::<i64>(&ds, obj),
                (8, false) => self
                    .read_as::<u64>(&ds, obj)?
                    .into_iter()
                    .map(|v| {
                        i64::try_from(v)
                            .map_err(|_| self.err(obj, format!("integer {v} too large")))
                    })
                    .collect(),
                _ => Err(self.err(obj, format!("unsupported integer size {size}"))),
            },
            other => Err(self.err(
                obj,
                format!(
                    "expected an integer dataset, found {}",
                    crate::linalg::plain_debug(&other)
                ),
            )),
        }
    }

    /// Real dataset (f64, f32 or integer), as finite `f64` values.
    pub(super) fn floats(&self, obj: &str) -> Result<Vec<f64>> {
        let ds = self.dataset(obj)?;
        let v: Vec<f64> = match ds.dtype().clone() {
            Datatype::FloatingPoint { size: 8, .. } => self.read_as::<f64>(&ds, obj)?,
            Datatype::FloatingPoint { size: 4, .. } => self
                .read_as::<f32>(&ds, obj)?
                .into_iter()
                .map(f64::from)
                .collect(),
            Datatype::FixedPoint { .. } => self.ints(obj)?.into_iter().map(|v| v as f64).collect(),
            other => {
                return Err(self.err(
                    obj,
                    format!(
                        "expected a real dataset, found {}",
                        crate::linalg::plain_debug(&other)
                    ),
                ))
            }
        };
        if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(self.err(&format!("{obj}[{k}]"), format!("non-finite value {x}")));
        }
        Ok(v)
    }

    /// A single integer (shape `(1,)` or scalar).
    pub(super) fn int(&self, obj: &str) -> Result<i64> {
        let v = self.ints(obj)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(
                obj,
                format!("expected a single integer, found {} values", v.len()),
            )),
        }
    }

    pub(super) fn spacedim(&self, obj: &str) -> Result<usize> {
        match self.int(obj)? {
            3 => Ok(3),
            2 => Ok(2),
            d => Err(self.err(
                obj,
                format!(
                    "spacedim = {d} is not supported: only 3-D and 2-D problems (spacedim 3 or \
                     2) can be read{}",
                    match d {
                        5 => " (this is a rolling-friction problem)",
                        _ => "",
                    }
                ),
            )),
        }
    }

    pub(super) fn check_len(
        &self,
        obj: &str,
        found: usize,
        expected: usize,
        what: &str,
    ) -> Result<()> {
        if found != expected {
            return Err(self.err(
                obj,
                format!("has {found} entries, expected {expected} ({what})"),
            ));
        }
        Ok(())
    }

    pub(super) fn check_cones(&self, obj: &str, n: usize, nmu: usize, dim: usize) -> Result<()> {
        if n % dim != 0 || nmu != n / dim {
            return Err(self.err(
                obj,
                format!(
                    "{nmu} friction coefficients for {n} unknowns (expected {dim} per contact)"
                ),
            ));
        }
        Ok(())
    }

    /// Read the sparse matrix group `g` (CSR, CSC or triplets, see the module documentation).
    pub(super) fn sparse(&self, g: &str) -> Result<CscMatrix> {
        let dim = |name: &str| -> Result<usize> {
            let obj = format!("{g}/{name}");
            let v = self.int(&obj)?;
            usize::try_from(v).map_err(|_| self.err(&obj, format!("negative dimension {v}")))
        };
        let (m, n) = (dim("m")?, dim("n")?);
        let flen = self.file.storage().len() as usize;
        if !plausible_dim(m, flen) || !plausible_dim(n, flen) {
            return Err(self.err(
                g,
                format!("implausible size {m} x {n} for a file of {flen} bytes (corrupt header?)"),
            ));
        }
        let nz_obj = format!("{g}/nz");
        let nz = self.int(&nz_obj)?;
        let (p_obj, i_obj, x_obj) = (format!("{g}/p"), format!("{g}/i"), format!("{g}/x"));
        let p = self.ints(&p_obj)?;
        let i = self.ints(&i_obj)?;
        let x = self.floats(&x_obj)?;
        let index = |obj: &str, k: usize, v: i64, bound: usize, what: &str| -> Result<usize> {
            match usize::try_from(v) {
                Ok(u) if u < bound => Ok(u),
                _ => Err(self.err(
                    &format!("{obj}[{k}]"),
                    format!("{what} index {v} out of range 0..{bound} ({g} is {m} x {n})"),
                )),
            }
        };
        let mut trip = Vec::new();
        match nz {
            -2 | -1 => {
                // compressed: outer dimension `no` (rows for CSR, columns for CSC)
                let (no, ni) = if nz == -2 { (m, n) } else { (n, m) };
                let kind = if nz == -2 { "CSR row" } else { "CSC column" };
                if p.len() < no + 1 {
                    return Err(self.err(
                        &p_obj,
                        format!("{kind} pointers: {} entries, expected {}", p.len(), no + 1),
                    ));
                }
                let ptr = |k: usize| -> Result<usize> {
                    usize::try_from(p[k])
                        .ok()
                        .filter(|&u| u <= i.len() && u <= x.len())
                        .ok_or_else(|| {
                            self.err(
                                &format!("{p_obj}[{k}]"),
                                format!(
                                    "pointer {} outside the {} stored entries",
                                    p[k],
                                    i.len().min(x.len())
                                ),
                            )
                        })
                };
                trip.reserve(ptr(no)?.saturating_sub(ptr(0)?));
                for o in 0..no {
                    let (a, b) = (ptr(o)?, ptr(o + 1)?);
                    if b < a {
                        return Err(self.err(
                            &format!("{p_obj}[{}]", o + 1),
                            format!("{kind} pointers decrease ({a} then {b})"),
                        ));
                    }
                    for k in a..b {
                        let inner =
                            index(&i_obj, k, i[k], ni, if nz == -2 { "column" } else { "row" })?;
                        let (r, c) = if nz == -2 { (o, inner) } else { (inner, o) };
                        trip.push((r, c, x[k]));
                    }
                }
            }
            nz if nz >= 0 => {
                let nz = nz as usize;
                for (obj, len) in [(&p_obj, p.len()), (&i_obj, i.len()), (&x_obj, x.len())] {
                    if len < nz {
                        return Err(self.err(
                            obj,
                            format!("{len} entries, but nz = {nz} triplets are declared"),
                        ));
                    }
                }
                trip.reserve(nz);
                for k in 0..nz {
                    let r = index(&i_obj, k, i[k], m, "row")?;
                    let c = index(&p_obj, k, p[k], n, "column")?;
                    trip.push((r, c, x[k]));
                }
            }
            other => {
                return Err(self.err(
                    &nz_obj,
                    format!("unsupported storage nz = {other} (-2 CSR, -1 CSC, >= 0 triplets)"),
                ))
            }
        }
        CscMatrix::from_triplets(m, n, &trip).map_err(|e| self.err(g, e.to_string()))
    }
}

/// A truncated file is an error: the HDF5 superblock at the start of the file (versions 0 to 3)
/// records the end-of-file address, and the file must be at least that long. (The decoder
/// alone accepts a file cut in unused trailing bytes.) Files whose superblock is elsewhere
/// (behind a user block) are left to the decoder.
pub(super) fn check_end_of_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let Some((size, base_at)) = superblock_addresses(bytes) else {
        return Ok(());
    };
    let addr = |at: usize| -> Option<u64> {
        let b = bytes.get(at..at + size)?;
        (size <= 8).then(|| b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
    };
    // base address, then (free space or superblock extension), then the end-of-file address
    let (Some(base), Some(eof)) = (addr(base_at), addr(base_at + 2 * size)) else {
        return Err(perr(
            path,
            "HDF5 superblock",
            "the file ends inside its superblock",
        ));
    };
    let needed = base.saturating_add(eof);
    if (bytes.len() as u64) < needed {
        return Err(perr(
            path,
            "HDF5 superblock",
            format!(
                "truncated file: the superblock gives {needed} bytes, the file has {}",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

/// Where the superblock (versions 0 to 3) at the start of an HDF5 file keeps its addresses:
/// `(size of an address in bytes, position of the base address)`; the end-of-file address is
/// the third address from there. `None` when the file does not start with the HDF5 signature.
fn superblock_addresses(bytes: &[u8]) -> Option<(usize, usize)> {
    const SIGNATURE: &[u8] = b"\x89HDF\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) || bytes.len() < 16 {
        return None;
    }
    // versions 0 and 1 keep the sizes at byte 13, version 1 has 4 more bytes before the
    // addresses; versions 2 and 3 keep them at byte 9
    Some(match bytes[8] {
        0 => (bytes[13] as usize, 24),
        1 => (bytes[13] as usize, 28),
        _ => (bytes[9] as usize, 12),
    })
}
