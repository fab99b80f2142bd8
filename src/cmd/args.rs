//! Checks of numeric command-line arguments that clap parses as signed numbers, so that a
//! negative value after a space (`--max-iter -5`) reaches our message instead of clap's
//! "unexpected argument '-5'"; and the parsing of arguments several commands share
//! (`--residual`, JSON values, memory sizes).

/// `value` of `flag` as a count of at least 1. Errors: `"{flag} {value}: must be at least 1
/// ({what})"`.
pub fn at_least_one(flag: &str, value: i64, what: &str) -> Result<u64, String> {
    u64::try_from(value)
        .ok()
        .filter(|&v| v >= 1)
        .ok_or_else(|| format!("{flag} {value}: must be at least 1 ({what})"))
}

/// `value` of `flag` as a count that may be 0. Errors: `"{flag} {value}: must not be
/// negative ({what})"`.
pub fn non_negative(flag: &str, value: i64, what: &str) -> Result<u64, String> {
    u64::try_from(value).map_err(|_| format!("{flag} {value}: must not be negative ({what})"))
}

/// `value` of `flag` as a positive finite number (a tolerance, a time limit). Errors:
/// `"{flag} {value}: must be a positive finite number ({what})"`.
pub fn positive(flag: &str, value: f64, what: &str) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!(
            "{flag} {value}: must be a positive finite number ({what})"
        ))
    }
}

/// A command-line value that is not of the form its option takes: the option, the value as
/// given and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue {
    /// The option (`--stall-window`).
    pub option: &'static str,
    /// The value as given.
    pub value: String,
    /// What the option takes.
    pub expected: &'static str,
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} '{}': expected {}",
            self.option, self.value, self.expected
        )
    }
}

impl std::error::Error for BadValue {}

/// `--stall-window N|off`: `Some(N)` for a count of at least 1 (iterations within which the
/// best residual must fall by 1%, [`cpbench_solvers::ExecSettings::stall_window`]), `None`
/// for `off` (no stall rule). Errors: [`BadValue`] naming the option, the value and the form.
pub fn stall_window(option: &'static str, value: &str) -> Result<Option<u64>, BadValue> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    match v.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(BadValue {
            option,
            value: value.to_string(),
            expected: "a number of iterations of at least 1, or 'off' (no stall rule)",
        }),
    }
}

/// `--jobs`: at least 1, capped at the machine's thread limit
/// ([`std::thread::available_parallelism`]) with a warning on stderr.
pub fn jobs(value: i64) -> Result<usize, String> {
    let j = at_least_one("--jobs", value, "runs executed concurrently")?;
    let limit = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let j = usize::try_from(j).unwrap_or(usize::MAX);
    if j > limit {
        eprintln!(
            "warning: --jobs {j} is more than the {limit} threads this machine runs at once; \
             using --jobs {limit}"
        );
        return Ok(limit);
    }
    Ok(j)
}

/// A JSON argument given inline or as a file: a value that starts with `{` or `[` (after
/// blanks) is parsed as JSON, anything else is read as the path of a JSON file. Errors name
/// the flag, and the file with the line and column of a syntax error.
pub fn json_arg(
    flag: &str,
    value: &str,
) -> Result<(serde_json::Value, Option<std::path::PathBuf>), String> {
    let t = value.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        let v = cpbench_harness::json::parse_strict(t)
            .map_err(|e| format!("{flag} (inline JSON): {e}"))?;
        return Ok((v, None));
    }
    let p = std::path::PathBuf::from(value);
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{flag} {}: {e}", p.display()))?;
    let v = cpbench_harness::json::parse_strict(&text)
        .map_err(|e| format!("{flag} {}: {e}", p.display()))?;
    Ok((v, Some(p)))
}

