// cuprum/vector.h: `load4(x, i)` and `store4(y, i, v)` (docs/kernel-language.md, "Vector
// accesses"): four consecutive elements of a slice in the widest accesses the address allows. Four
// 4-byte elements whose first is 16-byte aligned move in one 16-byte access (`ld.global.v4`,
// through the read-only cache for a `&[T]` argument), four 2-byte ones in one 8-byte access, wider
// elements in 16-byte pieces; a misaligned address takes one access per element (never a fault).
// Checked like `x[i]` (cuprum/bounds.h): unless the function is unchecked, `i + 3` past the end
// reports the first index out of range, and the load gives zeros, the store writes nothing.
#pragma once
#include <cuprum/types.h>
#include <cuprum/bounds.h>

namespace cuprum {

// The bytes of four elements, as the unsigned vector types that carry them.
template <int B> struct quad_bits { struct type { uint4 w[B / 16]; }; };
template <> struct quad_bits<16> { typedef uint4 type; };
template <> struct quad_bits<8> { typedef uint2 type; };
template <> struct quad_bits<4> { typedef unsigned int type; };

// Whether `p` is aligned for `quad_bits` (16 bytes at most).
template <typename T>
__device__ __forceinline__ bool quad_aligned(const T* p) {
    constexpr u64 a = 4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16;
    return ((u64)p & (a - 1)) == 0;
}

// Whether four elements of `B` bytes in all move as `quad_bits` (4, 8 or a multiple of 16 bytes).
template <int B> struct quad_wide { static constexpr bool value = B == 4 || B == 8 || B % 16 == 0; };

// `p[0..4]`; `RO`: through the read-only data cache (memory no thread writes during the kernel).
template <bool RO, typename T>
__device__ __forceinline__ Array<T, 4> read4(const T* p) {
    constexpr int B = 4 * (int)sizeof(T);
    typedef typename quad_bits<B>::type W;
    if constexpr (quad_wide<B>::value) {
        if (quad_aligned(p)) {
            if constexpr (B <= 16) {
                const W* q = reinterpret_cast<const W*>(p);
                return bits_as<Array<T, 4>>(RO ? __ldg(q) : *q);
            } else {
                W w;
                const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
                for (int k = 0; k < B / 16; ++k) w.w[k] = RO ? __ldg(q + k) : q[k];
                return bits_as<Array<T, 4>>(w);
            }
        }
    }
    Array<T, 4> r;
#pragma unroll
    for (int k = 0; k < 4; ++k) r.v[k] = RO ? load_ro(p + k) : p[k];
    return r;
}

template <typename T>
__device__ __forceinline__ void write4(T* p, const Array<T, 4>& v) {
    constexpr int B = 4 * (int)sizeof(T);
    typedef typename quad_bits<B>::type W;
    if constexpr (quad_wide<B>::value) {
        if (quad_aligned(p)) {
            *reinterpret_cast<W*>(p) = bits_as<W>(v);
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) p[k] = v.v[k];
}

// Whether `i..i + 4` lies in `len` elements; otherwise reports the first index outside.
// (A template, like `oob_report`: only code that checks instantiates it.)
template <typename I>
__device__ __forceinline__ bool quad_in_bounds(I i, u64 len, const char* fn) {
    const u64 k = (u64)i;
    if (__builtin_expect(k < len && len - k >= 4, 1)) return true;
    oob_report(fn, k < len ? len : k, len, index_info<I>::signed_bit);
    return false;
}

template <bool CHECKED, typename T, typename I>
__device__ __forceinline__ Array<typename unconst<T>::type, 4> load4(const Slice<T>& a, const char* fn, I i) {
    typedef typename unconst<T>::type U;
    if constexpr (CHECKED) {
        if (!quad_in_bounds(i, a.len, fn)) return Array<U, 4>::splat(U{});
    }
    return read4<false>(const_cast<const U*>(a.ptr) + (u64)i);
}
template <bool CHECKED, typename T, typename I>
__device__ __forceinline__ Array<T, 4> load4(const RoSlice<T>& a, const char* fn, I i) {
    if constexpr (CHECKED) {
        if (!quad_in_bounds(i, a.len, fn)) return Array<T, 4>::splat(T{});
    }
    return read4<true>(a.ptr + (u64)i);
}

template <bool CHECKED, typename T, typename I>
__device__ __forceinline__ void store4(const Slice<T>& a, const char* fn, I i, const Array<T, 4>& v) {
    if constexpr (CHECKED) {
        if (!quad_in_bounds(i, a.len, fn)) return;
    }
    write4(a.ptr + (u64)i, v);
}

}  // namespace cuprum
