// The operators of cuprum's storage-only float types (half and bfloat16 in half.h, the 8-bit
// floats in fp8.h): arithmetic and comparisons in f32, each result rounded back once with the
// type's own conversion (`FROM`); negation flips the sign bit (`SIGN`, of the bits type `U`), as
// the host types do. A header that defines such a type expands the macro after its `to_f32`.
// `TO` is the widening the operators use: `to_f32`, or for `half` the conversion instruction alone
// (`half_to_f32_op`): a NaN operand's payload, which `to_f32` keeps for the host's sake, cannot
// reach the result, which `FROM` rounds to the canonical NaN whatever the payload.
#pragma once

#define CUPRUM_SMALL_FLOAT_OPS(H, FROM, U, SIGN, TO)                                             \
    __device__ __forceinline__ H operator+(H a, H b) { return FROM(TO(a) + TO(b)); }     \
    __device__ __forceinline__ H operator-(H a, H b) { return FROM(TO(a) - TO(b)); }     \
    __device__ __forceinline__ H operator*(H a, H b) { return FROM(TO(a) * TO(b)); }     \
    __device__ __forceinline__ H operator/(H a, H b) { return FROM(TO(a) / TO(b)); }     \
    __device__ __forceinline__ H operator-(H a) { H r; r.bits = (U)(a.bits ^ (SIGN)); return r; } \
    __device__ __forceinline__ H& operator+=(H& a, H b) { return a = a + b; }                    \
    __device__ __forceinline__ H& operator-=(H& a, H b) { return a = a - b; }                    \
    __device__ __forceinline__ H& operator*=(H& a, H b) { return a = a * b; }                    \
    __device__ __forceinline__ H& operator/=(H& a, H b) { return a = a / b; }                    \
    __device__ __forceinline__ bool operator==(H a, H b) { return TO(a) == TO(b); }      \
    __device__ __forceinline__ bool operator!=(H a, H b) { return TO(a) != TO(b); }      \
    __device__ __forceinline__ bool operator<(H a, H b) { return TO(a) < TO(b); }        \
    __device__ __forceinline__ bool operator<=(H a, H b) { return TO(a) <= TO(b); }      \
    __device__ __forceinline__ bool operator>(H a, H b) { return TO(a) > TO(b); }        \
    __device__ __forceinline__ bool operator>=(H a, H b) { return TO(a) >= TO(b); }
