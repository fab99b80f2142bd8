//! `cpbench solvers`: the registered solvers, their classes, cost model and settings (defaults
//! and allowed ranges), from the registry's one table.

use crate::AnyError;
use clap::Args;
use cpbench_solvers::registry::{default_solvers, DESAXCE_PREFIX, PRESETS, SOLVERS};
use serde_json::json;
use std::fmt::Write as _;

/// Arguments of `cpbench solvers`.
#[derive(Args)]
pub struct SolversArgs {
    /// Print a JSON array (one object per solver) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Help text of `cpbench run --solvers`, naming the real default list.
pub fn run_solvers_help() -> String {
    format!(
        "Comma-separated solvers or variants: `name`, `name:preset` (list: `cpbench solvers`), \
         `name@setting=value[@setting=value]` (`pgs@omega=0.8`), a sweep \
         `name@setting=start:stop:step` (`pgs@omega=0.6:1.4:0.2`), or a --variants name \
         [default: the --variants file's variants, else the suite's solvers, else {}]",
        default_solvers().join(",")
    )
}

/// Print the table (text or JSON) on stdout.
pub fn run(a: SolversArgs) -> Result<(), AnyError> {
    if a.json {
        println!("{}", serde_json::to_string_pretty(&to_json())?);
    } else {
        print!("{}", to_text());
    }
    Ok(())
}

fn to_json() -> serde_json::Value {
    let solvers: Vec<_> = SOLVERS
        .iter()
        .map(|e| {
            let doc = (e.settings)();
            let ranges: serde_json::Map<_, _> = doc
                .ranges
                .iter()
                .map(|(f, r)| (f.to_string(), json!(r)))
                .collect();
            let aliases: serde_json::Map<_, _> = doc
                .aliases
                .iter()
                .map(|(old, new)| (old.to_string(), json!(new)))
                .collect();
            json!({
                "name": e.name,
                "description": e.description,
                "source": e.source,
                "classes": e.classes.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                "cost_model": e.cost,
                "default_run": e.default_run,
                "settings": doc.defaults,
                "ranges": ranges,
                "aliases": aliases,
            })
        })
        .collect();
    json!(solvers)
}

fn to_text() -> String {
    let mut t = String::new();
    for e in SOLVERS {
        let doc = (e.settings)();
        let classes: Vec<String> = e.classes.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(t, "{}: {} ({})", e.name, e.description, e.source);
        let _ = writeln!(
            t,
            "  classes: {}; cost: {}{}",
            classes.join(", "),
            e.cost.as_str(),
            if e.default_run {
                "; in the default run list"
            } else {
                ""
            }
        );
        if let Some(obj) = doc.defaults.as_object() {
            for (field, default) in obj {
                let range = doc
                    .ranges
                    .iter()
                    .filter(|(f, _)| f == field)
                    .map(|(_, r)| r.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                let old = doc
                    .aliases
                    .iter()
                    .find(|(_, new)| new == field)
                    .map(|(old, _)| format!(" (old name: {old})"))
                    .unwrap_or_default();
                let range = if range.is_empty() {
                    String::new()
                } else {
                    format!("  [{range}]")
                };
                let _ = writeln!(t, "    {field} = {default}{range}{old}");
            }
        }
    }
    let _ = writeln!(
        t,
        "\n{DESAXCE_PREFIX}<solver> wraps any CCP solver in De Saxce's fixed point (Coulomb); \
         its settings are those of {DESAXCE_PREFIX}apgd, with the inner solver's under `inner`."
    );
    let _ = writeln!(t, "presets (name:preset): {}", PRESETS.join(", "));
    let _ = writeln!(t, "default run list: {}", default_solvers().join(","));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lists_every_solver_with_ranges() {
        let t = to_text();
        for e in SOLVERS {
            assert!(t.contains(&format!("{}: ", e.name)), "{}", e.name);
        }
        assert!(t.contains("    omega = 1.0  [in (0, 2)]"), "{t}");
        assert!(
            t.contains("    gll_memory = 12  [>= 1] (old name: m)"),
            "{t}"
        );
        assert!(t.contains("classes: ccp, coulomb") || t.contains("classes: coulomb"));
        assert!(
            t.contains("default run list: pgs,jacobi,apgd,spgqp,ipm"),
            "{t}"
        );
    }

    #[test]
    fn json_has_cost_models_and_defaults() {
        let j = to_json();
        let ipm = j
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "ipm")
            .unwrap();
        assert_eq!(ipm["cost_model"], "factorising");
        assert_eq!(ipm["default_run"], true);
        assert_eq!(ipm["settings"]["step_fraction"], 0.99);
        assert_eq!(ipm["ranges"]["step_fraction"], "in (0, 1)");
        assert_eq!(ipm["classes"], json!(["lcp", "box", "ccp"]));
    }
}
