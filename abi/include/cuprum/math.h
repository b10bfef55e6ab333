// cuprum/math.h: the prelude's numeric methods under their Rust names (`cuprum::ln(x)` is
// `x.ln()`) and its error functions (`cuprum::erf(x)`), for f32, f64, f16, bf16 and the 8-bit
// floats f8e4m3 and f8e5m2 (the last four computed in
// f32 and rounded back), the integer methods, and `num<T>`: the trait functions and associated
// constants (`T::zero()`, `f32::INFINITY`).
#pragma once
#include <cuprum/types.h>
#include <cuprum/half.h>
#include <cuprum/arith.h>

namespace cuprum {

// ---- float methods -----------------------------------------------------------------------
#define CUPRUM_F1(NAME, F32, F64)                                                              \
    __device__ __forceinline__ float NAME(float x) { return F32(x); }                        \
    __device__ __forceinline__ double NAME(double x) { return F64(x); }                      \
    __device__ __forceinline__ half NAME(half x) { return half_from_f32(F32(to_f32(x))); }   \
    __device__ __forceinline__ bfloat16 NAME(bfloat16 x) { return bf16_from_f32(F32(to_f32(x))); } \
    __device__ __forceinline__ fp8_e4m3 NAME(fp8_e4m3 x) { return f8e4m3_from_f32(F32(to_f32(x))); } \
    __device__ __forceinline__ fp8_e5m2 NAME(fp8_e5m2 x) { return f8e5m2_from_f32(F32(to_f32(x))); }
#define CUPRUM_F2(NAME, F32, F64)                                                                         \
    __device__ __forceinline__ float NAME(float x, float y) { return F32(x, y); }                       \
    __device__ __forceinline__ double NAME(double x, double y) { return F64(x, y); }                    \
    __device__ __forceinline__ half NAME(half x, half y) { return half_from_f32(F32(to_f32(x), to_f32(y))); } \
    __device__ __forceinline__ bfloat16 NAME(bfloat16 x, bfloat16 y) { return bf16_from_f32(F32(to_f32(x), to_f32(y))); } \
    __device__ __forceinline__ fp8_e4m3 NAME(fp8_e4m3 x, fp8_e4m3 y) { return f8e4m3_from_f32(F32(to_f32(x), to_f32(y))); } \
    __device__ __forceinline__ fp8_e5m2 NAME(fp8_e5m2 x, fp8_e5m2 y) { return f8e5m2_from_f32(F32(to_f32(x), to_f32(y))); }

__device__ __forceinline__ float signumf_(float x) { return x != x ? x : copysignf(1.0f, x); }
__device__ __forceinline__ double signum_(double x) { return x != x ? x : copysign(1.0, x); }
__device__ __forceinline__ float fractf_(float x) { return x - truncf(x); }
__device__ __forceinline__ double fract_(double x) { return x - trunc(x); }
__device__ __forceinline__ float recipf_(float x) { return 1.0f / x; }
__device__ __forceinline__ double recip_(double x) { return 1.0 / x; }
__device__ __forceinline__ float degf_(float x) { return x * 57.2957795130823208768f; }
__device__ __forceinline__ double deg_(double x) { return x * 57.2957795130823208768; }
__device__ __forceinline__ float radf_(float x) { return x * 0.017453292519943295769f; }
__device__ __forceinline__ double rad_(double x) { return x * 0.017453292519943295769; }
__device__ __forceinline__ float exp2f_(float x) { return exp2f(x); }

CUPRUM_F1(sqrt, sqrtf, ::sqrt)
CUPRUM_F1(cbrt, cbrtf, ::cbrt)
CUPRUM_F1(exp, expf, ::exp)
CUPRUM_F1(exp2, exp2f_, ::exp2)
CUPRUM_F1(exp_m1, expm1f, ::expm1)
CUPRUM_F1(ln, logf, ::log)
CUPRUM_F1(ln_1p, log1pf, ::log1p)
CUPRUM_F1(log2, log2f, ::log2)
CUPRUM_F1(log10, log10f, ::log10)
CUPRUM_F1(sin, sinf, ::sin)
CUPRUM_F1(cos, cosf, ::cos)
CUPRUM_F1(tan, tanf, ::tan)
CUPRUM_F1(asin, asinf, ::asin)
CUPRUM_F1(acos, acosf, ::acos)
CUPRUM_F1(atan, atanf, ::atan)
CUPRUM_F1(sinh, sinhf, ::sinh)
CUPRUM_F1(cosh, coshf, ::cosh)
CUPRUM_F1(tanh, tanhf, ::tanh)
CUPRUM_F1(asinh, asinhf, ::asinh)
CUPRUM_F1(acosh, acoshf, ::acosh)
CUPRUM_F1(atanh, atanhf, ::atanh)
CUPRUM_F1(abs, fabsf, ::fabs)
CUPRUM_F1(floor, floorf, ::floor)
CUPRUM_F1(ceil, ceilf, ::ceil)
CUPRUM_F1(round, roundf, ::round)
CUPRUM_F1(trunc, truncf, ::trunc)
CUPRUM_F1(fract, fractf_, fract_)
CUPRUM_F1(signum, signumf_, signum_)
CUPRUM_F1(recip, recipf_, recip_)
CUPRUM_F1(to_degrees, degf_, deg_)
CUPRUM_F1(to_radians, radf_, rad_)
// The error-function family: free functions in kernels (`erf(x)`, not a method: std's `f32::erf`
// is unstable), CUDA's own functions here.
CUPRUM_F1(erf, erff, ::erf)
CUPRUM_F1(erfc, erfcf, ::erfc)
CUPRUM_F1(erfinv, erfinvf, ::erfinv)
CUPRUM_F1(erfcinv, erfcinvf, ::erfcinv)
CUPRUM_F1(normcdf, normcdff, ::normcdf)
CUPRUM_F1(normcdfinv, normcdfinvf, ::normcdfinv)
CUPRUM_F2(powf, ::powf, ::pow)
CUPRUM_F2(atan2, atan2f, ::atan2)
CUPRUM_F2(hypot, hypotf, ::hypot)
CUPRUM_F2(copysign, copysignf, ::copysign)
// Rust's min/max on floats ignore a NaN operand, as fmin/fmax do.
CUPRUM_F2(min, fminf, ::fmin)
CUPRUM_F2(max, fmaxf, ::fmax)
#undef CUPRUM_F1
#undef CUPRUM_F2

__device__ __forceinline__ float mul_add(float x, float a, float b) { return fmaf(x, a, b); }
__device__ __forceinline__ double mul_add(double x, double a, double b) { return fma(x, a, b); }
__device__ __forceinline__ half mul_add(half x, half a, half b) { return half_from_f32(fmaf(half_to_f32_op(x), half_to_f32_op(a), half_to_f32_op(b))); }
__device__ __forceinline__ bfloat16 mul_add(bfloat16 x, bfloat16 a, bfloat16 b) { return bf16_from_f32(fmaf(to_f32(x), to_f32(a), to_f32(b))); }
__device__ __forceinline__ fp8_e4m3 mul_add(fp8_e4m3 x, fp8_e4m3 a, fp8_e4m3 b) { return f8e4m3_from_f32(fmaf(to_f32(x), to_f32(a), to_f32(b))); }
__device__ __forceinline__ fp8_e5m2 mul_add(fp8_e5m2 x, fp8_e5m2 a, fp8_e5m2 b) { return f8e5m2_from_f32(fmaf(to_f32(x), to_f32(a), to_f32(b))); }

// powi by repeated squaring, as Rust's (LLVM's) powi.
template <typename T> __device__ __forceinline__ T powi_(T x, i32 n) {
    u32 m = n < 0 ? (u32)0 - (u32)n : (u32)n;
    T r = (T)1;
    while (m) { if (m & 1u) r *= x; x *= x; m >>= 1; }
    return n < 0 ? (T)1 / r : r;
}
__device__ __forceinline__ float powi(float x, i32 n) { return powi_<float>(x, n); }
__device__ __forceinline__ double powi(double x, i32 n) { return powi_<double>(x, n); }
__device__ __forceinline__ half powi(half x, i32 n) { return half_from_f32(powi_<float>(half_to_f32_op(x), n)); }
__device__ __forceinline__ bfloat16 powi(bfloat16 x, i32 n) { return bf16_from_f32(powi_<float>(to_f32(x), n)); }
__device__ __forceinline__ fp8_e4m3 powi(fp8_e4m3 x, i32 n) { return f8e4m3_from_f32(powi_<float>(to_f32(x), n)); }
__device__ __forceinline__ fp8_e5m2 powi(fp8_e5m2 x, i32 n) { return f8e5m2_from_f32(powi_<float>(to_f32(x), n)); }

// Float predicates.
__device__ __forceinline__ bool is_nan(float x) { return x != x; }
__device__ __forceinline__ bool is_nan(double x) { return x != x; }
__device__ __forceinline__ bool is_finite(float x) { return isfinite(x); }
__device__ __forceinline__ bool is_finite(double x) { return isfinite(x); }
__device__ __forceinline__ bool is_infinite(float x) { return isinf(x); }
__device__ __forceinline__ bool is_infinite(double x) { return isinf(x); }
__device__ __forceinline__ bool is_sign_negative(float x) { return signbit(x); }
__device__ __forceinline__ bool is_sign_negative(double x) { return signbit(x); }
__device__ __forceinline__ bool is_nan(half x) { return (x.bits & 0x7fffu) > 0x7c00u; }
__device__ __forceinline__ bool is_finite(half x) { return (x.bits & 0x7c00u) != 0x7c00u; }
__device__ __forceinline__ bool is_infinite(half x) { return (x.bits & 0x7fffu) == 0x7c00u; }
__device__ __forceinline__ bool is_sign_negative(half x) { return (x.bits & 0x8000u) != 0; }
__device__ __forceinline__ bool is_nan(bfloat16 x) { return (x.bits & 0x7fffu) > 0x7f80u; }
__device__ __forceinline__ bool is_finite(bfloat16 x) { return (x.bits & 0x7f80u) != 0x7f80u; }
__device__ __forceinline__ bool is_infinite(bfloat16 x) { return (x.bits & 0x7fffu) == 0x7f80u; }
__device__ __forceinline__ bool is_sign_negative(bfloat16 x) { return (x.bits & 0x8000u) != 0; }
__device__ __forceinline__ bool is_nan(fp8_e4m3 x) { return (x.bits & 0x7fu) == 0x7fu; }
__device__ __forceinline__ bool is_finite(fp8_e4m3 x) { return (x.bits & 0x7fu) != 0x7fu; }
__device__ __forceinline__ bool is_infinite(fp8_e4m3) { return false; }
__device__ __forceinline__ bool is_sign_negative(fp8_e4m3 x) { return (x.bits & 0x80u) != 0; }
__device__ __forceinline__ bool is_nan(fp8_e5m2 x) { return (x.bits & 0x7fu) > 0x7cu; }
__device__ __forceinline__ bool is_finite(fp8_e5m2 x) { return (x.bits & 0x7cu) != 0x7cu; }
__device__ __forceinline__ bool is_infinite(fp8_e5m2 x) { return (x.bits & 0x7fu) == 0x7cu; }
__device__ __forceinline__ bool is_sign_negative(fp8_e5m2 x) { return (x.bits & 0x80u) != 0; }

// Rust's clamp: below -> min, above -> max, NaN stays NaN.
template <typename T> __device__ __forceinline__ CUPRUM_IF_NOT_INT(T, T) clamp(T x, T lo, T hi) {
    if (x < lo) x = lo;
    if (x > hi) x = hi;
    return x;
}

// ---- integer methods ---------------------------------------------------------------------
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) min(T a, T b) { return a < b ? a : b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
template <typename T> __device__ __forceinline__ T wrapping_add(T a, T b) { return add(a, b); }
template <typename T> __device__ __forceinline__ T wrapping_sub(T a, T b) { return sub(a, b); }
template <typename T> __device__ __forceinline__ T wrapping_mul(T a, T b) { return mul(a, b); }
template <typename T> __device__ __forceinline__ T wrapping_neg(T a) { return neg(a); }
// `abs` of a signed integer wraps at MIN (release builds).
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) abs(T a) { return a < 0 ? neg(a) : a; }
template <typename T> struct is_signed_int { static const bool value = false; };
template <> struct is_signed_int<i8> { static const bool value = true; };
template <> struct is_signed_int<i16> { static const bool value = true; };
template <> struct is_signed_int<i32> { static const bool value = true; };
template <> struct is_signed_int<i64> { static const bool value = true; };
template <typename T, bool Signed = is_signed_int<T>::value> struct saturating;
template <typename T> struct saturating<T, true> {
    typedef typename uint_of<T>::type U;
    static __device__ __forceinline__ T max() { return (T)(U)~((U)1 << (sizeof(T) * 8 - 1)); }
    static __device__ __forceinline__ T min() { return (T)(U)((U)1 << (sizeof(T) * 8 - 1)); }
    // Overflow when both operands share a sign the result lacks.
    static __device__ __forceinline__ T add(T a, T b) {
        T r = cuprum::add(a, b);
        if (a >= 0 && b >= 0 && r < 0) return max();
        if (a < 0 && b < 0 && r >= 0) return min();
        return r;
    }
    static __device__ __forceinline__ T sub(T a, T b) {
        T r = cuprum::sub(a, b);
        if (a >= 0 && b < 0 && r < 0) return max();
        if (a < 0 && b >= 0 && r >= 0) return min();
        return r;
    }
};
template <typename T> struct saturating<T, false> {
    static __device__ __forceinline__ T add(T a, T b) { T r = cuprum::add(a, b); return r < a ? (T)~(T)0 : r; }
    static __device__ __forceinline__ T sub(T a, T b) { return a < b ? (T)0 : cuprum::sub(a, b); }
};
template <typename T> __device__ __forceinline__ T saturating_add(T a, T b) { return saturating<T>::add(a, b); }
template <typename T> __device__ __forceinline__ T saturating_sub(T a, T b) { return saturating<T>::sub(a, b); }
template <typename T> __device__ __forceinline__ u32 count_ones(T a) {
    typedef typename uint_of<T>::type U;
    return sizeof(T) == 8 ? (u32)__popcll((u64)(U)a) : (u32)__popc((u32)(U)a);
}
// Rust's `a as u32` of an integer: its low 32 bits.
template <typename T> __device__ __forceinline__ u32 low_u32(T a) {
    typedef typename uint_of<T>::type U;
    return (u32)(U)a;
}
template <typename T> __device__ __forceinline__ u32 count_zeros(T a) { return (u32)(sizeof(T) * 8) - count_ones(a); }
template <typename T> __device__ __forceinline__ u32 leading_zeros(T a) {
    typedef typename uint_of<T>::type U;
    if (sizeof(T) == 8) return (u32)__clzll((i64)(U)a);
    return (u32)__clz((i32)(u32)(U)a) - (u32)(32 - sizeof(T) * 8);
}
template <typename T> __device__ __forceinline__ u32 trailing_zeros(T a) {
    typedef typename uint_of<T>::type U;
    U u = (U)a;
    if (u == 0) return (u32)(sizeof(T) * 8);
    return sizeof(T) == 8 ? (u32)(__ffsll((i64)u) - 1) : (u32)(__ffs((i32)(u32)u) - 1);
}
template <typename T> __device__ __forceinline__ T rotate_left(T a, u32 n) {
    typedef typename uint_of<T>::type U;
    const u32 bits = sizeof(T) * 8;
    n &= bits - 1;
    U u = (U)a;
    return n == 0 ? a : (T)(U)((U)(u << n) | (U)(u >> (bits - n)));
}
template <typename T> __device__ __forceinline__ T rotate_right(T a, u32 n) {
    const u32 bits = sizeof(T) * 8;
    return rotate_left(a, (bits - (n & (bits - 1))) & (bits - 1));
}
template <typename T> __device__ __forceinline__ T reverse_bits(T a) {
    typedef typename uint_of<T>::type U;
    if (sizeof(T) == 8) return (T)(U)__brevll((u64)(U)a);
    return (T)(U)(__brev((u32)(U)a) >> (32 - sizeof(T) * 8));
}
template <typename T> __device__ __forceinline__ T swap_bytes(T a) {
    typedef typename uint_of<T>::type U;
    U u = (U)a, r = 0;
    for (u32 k = 0; k < sizeof(T); ++k) r = (U)((U)(r << 8) | (U)((u >> (8 * k)) & 0xffu));
    return (T)r;
}
// Wrapping `pow` (release builds).
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, T) pow(T a, u32 n) {
    T r = 1;
    while (n) { if (n & 1u) r = mul(r, a); a = mul(a, a); n >>= 1; }
    return r;
}
template <typename T> __device__ __forceinline__ CUPRUM_IF_INT(T, bool) is_power_of_two(T a) { return a != 0 && (a & (a - 1)) == 0; }

