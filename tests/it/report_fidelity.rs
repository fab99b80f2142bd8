//! The report's physical-fidelity table on a hand-derived sliding contact (`N = I`,
//! `r = (-1, 2, 1)`, `mu = 1/2`; docs/formulation.md section 4): the Coulomb answer has every
//! criterion at the tolerance's level, the CCP answer the derived force at a distance
//! `u_n = lambda_n - 1` with `lambda_n = (1 + mu sqrt 5) / (1 + mu^2)`; refused runs have no row.

use crate::support::temp_res;
use cpbench_harness::report::{report, ReportOptions};
use cpbench_harness::{RunConfig, SolverSpec};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::{Instance, Provenance, ValidationOptions};

/// The rows of the fidelity table under the `#### {name}` heading of `md`: solver and its five
/// numbers as printed.
fn fidelity_rows(md: &str, name: &str) -> Vec<(String, [f64; 5])> {
    let at = md.find(&format!("#### {name} ")).expect(name);
    let sec = &md[at..];
    let sec = &sec[sec.find("Physical fidelity").expect("a fidelity table")..];
    sec.lines()
        .skip(4)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let v: Vec<f64> = cells[1..].iter().map(|c| c.parse().unwrap()).collect();
            (cells[0].to_string(), v.try_into().unwrap())
        })
        .collect()
}

#[test]
fn the_report_tabulates_the_fidelity_of_a_sliding_contact() {
    let coulomb = Instance::new_coulomb(
        "slide",
        CscMatrix::identity(3),
        vec![-1.0, 2.0, 1.0],
        vec![0.5],
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    let ccp = coulomb.ccp_relaxation().unwrap().with_name("slide-ccp");
    let (_d, out) = temp_res();
    let mut cfg = RunConfig::new(out.clone());
    cfg.solvers = vec![SolverSpec::named("nsgs"), SolverSpec::named("apgd")];
    cfg.profiles[0].tol = 1e-10;
    cfg.progress = false;
    cfg.plots = false;
    cpbench_harness::run(&[coulomb, ccp], &cfg).unwrap();
    let md = std::fs::read_to_string(report(&out, &ReportOptions::default()).unwrap()).unwrap();

    // Coulomb: nsgs's answer is exact up to the tolerance; apgd refuses the class (no row)
    let rows = fidelity_rows(&md, "slide");
    assert_eq!(rows.len(), 1, "{md}");
    assert_eq!(rows[0].0, "nsgs");
    assert!(rows[0].1.iter().all(|v| *v < 1e-8), "{rows:?}");

    // CCP: apgd's answer lifts the contact by u_n = lambda_n - 1 (printed to 3 digits)
    let mu = 0.5f64;
    let ln = (1.0 + mu * 5f64.sqrt()) / (1.0 + mu * mu);
    let rows = fidelity_rows(&md, "slide-ccp");
    assert_eq!(rows.len(), 1, "{md}");
    let [signorini, ncp, mdp, spurious, cone] = rows[0].1;
    assert_eq!(rows[0].0, "apgd");
    assert_eq!(format!("{spurious:.2e}"), format!("{:.2e}", ln - 1.0));
    assert_eq!(
        format!("{signorini:.2e}"),
        format!("{:.2e}", ln * (ln - 1.0))
    );
    assert_eq!(format!("{ncp:.2e}"), format!("{:.2e}", ln * (ln - 1.0)));
    assert!(mdp < 1e-8 && cone < 1e-8, "{rows:?}");
}
