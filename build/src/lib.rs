//! cuprum-build: used from `build.rs` to emit CUDA C for kernel files, run nvcc and embed fat
//! binaries. Not implemented yet (milestone 1, the ahead-of-time build issue).
