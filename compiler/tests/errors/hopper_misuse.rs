use cuprum::prelude::*;

/// Hopper's intrinsics used wrongly: every mistake at its span.
#[rawkernel]
pub fn misuse(map: &TensorMap<f32>, h: &[bf16], out: &mut [f32]) {
    let s = shared_array::<bf16, 8192>();
    let f = shared_array::<f32, 64>();
    let bars = shared_array::<u32, 4>();
    // Barriers are u64 elements of shared memory.
    mbarrier_init(bars, 0u32, 1);
    // A copy into bf16 memory from a map of f32, and coordinates that are not i32.
    tma_load_2d(s, 0u32, map, 0i32, 0i32, bars, 0u32);
    tma_load_2d(f, 0u32, map, 0u64, 0i32, bars, 0u32);
    // An accumulator of the wrong length, and f32 operands.
    let mut acc = [0.0f32; 64];
    wgmma_m64n64k16(&mut acc, s, 0u32, s, 0u32);
    wgmma_m64n64k16(&mut acc, f, 0u32, f, 0u32);
    // A slice parameter is not shared memory.
    wgmma_m64n128k16(&mut acc, h, 0u32, s, 0u32);
    // The FP8 form takes 8-bit floats, not bf16.
    wgmma_m64n128k32(&mut acc, s, 0u32, s, 0u32);
    // At most 7 groups in flight; registers a multiple of 8 from 24.
    wgmma_wait::<9>(&mut acc);
    warpgroup_reg_alloc::<20>();
    out[0] = acc[0];
}

/// A tensor map taken by value.
#[rawkernel]
pub fn by_value(map: TensorMap<bf16>) {}

/// Hopper's intrinsics in an elementwise body.
#[elementwise]
pub fn per_element(x: f32) -> f32 {
    wgmma_fence();
    x
}

/// More threads than a block may have.
#[rawkernel(max_threads = 2048)]
pub fn too_many_threads(out: &mut [f32]) {
    out[0] = 1.0;
}

#[rawkernel(min_blocks = 4)]
pub fn min_blocks_without_max_threads(out: &mut [f32]) {
    out[0] = 1.0;
}

#[rawkernel(max_threads = 256, min_blocks = 0)]
pub fn zero_min_blocks(out: &mut [f32]) {
    out[0] = 1.0;
}
