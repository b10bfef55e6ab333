// cuprum/complex.h: `Complex<f32>` / `Complex<f64>` with num-complex's arithmetic, and their
// `num<T>` (the `Number` functions: `T::zero()`, `one`, `from_f64`, `from_i64`).
#pragma once
#include <cuprum/types.h>
#include <cuprum/math.h>

namespace cuprum {

// Aligned to its size, as thrust::complex (CuPy) is: a 16-byte complex<double> is one vector load.
// It converts implicitly between precisions, as thrust::complex does, so C text written for CuPy
// that mixes them compiles (`cuCadd(a_double[i], s_float)` through cucomplex_bridge.h, or
// `complex<double> z = w;` with `w` a `complex<float>`): each part is converted as the C cast of
// the part type converts it. The constructors are trivial or user-written without state, so the
// type stays trivially copyable and standard-layout (kernel parameters, shared arrays, unions);
// the Rust kernel language never converts implicitly (its casts are written out).
template <typename T>
struct alignas(2 * sizeof(T)) complex {
    T re;
    T im;
    complex() = default;
    __host__ __device__ __forceinline__ constexpr complex(T r, T i) : re(r), im(i) {}
    template <typename U>
    __host__ __device__ __forceinline__ constexpr complex(const complex<U>& o) : re((T)o.re), im((T)o.im) {}
};

template <typename T>
__device__ __forceinline__ complex<T> make_complex(T re, T im) { complex<T> c; c.re = re; c.im = im; return c; }
template <typename T>
__device__ __forceinline__ complex<T> operator+(complex<T> a, complex<T> b) { return make_complex(a.re + b.re, a.im + b.im); }
template <typename T>
__device__ __forceinline__ complex<T> operator-(complex<T> a, complex<T> b) { return make_complex(a.re - b.re, a.im - b.im); }
template <typename T>
__device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
    return make_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// num-complex divides by the squared norm (no scaling).
template <typename T>
__device__ __forceinline__ complex<T> operator/(complex<T> a, complex<T> b) {
    T n = b.re * b.re + b.im * b.im;
    return make_complex((a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n);
}
template <typename T>
__device__ __forceinline__ complex<T> operator-(complex<T> a) { return make_complex(-a.re, -a.im); }
template <typename T>
__device__ __forceinline__ complex<T>& operator+=(complex<T>& a, complex<T> b) { return a = a + b; }
template <typename T>
__device__ __forceinline__ complex<T>& operator-=(complex<T>& a, complex<T> b) { return a = a - b; }
template <typename T>
__device__ __forceinline__ complex<T>& operator*=(complex<T>& a, complex<T> b) { return a = a * b; }
template <typename T>
__device__ __forceinline__ complex<T>& operator/=(complex<T>& a, complex<T> b) { return a = a / b; }
template <typename T>
__device__ __forceinline__ bool operator==(complex<T> a, complex<T> b) { return a.re == b.re && a.im == b.im; }
template <typename T>
__device__ __forceinline__ bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }

template <typename T>
__device__ __forceinline__ complex<T> conj(complex<T> a) { return make_complex(a.re, -a.im); }
__device__ __forceinline__ float norm(complex<float> a) { return hypotf(a.re, a.im); }
__device__ __forceinline__ double norm(complex<double> a) { return hypot(a.re, a.im); }
template <typename T>
__device__ __forceinline__ T norm_sqr(complex<T> a) { return a.re * a.re + a.im * a.im; }
__device__ __forceinline__ float arg(complex<float> a) { return atan2f(a.im, a.re); }
__device__ __forceinline__ double arg(complex<double> a) { return atan2(a.im, a.re); }
__device__ __forceinline__ complex<float> exp(complex<float> a) {
    float e = expf(a.re), s, c;
    sincosf(a.im, &s, &c);
    return make_complex(e * c, e * s);
}
__device__ __forceinline__ complex<double> exp(complex<double> a) {
    double e = ::exp(a.re), s, c;
    sincos(a.im, &s, &c);
    return make_complex(e * c, e * s);
}
template <typename T>
__device__ __forceinline__ complex<T> ln(complex<T> a) { return make_complex((T)log(norm(a)), arg(a)); }
template <typename T>
__device__ __forceinline__ complex<T> sqrt(complex<T> a) {
    // Principal square root, as num-complex: from the polar form.
    T r = ::sqrt(norm(a));
    T t = arg(a) / (T)2;
    return make_complex(r * ::cos(t), r * ::sin(t));
}

// `Number` for complex types: a real value `v` becomes `v + 0i`, its part converted as the real
// type converts it (num-complex's `from_f64`/`from_i64` through the part type; the identities of
// `sum` and `prod` of a generic `T: Number`).
template <typename T> struct num<complex<T>> {
    static __device__ __forceinline__ complex<T> zero() { return make_complex(num<T>::zero(), num<T>::zero()); }
    static __device__ __forceinline__ complex<T> one() { return make_complex(num<T>::one(), num<T>::zero()); }
    static __device__ __forceinline__ complex<T> from_f64(double v) { return make_complex(num<T>::from_f64(v), num<T>::zero()); }
    static __device__ __forceinline__ complex<T> from_i64(i64 v) { return make_complex(num<T>::from_i64(v), num<T>::zero()); }
};

}  // namespace cuprum

typedef cuprum::complex<float> c32;
typedef cuprum::complex<double> c64;
