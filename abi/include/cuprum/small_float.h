// The operators of cuprum's storage-only float types (half and bfloat16 in half.h, the 8-bit
// floats in fp8.h): arithmetic and comparisons in f32, each result rounded back once with the
// type's own conversion (`FROM`); negation flips the sign bit (`SIGN`, of the bits type `U`), as
// the host types do. A header that defines such a type expands the macro after its `to_f32`.
#pragma once

#define CUPRUM_SMALL_FLOAT_OPS(H, FROM, U, SIGN)                                                  \
    __device__ __forceinline__ H operator+(H a, H b) { return FROM(to_f32(a) + to_f32(b)); }     \
    __device__ __forceinline__ H operator-(H a, H b) { return FROM(to_f32(a) - to_f32(b)); }     \
    __device__ __forceinline__ H operator*(H a, H b) { return FROM(to_f32(a) * to_f32(b)); }     \
    __device__ __forceinline__ H operator/(H a, H b) { return FROM(to_f32(a) / to_f32(b)); }     \
    __device__ __forceinline__ H operator-(H a) { H r; r.bits = (U)(a.bits ^ (SIGN)); return r; } \
    __device__ __forceinline__ H& operator+=(H& a, H b) { return a = a + b; }                    \
    __device__ __forceinline__ H& operator-=(H& a, H b) { return a = a - b; }                    \
    __device__ __forceinline__ H& operator*=(H& a, H b) { return a = a * b; }                    \
    __device__ __forceinline__ H& operator/=(H& a, H b) { return a = a / b; }                    \
    __device__ __forceinline__ bool operator==(H a, H b) { return to_f32(a) == to_f32(b); }      \
    __device__ __forceinline__ bool operator!=(H a, H b) { return to_f32(a) != to_f32(b); }      \
    __device__ __forceinline__ bool operator<(H a, H b) { return to_f32(a) < to_f32(b); }        \
    __device__ __forceinline__ bool operator<=(H a, H b) { return to_f32(a) <= to_f32(b); }      \
    __device__ __forceinline__ bool operator>(H a, H b) { return to_f32(a) > to_f32(b); }        \
    __device__ __forceinline__ bool operator>=(H a, H b) { return to_f32(a) >= to_f32(b); }
