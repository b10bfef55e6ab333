use cuprum::prelude::*;

/// The tile edge and area: file-level constants, usable in expressions and as shared-array
/// lengths.
const TILE: u32 = 16;
const TILE_AREA: usize = 256;

/// Tiled single-precision matrix multiply, C = alpha * A * B + beta * C (CuPy's sgemm example):
/// each block computes a 16x16 tile of C, staging tiles of A and B in shared memory.
#[rawkernel]
pub fn sgemm(m: u32, n: u32, k: u32, alpha: f32, a: &[f32], b: &[f32], beta: f32, c: &mut [f32]) {
    const_tile_check();
    let sa = shared_array::<f32, TILE_AREA>();
    let sb = shared_array::<f32, { 16 * 16 }>();
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let row = block_idx().y * TILE + ty;
    let col = block_idx().x * TILE + tx;
    let mut acc = 0.0f32;
    let tiles = (k + TILE - 1) / TILE;
    for t in 0..tiles {
        let ak = t * TILE + tx;
        let bk = t * TILE + ty;
        sa[(ty * TILE + tx) as usize] = if row < m && ak < k { a[(row * k + ak) as usize] } else { 0.0 };
        sb[(ty * TILE + tx) as usize] = if bk < k && col < n { b[(bk * n + col) as usize] } else { 0.0 };
        sync_threads();
        for e in 0..TILE {
            acc = sa[(ty * TILE + e) as usize].mul_add(sb[(e * TILE + tx) as usize], acc);
        }
        sync_threads();
    }
    if row < m && col < n {
        let idx = (row * n + col) as usize;
        c[idx] = alpha * acc + beta * c[idx];
    }
}

/// A device function with no arguments and no result (documents the tile size assumption).
#[device]
fn const_tile_check() {}
