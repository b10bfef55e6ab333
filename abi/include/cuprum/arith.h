// cuprum/arith.h: Rust's integer semantics in C++: wrapping arithmetic without C's integer
// promotion or signed-overflow UB, shifts with the amount masked (Rust release builds), division
// by zero defined (0, no trap on the GPU), and `as` casts from float that saturate (NaN -> 0).
#pragma once
#include <cuprum/types.h>

namespace cuprum {

template <typename T> struct uint_of;
template <> struct uint_of<i8> { typedef u8 type; };
template <> struct uint_of<u8> { typedef u8 type; };
template <> struct uint_of<i16> { typedef u16 type; };
template <> struct uint_of<u16> { typedef u16 type; };
template <> struct uint_of<i32> { typedef u32 type; };
template <> struct uint_of<u32> { typedef u32 type; };
template <> struct uint_of<i64> { typedef u64 type; };
template <> struct uint_of<u64> { typedef u64 type; };

template <typename T> struct is_int { static const bool value = false; };
template <> struct is_int<i8> { static const bool value = true; };
template <> struct is_int<u8> { static const bool value = true; };
template <> struct is_int<i16> { static const bool value = true; };
template <> struct is_int<u16> { static const bool value = true; };
template <> struct is_int<i32> { static const bool value = true; };
template <> struct is_int<u32> { static const bool value = true; };
template <> struct is_int<i64> { static const bool value = true; };
template <> struct is_int<u64> { static const bool value = true; };

template <bool B, typename T = void> struct enable_if {};
template <typename T> struct enable_if<true, T> { typedef T type; };
#define CUPRUM_IF_INT(T, R) typename enable_if<is_int<T>::value, R>::type
#define CUPRUM_IF_NOT_INT(T, R) typename enable_if<!is_int<T>::value, R>::type

// Arithmetic: integers wrap (computed in the unsigned type of the same width, cast back);
// floats, f16/bf16 and complex use their operators.
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) add(T a, T b) {
    typedef typename uint_of<T>::type U; return (T)(U)((U)a + (U)b);
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) sub(T a, T b) {
    typedef typename uint_of<T>::type U; return (T)(U)((U)a - (U)b);
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) mul(T a, T b) {
    typedef typename uint_of<T>::type U; return (T)(U)((U)a * (U)b);
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) neg(T a) {
    typedef typename uint_of<T>::type U; return (T)(U)((U)0 - (U)a);
}
// Division and remainder: by zero gives 0; MIN / -1 wraps to MIN (remainder 0), as wrapping_div.
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) div(T a, T b) {
    if (b == 0) return 0;
    if ((T)-1 < (T)0 && b == (T)-1) return neg(a);
    return (T)(a / b);
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) rem(T a, T b) {
    if (b == 0) return 0;
    if ((T)-1 < (T)0 && b == (T)-1) return 0;
    return (T)(a % b);
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) add(T a, T b) { return a + b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) sub(T a, T b) { return a - b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) mul(T a, T b) { return a * b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) div(T a, T b) { return a / b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) neg(T a) { return -a; }
__device__ __forceinline__ float rem(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double rem(double a, double b) { return fmod(a, b); }

// Bitwise operators without promotion.
template <typename T> __device__ __forceinline__ T bit_and(T a, T b) { return (T)(a & b); }
template <typename T> __device__ __forceinline__ T bit_or(T a, T b) { return (T)(a | b); }
template <typename T> __device__ __forceinline__ T bit_xor(T a, T b) { return (T)(a ^ b); }
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) bit_not(T a) { return (T)~a; }

// Shifts: the amount is masked to the width (Rust release builds); `>>` is arithmetic on signed.
template <typename T, typename S> __device__ __forceinline__ T shl(T a, S s) {
    typedef typename uint_of<T>::type U;
    return (T)(U)((U)a << ((u32)s & (sizeof(T) * 8 - 1)));
}
template <typename T, typename S> __device__ __forceinline__ T shr(T a, S s) {
    return (T)(a >> ((u32)s & (sizeof(T) * 8 - 1)));
}