/// A memory size: bytes (`1000000`), or a number with a binary unit `K`, `M`, `G`, `T`
/// (powers of 1024; `8G`, `1.5G`, `500M`; `KB`/`KiB` and lower case accepted). Errors:
/// `"{flag} {value}: ..."` for a malformed, zero or overflowing size.
pub fn memory_size(flag: &str, value: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("{flag} {value}: {why} (bytes, or a number with K, M, G or T)");
    let t = value.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, scale) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1u64 << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        Some('t') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    let num = num.trim();
    let bytes = if let Ok(v) = num.parse::<u64>() {
        v.checked_mul(scale).ok_or_else(|| bad("too large"))?
    } else {
        let v: f64 = num.parse().map_err(|_| bad("not a size"))?;
        let b = v * scale as f64;
        if !(b.is_finite() && b >= 0.0) {
            return Err(bad("not a size"));
        }
        if b >= u64::MAX as f64 {
            return Err(bad("too large"));
        }
        b as u64
    };
    if bytes == 0 {
        return Err(bad("must be at least 1 byte"));
    }
    Ok(bytes)
}

/// The residual named by a `--residual` value, `None` when none is given. Errors: `"unknown
/// residual '{name}'"`.
pub fn residual(name: Option<&str>) -> Result<Option<cpbench_problems::ResidualKind>, String> {
    name.map(|s| {
        cpbench_problems::ResidualKind::parse(s).ok_or_else(|| format!("unknown residual '{s}'"))
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_windows() {
        assert_eq!(stall_window("--stall-window", "300"), Ok(Some(300)));
        assert_eq!(stall_window("--stall-window", "off"), Ok(None));
        assert_eq!(stall_window("--stall-window", "OFF"), Ok(None));
        for bad in ["0", "-5", "1.5", "never", ""] {
            let e = stall_window("--stall-window", bad).unwrap_err();
            assert_eq!(e.option, "--stall-window");
            assert_eq!(e.value, bad);
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("--stall-window '{bad}': expected")) && m.contains("off"),
                "{m}"
            );
        }
    }

    #[test]
    fn counts() {
        assert_eq!(at_least_one("--max-iter", 5, "x"), Ok(5));
        assert_eq!(
            at_least_one("--max-iter", -5, "iterations per solve"),
            Err("--max-iter -5: must be at least 1 (iterations per solve)".to_string())
        );
        assert!(at_least_one("--trace-every", 0, "x").is_err());
        assert_eq!(
            positive("--tol", -1.0, "stopping tolerance"),
            Err("--tol -1: must be a positive finite number (stopping tolerance)".to_string())
        );
        assert!(positive("--time-limit", f64::NAN, "x").is_err());
        assert_eq!(positive("--tol", 1e-6, "x"), Ok(1e-6));
        assert_eq!(non_negative("--steps", 0, "x"), Ok(0));
        assert!(non_negative("--steps", -1, "x").is_err());
        assert!(jobs(0).is_err());
        assert_eq!(jobs(1), Ok(1));
        let limit = std::thread::available_parallelism().unwrap().get();
        assert_eq!(jobs(i64::MAX), Ok(limit));
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(memory_size("--memory-limit", "8G"), Ok(8 << 30));
        assert_eq!(memory_size("--memory-limit", "500M"), Ok(500 << 20));
        assert_eq!(memory_size("--memory-limit", "1.5GiB"), Ok(3 << 29));
        assert_eq!(memory_size("--memory-limit", "64kb"), Ok(64 << 10));
        assert_eq!(memory_size("--memory-limit", "123456"), Ok(123_456));
        assert_eq!(memory_size("--memory-limit", "2T"), Ok(2 << 40));
        assert_eq!(
            memory_size("--memory-limit", "0"),
            Err(
                "--memory-limit 0: must be at least 1 byte (bytes, or a number with K, M, G or T)"
                    .to_string()
            )
        );
        assert!(memory_size("--memory-limit", "-1G").is_err());
        assert!(memory_size("--memory-limit", "8X").is_err());
        assert!(memory_size("--memory-limit", "").is_err());
        assert!(memory_size("--memory-limit", "99999999999T").is_err());
    }
}
