//! `cpbench info`: what an instance file holds.

use crate::{AnyError, ReadArgs};
use cpbench_problems::io::bundle::DUPLICATES_KEY;
use cpbench_problems::io::{load, ClassChoice};
use cpbench_problems::linalg::norm2;
use cpbench_problems::residual::coulomb_gap as gap_of;
use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};

/// Print class, sizes, nnz, symmetry error, `mu` range and norms of the instance at `path`;
/// for a bundle also the number of duplicate `N.mtx` entries that were summed.
pub fn info(path: &std::path::Path, read: &ReadArgs) -> Result<(), AnyError> {
    let inst = read.apply_operator(load(path, &read.options())?)?;
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

/// For an instance condensed from a global problem (fclib `/fclib_global` or a Siconos global
/// `.dat`): its degrees of freedom, contacts, condensation and the factorisation of `M`.
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
    println!("condensed       {}", get("condensed"));
    println!("M factorised    {}", get("m_factorization"));
    for key in ["m_storage", "h_storage"] {
        if let Some(v) = p.get(key) {
            println!("{:<16}{v}", key.replace('_', " "));
        }
    }
}

/// Tolerance of both solves of [`coulomb_gap`].
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

/// `cpbench info --coulomb-gap`: solve the CCP relaxation with APGD (relative natural map
/// `<= 1e-10`) and the Coulomb problem with NSGS (fc3d error `<= 1e-10`) and print the relative
/// gaps of `r` and of the normal velocities `u_n` ([`cpbench_problems::residual::coulomb_gap`]).
/// The file is read as a Coulomb problem whatever `--class` says. Errors: loading errors, and
/// a non-symmetric `W` without `--symmetrize` (the CCP needs a symmetric `N`).
pub fn coulomb_gap(path: &std::path::Path, read: &ReadArgs) -> Result<(), AnyError> {
    let mut opts = read.options();
    opts.class = ClassChoice::Coulomb;
    let coulomb = load(path, &opts)?;
    let ccp = coulomb.ccp_relaxation()?;
    let a = solve("apgd", &ccp)?;
    let b = solve("nsgs", &coulomb)?;
    println!(
        "ccp (apgd)      {} after {} iterations, nat_map_rel_2 {:.3e}, fc3d_error {:.3e}",
        a.status, a.iterations, a.residuals.nat_map_rel_2, a.residuals.fc3d_error
    );
    println!(
        "coulomb (nsgs)  {} after {} iterations, fc3d_error {:.3e}, nat_map_rel_2 {:.3e}",
        b.status, b.iterations, b.residuals.fc3d_error, b.residuals.nat_map_rel_2
    );
    let g = gap_of(&coulomb, &a.gamma, &b.gamma);
    println!(
        "gap r           {:.6e} (||r_ccp - r_coulomb|| / max of the norms)",
        g.r_rel
    );
    println!(
        "gap u_n         {:.6e} (||u_n,ccp - u_n,coulomb|| / max(||u_ccp||, ||u_coulomb||, ||q||))",
        g.u_n_rel
    );
    println!(
        "sliding         {} of {} contacts (Coulomb solution)",
        g.sliding, g.contacts
    );
    Ok(())
}
