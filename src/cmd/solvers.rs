//! `cpbench solvers [NAME]`: the registered solvers, their classes, cost model and settings
//! (type, default, allowed range and meaning of each), from the registry's one table; the
//! meanings are the settings structs' doc comments ([`cpbench_solvers::settings::FieldDoc`]).

use crate::AnyError;
use clap::Args;
use cpbench_solvers::external::{
    self, siconos, ExternalDefs, ExternalSolver, EXT_PREFIX, SICONOS_PREFIX,
};
use cpbench_solvers::registry::{
    default_solvers, entry, exec_fields, SettingField, SettingsDoc, SolverEntry, DESAXCE_PREFIX,
    PRESETS, SOLVERS, SOLVER_NAMES,
};
use cpbench_solvers::ExecSettings;
use serde_json::json;
use std::fmt::Write as _;

/// Arguments of `cpbench solvers`.
#[derive(Args)]
pub struct SolversArgs {
    /// Show only this solver (a registry name; `name:preset` shows `name`).
    pub name: Option<String>,
    /// Print a JSON array (one object per solver) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also list the external solvers (`ext:NAME`) of this definition file (docs/external.md).
    #[arg(long, value_name = "FILE")]
    pub external: Option<std::path::PathBuf>,
    /// Print the registry as Markdown (the generated part of docs/solvers.md).
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// With --markdown: write it into FILE between its markers
    /// (`<!-- generated: cpbench solvers --markdown -->` ... `<!-- end generated -->`)
    /// instead of printing it.
    #[arg(long, value_name = "FILE", requires = "markdown")]
    pub doc: Option<std::path::PathBuf>,
}

/// One external solver (`siconos:*`, `ext:*`) as `cpbench solvers` shows it.
struct ExternalRow {
    name: String,
    description: String,
    classes: Vec<String>,
    format: &'static str,
    command: Vec<String>,
    /// `available`, or `unavailable: why`
    availability: String,
}

/// The external solvers: Siconos' built-in ones, then those of `defs`.
fn external_rows(defs: Option<&ExternalDefs>) -> Vec<ExternalRow> {
    let mut names: Vec<String> = siconos::SICONOS_SOLVERS
        .iter()
        .map(|e| format!("{SICONOS_PREFIX}{}", e.name))
        .collect();
    if let Some(d) = defs {
        names.extend(d.solvers.keys().map(|n| format!("{EXT_PREFIX}{n}")));
    }
    names
        .iter()
        .filter_map(|n| match external::resolve(n, defs) {
            Some(Ok(_)) => {
                let s = match n.strip_prefix(SICONOS_PREFIX).and_then(siconos::entry) {
                    Some(e) => ExternalSolver::siconos(e),
                    None => {
                        let d = defs?;
                        let short = n.strip_prefix(EXT_PREFIX)?;
                        ExternalSolver::new(n, d.solvers[short].clone(), &d.dir, String::new())
                    }
                };
                let def = s.definition();
                Some(ExternalRow {
                    name: n.clone(),
                    description: def.description.clone().unwrap_or_default(),
                    classes: def.classes.as_ref().map_or_else(
                        || vec!["all".to_string()],
                        |c| c.iter().map(|c| c.to_string()).collect(),
                    ),
                    format: def.format.as_str(),
                    command: def.command.clone(),
                    availability: match s.availability() {
                        Ok(()) => "available".into(),
                        Err(why) => format!("unavailable: {why}"),
                    },
                })
            }
            _ => None,
        })
        .collect()
}

fn external_json(rows: &[ExternalRow]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            json!({
                "name": r.name,
                "description": r.description,
                "classes": r.classes,
                "cost_model": "external",
                "default_run": false,
                "format": r.format,
                "command": r.command,
                "available": r.availability == "available",
                "availability": r.availability,
            })
        })
        .collect()
}

fn external_text(rows: &[ExternalRow]) -> String {
    let mut t = String::new();
    for r in rows {
        let _ = writeln!(t, "{}: {} (external program)", r.name, r.description);
        let _ = writeln!(
            t,
            "  classes: {}; cost: external; {}",
            r.classes.join(", "),
            r.availability
        );
        let _ = writeln!(t, "  command ({}): {}", r.format, r.command.join(" "));
    }
    t
}

