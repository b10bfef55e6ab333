// cuprum/half.h: IEEE binary16 (`f16`) and bfloat16 (`bf16`) as `half` computes them: every
// operation goes through f32 and rounds back to nearest-even. No toolkit headers needed.
#pragma once
#include <cuprum/types.h>
#include <cuprum/small_float.h>

namespace cuprum {

struct half { u16 bits; };
struct bfloat16 { u16 bits; };

__device__ __forceinline__ float to_f32(half h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    // cvt gives every NaN the canonical positive bits; the host's conversion (the `half` crate,
    // and the x86 instruction) keeps the sign and the payload and sets the quiet bit.
    if ((h.bits & 0x7fffu) > 0x7c00u) {
        f = __uint_as_float(((u32)(h.bits & 0x8000u) << 16) | 0x7fc00000u | ((u32)(h.bits & 0x03ffu) << 13));
    }
    return f;
}
// The conversion instruction alone, for the operators (small_float.h): every NaN becomes the
// canonical f32 NaN. Exact where the result is rounded back to `half` (every NaN then becomes
// 0x7fff anyway) or only compared; the NaN check of `to_f32` costs (x-y)^2 of f16 about 8
// instructions per conversion.
__device__ __forceinline__ float half_to_f32_op(half h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
// The instruction alone: every NaN becomes 0x7fff, where the host (the `half` crate, F16C) keeps
// a NaN's sign and top payload bits (docs/kernel-language.md). Keeping them here too, with a
// select per conversion, made `(x-y)^2` of f16 (three conversions per element) compute-bound on
// an H200: 0.556 of copy in cuprum-bench (session 28).
__device__ __forceinline__ half half_from_f32(float f) {
    half h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
}
__device__ __forceinline__ half half_from_f64(double d) {
    half h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(d));
    return h;
}
__device__ __forceinline__ float to_f32(bfloat16 b) { return __uint_as_float(((u32)b.bits) << 16); }
__device__ __forceinline__ bfloat16 bf16_from_f32(float f) {
    u32 u = __float_as_uint(f);
    bfloat16 b;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // The instruction (sm_80+) rounds as the bit arithmetic below does, but gives every NaN as
    // 0x7fff; the host keeps a NaN's sign and top payload bits, so NaNs take the arithmetic's
    // result. (The FlashAttention-3 example's bf16 row went from 412 to 502 TFLOP/s on an H200
    // with this form; `bf16::from_f32_pair` leaves the NaN check out: 592.)
    u16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
    b.bits = f != f ? (u16)((u >> 16) | 0x40u) : r;
#else
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (u16)((u >> 16) | 0x40u);  // quiet NaN, sign kept
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
        b.bits = (u16)(u >> 16);
    }
#endif
    return b;
}
__device__ __forceinline__ bfloat16 bf16_from_f64(double d) {
    // Round once from f64: adjust the f32 intermediate to odd when inexact (round-to-odd).
    float f = (float)d;
    u32 u = __float_as_uint(f);
    if ((double)f != d && (u & 1u) == 0 && (u & 0x7fffffffu) < 0x7f800000u) {
        u |= 1u;
        f = __uint_as_float(u);
    }
    return bf16_from_f32(f);
}

// `f16::from_f32_pair(a, b)` / `bf16::from_f32_pair(a, b)`: both rounded to nearest even as
// `half_from_f32` / `bf16_from_f32` round them, every NaN to the NaN 0x7fff (as the instruction
// gives it; the host's definition does the same), without `bf16_from_f32`'s check for NaNs. Two
// `cvt.rn.{f16,bf16}.f32` (sm_80+), which ptxas packs into one instruction where the pair goes
// to one 32-bit register (an mma operand): on an H200 the FlashAttention-3 example's bf16 row ran
// at 592 TFLOP/s this way, 539 with the pair instruction `cvt.rn.bf16x2.f32` (its result split
// into halves and packed again) and 502 with two `bf16_from_f32`.
__device__ __forceinline__ Array<half, 2> half_pair_from_f32(float a, float b) {
    Array<half, 2> r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.v[0].bits) : "f"(a));
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.v[1].bits) : "f"(b));
    return r;
}
__device__ __forceinline__ Array<bfloat16, 2> bf16_pair_from_f32(float a, float b) {
    Array<bfloat16, 2> r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.v[0].bits) : "f"(a));
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.v[1].bits) : "f"(b));
#else
    r.v[0] = a != a ? bfloat16{0x7fffu} : bf16_from_f32(a);
    r.v[1] = b != b ? bfloat16{0x7fffu} : bf16_from_f32(b);
#endif
    return r;
}

CUPRUM_SMALL_FLOAT_OPS(half, half_from_f32, u16, 0x8000u, half_to_f32_op)
CUPRUM_SMALL_FLOAT_OPS(bfloat16, bf16_from_f32, u16, 0x8000u, to_f32)

}  // namespace cuprum

typedef cuprum::half f16;
typedef cuprum::bfloat16 bf16;

// The 8-bit floats go with the 16-bit ones: every header that handles `half` types includes this one.
#include <cuprum/fp8.h>
