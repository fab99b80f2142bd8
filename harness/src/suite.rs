//! Test sets: the built-in `default` suite (real fixtures embedded in the binary), the built-in
//! `permon` suite (PERMON's box-QP tutorials, built in code), suites described by a JSON file,
//! and ad-hoc lists of paths.
//!
//! A suite file is JSON: `{"name": "mine", "instances": [{"path": "a.hdf5", "class": "ccp",
//! "symmetrize": false}, ...], "trajectories": [{"path": "traj"}, ...]}`; `class` (`ccp` or
//! `lcp`, how a frictional file is read) and `symmetrize` are optional; relative paths are
//! relative to the suite file. `trajectories` (optional) lists trajectory folders
//! (`cpbench generate` writes them, [`crate::trajectory`]): `cpbench run --suite FILE` runs the
//! instances' matrix, then replays each trajectory as `--trajectory` does. A file lists at least
//! one instance or one trajectory.

use crate::error::{HarnessError, Result};
use cpbench_problems::io::{
    load_bytes_with, load_with, ClassChoice, Format, GlobalForm, LoadOptions,
};
use cpbench_problems::{Instance, ResidualKind, ValidationOptions};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A generator call that builds one instance (see [`InstanceSource::Builder`]).
pub type BuildFn = fn() -> cpbench_problems::Result<Instance>;

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
    /// A contact problem of cpbench's granular stepper, assembled on the fly (milliseconds)
    /// from a settled state compiled into the binary
    /// ([`crate::generate::instance_from_snapshot`]): the CCP, or with [`ClassChoice::Lcp`]
    /// the frictionless LCP.
    Generated {
        /// Snapshot file name (for messages).
        file_name: &'static str,
        /// The snapshot (JSON, `cpbench-granular-state`).
        snapshot: &'static str,
    },
    /// An instance built by a generator function of `cpbench_problems::generators` (e.g. the
    /// box-QP problems of the `permon` suite); `class` and `symmetrize` do not apply.
    Builder {
        /// Instance name (for messages).
        name: &'static str,
        /// The generator call.
        build: BuildFn,
    },
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
    /// The stopping (and check) residual the suite is meant to run with, used by
    /// `cpbench run` when `--residual` is not given (`None`: the CLI default).
    pub default_residual: Option<ResidualKind>,
    /// The tolerance the suite is meant to run with, used by `cpbench run` when neither
    /// `--tol` nor `--profile` is given (`None`: the CLI default profile).
    pub default_tol: Option<f64>,
    /// Solvers (registry names, presets allowed) run when `--solvers` is not given.
    pub default_solvers: Option<Vec<String>>,
    /// Trajectory folders to replay after the instances (suite files only; each holds a
    /// [`crate::trajectory::INDEX_FILE`], checked when the file is read).
    pub trajectories: Vec<PathBuf>,
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
const DEFAULT_FIXTURES: [(&str, &[u8], Format); 11] = [
    fixture!("fclib", "Spheres-i099-356-679.hdf5", Format::FclibHdf5),
    fixture!("fclib", "Capsules-i125-1213.hdf5", Format::FclibHdf5),
    fixture!("fclib", "Box_Stacks-i0122-82-5.hdf5", Format::FclibHdf5),
    fixture!("siconos-fc3d", "NESpheres_10_1.dat", Format::SiconosFc3d),
    fixture!("siconos-fc3d", "Rover4396.dat", Format::SiconosFc3d),
    fixture!("lcp", "lcp_mmc.dat", Format::SiconosLcp),
    fixture!("lcp", "lcp_deudeu.dat", Format::SiconosLcp),
    // general (non-symmetric) LCPs: a non-monotone one (only Lemke solves it) and a monotone one
    fixture!("lcp", "lcp_tobenna.dat", Format::SiconosLcp),
    fixture!("lcp", "lcp_CPS_4.dat", Format::SiconosLcp),
    // a 2-D friction problem (Siconos global fc2d file, 69 contacts, condensed)
    fixture!(
        "fc2d",
        "gfc2d_granularflowonwall_00069_00350.dat",
        Format::SiconosGlobal
    ),
    // a settled state of cpbench's planar disc-hopper scene (60 discs, 114 contacts, fc2d)
    fixture!("generated", "disc-hopper-60_step2000__ccp.npz", Format::Npz),
];

