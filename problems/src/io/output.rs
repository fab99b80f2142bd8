//! [`OutputFormat`]: the one list of formats cpbench writes, used by `cpbench convert`,
//! `cpbench generate --format` and the Python package's `save`. Adding a writable format is
//! one variant here (its name, its file-name rule and its writer arm) plus its writer module.

use crate::error::{ProblemError, Result};
use crate::instance::Instance;
use std::path::{Path, PathBuf};

/// A format cpbench writes an instance in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// A bundle directory: `N.mtx`, `r.mtx`, `instance.json` ([`super::bundle`]).
    #[default]
    Bundle,
    /// An fclib HDF5 local problem ([`super::fclib::write`]); Coulomb-cone instances only.
    Fclib,
    /// NumPy arrays in an uncompressed `.npz` ([`super::npz`]; SciPy's CSC layout for `N`).
    Npz,
}

impl OutputFormat {
    /// Every format, in the order of the enum.
    pub const ALL: [OutputFormat; 3] =
        [OutputFormat::Bundle, OutputFormat::Fclib, OutputFormat::Npz];

    /// The names of [`Self::ALL`], as on the command line (`--format`) and in Python.
    pub const NAMES: [&'static str; 3] = ["bundle", "fclib", "npz"];

    /// The format's name: `bundle`, `fclib`, `npz` (one of [`Self::NAMES`]).
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Bundle => "bundle",
            OutputFormat::Fclib => "fclib",
            OutputFormat::Npz => "npz",
        }
    }

    /// The format of a name: one of [`Self::NAMES`], or `hdf5` for fclib. Errors:
    /// [`ProblemError::UnknownOutputFormat`] naming the value and the names expected.
    pub fn parse(name: &str) -> Result<OutputFormat> {
        if name == "hdf5" {
            return Ok(OutputFormat::Fclib);
        }
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| ProblemError::UnknownOutputFormat {
                value: name.to_string(),
                expected: Self::NAMES.join(", "),
            })
    }

    /// The format an output path asks for by its extension (any case): `.hdf5` or `.h5`
    /// fclib, `.npz` npz, anything else a bundle directory.
    pub fn from_path(path: &Path) -> OutputFormat {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "hdf5" | "h5" => OutputFormat::Fclib,
            "npz" => OutputFormat::Npz,
            _ => OutputFormat::Bundle,
        }
    }

    /// What the format writes, for messages: `bundle`, `fclib local problem`, `NumPy .npz`.
    pub fn describe(self) -> &'static str {
        match self {
            OutputFormat::Bundle => "bundle",
            OutputFormat::Fclib => "fclib local problem",
            OutputFormat::Npz => "NumPy .npz",
        }
    }

    /// The plural for counts in messages: `bundles`, `fclib files`, `.npz files`.
    pub fn plural(self) -> &'static str {
        match self {
            OutputFormat::Bundle => "bundles",
            OutputFormat::Fclib => "fclib files",
            OutputFormat::Npz => ".npz files",
        }
    }

    /// The path of `inst` written into the folder `dir`: the bundle `{dir}/{name}`, the file
    /// `{dir}/{name}.npz`, or the fclib file `{dir}/{stem}.hdf5` (`stem` the name without
    /// `__ccp`, as fclib's own files are named).
    pub fn path_in(self, dir: &Path, inst: &Instance) -> PathBuf {
        match self {
            OutputFormat::Bundle => dir.join(inst.name()),
            OutputFormat::Npz => dir.join(format!("{}.npz", inst.name())),
            OutputFormat::Fclib => {
                let stem = inst.name().strip_suffix("__ccp").unwrap_or(inst.name());
                dir.join(format!("{stem}.hdf5"))
            }
        }
    }

    /// Write `inst` to `path` in this format (fclib with [`super::FclibInfo::for_instance`]).
    /// Errors: the writer's (I/O, an fclib file for a class fclib does not hold, ...).
    pub fn write(self, inst: &Instance, path: &Path) -> Result<()> {
        match self {
            OutputFormat::Bundle => super::write_bundle(inst, path),
            OutputFormat::Fclib => {
                super::write_fclib(inst, &super::FclibInfo::for_instance(inst), path)
            }
            OutputFormat::Npz => super::npz::write_npz(inst, path),
        }
    }
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for OutputFormat {
    type Err = ProblemError;

    fn from_str(s: &str) -> Result<Self> {
        OutputFormat::parse(s)
    }
}
