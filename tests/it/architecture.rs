//! The layering of the workspace: no file-level import cycle in any crate (issue 29).
//!
//! A module is a file (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`). A file depends on every
//! module it names through a `crate::` or `super::` path outside comments and its `#[cfg(test)]
//! mod tests` (the deepest module of the path that is a file). A reference to an ancestor
//! module (a child using its parent's items) is not a dependency: a parent aggregates its
//! children. Among the rest, the dependency graph of every crate must have no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut m: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        m.pop();
    }
    m
}

/// The code of a file without line comments and without its test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The `crate::` and `super::` paths of `code`, as `(number of super, segments)`
/// (`usize::MAX` supers: from the crate root).
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &b[i..];
        let start_ok = i == 0 || !ident_char(b[i - 1] as char) && b[i - 1] != b':';
        let (ups, mut j) = if start_ok && rest.starts_with(b"crate::") {
            (usize::MAX, i + 7)
        } else if start_ok && rest.starts_with(b"super::") {
            let mut k = i;
            let mut n = 0;
            while b[k..].starts_with(b"super::") {
                k += 7;
                n += 1;
            }
            (n, k)
        } else {
            i += 1;
            continue;
        };
        let mut segs = Vec::new();
        loop {
            let s = j;
            while j < code.len() && ident_char(b[j] as char) {
                j += 1;
            }
            if j == s {
                break;
            }
            segs.push(code[s..j].to_string());
            if b[j..].starts_with(b"::") {
                j += 2;
            } else {
                break;
            }
        }
        out.push((ups, segs));
        i = j.max(i + 1);
    }
    out
}

/// The dependency graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut fs = Vec::new();
    files(src, &mut fs);
    let mods: BTreeMap<Module, PathBuf> =
        fs.iter().map(|f| (module_of(src, f), f.clone())).collect();
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, f) in &mods {
        let text = std::fs::read_to_string(f).unwrap();
        let deps = g.entry(m.clone()).or_default();
        for (ups, segs) in paths(&code(&text)) {
            let mut full: Module = if ups == usize::MAX {
                Vec::new()
            } else {
                m[..m.len().saturating_sub(ups)].to_vec()
            };
            full.extend(segs);
            let target = (0..=full.len())
                .rev()
                .map(|k| full[..k].to_vec())
                .find(|p| mods.contains_key(p));
            if let Some(t) = target {
                let ancestor = t.len() < m.len() && m[..t.len()] == t[..];
                if &t != m && !ancestor {
                    deps.insert(t);
                }
            }
        }
    }
    g
}

/// A cycle of `g`, if any (depth-first search).
fn cycle(g: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        v: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        state.insert(v.clone(), 1);
        stack.push(v.clone());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w) {
                Some(1) => {
                    let i = stack.iter().position(|x| x == w).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(w.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(w, g, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(v.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if !state.contains_key(v) {
            if let Some(c) = visit(v, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_crate_has_a_file_level_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in [
        "problems",
        "granular",
        "solvers",
        "harness",
        "reproduce",
        "python",
        ".",
        "test-support",
    ] {
        let src = root.join(krate).join("src");
        let g = graph(&src);
        assert!(
            g.len() > 1 || krate == "test-support",
            "{krate}: no modules found"
        );
        if let Some(c) = cycle(&g) {
            let names: Vec<String> = c
                .iter()
                .map(|m| {
                    if m.is_empty() {
                        "crate".into()
                    } else {
                        m.join("::")
                    }
                })
                .collect();
            panic!("{krate}: import cycle {}", names.join(" -> "));
        }
    }
}

/// The check finds a cycle when there is one: two sibling files naming each other.
#[test]
fn a_planted_cycle_is_found() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::X;\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct X;\nfn f() { super::c::g() }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "pub fn g() { let _ = crate::a::Y; }\n// crate::b::X\n",
    )
    .unwrap();
    let c = cycle(&graph(src)).expect("the planted cycle");
    assert_eq!(c.len(), 4, "{c:?}");
    // a parent naming its child and the child its parent is no cycle
    std::fs::write(src.join("c.rs"), "pub fn g() { let _ = crate::Z; }\n").unwrap();
    assert!(cycle(&graph(src)).is_none());
}
