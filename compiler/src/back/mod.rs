//! Back ends. One for now: CUDA C (`cuda`).

pub mod cuda;
