//! Reading the fclib local problem `/fclib_local/{W, vectors/{q, mu}, spacedim}` (`u = W r + q`).

use super::h5::H5;
use super::Raw;
use crate::error::Result;
use crate::io::FrictionProblem;

/// Read `/fclib_local`: `W` square, `q` of its size, `mu` one per contact. Errors:
/// [`crate::ProblemError::Parse`] naming the HDF5 object.
pub(super) fn read(h: &H5<'_>) -> Result<Raw> {
    let spacedim = h.spacedim("/fclib_local/spacedim")?;
    let w = h.sparse("/fclib_local/W")?;
    let q = h.floats("/fclib_local/vectors/q")?;
    let mu = h.floats("/fclib_local/vectors/mu")?;
    let n = h.square_size("/fclib_local/W", "W", &w)?;
    h.check_len("/fclib_local/vectors/q", q.len(), n, "the size of W")?;
    h.check_cones("/fclib_local/vectors/mu", n, mu.len(), spacedim)?;
    Ok(Raw::Local(FrictionProblem { w, q, mu, spacedim }))
}
