//! GPU tests of the runtime's Hopper support: `TensorMap` (encoded by the driver, passed by value
//! as the 192-byte `cuprum::TensorMap<T>` parameter, and used by a TMA copy in CUDA C), and the
//! launch of generated kernels raising their dynamic shared memory limit (`launch::launch`), next
//! to `RawKernel`'s explicit one.
//!
//! `#[ignore = "needs a CUDA GPU"]`: `cargo test -p cuprum-runtime --lib tests::gpu_hopper --
//! --include-ignored` on a GPU machine (the TMA copy needs compute capability 9.0 or later).

use cudarc::driver::sys::CUfunction_attribute;
use half::bf16;

use super::gpu_rawkernel::setup;
use crate::raw_kernel::RawKernel;
use crate::launch::LaunchConfig;
use crate::tensor_map::{Swizzle, TensorMap, TensorMapParam};
use crate::{Array, Error};

/// hopper.h's `cuprum::TensorMap<T>`, spelt out; `read_map` copies its fields out, after a byte
/// parameter (the map's parameter starts at offset 64), and `tma_box` copies the box at `(x, y)`
/// into shared memory with one TMA copy, then out to `out` as it lies there.
const SRC: &str = r#"
struct __align__(64) TM { unsigned long long map[16]; unsigned box_inner, box_outer, swizzle_bytes, reserved; };

extern "C" __global__ void read_map(unsigned char tag, const __grid_constant__ TM m, unsigned long long* out) {
    unsigned i = threadIdx.x;
    if (i < 16) out[i] = m.map[i];
    if (i == 16) out[16] = m.box_inner;
    if (i == 17) out[17] = m.box_outer;
    if (i == 18) out[18] = m.swizzle_bytes;
    if (i == 19) out[19] = tag;
}

extern "C" __global__ void tma_box(const __grid_constant__ TM m, unsigned short* out, int x, int y) {
    extern __shared__ __align__(1024) unsigned short tile[];
    unsigned n = m.box_inner * m.box_outer;
    unsigned long long* bar_ptr = (unsigned long long*)(tile + n);
    unsigned bar = (unsigned)__cvta_generic_to_shared(bar_ptr);
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile);
#if __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}" :: "r"(bar), "r"(n * 2u) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(dst), "l"((unsigned long long)&m), "r"(x), "r"(y), "r"(bar) : "memory");
    }
    __syncthreads();
    asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT;\n}" :: "r"(bar) : "memory");
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[i];
#endif
}
"#;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tensor_map_is_encoded_and_passed_by_value() {
    let dev = setup();
    let a = Array::<bf16>::zeros([8192, 64]).unwrap();
    let m = TensorMap::new(&a, [128, 64], Swizzle::B128).unwrap();
    assert_eq!(m.device(), dev.ordinal());
    assert_eq!((m.shape(), m.box_shape(), m.swizzle(), m.box_bytes()), ([8192, 64], [128, 64], Swizzle::B128, 16384));
    let p: TensorMapParam = crate::rawkernel::tensor_map_arg("k", "map", &m, dev.ordinal()).unwrap();
    assert_eq!((p.box_inner, p.box_outer, p.swizzle_bytes, p.reserved), (64, 128, 128, 0));
    assert_ne!(p.map, [0; 16], "the driver wrote the map");
    // On another device than the launch's: the error of an array argument.
    let e = crate::rawkernel::tensor_map_arg("k", "map", &m, dev.ordinal() + 1).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e:?}");

    // The kernel receives the 192 bytes as they are, after a byte parameter.
    let k = RawKernel::new(SRC, "read_map");
    let mut out = Array::<u64>::zeros(20).unwrap();
    // SAFETY: read_map(unsigned char, TM, unsigned long long*) writes out[0..20].
    unsafe { k.launch(&LaunchConfig::new(1, 32), (7u8, p, &mut out)) }.unwrap();
    let got = out.to_vec().unwrap();
    assert_eq!(&got[..16], &p.map[..]);
    assert_eq!(&got[16..], &[64, 128, 128, 7]);
}