// `float as int`: saturating, NaN -> 0.
template <typename I> struct int_limits;
template <> struct int_limits<i8> { static __device__ __forceinline__ double lo() { return -128.0; } static __device__ __forceinline__ double hi() { return 127.0; } };
template <> struct int_limits<u8> { static __device__ __forceinline__ double lo() { return 0.0; } static __device__ __forceinline__ double hi() { return 255.0; } };
template <> struct int_limits<i16> { static __device__ __forceinline__ double lo() { return -32768.0; } static __device__ __forceinline__ double hi() { return 32767.0; } };
template <> struct int_limits<u16> { static __device__ __forceinline__ double lo() { return 0.0; } static __device__ __forceinline__ double hi() { return 65535.0; } };
template <typename I> __device__ __forceinline__ I cast_float(double x);
template <> __device__ __forceinline__ i32 cast_float<i32>(double x) { return x != x ? 0 : __double2int_rz(x); }
template <> __device__ __forceinline__ u32 cast_float<u32>(double x) { return x != x ? 0u : __double2uint_rz(x); }
template <> __device__ __forceinline__ i64 cast_float<i64>(double x) { return x != x ? 0ll : __double2ll_rz(x); }
template <> __device__ __forceinline__ u64 cast_float<u64>(double x) { return x != x ? 0ull : __double2ull_rz(x); }
template <typename I> __device__ __forceinline__ I cast_float_small(double x) {
    if (x != x) return 0;
    if (x <= int_limits<I>::lo()) return (I)int_limits<I>::lo();
    if (x >= int_limits<I>::hi()) return (I)int_limits<I>::hi();
    return (I)(i32)x;
}
template <> __device__ __forceinline__ i8 cast_float<i8>(double x) { return cast_float_small<i8>(x); }
template <> __device__ __forceinline__ u8 cast_float<u8>(double x) { return cast_float_small<u8>(x); }
template <> __device__ __forceinline__ i16 cast_float<i16>(double x) { return cast_float_small<i16>(x); }
template <> __device__ __forceinline__ u16 cast_float<u16>(double x) { return cast_float_small<u16>(x); }
// From f32, the 32-bit conversions are exact in f32. The conversions saturate; NaN is tested
// first because the double conversions give the most negative integer for it (seen on sm_90).
template <typename I> __device__ __forceinline__ I cast_float(float x) { return cast_float<I>((double)x); }
template <> __device__ __forceinline__ i32 cast_float<i32>(float x) { return x != x ? 0 : __float2int_rz(x); }
template <> __device__ __forceinline__ u32 cast_float<u32>(float x) { return x != x ? 0u : __float2uint_rz(x); }
template <> __device__ __forceinline__ i64 cast_float<i64>(float x) { return x != x ? 0ll : __float2ll_rz(x); }
template <> __device__ __forceinline__ u64 cast_float<u64>(float x) { return x != x ? 0ull : __float2ull_rz(x); }

}  // namespace cuprum

#include <cuprum/half.h>
namespace cuprum {
__device__ __forceinline__ half rem(half a, half b) { return half_from_f32(fmodf(to_f32(a), to_f32(b))); }
__device__ __forceinline__ bfloat16 rem(bfloat16 a, bfloat16 b) { return bf16_from_f32(fmodf(to_f32(a), to_f32(b))); }
__device__ __forceinline__ fp8_e4m3 rem(fp8_e4m3 a, fp8_e4m3 b) { return f8e4m3_from_f32(fmodf(to_f32(a), to_f32(b))); }
__device__ __forceinline__ fp8_e5m2 rem(fp8_e5m2 a, fp8_e5m2 b) { return f8e5m2_from_f32(fmodf(to_f32(a), to_f32(b))); }
}  // namespace cuprum