/// Settled states of the granular `fill` scene (Melanz et al. 2017 TEST_FILL) and of the
/// `ellipsoid-fill` scene whose contact problems join the default suite: `(file, JSON)`. How they were made:
/// `tests/fixtures/generated/README.md`.
const GENERATED_STATES: [(&str, &str); 3] = [
    (
        "fill-5_settled.json",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/generated/fill-5_settled.json"
        )),
    ),
    (
        "fill-10_settled.json",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/generated/fill-10_settled.json"
        )),
    ),
    (
        "ellipsoid-fill-3_settled.json",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/generated/ellipsoid-fill-3_settled.json"
        )),
    ),
];

impl Suite {
    /// The built-in `default` suite: five frictional fixtures (fclib `Spheres-i099-356-679`,
    /// `Capsules-i125-1213`, `Box_Stacks-i0122-82-5`; Siconos `NESpheres_10_1`, `Rover4396`),
    /// each as a CCP and as its normal-block LCP, four Siconos LCPs (`lcp_mmc`, `lcp_deudeu`,
    /// and the general, non-symmetric `lcp_tobenna` (non-monotone) and `lcp_CPS_4` (monotone)),
    /// the 2-D friction problem `gfc2d_granularflowonwall_00069_00350` (Siconos global file,
    /// condensed) and the settled 2-D `disc-hopper-60` state of cpbench's planar stepper
    /// (`.npz`), each as a CCP and its normal-block LCP, and the contact problems of two settled
    /// states of cpbench's granular `fill` scene (sizes 5 and 10, 250 and 1000 spheres) and of
    /// one settled `ellipsoid-fill` state (size 3, 90 ellipsoids), each as a CCP and as the
    /// frictionless LCP, made on the fly from snapshots: 24 instances. `Capsules` and
    /// `Rover4396` have a slightly non-symmetric `W` (3.4e-4 and 3.8e-5 relative) and are
    /// symmetrised, which their provenance records; the LCP files are read as they are.
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
                    // an LCP file is the general LCP it holds (kept as read); the frictional
                    // files' W is symmetrised for their CCP
                    symmetrize: format != Format::SiconosLcp,
                });
            }
        }
        for (file_name, snapshot) in GENERATED_STATES {
            for class in [ClassChoice::Ccp, ClassChoice::Lcp] {
                entries.push(SuiteEntry {
                    source: InstanceSource::Generated {
                        file_name,
                        snapshot,
                    },
                    class,
                    symmetrize: false,
                });
            }
        }
        Suite::new("default", entries)
    }

    /// A suite with no run defaults (the CLI's apply).
    pub fn new(name: &str, entries: Vec<SuiteEntry>) -> Suite {
        Suite {
            name: name.to_string(),
            entries,
            default_residual: None,
            default_tol: None,
            default_solvers: None,
            trajectories: Vec::new(),
        }
    }

    /// The built-in `permon` suite: PERMON's box-QP tutorials with their published test outputs
    /// (`permon/permon`, `src/tutorials/output/`), built in code
    /// ([`cpbench_problems::generators::boxqp`]): `ex1` (1-D obstacle, `n = 100`, tests
    /// `ex1_1`, `ex1_opt`, `ex1_optapprox`, `ex1_bb`, `ex1_projcg`), `jbearing2-8x12` and
    /// `jbearing2-30x30` (journal bearing, `ecc = 0.1`, `b = 10`, tests `jbearing2_1` .. `_6`).
    ///
    /// Run defaults reproduce PERMON's stopping test: residual `proj_grad_rel` (`||g^P|| /
    /// ||r||`, PERMON's `||g^P|| <= rtol ||b||` with `b = -r`) at PERMON's default
    /// `rtol = 1e-5`; solvers: the five `mprgp:permon*` presets (PERMON's MPGP with the
    /// expansions of the five `ex1` tests) and cpbench's `mprgp` and `mpgp` defaults.
    /// PERMON's `jbearing2` tests use `rtol = 1e-6` (`-tao_gttol 1e-6`): run with `--tol 1e-6`
    /// to compare with `jbearing2_4.out` and `jbearing2_6.out`.
    pub fn permon_suite() -> Suite {
        use cpbench_problems::generators::boxqp::{jbearing2, permon_ex1};
        fn ex1() -> cpbench_problems::Result<Instance> {
            permon_ex1(100)
        }
        fn jb_8x12() -> cpbench_problems::Result<Instance> {
            jbearing2(8, 12, 0.1, 10.0)
        }
        fn jb_30x30() -> cpbench_problems::Result<Instance> {
            jbearing2(30, 30, 0.1, 10.0)
        }
        let builders: [(&'static str, BuildFn); 3] = [
            ("ex1", ex1),
            ("jbearing2-8x12", jb_8x12),
            ("jbearing2-30x30", jb_30x30),
        ];
        let entries = builder_entries(builders);
        Suite {
            default_residual: Some(ResidualKind::ProjGradRel),
            default_tol: Some(1e-5),
            default_solvers: Some(
                [
                    "mprgp:permon",
                    "mprgp:permon-opt",
                    "mprgp:permon-optapprox",
                    "mprgp:permon-bb",
                    "mprgp:permon-projcg",
                    "mprgp",
                    "mpgp",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            ),
            ..Suite::new("permon", entries)
        }
    }

    /// The built-in `lcp` suite: general LCPs. The three seeded random families of
    /// [`cpbench_problems::generators::lcp`] (`p-matrix`, `psd`, `nonmonotone`) at
    /// `n = 10` (dense), `100` (density 0.1) and `1000` (density 0.01), seed 1: 9 instances,
    /// each with a known solution. Default solvers: `newton-fb`, `psor` (which refuses the
    /// `nonmonotone` matrices: they have negative diagonal entries).
    pub fn lcp_suite() -> Suite {
        use cpbench_problems::generators::lcp::{random_lcp, LcpFamily};
        macro_rules! random {
            ($fname:ident, $family:ident, $n:literal, $density:literal) => {
                fn $fname() -> cpbench_problems::Result<Instance> {
                    Ok(random_lcp(LcpFamily::$family, $n, $density, 1)?.instance)
                }
            };
        }
        random!(p10, PMatrix, 10, 1.0);
        random!(p100, PMatrix, 100, 0.1);
        random!(p1000, PMatrix, 1000, 0.01);
        random!(s10, Psd, 10, 1.0);
        random!(s100, Psd, 100, 0.1);
        random!(s1000, Psd, 1000, 0.01);
        random!(m10, Nonmonotone, 10, 1.0);
        random!(m100, Nonmonotone, 100, 0.1);
        random!(m1000, Nonmonotone, 1000, 0.01);
        let builders: [(&'static str, BuildFn); 9] = [
            ("random-lcp-p-matrix-n10-d1-s1", p10),
            ("random-lcp-p-matrix-n100-d0.1-s1", p100),
            ("random-lcp-p-matrix-n1000-d0.01-s1", p1000),
            ("random-lcp-psd-n10-d1-s1", s10),
            ("random-lcp-psd-n100-d0.1-s1", s100),
            ("random-lcp-psd-n1000-d0.01-s1", s1000),
            ("random-lcp-nonmonotone-n10-d1-s1", m10),
            ("random-lcp-nonmonotone-n100-d0.1-s1", m100),
            ("random-lcp-nonmonotone-n1000-d0.01-s1", m1000),
        ];
        let entries = builder_entries(builders);
        Suite {
            default_solvers: Some(vec!["newton-fb".into(), "psor".into()]),
            ..Suite::new("lcp", entries)
        }
    }

    /// A built-in suite by name (`default`, `permon`, `lcp`), or `None`.
    pub fn builtin(name: &str) -> Option<Suite> {
        match name {
            "default" => Some(Self::default_suite()),
            "permon" => Some(Self::permon_suite()),
            "lcp" => Some(Self::lcp_suite()),
            _ => None,
        }
    }

    /// Read a suite file (see module docs). Errors name the file; a suite listing neither an
    /// instance nor a trajectory is an error, and so is a listed trajectory folder without
    /// its [`crate::trajectory::INDEX_FILE`] (naming `trajectories[k]` and the folder).
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
        struct FileTrajectory {
            path: PathBuf,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            name: String,
            #[serde(default)]
            instances: Vec<FileEntry>,
            #[serde(default)]
            trajectories: Vec<FileTrajectory>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| HarnessError::io(path, e))?;
        // a key given twice is an error, not the last one silently
        crate::json::parse_strict(&text).map_err(|e| HarnessError::Suite {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let f: File = serde_json::from_str(&text).map_err(|e| HarnessError::Suite {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if f.instances.is_empty() && f.trajectories.is_empty() {
            return Err(HarnessError::Suite {
                path: path.to_path_buf(),
                message: format!("suite '{}' lists no instances and no trajectories", f.name),
            });
        }
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let resolve = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
        let mut trajectories = Vec::with_capacity(f.trajectories.len());
        for (k, t) in f.trajectories.into_iter().enumerate() {
            let dir = resolve(t.path);
            let index = dir.join(crate::trajectory::INDEX_FILE);
            if !index.is_file() {
                return Err(HarnessError::Suite {
                    path: path.to_path_buf(),
                    message: format!(
                        "trajectories[{k}]: {} has no {} (expected a trajectory folder: `cpbench \
                         generate` writes one)",
                        dir.display(),
                        crate::trajectory::INDEX_FILE
                    ),
                });
            }
            trajectories.push(dir);
        }
        let entries = f
            .instances
            .into_iter()
            .map(|e| SuiteEntry {
                source: InstanceSource::Path(resolve(e.path)),
                class: e.class,
                symmetrize: e.symmetrize,
            })
            .collect();
        Ok(Suite {
            trajectories,
            ..Suite::new(&f.name, entries)
        })
    }

    /// A suite of the given files, bundle directories and directories of those (expanded one
    /// level, sorted), all read with the same class and symmetrisation. Errors: a directory
    /// holding no instance ([`HarnessError::Suite`] naming it), an unreadable directory.
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
                            || q.extension().is_some_and(|x| {
                                x == "hdf5" || x == "h5" || x == "dat" || x == "npz"
                            })
                    })
                    .collect();
                if inner.is_empty() {
                    return Err(HarnessError::Suite {
                        path: p.clone(),
                        message: "no instance in this folder (looked for bundle folders with \
                                  instance.json and *.hdf5, *.h5, *.dat, *.npz files)"
                            .into(),
                    });
                }
                inner.sort();
                files.extend(inner);
            } else {
                files.push(p.clone());
            }
        }
        Ok(Suite::new(
            name,
            files
                .into_iter()
                .map(|p| SuiteEntry {
                    source: InstanceSource::Path(p),
                    class,
                    symmetrize,
                })
                .collect(),
        ))
    }

    /// Load every instance (in order). The first failure is returned with its file name.
    pub fn load(&self) -> Result<Vec<Instance>> {
        self.entries.iter().map(|e| e.load()).collect()
    }
}

