// cuprum/types.h: scalar typedefs, slices, local arrays, views, tuples (used by generated code).
// Self-contained: no toolkit or standard headers, so NVRTC needs nothing but these files.
#pragma once

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;

namespace cuprum {

// Whether the target being compiled is compute capability `A / 100` or newer (`800`: sm_80); true
// outside device compilation. A kernel that needs tensor cores or asynchronous copies asserts it
// in its entry point, so that building it for an older target names the kernel and the intrinsic.
template <int A>
__host__ __device__ constexpr bool arch_at_least() {
#if defined(__CUDA_ARCH__)
    return __CUDA_ARCH__ >= A;
#else
    return true;
#endif
}

// Whether the target being compiled is the arch-specific variant of compute capability `A / 100`
// (`900`: sm_90a, which has wgmma and setmaxnreg); true outside device compilation.
template <int A>
__host__ __device__ constexpr bool arch_specific() {
#if defined(__CUDA_ARCH__)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    return A == 900 && __CUDA_ARCH__ == 900;
#else
    return false;
#endif
#else
    return true;
#endif
}

// `&[T]` / `&mut [T]`: a device pointer and a length (16 bytes, passed by value).
template <typename T>
struct Slice {
    T* ptr;
    u64 len;
    template <typename I>
    __device__ __forceinline__ T& operator[](I i) const { return ptr[i]; }
    // `&mut [T]` coerces to `&[T]`.
    template <typename U>
    __device__ __forceinline__ operator Slice<const U>() const { return Slice<const U>{ptr, len}; }
};

// The bytes of `u` as a `T` of the same size (char copies: no aliasing rule broken; compiled to
// register moves).
template <typename T, typename U>
__device__ __forceinline__ T bits_as(const U& u) {
    T v;
    const char* s = reinterpret_cast<const char*>(&u);
    char* d = reinterpret_cast<char*>(&v);
#pragma unroll
    for (int k = 0; k < (int)sizeof(T); ++k) d[k] = s[k];
    return v;
}

// A load through the read-only data cache (`ld.global.nc`), for memory no thread writes while the
// kernel runs. Elements of 1, 2, 4, 8 or 16 bytes aligned to their size go through `__ldg` on the
// unsigned type of that size; others are plain loads.
template <typename T>
__device__ __forceinline__ T load_ro(const T* p) {
    if constexpr (sizeof(T) == 16 && alignof(T) >= 16) {
        return bits_as<T>(__ldg(reinterpret_cast<const uint4*>(p)));
    } else if constexpr (sizeof(T) == 8 && alignof(T) >= 8) {
        return bits_as<T>(__ldg(reinterpret_cast<const unsigned long long*>(p)));
    } else if constexpr (sizeof(T) == 4 && alignof(T) >= 4) {
        return bits_as<T>(__ldg(reinterpret_cast<const unsigned int*>(p)));
    } else if constexpr (sizeof(T) == 2 && alignof(T) >= 2) {
        return bits_as<T>(__ldg(reinterpret_cast<const unsigned short*>(p)));
    } else if constexpr (sizeof(T) == 1) {
        return bits_as<T>(__ldg(reinterpret_cast<const unsigned char*>(p)));
    } else {
        return *p;
    }
}

// A raw kernel's `&[T]` parameter (the layout of `Slice<const T>`): elements are read through the
// read-only data cache. Sound because the launch rejects any argument that could write the same
// memory (Rust's rule for `&[T]`), and a `&[T]` cannot be written through. Passed on to device
// functions as an ordinary `Slice<const T>`.
template <typename T>
struct RoSlice {
    const T* ptr;
    u64 len;
    template <typename I>
    __device__ __forceinline__ T operator[](I i) const { return load_ro(ptr + i); }
    __device__ __forceinline__ operator Slice<const T>() const { return Slice<const T>{ptr, len}; }
};

// `[T; N]`: a local array with value semantics.
template <typename T, int N>
struct Array {
    T v[N];
    template <typename I>
    __device__ __forceinline__ T& operator[](I i) { return v[i]; }
    template <typename I>
    __device__ __forceinline__ const T& operator[](I i) const { return v[i]; }
    static __device__ __forceinline__ Array splat(T x) {
        Array a;
        for (int k = 0; k < N; ++k) a.v[k] = x;
        return a;
    }
};

// `View<T, N>` / `ViewMut<T, N>`: an n-d strided array argument (strides in elements).
template <typename T, int N>
struct View {
    T* ptr;
    i64 shape[N];
    i64 strides[N];
    __device__ __forceinline__ u64 size() const {
        u64 s = 1;
        for (int k = 0; k < N; ++k) s *= (u64)shape[k];
        return s;
    }
    template <typename... I>
    __device__ __forceinline__ T& operator()(I... idx) const {
        const i64 ix[N] = {(i64)idx...};
        i64 off = 0;
        for (int k = 0; k < N; ++k) off += ix[k] * strides[k];
        return ptr[off];
    }
    // Flat C-order index.
    template <typename I>
    __device__ __forceinline__ T& operator[](I flat) const {
        u64 f = (u64)flat;
        i64 off = 0;
        for (int k = N - 1; k >= 0; --k) {
            u64 e = (u64)shape[k];
            off += (i64)(f % e) * strides[k];
            f /= e;
        }
        return ptr[off];
    }
    __device__ __forceinline__ Array<u64, N> shape_array() const {
        Array<u64, N> a;
        for (int k = 0; k < N; ++k) a.v[k] = (u64)shape[k];
        return a;
    }
    __device__ __forceinline__ Array<i64, N> strides_array() const {
        Array<i64, N> a;
        for (int k = 0; k < N; ++k) a.v[k] = strides[k];
        return a;
    }
};

// The most dimensions an elementwise or reduction operand may have after collapsing.
#define CUPRUM_MAX_NDIM 8

// `Raw<T>`: an elementwise argument indexed by hand with a flat C-order index.
template <typename T>
struct Raw {
    T* ptr;
    u64 size;
    i32 ndim;
    i32 contiguous;
    i64 shape[CUPRUM_MAX_NDIM];
    i64 strides[CUPRUM_MAX_NDIM];
    template <typename I>
    __device__ __forceinline__ T& operator[](I flat) const {
        if (contiguous) return ptr[flat];
        u64 f = (u64)flat;
        i64 off = 0;
        for (int k = ndim - 1; k >= 0; --k) {
            u64 e = (u64)shape[k];
            off += (i64)(f % e) * strides[k];
            f /= e;
        }
        return ptr[off];
    }
};

template <typename A, typename B>
struct Tuple2 { A _0; B _1; };
template <typename A, typename B, typename C>
struct Tuple3 { A _0; B _1; C _2; };
template <typename A, typename B, typename C, typename D>
struct Tuple4 { A _0; B _1; C _2; D _3; };
template <typename A, typename B, typename C, typename D, typename E>
struct Tuple5 { A _0; B _1; C _2; D _3; E _4; };
template <typename A, typename B, typename C, typename D, typename E, typename F>
struct Tuple6 { A _0; B _1; C _2; D _3; E _4; F _5; };

}  // namespace cuprum
