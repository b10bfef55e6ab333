use cuprum::prelude::*;

/// Tensor-core and asynchronous-copy intrinsics used wrongly: every mistake at its span.
#[rawkernel]
pub fn misuse(a: &[f32], h: &[bf16], out: &mut [f32]) {
    let s = shared_array::<f32, 64>();
    let sh = shared_array::<bf16, 64>();
    // An A fragment of the wrong length, and of the wrong element type.
    let _ = mma_m16n8k16([h[0]; 4], [h[0]; 4], [0.0; 4]);
    let _ = mma_m16n8k16([a[0]; 8], [h[0]; 4], [0.0; 4]);
    // ldmatrix loads 16-bit elements from a shared array.
    let _ = ldmatrix_x4(s, 0u32);
    // cp_async needs a shared destination and a slice source.
    cp_async(out, 0u32, a, 0u32);
    cp_async(sh, 0u32, a, 0u32);
    // At most 7 groups may stay in flight.
    cp_async_wait::<9>();
    out[0] = s[0] + sh[0].to_f32();
}

/// Not a shared array bound here.
#[device]
fn rows(s: &[bf16; 64]) -> [bf16; 8] {
    ldmatrix_x4(s, 0u32)
}

/// Tensor cores in an elementwise body.
#[elementwise]
pub fn per_element(x: f32) -> f32 {
    let d = mma_m16n8k8_tf32([x; 4], [x; 2], [x; 4]);
    d[0]
}

/// The source of `cp_async_unchecked` must be a parameter (its start is checked on entry).
#[rawkernel]
pub fn copy_from_local(a: &[f32]) {
    let s = shared_array::<f32, 8>();
    let t = shared_array::<f32, 8>();
    unsafe { cp_async_unchecked(s, 0u32, t, 0u32) };
    unsafe { cp_async_unchecked(s, 4u32, a, 0u32) };
}
