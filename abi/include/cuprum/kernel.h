// cuprum/kernel.h: operands of the generated elementwise and reduction kernels: a strided operand
// and the (collapsed) loop shape it is indexed with.
#pragma once
#include <cuprum/types.h>

// The most threads per block of a reduction kernel (a power of two): the size of its shared tree.
#define CUPRUM_REDUCE_BLOCK 256

namespace cuprum {

// The iteration space after collapsing dimensions: `size` elements over `ndim` dimensions.
struct Shape {
    u64 size;
    i32 ndim;
    i64 dims[CUPRUM_MAX_NDIM];
};

// An array operand: a pointer and strides (in elements) over the loop shape; a scalar or a
// broadcast axis has stride 0.
template <typename T>
struct Operand {
    T* ptr;
    i64 strides[CUPRUM_MAX_NDIM];
    __device__ __forceinline__ T& at(const Shape& s, u64 flat) const {
        i64 off = 0;
        for (int k = s.ndim - 1; k >= 0; --k) {
            u64 e = (u64)s.dims[k];
            off += (i64)(flat % e) * strides[k];
            flat /= e;
        }
        return ptr[off];
    }
};

}  // namespace cuprum
