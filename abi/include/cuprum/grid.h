// cuprum/grid.h: `grid_sync()`, the barrier of every thread of a grid (docs/kernel-language.md,
// "Grid synchronisation"): CUDA's `cooperative_groups::this_grid().sync()`, without the toolkit's
// headers.
//
// The barrier word is the driver's. A cooperative launch (`cuLaunchCooperativeKernel`: the runtime
// launches so every kernel that reaches `grid_sync()`, `KernelInfo::cooperative`) gets a grid
// workspace from the driver, `{ u32 size; u32 barrier; }`, whose address the special registers
// %envreg1 (high half) and %envreg2 (low half) hold, and whose barrier word starts each launch at
// zero; a launch that is not cooperative reads a null address. This is the ABI the toolkit's
// cooperative groups use (cooperative_groups/details/driver_abi.h), and the algorithm below is
// theirs (details/sync.h).
//
// Each block's first thread adds to the word once per barrier: block 0 adds
// 0x80000000 - (blocks - 1), every other block 1. Each round therefore adds exactly 2^31: the top
// bit flips when, and only when, the last block of the round has added, and the low 31 bits come
// back to zero. A block waits until the top bit differs from the one its own add saw: a
// generation count of one bit, right for any number of rounds, because no block can add for the
// next round before the flip of this one, and the flip of the next round needs every block's add
// (so the bit a slow block waits for cannot flip back before it has seen it). The add releases the
// block's writes and the load that sees the flip acquires the others' (on sm_70+, PTX's
// `.release`/`.acquire` at `.gpu` scope; before, fences around a relaxed add and a volatile load),
// and the block's barriers before and after order its other threads' accesses.
//
// Every block must be resident at once, or a block that waits would hold the multiprocessor a
// block it waits for needs: the cooperative launch guarantees it, and the runtime checks the grid
// against the device's co-residency limit before it launches (`Error::CooperativeGrid`).
#pragma once

namespace cuprum {

// The driver's grid workspace of a cooperative launch.
struct grid_workspace {
    unsigned int size;
    unsigned int barrier;
};

__device__ __forceinline__ grid_workspace* grid_workspace_of_launch() {
    unsigned int lo, hi;
    asm("mov.u32 %0, %%envreg2;" : "=r"(lo));
    asm("mov.u32 %0, %%envreg1;" : "=r"(hi));
    return reinterpret_cast<grid_workspace*>(((unsigned long long)hi << 32) | lo);
}

// A launch that is not cooperative has no workspace: a grid of one block needs only its own
// barrier, any other cannot be synchronised, and stops with a trap rather than hang or race (the
// runtime never launches a kernel that calls `grid_sync()` so; CUDA C from `cuprum emit`
// launched by hand may be).
static __device__ __noinline__ void grid_sync_not_cooperative() {
    if (gridDim.x * gridDim.y * gridDim.z == 1u) {
        __syncthreads();
        return;
    }
    __trap();
}

__device__ __forceinline__ void grid_sync() {
    grid_workspace* ws = grid_workspace_of_launch();
    if (ws == nullptr) {
        grid_sync_not_cooperative();
        return;
    }
    unsigned int* bar = &ws->barrier;
    __syncthreads();
    if (threadIdx.x == 0u && threadIdx.y == 0u && threadIdx.z == 0u) {
        const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        const bool first = blockIdx.x == 0u && blockIdx.y == 0u && blockIdx.z == 0u;
        const unsigned int add = first ? 0x80000000u - (blocks - 1u) : 1u;
        unsigned int old, now;
#if __CUDA_ARCH__ >= 700
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(bar), "r"(add) : "memory");
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(bar) : "memory");
        } while (((old ^ now) & 0x80000000u) == 0u);
#else
        __threadfence();
        old = atomicAdd(bar, add);
        do {
            now = *(volatile unsigned int*)bar;
        } while (((old ^ now) & 0x80000000u) == 0u);
        __threadfence();
#endif
    }
    __syncthreads();
}

}  // namespace cuprum
