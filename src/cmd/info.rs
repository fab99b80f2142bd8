//! `cpbench info`: what an instance file holds.

use crate::{AnyError, ReadArgs};
use cpbench_problems::fidelity::fidelity;
use cpbench_problems::io::bundle::DUPLICATES_KEY;
use cpbench_problems::io::{load, ClassChoice};
use cpbench_problems::linalg::norm2;
use cpbench_problems::residual::{coulomb_gap as gap_of, residuals};
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};

/// Print class, sizes, nnz, symmetry error, `mu` range and norms of the instance at `path`;
/// for a bundle also the number of duplicate `N.mtx` entries that were summed.
pub fn info(path: &std::path::Path, read: &ReadArgs) -> Result<(), AnyError> {
    let inst = read.load(path)?;
    let n_mat = inst.csc();
    let diag = n_mat.diag();
    let (dmin, dmax) = diag
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &d| {
            (a.min(d), b.max(d))
        });
    println!("name            {}", inst.name());
    println!("class           {}", inst.class());
    println!("n               {}", inst.n());
    println!("blocks          {}", inst.n_blocks());
    println!("nnz(N)          {}", n_mat.nnz());
    println!(
        "operator        {} ({:.1} MB read per product)",
        inst.operator_kind(),
        inst.operator_bytes() as f64 / 1e6
    );
    if path.is_dir() {
        let dups = inst
            .provenance()
            .parameters
            .get(DUPLICATES_KEY)
            .map(String::as_str)
            .unwrap_or("0");
        println!("duplicates      {dups} (entries of N.mtx at an earlier entry's position, summed as SciPy does)");
    }
    if let Some(c) = inst.compliance() {
        let (lo, hi) = c
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        println!("compliance      R in [{lo:.6e}, {hi:.6e}] (the problem is (N + R, r))");
    }
    println!(
        "density         {:.3e}",
        n_mat.nnz() as f64 / (inst.n() as f64 * inst.n() as f64).max(1.0)
    );
    match (
        inst.provenance().symmetrized_from,
        inst.provenance().parameters.get("asymmetry"),
    ) {
        (Some(a), _) => {
            println!("symmetry error  {a:.3e} (||N - N^T||_F / ||N||_F before symmetrisation)")
        }
        (None, Some(a)) if !inst.is_symmetric() => {
            println!("symmetry error  {a} (||N - N^T||_F / ||N||_F, N kept as read)")
        }
        _ => println!("symmetry error  0"),
    }
    println!(
        "symmetric       {}",
        if inst.is_symmetric() { "yes" } else { "no" }
    );
    if inst.class() == cpbench_problems::ProblemClass::Lcp {
        println!(
            "definiteness    (N + N^T)/2 {}",
            inst.definiteness().describe()
        );
    }
    for (label, value) in inst.constraints().summary() {
        println!("{label:<16}{value}");
    }
    println!("||N||_F         {:.6e}", n_mat.frobenius_norm());
    println!(
        "lambda_max(N)   {:.6e} (50 power iterations)",
        inst.power_iteration(50)
    );
    println!("diag(N) range   [{dmin:.6e}, {dmax:.6e}]");
    println!("||r||_2         {:.6e}", norm2(inst.r()));
    println!("hash            {}", inst.hash());
    println!(
        "source          {} ({}, {})",
        inst.provenance().source,
        inst.provenance().format,
        inst.provenance().derivation
    );
    describe_global(&inst.provenance().parameters);
    Ok(())
}

/// For an instance read from a global problem (fclib `/fclib_global` or a Siconos global
/// `.dat`): its degrees of freedom, contacts, and the condensation and factorisation of `M`,
/// or, kept matrix-free, how `M^-1` is applied.
fn describe_global(p: &std::collections::BTreeMap<String, String>) {
    let Some(dofs) = p.get("dofs").or_else(|| p.get("dof")) else {
        return;
    };
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or("?");
    println!(
        "global problem  {dofs} degrees of freedom, {} contacts (spacedim {})",
        get("contacts"),
        get("spacedim")
    );
    match p.get("matrix_free") {
        // kept as H and M (`--operator matrix-free`)
        Some(note) => {
            println!("matrix-free     {note}");
            println!("M^-1            {}", get("m_inverse"));
        }
        None => {
            println!("condensed       {}", get("condensed"));
            println!("M factorised    {}", get("m_factorization"));
        }
    }
    for key in ["m_storage", "h_storage"] {
        if let Some(v) = p.get(key) {
            println!("{:<16}{v}", key.replace('_', " "));
        }
    }
}

/// Tolerance of both solves of [`formulation_gap`].
const GAP_TOL: f64 = 1e-10;

fn solve(solver: &str, inst: &Instance) -> Result<SolveResult, AnyError> {
    let mut built = build(solver, None)?;
    let exec = Executor::new(ExecSettings {
        tol: GAP_TOL,
        max_iter: 200_000,
        stall_window: Some(20_000),
        ..ExecSettings::default()
    });
    Ok(exec.run(built.solver.as_mut(), inst, None, &mut [])?)
}

