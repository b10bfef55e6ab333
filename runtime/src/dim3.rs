//! `Dim3`: a 3-D index or extent, as kernels see their indices (`lang::intrinsics`) and launches
//! take their grid and block (`launch::config`). Plain data, below both.

/// A 3-D index or extent: CUDA's `dim3` / `uint3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    /// The x component.
    pub x: u32,
    /// The y component.
    pub y: u32,
    /// The z component.
    pub z: u32,
}
