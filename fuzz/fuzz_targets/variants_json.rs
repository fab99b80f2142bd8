//! Solver variants (`cpbench run --variants FILE|JSON`) and, on the same input, the settings
//! map (`--settings FILE|JSON`): both are a JSON object of objects.
//!
//! As the CLI: the text is parsed strictly (`json::parse_strict`), and its value, written
//! back, is given to `VariantsFile::parse`; the raw text is also given to it directly. A file
//! that parses is expanded as `--solvers` would use it: every variant by name, through
//! `variants::expand` (resolution of variants built on variants, the settings layering, a
//! solver built from the registry for each). As `--settings`: an object goes through
//! `registry::check_settings_map`, and then serves as the settings map of the expansion.
#![no_main]
use cpbench_harness::json::parse_strict;
use cpbench_harness::variants::{expand, VariantsFile};
use cpbench_solvers::registry;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // --settings
    let settings = match parse_strict(text) {
        Ok(Value::Object(map)) => registry::check_settings_map(&map).ok().map(|_| map),
        _ => None,
    };
    // --variants, as the CLI hands it over (parsed strictly, written back)
    let from_cli = parse_strict(text)
        .ok()
        .and_then(|v| VariantsFile::parse(&v.to_string(), "(fuzz input)").ok());
    // and the raw text (order of the file kept)
    let direct = VariantsFile::parse(text, "fuzz.json").ok();
    for file in [from_cli, direct].iter().flatten() {
        let names = file.names();
        let _ = expand(&names, None, Some(file));
        if settings.is_some() {
            let _ = expand(&names, settings.as_ref(), Some(file));
        }
    }
});