/// Help text of `cpbench run --solvers`, naming the real default list.
pub fn run_solvers_help() -> String {
    format!(
        "Comma-separated solvers or variants: `name`, `name:preset` (list: `cpbench solvers`), \
         `name@setting=value[@setting=value]` (`pgs@omega=0.8`), a sweep \
         `name@setting=start:stop:step` (`pgs@omega=0.6:1.4:0.2`), a --variants name, an \
         external program `ext:NAME` of --external FILE, or a Siconos solver `siconos:nsgs` \
         [default: the --variants file's variants, else the suite's solvers, else {}]",
        default_solvers().join(",")
    )
}

/// `cpbench solvers NAME` for a name that is not in the table.
#[derive(Debug)]
struct UnknownSolver(String);

impl std::fmt::Display for UnknownSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown solver '{}'; known solvers: {}",
            self.0,
            SOLVER_NAMES.join(", ")
        )
    }
}

impl std::error::Error for UnknownSolver {}

/// Print the table (text or JSON) on stdout, for every solver or only `a.name`. Errors: an
/// unknown name (the message lists the known ones).
pub fn run(a: SolversArgs) -> Result<(), AnyError> {
    let defs = a
        .external
        .as_deref()
        .map(ExternalDefs::load)
        .transpose()
        .map_err(cpbench_solvers::SolverError::from)?;
    let mut ext = external_rows(defs.as_ref());
    let entries: Vec<&SolverEntry> = match &a.name {
        None => SOLVERS.iter().collect(),
        Some(n) => match external::resolve(n, defs.as_ref()) {
            Some(r) => {
                r?;
                ext.retain(|r| r.name == *n);
                Vec::new()
            }
            None => vec![entry(n).ok_or_else(|| UnknownSolver(n.clone()))?],
        },
    };
    if a.name.is_some() && !entries.is_empty() {
        ext.clear();
    }
    if a.markdown {
        let md = to_markdown(&entries);
        match &a.doc {
            None => print!("{md}"),
            Some(path) => {
                let err = |e: std::io::Error| format!("{}: {e}", path.display());
                let text = std::fs::read_to_string(path).map_err(err)?;
                let new = splice_doc(&text, &md).ok_or_else(|| {
                    format!(
                        "{}: the markers `{}` and `{}` are missing",
                        path.display(),
                        DOC_MARKERS.0,
                        DOC_MARKERS.1
                    )
                })?;
                std::fs::write(path, new).map_err(err)?;
                println!("wrote the registry into {}", path.display());
            }
        }
        return Ok(());
    }
    if a.json {
        let mut all = match to_json(&entries) {
            serde_json::Value::Array(v) => v,
            _ => Vec::new(),
        };
        all.extend(external_json(&ext));
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        let mut t = to_text(&entries, a.name.is_none());
        if !ext.is_empty() {
            if a.name.is_none() {
                let _ = writeln!(
                    t,
                    "\nexternal solvers (programs run through the external-solver protocol, \
                     docs/external.md; `ext:NAME` from --external FILE):"
                );
            }
            t.push_str(&external_text(&ext));
        }
        print!("{t}");
    }
    Ok(())
}

/// The documented range of `field`: the validator's, else an enum's values, else empty.
fn range_of(doc: &SettingsDoc, f: &SettingField) -> String {
    let r: Vec<&str> = doc
        .ranges
        .iter()
        .filter(|(n, _)| *n == f.name)
        .map(|(_, r)| r.as_str())
        .collect();
    if !r.is_empty() {
        r.join("; ")
    } else if !f.values.is_empty() {
        format!("one of {}", f.values.join(", "))
    } else {
        String::new()
    }
}

fn to_json(entries: &[&SolverEntry]) -> serde_json::Value {
    let solvers: Vec<_> = entries
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
            let fields: Vec<_> = doc
                .fields
                .iter()
                .map(|f| {
                    json!({
                        "name": f.name,
                        "type": f.json_type,
                        "default": doc.defaults.get(f.name),
                        "range": range_of(&doc, f),
                        "values": f.values,
                        "meaning": f.meaning,
                        "doc": f.doc,
                    })
                })
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
                "fields": fields,
            })
        })
        .collect();
    json!(solvers)
}

/// The old name of a setting (an alias still accepted in settings files), if it has one.
fn old_name<'a>(doc: &'a SettingsDoc, f: &SettingField) -> Option<&'a str> {
    doc.aliases
        .iter()
        .find(|(_, new)| *new == f.name)
        .map(|(old, _)| *old)
}

