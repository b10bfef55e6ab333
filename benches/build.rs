//! Precompiles the benchmark's kernel files (the precompiled first-call rows need fat binaries).
fn main() {
    cuprum_build::Kernels::new().file("src/kernels.rs").file("src/many_kernels.rs").file("src/fused.rs").compile();
}
