// cuprum/cucomplex_bridge.h: the API of the toolkit's cuComplex.h on cuprum's complex type, for
// CUDA C written against cuComplex.h (CuPy's `translate_cucomplex`: a `RawModule` or `RawKernel`
// with `translate_cucomplex(true)` includes this header in place of <cuComplex.h>). A
// `cuFloatComplex` is then `cuprum::complex<float>`, the element type of an `Array<Complex<f32>>`
// (and `cuDoubleComplex` of an `Array<Complex<f64>>`), so kernels take complex arrays as they are.
// Each function computes what cuComplex.h's does, in the same order of operations (the scaled
// division of `cuCdivf`, the overflow-safe modulus of `cuCabsf`, the fused order of `cuCfmaf`).
// Not translated: the members `.x`/`.y` of cuComplex.h's `float2`/`double2` (use `cuCrealf` and
// `cuCimagf`, or `.re`/`.im`), and code that mixes the types with `float2`/`double2`.
#pragma once
#include <cuprum/complex.h>

typedef cuprum::complex<float> cuFloatComplex;
typedef cuprum::complex<double> cuDoubleComplex;
typedef cuFloatComplex cuComplex;

namespace cuprum {
namespace cucomplex {

template <typename T> __device__ __forceinline__ T fabs_(T v) { return v < (T)0 ? -v : v; }

template <typename T>
__device__ __forceinline__ complex<T> div(complex<T> x, complex<T> y) {
    T s = fabs_(y.re) + fabs_(y.im);
    T oos = (T)1 / s;
    T ars = x.re * oos;
    T ais = x.im * oos;
    T brs = y.re * oos;
    T bis = y.im * oos;
    s = (brs * brs) + (bis * bis);
    oos = (T)1 / s;
    return make_complex(((ars * brs) + (ais * bis)) * oos, ((ais * brs) - (ars * bis)) * oos);
}

template <typename T>
__device__ __forceinline__ T abs(complex<T> x, T max) {
    T a = fabs_(x.re);
    T b = fabs_(x.im);
    T v = a > b ? a : b;
    T w = a > b ? b : a;
    T t = w / v;
    t = (T)1 + t * t;
    t = v * ::sqrt(t);
    if ((v == (T)0) || (v > max) || (w > max)) t = v + w;
    return t;
}

template <typename T>
__device__ __forceinline__ complex<T> fma(complex<T> x, complex<T> y, complex<T> d) {
    T re = (x.re * y.re) + d.re;
    T im = (x.re * y.im) + d.im;
    re = -(x.im * y.im) + re;
    im = (x.im * y.re) + im;
    return make_complex(re, im);
}

}  // namespace cucomplex
}  // namespace cuprum

__device__ __forceinline__ float cuCrealf(cuFloatComplex x) { return x.re; }
__device__ __forceinline__ float cuCimagf(cuFloatComplex x) { return x.im; }
__device__ __forceinline__ cuFloatComplex make_cuFloatComplex(float r, float i) { return cuprum::make_complex(r, i); }
__device__ __forceinline__ cuFloatComplex make_cuComplex(float r, float i) { return cuprum::make_complex(r, i); }
__device__ __forceinline__ cuFloatComplex cuConjf(cuFloatComplex x) { return cuprum::make_complex(x.re, -x.im); }
__device__ __forceinline__ cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) { return cuprum::make_complex(x.re + y.re, x.im + y.im); }
__device__ __forceinline__ cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) { return cuprum::make_complex(x.re - y.re, x.im - y.im); }
__device__ __forceinline__ cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
    return cuprum::make_complex((x.re * y.re) - (x.im * y.im), (x.re * y.im) + (x.im * y.re));
}
__device__ __forceinline__ cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) { return cuprum::cucomplex::div(x, y); }
__device__ __forceinline__ float cuCabsf(cuFloatComplex x) { return cuprum::cucomplex::abs(x, 3.402823466e38f); }
__device__ __forceinline__ cuFloatComplex cuCfmaf(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) {
    return cuprum::cucomplex::fma(x, y, d);
}

__device__ __forceinline__ double cuCreal(cuDoubleComplex x) { return x.re; }
__device__ __forceinline__ double cuCimag(cuDoubleComplex x) { return x.im; }
__device__ __forceinline__ cuDoubleComplex make_cuDoubleComplex(double r, double i) { return cuprum::make_complex(r, i); }
__device__ __forceinline__ cuDoubleComplex cuConj(cuDoubleComplex x) { return cuprum::make_complex(x.re, -x.im); }
__device__ __forceinline__ cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) { return cuprum::make_complex(x.re + y.re, x.im + y.im); }
__device__ __forceinline__ cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) { return cuprum::make_complex(x.re - y.re, x.im - y.im); }
__device__ __forceinline__ cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
    return cuprum::make_complex((x.re * y.re) - (x.im * y.im), (x.re * y.im) + (x.im * y.re));
}
__device__ __forceinline__ cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) { return cuprum::cucomplex::div(x, y); }
__device__ __forceinline__ double cuCabs(cuDoubleComplex x) { return cuprum::cucomplex::abs(x, 1.79769313486231570e+308); }
__device__ __forceinline__ cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
    return cuprum::cucomplex::fma(x, y, d);
}

__device__ __forceinline__ cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) {
    return cuprum::make_complex((double)c.re, (double)c.im);
}
__device__ __forceinline__ cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) {
    return cuprum::make_complex((float)c.re, (float)c.im);
}