impl SuiteEntry {
    /// What this entry reads, for messages and `load_error` rows: the path as given, the
    /// embedded or snapshot file name, or the builder's instance name.
    pub fn source_name(&self) -> String {
        match &self.source {
            InstanceSource::Embedded { file_name, .. }
            | InstanceSource::Generated { file_name, .. } => file_name.to_string(),
            InstanceSource::Path(p) => p.display().to_string(),
            InstanceSource::Builder { name, .. } => name.to_string(),
        }
    }

    /// Read this entry's instance.
    pub fn load(&self) -> Result<Instance> {
        self.load_with(GlobalForm::Condensed)
    }

    /// Read this entry's instance, a global friction file (path or embedded) in the form
    /// `global` asks ([`cpbench_problems::io::load_with`]).
    pub fn load_with(&self, global: GlobalForm) -> Result<Instance> {
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
            } => load_bytes_with(file_name, bytes, *format, &opts, global)?,
            InstanceSource::Path(p) => load_with(p, &opts, global)?,
            InstanceSource::Generated {
                file_name,
                snapshot,
            } => crate::generate::instance_from_snapshot(file_name, snapshot, self.class)?,
            InstanceSource::Builder { build, .. } => build()?,
        })
    }
}
/// Suite entries of built-in instance builders (`name`, function), read as stored.
fn builder_entries(builders: impl IntoIterator<Item = (&'static str, BuildFn)>) -> Vec<SuiteEntry> {
    builders
        .into_iter()
        .map(|(name, build)| SuiteEntry {
            source: InstanceSource::Builder { name, build },
            class: ClassChoice::default(),
            symmetrize: false,
        })
        .collect()
}
