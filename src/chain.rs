//! How an error is printed: once, with the causes that add something.

/// `error: MESSAGE` then one `  caused by: CAUSE` line per cause in the chain, skipping the
/// causes whose text is already contained in what was printed (wrappers such as
/// `"{path}: {source}"` repeat their source), so that every message is printed once
/// ([`cpbench_harness::error::message_with_causes`]).
pub fn format_error_chain(e: &dyn std::error::Error) -> String {
    format!(
        "error: {}\n",
        cpbench_harness::error::message_with_causes(e)
    )
}

#[cfg(test)]
mod tests {
    use super::format_error_chain;

    #[derive(Debug)]
    struct E(String, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn repeated_causes_are_skipped() {
        let inner = E("No such file or directory (os error 2)".into(), None);
        let outer = E(
            "a.dat: No such file or directory (os error 2)".into(),
            Some(Box::new(inner)),
        );
        assert_eq!(
            format_error_chain(&outer),
            "error: a.dat: No such file or directory (os error 2)\n"
        );
        let e = E(
            "suite s.json: bad".into(),
            Some(Box::new(E("line 3: missing field".into(), None))),
        );
        assert_eq!(
            format_error_chain(&e),
            "error: suite s.json: bad\n  caused by: line 3: missing field\n"
        );
    }
}
