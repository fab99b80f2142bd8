//! Test sets: the built-in `default` suite (real fixtures embedded in the binary), suites
//! described by a JSON file, and ad-hoc lists of paths.
//!
//! A suite file is JSON: `{"name": "mine", "instances": [{"path": "a.hdf5", "class": "ccp",
//! "symmetrize": false}, ...]}`; `class` (`ccp` or `lcp`, how a frictional file is read) and
//! `symmetrize` are optional; relative paths are relative to the suite file.

use crate::error::{HarnessError, Result};
use cpbench_problems::io::{load, load_bytes, ClassChoice, Format, LoadOptions};
use cpbench_problems::{Instance, ValidationOptions};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Where an instance comes from.
#[derive(Clone, Debug)]
pub enum InstanceSource {
    /// A file compiled into the binary.
    Embedded {
        /// File name (gives the instance name).
        file_name: &'static str,
        /// File contents.
        bytes: &'static [u8],
        /// Its format.
        format: Format,
    },
    /// A file or bundle directory on disk.
    Path(PathBuf),
}

/// One instance of a suite and how to read it.
#[derive(Clone, Debug)]
pub struct SuiteEntry {
    /// Where it comes from.
    pub source: InstanceSource,
    /// How a frictional file is read (CCP or its normal-block LCP).
    pub class: ClassChoice,
    /// Replace `N` by `(N + N^T)/2` if it is not symmetric (recorded in the provenance).
    pub symmetrize: bool,
}

/// A named list of instances.
#[derive(Clone, Debug)]
pub struct Suite {
    /// Suite name (`default`, or the file's `name`).
    pub name: String,
    /// Its entries.
    pub entries: Vec<SuiteEntry>,
}

macro_rules! fixture {
    ($dir:literal, $file:literal, $format:expr) => {
        (
            $file,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tests/fixtures/",
                $dir,
                "/",
                $file
            )) as &'static [u8],
            $format,
        )
    };
}

/// Built-in fixtures of the default suite: `(file, bytes, format)`. Origin and licence:
/// `tests/fixtures/NOTICE` (Siconos and fclib, Apache-2.0).
const DEFAULT_FIXTURES: [(&str, &[u8], Format); 7] = [
    fixture!("fclib", "Spheres-i099-356-679.hdf5", Format::FclibHdf5),
    fixture!("fclib", "Capsules-i125-1213.hdf5", Format::FclibHdf5),
    fixture!("fclib", "Box_Stacks-i0122-82-5.hdf5", Format::FclibHdf5),
    fixture!("siconos-fc3d", "NESpheres_10_1.dat", Format::SiconosFc3d),
    fixture!("siconos-fc3d", "Rover4396.dat", Format::SiconosFc3d),
    fixture!("lcp", "lcp_mmc.dat", Format::SiconosLcp),
    fixture!("lcp", "lcp_deudeu.dat", Format::SiconosLcp),
];

impl Suite {
    /// The built-in `default` suite: five frictional fixtures (fclib `Spheres-i099-356-679`,
    /// `Capsules-i125-1213`, `Box_Stacks-i0122-82-5`; Siconos `NESpheres_10_1`, `Rover4396`),
    /// each as a CCP and as its normal-block LCP, and two Siconos LCPs (`lcp_mmc`,
    /// `lcp_deudeu`): 12 instances. `Capsules` and `Rover4396` have a slightly non-symmetric
    /// `W` (3.4e-4 and 3.8e-5 relative) and are symmetrised, which their provenance records.
    pub fn default_suite() -> Suite {
        let mut entries = Vec::new();
        for (file_name, bytes, format) in DEFAULT_FIXTURES {
            let classes: &[ClassChoice] = if format == Format::SiconosLcp {
                &[ClassChoice::Lcp]
            } else {
                &[ClassChoice::Ccp, ClassChoice::Lcp]
            };
            for &class in classes {
                entries.push(SuiteEntry {
                    source: InstanceSource::Embedded {
                        file_name,
                        bytes,
                        format,
                    },
                    class,
                    symmetrize: true,
                });
            }
        }
        Suite {
            name: "default".into(),
            entries,
        }
    }

    /// A built-in suite by name (`default`), or `None`.
    pub fn builtin(name: &str) -> Option<Suite> {
        match name {
            "default" => Some(Self::default_suite()),
            _ => None,
        }
    }

    /// Read a suite file (see module docs). Errors name the file.
    pub fn from_file(path: &Path) -> Result<Suite> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct FileEntry {
            path: PathBuf,
            #[serde(default)]
            class: ClassChoice,
            #[serde(default)]
            symmetrize: bool,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            name: String,
            instances: Vec<FileEntry>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| HarnessError::io(path, e))?;
        let f: File = serde_json::from_str(&text).map_err(|e| HarnessError::Suite {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        Ok(Suite {
            name: f.name,
            entries: f
                .instances
                .into_iter()
                .map(|e| SuiteEntry {
                    source: InstanceSource::Path(if e.path.is_absolute() {
                        e.path
                    } else {
                        base.join(e.path)
                    }),
                    class: e.class,
                    symmetrize: e.symmetrize,
                })
                .collect(),
        })
    }

    /// A suite of the given files, bundle directories and directories of those (expanded one
    /// level, sorted), all read with the same class and symmetrisation.
    pub fn from_paths(
        name: &str,
        paths: &[PathBuf],
        class: ClassChoice,
        symmetrize: bool,
    ) -> Result<Suite> {
        let mut files = Vec::new();
        for p in paths {
            if p.is_dir() && !p.join("instance.json").exists() {
                let mut inner: Vec<PathBuf> = std::fs::read_dir(p)
                    .map_err(|e| HarnessError::io(p, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|q| {
                        q.join("instance.json").exists()
                            || q.extension()
                                .is_some_and(|x| x == "hdf5" || x == "h5" || x == "dat")
                    })
                    .collect();
                inner.sort();
                files.extend(inner);
            } else {
                files.push(p.clone());
            }
        }
        Ok(Suite {
            name: name.to_string(),
            entries: files
                .into_iter()
                .map(|p| SuiteEntry {
                    source: InstanceSource::Path(p),
                    class,
                    symmetrize,
                })
                .collect(),
        })
    }

    /// Load every instance (in order). The first failure is returned with its file name.
    pub fn load(&self) -> Result<Vec<Instance>> {
        self.entries.iter().map(|e| e.load()).collect()
    }
}

impl SuiteEntry {
    /// Read this entry's instance.
    pub fn load(&self) -> Result<Instance> {
        let opts = LoadOptions {
            class: self.class,
            validation: ValidationOptions {
                symmetrize: self.symmetrize,
                ..Default::default()
            },
        };
        Ok(match &self.source {
            InstanceSource::Embedded {
                file_name,
                bytes,
                format,
            } => load_bytes(file_name, bytes, *format, &opts)?,
            InstanceSource::Path(p) => load(p, &opts)?,
        })
    }
}
