// cuprum/fp8.h: the OCP 8-bit floats `f8e4m3` (e4m3fn: max 448, no infinities, NaN 0x7f/0xff)
// and `f8e5m2` (max 57344, IEEE infinities), CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2, without the
// toolkit's cuda_fp8.h (NVRTC gets only cuprum's headers). The conversion rule is that of
// runtime/src/scalar/fp8.rs, the host definition, bit for bit: from a wider float, one rounding
// to nearest even of its exact value, finite overflow and infinities saturate to +-max
// (__NV_SATFINITE, as CUDA's constructors do), NaN stays NaN (e4m3: 0x7f with the sign; e5m2:
// 0x7e with the sign and the f64's two highest mantissa bits); to a wider float, exact (NaN:
// f32 0x7fffe000). Computed with integer operations on every architecture, so every GPU gives
// the host's bits. Arithmetic goes through f32 and rounds back (as f16 and bf16 do).
#pragma once
#include <cuprum/types.h>
#include <cuprum/small_float.h>

namespace cuprum {

struct fp8_e4m3 { u8 bits; };
struct fp8_e5m2 { u8 bits; };

// A port of cuda_fp8.hpp's __nv_cvt_double_to_fp8(x, __NV_SATFINITE, kind).
template <bool E4M3>
__device__ __forceinline__ u8 fp8_bits_from_f64(double x) {
    const u8 max_norm = E4M3 ? 0x7eu : 0x7bu;
    const u8 mantissa_mask = E4M3 ? 0x7u : 0x3u;
    const u64 bias = E4M3 ? 7u : 15u;
    const u32 sig = E4M3 ? 4u : 3u;
    const u64 min_denorm_half = E4M3 ? 0x3F50000000000000ull : 0x3EE0000000000000ull;
    const u64 overflow = E4M3 ? 0x407D000000000000ull : 0x40EE000000000000ull - 1ull;
    const u64 min_norm = E4M3 ? 0x3F90000000000000ull : 0x3F10000000000000ull;
    const u64 xbits = (u64)__double_as_longlong(x);
    const u64 half_ulp = 1ull << (53u - sig - 1u);
    const u8 sign = (u8)((xbits >> 63) << 7);
    const u8 exp = (u8)(((xbits >> 52) & 0x7ffull) - 1023ull + bias);
    const u8 mantissa = (u8)((xbits >> (53u - sig)) & mantissa_mask);
    const u64 absx = xbits & 0x7fffffffffffffffull;
    u8 res;
    if (absx <= min_denorm_half) {
        res = 0;
    } else if (absx > 0x7ff0000000000000ull) {
        res = E4M3 ? (u8)0x7fu : (u8)(0x7eu | mantissa);
    } else if (absx > overflow) {
        res = max_norm;
    } else if (absx >= min_norm) {
        res = (u8)((u32)exp << (sig - 1u) | mantissa);
        const u64 round = xbits & ((half_ulp << 1) - 1ull);
        if (round > half_ulp || (round == half_ulp && (mantissa & 1u))) res = (u8)(res + 1u);
    } else {
        const u32 shift = (u8)(1u - exp);
        const u8 m = (u8)(mantissa | (1u << (sig - 1u)));
        res = (u8)(m >> shift);
        const u64 round = (xbits | (1ull << 52)) & ((half_ulp << (shift + 1u)) - 1ull);
        const u64 half = half_ulp << shift;
        if (round > half || (round == half && (res & 1u))) res = (u8)(res + 1u);
    }
    return (u8)(res | sign);
}

// The exact f32 of an 8-bit float; NaN is 0x7fffe000.
template <bool E4M3>
__device__ __forceinline__ float fp8_bits_to_f32(u8 b) {
    const u32 mant_bits = E4M3 ? 3u : 2u;
    const u32 bias = E4M3 ? 7u : 15u;
    const u32 max_e = (1u << (7u - mant_bits)) - 1u;
    const u32 sign = ((u32)b & 0x80u) << 24;
    const u32 e = ((u32)b & 0x7fu) >> mant_bits;
    const u32 m = (u32)b & ((1u << mant_bits) - 1u);
    if (E4M3 ? ((b & 0x7fu) == 0x7fu) : (e == max_e && m != 0u)) return __uint_as_float(0x7fffe000u);
    u32 mag;
    if (!E4M3 && e == max_e) {
        mag = 0x7f800000u;
    } else if (e == 0u) {
        mag = __float_as_uint((float)m * __uint_as_float((127u + 1u - bias - mant_bits) << 23));
    } else {
        mag = ((e + 127u - bias) << 23) | (m << (23u - mant_bits));
    }
    return __uint_as_float(sign | mag);
}

__device__ __forceinline__ float to_f32(fp8_e4m3 x) { return fp8_bits_to_f32<true>(x.bits); }
__device__ __forceinline__ float to_f32(fp8_e5m2 x) { return fp8_bits_to_f32<false>(x.bits); }
__device__ __forceinline__ fp8_e4m3 f8e4m3_from_f64(double d) { fp8_e4m3 r; r.bits = fp8_bits_from_f64<true>(d); return r; }
__device__ __forceinline__ fp8_e5m2 f8e5m2_from_f64(double d) { fp8_e5m2 r; r.bits = fp8_bits_from_f64<false>(d); return r; }
// From f32 through f64: exact, so one rounding.
__device__ __forceinline__ fp8_e4m3 f8e4m3_from_f32(float f) { return f8e4m3_from_f64((double)f); }
__device__ __forceinline__ fp8_e5m2 f8e5m2_from_f32(float f) { return f8e5m2_from_f64((double)f); }
__device__ __forceinline__ fp8_e4m3 f8e4m3_bits(u8 b) { fp8_e4m3 r; r.bits = b; return r; }
__device__ __forceinline__ fp8_e5m2 f8e5m2_bits(u8 b) { fp8_e5m2 r; r.bits = b; return r; }


CUPRUM_SMALL_FLOAT_OPS(fp8_e4m3, f8e4m3_from_f32, u8, 0x80u, to_f32)
CUPRUM_SMALL_FLOAT_OPS(fp8_e5m2, f8e5m2_from_f32, u8, 0x80u, to_f32)

}  // namespace cuprum

typedef cuprum::fp8_e4m3 f8e4m3;
typedef cuprum::fp8_e5m2 f8e5m2;