/// The default of a setting as JSON text, `-` when it has none.
fn default_text(doc: &SettingsDoc, f: &SettingField) -> String {
    doc.defaults
        .get(f.name)
        .map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// One setting: `name: type = default  [range] (old name: x)` and its meaning below.
fn field_lines(t: &mut String, doc: &SettingsDoc, f: &SettingField) {
    let default = default_text(doc, f);
    let range = range_of(doc, f);
    let range = if range.is_empty() {
        String::new()
    } else {
        format!("  [{range}]")
    };
    let old = old_name(doc, f)
        .map(|old| format!(" (old name: {old})"))
        .unwrap_or_default();
    let _ = writeln!(t, "    {}: {} = {default}{range}{old}", f.name, f.json_type);
    let _ = writeln!(t, "        {}", f.meaning);
}

fn to_text(entries: &[&SolverEntry], all: bool) -> String {
    let mut t = String::new();
    for e in entries {
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
        let _ = writeln!(t, "  settings (name: type = default  [range]):");
        for f in &doc.fields {
            field_lines(&mut t, &doc, f);
        }
    }
    if !all {
        return t;
    }
    let _ = writeln!(
        t,
        "\n{DESAXCE_PREFIX}<solver> wraps any CCP solver in De Saxce's fixed point (Coulomb); \
         its settings are those of {DESAXCE_PREFIX}apgd, with the inner solver's under `inner`."
    );
    let _ = writeln!(t, "presets (name:preset): {}", PRESETS.join(", "));
    let _ = writeln!(t, "default run list: {}", default_solvers().join(","));
    let _ = writeln!(
        t,
        "executor settings, common to every solver (`exec` in manifests; set by `run`'s \
         --tol/--profile, --residual, --max-iter, --time-limit, --memory-limit):"
    );
    let exec_doc = SettingsDoc {
        defaults: serde_json::to_value(ExecSettings::default()).unwrap_or_default(),
        ranges: Vec::new(),
        aliases: &[],
        fields: exec_fields(),
    };
    for f in &exec_doc.fields {
        field_lines(&mut t, &exec_doc, f);
    }
    t
}

/// Start and end markers of the generated part of `docs/solvers.md`.
pub const DOC_MARKERS: (&str, &str) = (
    "<!-- generated: cpbench solvers --markdown -->",
    "<!-- end generated -->",
);

/// A Markdown table cell: `|` escaped, newlines as spaces.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The registry as Markdown (the generated part of `docs/solvers.md`): one table of every
/// solver (name, what it is, source, classes, cost model, default run), then per solver a
/// table of its settings (type, default, range, meaning), the executor's settings, the
/// presets and the De Saxce wrapper.
pub fn to_markdown(entries: &[&SolverEntry]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{} solvers in the registry (`cpbench solvers` prints the same as text, `--json` as \
         JSON).\n",
        entries.len()
    );
    let _ = writeln!(
        t,
        "| solver | what it is | source | classes | cost model | default run |\n|---|---|---|---|---|---|"
    );
    for e in entries {
        let classes: Vec<String> = e.classes.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(
            t,
            "| [`{n}`](#{n}) | {} | {} | {} | {} | {} |",
            cell(e.description),
            cell(e.source),
            classes.join(", "),
            e.cost.as_str(),
            if e.default_run { "yes" } else { "" },
            n = e.name
        );
    }
    let settings_table = |t: &mut String, doc: &SettingsDoc| {
        let _ = writeln!(
            t,
            "| setting | type | default | range | meaning |\n|---|---|---|---|---|"
        );
        for f in &doc.fields {
            let default = default_text(doc, f);
            let old = old_name(doc, f)
                .map(|old| format!(" (old name `{old}`)"))
                .unwrap_or_default();
            let _ = writeln!(
                t,
                "| `{}`{old} | {} | `{}` | {} | {} |",
                f.name,
                f.json_type,
                cell(&default),
                cell(&range_of(doc, f)),
                cell(&f.meaning)
            );
        }
    };
    for e in entries {
        let _ = writeln!(t, "\n### {}\n\n{} ({}).\n", e.name, e.description, e.source);
        let doc = (e.settings)();
        if doc.fields.is_empty() {
            let _ = writeln!(t, "No settings.");
        } else {
            settings_table(&mut t, &doc);
        }
    }
    let _ = writeln!(
        t,
        "\n### Executor settings\n\nCommon to every solver (`exec` in manifests; set by `run`'s \
         `--tol`/`--profile`, `--residual`, `--max-iter`, `--time-limit`, `--memory-limit`).\n"
    );
    let exec_doc = SettingsDoc {
        defaults: serde_json::to_value(ExecSettings::default()).unwrap_or_default(),
        ranges: Vec::new(),
        aliases: &[],
        fields: exec_fields(),
    };
    settings_table(&mut t, &exec_doc);
    let _ = writeln!(
        t,
        "\n`{DESAXCE_PREFIX}<solver>` wraps any CCP solver in De Saxce's fixed point (Coulomb); \
         its settings are those of `{DESAXCE_PREFIX}apgd`, with the inner solver's under `inner`. \
         Presets (`name:preset`): {}. Default run list: `{}`.",
        PRESETS
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
        default_solvers().join(",")
    );
    t
}

