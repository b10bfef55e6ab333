//! The thread intrinsics on the CPU device: indices and extents of the running CUDA thread
//! ([`super::context`]), and the block barrier. Outside a launch they answer as the prelude's do
//! (one thread of one block).

use super::context::{self, Stop};
use crate::lang::intrinsics::{self as one, Dim3};

/// CUDA `threadIdx`.
#[inline]
pub fn thread_idx() -> Dim3 {
    context::current().map_or_else(one::thread_idx, |c| c.thread_idx.get())
}

/// CUDA `blockIdx`.
#[inline]
pub fn block_idx() -> Dim3 {
    context::current().map_or_else(one::block_idx, |c| c.block_idx)
}

/// CUDA `blockDim`.
#[inline]
pub fn block_dim() -> Dim3 {
    context::current().map_or_else(one::block_dim, |c| c.grid().block_dim)
}

/// CUDA `gridDim`.
#[inline]
pub fn grid_dim() -> Dim3 {
    context::current().map_or_else(one::grid_dim, |c| c.grid().grid_dim)
}

/// `blockIdx.x * blockDim.x + threadIdx.x` (wrapping, as the GPU's 32-bit arithmetic).
#[inline]
pub fn grid_1d() -> u32 {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    b.x.wrapping_mul(d.x).wrapping_add(t.x)
}

/// The global `(x, y)` index.
#[inline]
pub fn grid_2d() -> (u32, u32) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (b.x.wrapping_mul(d.x).wrapping_add(t.x), b.y.wrapping_mul(d.y).wrapping_add(t.y))
}

/// The global `(x, y, z)` index.
#[inline]
pub fn grid_3d() -> (u32, u32, u32) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (
        b.x.wrapping_mul(d.x).wrapping_add(t.x),
        b.y.wrapping_mul(d.y).wrapping_add(t.y),
        b.z.wrapping_mul(d.z).wrapping_add(t.z),
    )
}

/// `blockDim.x * gridDim.x`.
#[inline]
pub fn grid_size_1d() -> u32 {
    block_dim().x.wrapping_mul(grid_dim().x)
}

/// The grid's threads along x and y.
#[inline]
pub fn grid_size_2d() -> (u32, u32) {
    let (d, g) = (block_dim(), grid_dim());
    (d.x.wrapping_mul(g.x), d.y.wrapping_mul(g.y))
}

/// The grid's threads along x, y and z.
#[inline]
pub fn grid_size_3d() -> (u32, u32, u32) {
    let (d, g) = (block_dim(), grid_dim());
    (d.x.wrapping_mul(g.x), d.y.wrapping_mul(g.y), d.z.wrapping_mul(g.z))
}

/// The lane in the warp (the thread's position in its block, x fastest, modulo 32).
#[inline]
pub fn lane_id() -> u32 {
    context::current().map_or(0, |c| c.lane())
}

/// 32.
#[inline]
pub fn warp_size() -> u32 {
    32
}

/// The block barrier: the thread waits until every thread of its block has arrived (or
/// finished).
pub fn sync_threads() {
    if let Some(c) = context::current() {
        c.suspend(Stop::Barrier);
    }
}

/// The warp barrier: waits for the other lanes of the warp (all of them that have not finished
/// or stopped at a block barrier; the mask is not needed to find them).
pub fn sync_warp(mask: u32) {
    let _ = mask;
    if let Some(c) = context::current() {
        c.suspend(Stop::Warp);
    }
}

/// The grid barrier: the thread waits until every thread of the grid has arrived (or finished).
/// Only a cooperative launch (`cpu::grid::Grid::run_cooperative`, which runs every CUDA
/// thread of the grid as a coroutine of one scheduler) can run it; outside a launch it does
/// nothing, as the prelude's.
pub fn grid_sync() {
    if let Some(c) = context::current()
        && !c.suspend(Stop::Grid)
    {
        panic!(
            "`grid_sync()` in `{}`, which the CPU device runs without a cooperative launch (a `#[rawkernel]` that calls it is \
             launched cooperatively; this one was not, a bug of its generated launch)",
            c.grid().kernel
        );
    }
}

/// A memory fence: the CPU device's accesses are sequenced by its scheduler already.
pub fn thread_fence() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// A block-wide memory fence: a block runs on one host thread, so there is nothing to order.
pub fn thread_fence_block() {}

/// An elementwise or reduction body's loop index (not used by raw kernels; here so that every
/// intrinsic has a CPU spelling).
pub fn index() -> usize {
    one::index()
}

/// An elementwise body's loop size.
pub fn loop_size() -> usize {
    one::loop_size()
}

/// A reduction map's position along the reduced axes.
pub fn reduce_index() -> usize {
    one::reduce_index()
}
