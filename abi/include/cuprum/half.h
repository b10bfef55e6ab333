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
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (u16)((u >> 16) | 0x40u);  // quiet NaN, sign kept
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
        b.bits = (u16)(u >> 16);
    }
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


CUPRUM_SMALL_FLOAT_OPS(half, half_from_f32, u16, 0x8000u)
CUPRUM_SMALL_FLOAT_OPS(bfloat16, bf16_from_f32, u16, 0x8000u)

}  // namespace cuprum

typedef cuprum::half f16;
typedef cuprum::bfloat16 bf16;

// The 8-bit floats go with the 16-bit ones: every header that handles `half` types includes this one.
#include <cuprum/fp8.h>