/// `value(r, c)` of the `rows x 64` u16 array the TMA test copies from.
fn value(r: usize, c: usize) -> u16 {
    (r * 64 + c) as u16 ^ 0x5a5a
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tma_copy_brings_the_box_swizzled_with_zeros_outside() {
    let dev = setup();
    if dev.compute_capability().0 < 9 {
        eprintln!("skipped: TMA needs compute capability 9.0 (this GPU: {:?})", dev.compute_capability());
        return;
    }
    let (rows, cols) = (300usize, 64usize);
    let host: Vec<u16> = (0..rows * cols).map(|i| value(i / cols, i % cols)).collect();
    let a = Array::from_vec(host).unwrap().reshape([rows, cols]).unwrap();
    let k = RawKernel::new(SRC, "tma_box");
    let (box_rows, box_cols) = (128usize, 64usize);
    let smem = (box_rows * box_cols * 2 + 64) as u32;
    for swizzle in [Swizzle::None, Swizzle::B128] {
        let m = TensorMap::new(&a, [box_rows as u32, box_cols as u32], swizzle).unwrap();
        let p = crate::rawkernel::tensor_map_arg("tma_box", "m", &m, dev.ordinal()).unwrap();
        // Rows 256..384: rows 300.. are outside the array.
        for (x, y) in [(0i32, 0i32), (0, 256)] {
            let mut out = Array::<u16>::full(box_rows * box_cols, 0xffff).unwrap();
            // SAFETY: tma_box(TM, unsigned short*, int, int) writes out[0..box elements], with the
            // box and a barrier in its dynamic shared memory.
            unsafe { k.launch(&LaunchConfig::new(1, 128).shared_mem(smem), (p, &mut out, x, y)) }.unwrap();
            let got = out.to_vec().unwrap();
            for r in 0..box_rows {
                for c in 0..box_cols {
                    // Swizzle::B128: 16-byte chunk c of row r at chunk c ^ (r % 8).
                    let at = match swizzle {
                        Swizzle::B128 => r * box_cols + (((c / 8) ^ (r % 8)) * 8) + c % 8,
                        _ => r * box_cols + c,
                    };
                    let (gr, gc) = (y as usize + r, x as usize + c);
                    let want = if gr < rows { value(gr, gc) } else { 0 };
                    assert_eq!(got[at], want, "{swizzle:?} box at ({x}, {y}): element ({r}, {c}) at {at}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn generated_launches_raise_the_dynamic_shared_memory_limit() {
    let dev = setup();
    let src = r#"
extern "C" __global__ void reverse_shared(float* y, unsigned int n) {
    extern __shared__ float dyn[];
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dyn[i] = (float)(i + blockIdx.x);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) y[blockIdx.x * n + i] = dyn[n - 1 - i];
}"#;
    let k = RawKernel::new(src, "reverse_shared");
    let f = k.function_at(dev.ordinal()).unwrap();
    let most = f.max_dynamic_shared_optin();
    assert_eq!(most as usize, dev.max_shared_memory_per_block_optin() - f.limits().static_shared_bytes as usize);
    let bytes = 100 * 1024u32;
    assert!(most >= bytes, "this GPU allows only {most} bytes of dynamic shared memory");
    let n = bytes / 4;
    let cfg = LaunchConfig::new(2, 256).shared_mem(bytes);
    let mut y = Array::full(2 * n as usize, f32::NAN).unwrap();

    // RawKernel: CuPy's explicit limit.
    // SAFETY: reverse_shared(float*, unsigned int) writes y[0..2n] with n floats of dynamic shared memory.
    let e = unsafe { k.launch(&cfg, (&mut y, n)) }.unwrap_err();
    assert!(matches!(e, Error::SharedMemory { .. }) && e.to_string().contains("set_max_dynamic_shared_size_bytes"), "{e}");
    assert!(f.limits().max_dynamic_shared_bytes < bytes);

    // The launch of generated kernels raises it to the device's maximum, once.
    // SAFETY: as above.
    unsafe { crate::launch::launch(f, &cfg, (&mut y, n)) }.unwrap();
    let got = y.to_vec().unwrap();
    for b in 0..2usize {
        for i in 0..n as usize {
            assert_eq!(got[b * n as usize + i], (n as usize - 1 - i + b) as f32, "block {b}, element {i}");
        }
    }
    assert_eq!(f.limits().max_dynamic_shared_bytes, most);
    let attr = f.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).unwrap();
    assert_eq!(attr, most as i32);

    // Above the device's maximum: the error says so, and nothing runs.
    let mut z = Array::full(8, f32::NAN).unwrap();
    let big = LaunchConfig::new(1, 32).shared_mem(most + 4);
    // SAFETY: as above (nothing is launched).
    let e = unsafe { crate::launch::launch(f, &big, (&mut z, 2u32)) }.unwrap_err();
    assert!(matches!(e, Error::SharedMemory { limit, .. } if limit == most), "{e:?}");
    let m = e.to_string();
    assert!(m.contains("the most this device allows") && !m.contains("set_max_dynamic_shared_size_bytes"), "{m}");
    assert!(z.to_vec().unwrap().iter().all(|v| v.is_nan()));
}