/// `text` with the part between [`DOC_MARKERS`] replaced by `generated`; `None` when the
/// markers are missing.
pub fn splice_doc(text: &str, generated: &str) -> Option<String> {
    let (a, b) = DOC_MARKERS;
    let i = text.find(a)? + a.len();
    let j = i + text[i..].find(b)?;
    Some(format!(
        "{}\n\n{}\n{}",
        &text[..i],
        generated.trim_end(),
        &text[j..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lists_every_solver_with_ranges() {
        let all: Vec<&SolverEntry> = SOLVERS.iter().collect();
        let t = to_text(&all, true);
        for e in SOLVERS {
            assert!(t.contains(&format!("{}: ", e.name)), "{}", e.name);
        }
        assert!(
            t.contains(
                "    omega: number = 1.0  [in (0, 2)]\n        Relaxation `omega`, in `(0, 2)`.\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("    gll_memory: integer = 12  [>= 1] (old name: m)\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "    block_step: string = \"safeguarded\"  [one of trace, max_eigen, safeguarded]"
            ),
            "{t}"
        );
        assert!(t.contains("    max_iter: integer = 20000\n"), "{t}");
        assert!(t.contains("classes: ccp, coulomb") || t.contains("classes: coulomb"));
        assert!(
            t.contains("default run list: pgs,jacobi,apgd,spgqp,ipm"),
            "{t}"
        );
    }

    #[test]
    fn json_has_cost_models_and_defaults() {
        let all: Vec<&SolverEntry> = SOLVERS.iter().collect();
        let j = to_json(&all);
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
        let f = &ipm["fields"][1];
        assert_eq!(f["name"], "step_fraction");
        assert_eq!(f["type"], "number");
        assert_eq!(f["default"], 0.99);
        assert_eq!(f["range"], "in (0, 1)");
        assert_eq!(
            f["meaning"],
            "Fraction of the step to the boundary taken (in (0, 1))."
        );
    }

    #[test]
    fn one_solver_only_and_unknown_names() {
        let pgs = to_text(&[entry("pgs").unwrap()], false);
        assert!(pgs.starts_with("pgs: "), "{pgs}");
        assert!(!pgs.contains("jacobi"), "{pgs}");
        assert!(!pgs.contains("default run list:"), "{pgs}");
        assert!(
            pgs.contains("    block_step: string = \"safeguarded\""),
            "{pgs}"
        );
        let e = run(SolversArgs {
            name: Some("pgz".into()),
            json: false,
            external: None,
            markdown: false,
            doc: None,
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("unknown solver 'pgz'; known solvers: pgs, jacobi, apgd"),
            "{e}"
        );
    }

    /// docs/solvers.md holds the registry as `to_markdown` writes it: regenerate with
    /// `cargo run -- solvers --markdown --doc docs/solvers.md` after changing the registry.
    #[test]
    fn docs_solvers_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/solvers.md");
        let text = std::fs::read_to_string(path).unwrap();
        let all: Vec<&SolverEntry> = SOLVERS.iter().collect();
        let want = splice_doc(&text, &to_markdown(&all)).expect("markers in docs/solvers.md");
        assert!(
            text == want,
            "docs/solvers.md is stale: run `cargo run -- solvers --markdown --doc docs/solvers.md`"
        );
        for e in SOLVERS {
            assert!(text.contains(&format!("### {}", e.name)), "{}", e.name);
        }
    }
}
