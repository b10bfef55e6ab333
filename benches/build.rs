//! Precompiles the benchmark's `#[rawkernel]`s (the precompiled first-call row needs a fat binary).
fn main() {
    cuprum_build::Kernels::new().file("src/kernels.rs").compile();
}
