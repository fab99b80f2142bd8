//! The tests of `cpbench_problems::memory` (until now its `#[cfg(test)]` module in
//! `problems/src/memory.rs`).

use cpbench_problems::memory::*;

#[test]
fn sizes_over_the_budget_are_refused_with_the_numbers() {
    assert_eq!(human_bytes(45_200_000_000), "45.2 GB");
    assert_eq!(human_bytes(812), "812 B");
    set_memory_limit(Some(1_000_000));
    let e = check("the thing", 2_000_000, "use less").unwrap_err();
    assert_eq!(
        e.to_string(),
        "the thing needs about 2.0 MB (2000000 bytes), more than the memory budget of \
         1.0 MB (--memory-limit; --memory-limit changes it): use less"
    );
    assert!(check("the thing", 999_999, "").is_ok());
    set_memory_limit(None);
    assert!(memory_limit().is_none_or(|(_, s)| s.starts_with("60 %")));
    // more than any address space: an error, not an abort
    let e = try_with_capacity::<f64>(usize::MAX / 4, "q").unwrap_err();
    assert!(e.to_string().starts_with("q: "), "{e}");
    assert!(try_with_capacity::<f64>(10, "q").unwrap().capacity() >= 10);
}
