// cuprum/thread.h: thread and block intrinsics, warp shuffles, dynamic shared memory.
#pragma once
#include <cuprum/types.h>

namespace cuprum {

__device__ __forceinline__ uint3 thread_idx() { return threadIdx; }
__device__ __forceinline__ uint3 block_idx() { return blockIdx; }
__device__ __forceinline__ uint3 block_dim() { return make_uint3(blockDim.x, blockDim.y, blockDim.z); }
__device__ __forceinline__ uint3 grid_dim() { return make_uint3(gridDim.x, gridDim.y, gridDim.z); }
__device__ __forceinline__ u32 grid_1d() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ Tuple2<u32, u32> grid_2d() {
    Tuple2<u32, u32> t = {blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y};
    return t;
}
__device__ __forceinline__ Tuple3<u32, u32, u32> grid_3d() {
    Tuple3<u32, u32, u32> t = {blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                               blockIdx.z * blockDim.z + threadIdx.z};
    return t;
}
__device__ __forceinline__ u32 grid_size_1d() { return gridDim.x * blockDim.x; }
__device__ __forceinline__ Tuple2<u32, u32> grid_size_2d() {
    Tuple2<u32, u32> t = {gridDim.x * blockDim.x, gridDim.y * blockDim.y};
    return t;
}
__device__ __forceinline__ Tuple3<u32, u32, u32> grid_size_3d() {
    Tuple3<u32, u32, u32> t = {gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z};
    return t;
}
__device__ __forceinline__ u32 lane_id() {
    u32 l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
__device__ __forceinline__ u32 dynamic_shared_bytes() {
    u32 n;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
    return n;
}

// Shuffles move any scalar as 32-bit words.
enum ShflKind { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR };
template <ShflKind K, typename T>
__device__ __forceinline__ T shfl(u32 mask, T v, u32 arg, u32 width) {
    const int W = (sizeof(T) + 3) / 4;
    union U { T t; u32 w[W]; };
    U in, out;
    for (int k = 0; k < W; ++k) in.w[k] = 0;
    in.t = v;
    for (int k = 0; k < W; ++k) {
        if (K == SHFL_IDX) out.w[k] = __shfl_sync(mask, in.w[k], (int)arg, (int)width);
        if (K == SHFL_UP) out.w[k] = __shfl_up_sync(mask, in.w[k], arg, (int)width);
        if (K == SHFL_DOWN) out.w[k] = __shfl_down_sync(mask, in.w[k], arg, (int)width);
        if (K == SHFL_XOR) out.w[k] = __shfl_xor_sync(mask, in.w[k], (int)arg, (int)width);
    }
    return out.t;
}
template <typename T> __device__ __forceinline__ T shfl_sync(u32 m, T v, u32 a, u32 w = 32) { return shfl<SHFL_IDX>(m, v, a, w); }
template <typename T> __device__ __forceinline__ T shfl_up_sync(u32 m, T v, u32 a, u32 w = 32) { return shfl<SHFL_UP>(m, v, a, w); }
template <typename T> __device__ __forceinline__ T shfl_down_sync(u32 m, T v, u32 a, u32 w = 32) { return shfl<SHFL_DOWN>(m, v, a, w); }
template <typename T> __device__ __forceinline__ T shfl_xor_sync(u32 m, T v, u32 a, u32 w = 32) { return shfl<SHFL_XOR>(m, v, a, w); }

}  // namespace cuprum
