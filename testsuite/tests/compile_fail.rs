//! The attribute macros reject kernels outside the kernel language with errors at the user's
//! tokens (trybuild; expected output in `tests/ui/*.stderr`, regenerate with
//! `TRYBUILD=overwrite cargo test -p cuprum-testsuite --test compile_fail`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