/// The solver of each formulation in `cpbench info --formulations A,B` (`--gap-solvers`
/// overrides it), keyed by the formulation's family name ([`family`]). `lcp-pyramid` names a
/// general-LCP solver (the pyramid LCP is non-symmetric): a build without it says so and asks
/// for `--gap-solvers`.
pub const GAP_SOLVERS: [(&str, &str); 5] = [
    ("ccp", "apgd"),
    ("coulomb", "nsgs"),
    ("blcp", "pgs"),
    ("lcp", "pgs"),
    ("lcp-pyramid", "lemke"),
];

/// The family name of a formulation: its `--class` spelling without the pyramid's `:k`.
pub fn family(c: ClassChoice) -> &'static str {
    c.family()
}

/// The default solver of a formulation ([`GAP_SOLVERS`]).
pub fn gap_solver(c: ClassChoice) -> &'static str {
    let f = family(c);
    GAP_SOLVERS
        .iter()
        .find(|(name, _)| *name == f)
        .map(|(_, s)| *s)
        .unwrap_or("pgs")
}

/// The instance of formulation `c` derived from the Coulomb problem `coulomb`: the CCP
/// relaxation, the Coulomb problem itself, or [`ClassChoice::derive_from`] (normal block,
/// BLCP, pyramid LCP).
pub fn formulation_instance(c: ClassChoice, coulomb: &Instance) -> Result<Instance, AnyError> {
    Ok(match c {
        ClassChoice::Ccp => coulomb.ccp_relaxation()?,
        ClassChoice::Coulomb => coulomb.clone(),
        other => other.derive_from(coulomb.clone())?,
    })
}

/// `cpbench info --coulomb-gap` / `--formulations A,B`: solve two formulations of the file's
/// frictional problem (the solvers of [`GAP_SOLVERS`], or `solvers`) to `1e-10` in their class
/// default residual, map both solutions to contact impulses ([`ClassChoice::impulses`]), and print each
/// run, the Coulomb problem's fc3d error at each formulation's impulses, and the relative gaps of
/// the impulses and of the normal velocities `u_n = (W gamma + q)_n`
/// ([`cpbench_problems::residual::coulomb_gap`], `u` with the file's `W` and `q`), and the
/// physical-fidelity criteria of each formulation's impulses in the Coulomb problem
/// ([`cpbench_problems::fidelity::fidelity`]; units as if the file's data were the stepper's). The file is
/// read as a Coulomb problem whatever `--class` says. Errors: loading errors; a formulation
/// that cannot be derived (the CCP of a non-symmetric `W` without `--symmetrize`); a solver
/// that is not in this build (the pyramid's `lemke` before the LCP solvers are merged).
pub fn formulation_gap(
    path: &std::path::Path,
    read: &ReadArgs,
    pair: [ClassChoice; 2],
    solvers: Option<[String; 2]>,
) -> Result<(), AnyError> {
    let mut opts = read.options();
    opts.class = ClassChoice::Coulomb;
    let coulomb = load(path, &opts)?;
    let mut imps = Vec::with_capacity(2);
    for (i, c) in pair.into_iter().enumerate() {
        let solver = solvers
            .as_ref()
            .map_or_else(|| gap_solver(c).to_string(), |s| s[i].clone());
        let inst = formulation_instance(c, &coulomb)?;
        let res = solve(&solver, &inst).map_err(|e| -> AnyError {
            format!(
                "formulation {c} ({}, n = {}) with solver '{solver}': {e}{}",
                inst.class(),
                inst.n(),
                if family(c) == "lcp-pyramid" {
                    " (the pyramid LCP is non-symmetric: it needs a general-LCP solver;                      choose one with --gap-solvers)"
                } else {
                    ""
                }
            )
            .into()
        })?;
        let kind = ResidualKind::class_default(inst.class());
        let imp = c.impulses(&res.gamma)?;
        let at = residuals(&coulomb, &imp);
        println!(
            "{:<15} {} after {} iterations, {} {:.3e}; Coulomb fc3d_error at its impulses {:.3e}",
            format!("{c} ({solver})"),
            res.status,
            res.iterations,
            kind.as_str(),
            res.residuals.get(kind),
            at.fc3d_error
        );
        // the physical-fidelity criteria of its impulses in the Coulomb problem (u = W r + q)
        let f = fidelity(&coulomb, &imp);
        println!(
            "  fidelity      signorini {:.3e} J, ncp_desaxce {:.3e} J, mdp_gap {:.3e} J, \
             spurious_velocity {:.3e} m/s, cone_violation {:.3e} N s",
            f.signorini, f.ncp_desaxce, f.mdp_gap, f.spurious_velocity, f.cone_violation
        );
        imps.push(imp);
    }
    let g = gap_of(&coulomb, &imps[0], &imps[1]);
    let [a, b] = pair;
    println!(
        "gap r           {:.6e} (||r_{a} - r_{b}|| / max of the norms, contact impulses)",
        g.r_rel
    );
    println!(
        "gap u_n         {:.6e} (||u_n,{a} - u_n,{b}|| / max(||u_{a}||, ||u_{b}||, ||q||))",
        g.u_n_rel
    );
    println!(
        "sliding         {} of {} contacts ({b} solution: on the cone surface, u_T != 0)",
        g.sliding, g.contacts
    );
    Ok(())
}