// ---- to_f64 (Real) -----------------------------------------------------------------------
template <typename T> __device__ __forceinline__ double to_f64(T x) { return (double)x; }
__device__ __forceinline__ double to_f64(half x) { return (double)to_f32(x); }
__device__ __forceinline__ double to_f64(bfloat16 x) { return (double)to_f32(x); }
__device__ __forceinline__ double to_f64(fp8_e4m3 x) { return (double)to_f32(x); }
__device__ __forceinline__ double to_f64(fp8_e5m2 x) { return (double)to_f32(x); }

// ---- to_bits_u64 (Real): the bits, zero-extended to 64; num<T>::from_bits_u64 inverts ---------
template <typename T> __device__ __forceinline__ u64 to_bits_u64(T a) {
    typedef typename uint_of<T>::type U;
    return (u64)(U)a;
}
__device__ __forceinline__ u64 to_bits_u64(float x) { return (u64)__float_as_uint(x); }
__device__ __forceinline__ u64 to_bits_u64(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ u64 to_bits_u64(half x) { return (u64)x.bits; }
__device__ __forceinline__ u64 to_bits_u64(bfloat16 x) { return (u64)x.bits; }
__device__ __forceinline__ u64 to_bits_u64(fp8_e4m3 x) { return (u64)x.bits; }
__device__ __forceinline__ u64 to_bits_u64(fp8_e5m2 x) { return (u64)x.bits; }

// ---- num<T>: trait functions and associated constants --------------------------------------
template <typename T> struct num;

#define CUPRUM_FLOAT_NUM(T, LIT, FROM_F64, INF, NINF, NAN_, EPS, MAXV, MINPOS, FROM_BITS)        \
    template <> struct num<T> {                                                                  \
        static __device__ __forceinline__ T zero() { return FROM_F64(0.0); }                     \
        static __device__ __forceinline__ T one() { return FROM_F64(1.0); }                      \
        static __device__ __forceinline__ T from_f64(double v) { return FROM_F64(v); }           \
        static __device__ __forceinline__ T from_i64(i64 v) { return FROM_F64((double)v); }      \
        static __device__ __forceinline__ T infinity() { return INF; }                           \
        static __device__ __forceinline__ T neg_infinity() { return NINF; }                      \
        static __device__ __forceinline__ T nan() { return NAN_; }                               \
        static __device__ __forceinline__ T epsilon() { return EPS; }                            \
        static __device__ __forceinline__ T max_value() { return MAXV; }                         \
        static __device__ __forceinline__ T min_value() { return -MAXV; }                        \
        static __device__ __forceinline__ T min_positive() { return MINPOS; }                    \
        static __device__ __forceinline__ T from_bits_u64(u64 b) { return FROM_BITS; }           \
        static __device__ __forceinline__ T pi() { return FROM_F64(3.14159265358979323846); }    \
        static __device__ __forceinline__ T e() { return FROM_F64(2.71828182845904523536); }     \
        static __device__ __forceinline__ T tau() { return FROM_F64(6.28318530717958647693); }   \
        static __device__ __forceinline__ T sqrt_2() { return FROM_F64(1.41421356237309504880); }\
        static __device__ __forceinline__ T ln_2() { return FROM_F64(0.693147180559945309417); } \
        static __device__ __forceinline__ T ln_10() { return FROM_F64(2.30258509299404568402); } \
        static __device__ __forceinline__ T frac_pi_2() { return FROM_F64(1.57079632679489661923); } \
        static __device__ __forceinline__ T frac_pi_4() { return FROM_F64(0.785398163397448309616); } \
        static __device__ __forceinline__ T frac_1_pi() { return FROM_F64(0.318309886183790671538); } \
        static __device__ __forceinline__ T frac_1_sqrt_2() { return FROM_F64(0.707106781186547524401); } \
        static __device__ __forceinline__ T log2_e() { return FROM_F64(1.44269504088896340736); } \
        static __device__ __forceinline__ T log10_e() { return FROM_F64(0.434294481903251827651); } \
    };

__device__ __forceinline__ float f32_from_f64(double v) { return (float)v; }
__device__ __forceinline__ double f64_from_f64(double v) { return v; }
__device__ __forceinline__ half half_bits(u16 b) { half h; h.bits = b; return h; }
__device__ __forceinline__ bfloat16 bf16_bits(u16 b) { bfloat16 h; h.bits = b; return h; }

CUPRUM_FLOAT_NUM(float, f, f32_from_f64, __int_as_float(0x7f800000), __int_as_float((int)0xff800000u),
                 __int_as_float(0x7fc00000), 1.1920929e-7f, 3.40282347e+38f, 1.17549435e-38f, __uint_as_float((u32)b))
CUPRUM_FLOAT_NUM(double, , f64_from_f64, __longlong_as_double(0x7ff0000000000000ll),
                 __longlong_as_double((long long)0xfff0000000000000ull), __longlong_as_double(0x7ff8000000000000ll),
                 2.2204460492503131e-16, 1.7976931348623157e+308, 2.2250738585072014e-308,
                 __longlong_as_double((long long)b))
CUPRUM_FLOAT_NUM(half, , half_from_f64, half_bits(0x7c00), half_bits(0xfc00), half_bits(0x7e00),
                 half_bits(0x1400), half_bits(0x7bff), half_bits(0x0400), half_bits((u16)b))
CUPRUM_FLOAT_NUM(bfloat16, , bf16_from_f64, bf16_bits(0x7f80), bf16_bits(0xff80), bf16_bits(0x7fc0),
                 bf16_bits(0x3c00), bf16_bits(0x7f7f), bf16_bits(0x0080), bf16_bits((u16)b))
// f8e4m3 has no infinity: infinity() is the value an infinity converts to (max, saturating).
CUPRUM_FLOAT_NUM(fp8_e4m3, , f8e4m3_from_f64, f8e4m3_bits(0x7e), f8e4m3_bits(0xfe), f8e4m3_bits(0x7f),
                 f8e4m3_bits(0x20), f8e4m3_bits(0x7e), f8e4m3_bits(0x08), f8e4m3_bits((u8)b))
CUPRUM_FLOAT_NUM(fp8_e5m2, , f8e5m2_from_f64, f8e5m2_bits(0x7c), f8e5m2_bits(0xfc), f8e5m2_bits(0x7e),
                 f8e5m2_bits(0x34), f8e5m2_bits(0x7b), f8e5m2_bits(0x04), f8e5m2_bits((u8)b))
#undef CUPRUM_FLOAT_NUM

#define CUPRUM_INT_NUM(T, MINV, MAXV)                                                            \
    template <> struct num<T> {                                                                  \
        static __device__ __forceinline__ T zero() { return 0; }                                 \
        static __device__ __forceinline__ T one() { return 1; }                                  \
        static __device__ __forceinline__ T from_f64(double v) { return cast_float<T>(v); }      \
        static __device__ __forceinline__ T from_i64(i64 v) { return (T)v; }                     \
        static __device__ __forceinline__ T min_value() { return MINV; }                         \
        static __device__ __forceinline__ T max_value() { return MAXV; }                         \
        static __device__ __forceinline__ u32 bits() { return (u32)(sizeof(T) * 8); }            \
        static __device__ __forceinline__ T from_bits_u64(u64 b) { return (T)b; }                \
    };
CUPRUM_INT_NUM(i8, (i8)-128, (i8)127)
CUPRUM_INT_NUM(i16, (i16)-32768, (i16)32767)
CUPRUM_INT_NUM(i32, (-2147483647 - 1), 2147483647)
CUPRUM_INT_NUM(i64, (-9223372036854775807ll - 1), 9223372036854775807ll)
CUPRUM_INT_NUM(u8, (u8)0, (u8)255)
CUPRUM_INT_NUM(u16, (u16)0, (u16)65535)
CUPRUM_INT_NUM(u32, 0u, 4294967295u)
CUPRUM_INT_NUM(u64, 0ull, 18446744073709551615ull)
#undef CUPRUM_INT_NUM

}  // namespace cuprum
