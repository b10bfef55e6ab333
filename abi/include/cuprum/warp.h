// cuprum/warp.h: warp collectives (reductions and prefix sums over a warp, or over tiles of
// `width` lanes, a power of two up to 32), built on the shuffles of cuprum/thread.h. Every lane
// of the warp calls them together (the full mask). The reductions combine in a butterfly (lane
// l with lane l ^ 16, then ^ 8, ...), so every lane gets the same bits; the scans add in
// Hillis-Steele steps (from lane l - 1, then l - 2, l - 4, ...). The CPU device runs the same
// steps (runtime/src/lang/cpu/collective.rs), so both give the same results.
#pragma once
#include <cuprum/arith.h>
#include <cuprum/math.h>
#include <cuprum/thread.h>

namespace cuprum {

struct WarpSum { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return cuprum::add(a, b); } };
struct WarpMin { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return cuprum::min(a, b); } };
struct WarpMax { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return cuprum::max(a, b); } };

template <typename Op, typename T> __device__ __forceinline__ T warp_reduce(T v, u32 width) {
    for (u32 o = width / 2; o > 0; o /= 2) v = Op()(v, shfl_xor_sync(0xffffffffu, v, o, width));
    return v;
}

template <typename T> __device__ __forceinline__ T warp_reduce_sum(T v, u32 width = 32) { return warp_reduce<WarpSum>(v, width); }
template <typename T> __device__ __forceinline__ T warp_reduce_min(T v, u32 width = 32) { return warp_reduce<WarpMin>(v, width); }
template <typename T> __device__ __forceinline__ T warp_reduce_max(T v, u32 width = 32) { return warp_reduce<WarpMax>(v, width); }

// Votes over the warp (full mask): `vote.sync.any/all.pred`, one instruction whose result every
// lane shares, so that a branch on it stays a branch (ptxas predicates a short divergent body).
__device__ __forceinline__ bool warp_any(bool p) {
    u32 r;
    asm volatile("{ .reg .pred a, b; setp.ne.u32 a, %1, 0; vote.sync.any.pred b, a, 0xffffffff; selp.u32 %0, 1, 0, b; }" : "=r"(r) : "r"((u32)p));
    return r != 0;
}
__device__ __forceinline__ bool warp_all(bool p) {
    u32 r;
    asm volatile("{ .reg .pred a, b; setp.ne.u32 a, %1, 0; vote.sync.all.pred b, a, 0xffffffff; selp.u32 %0, 1, 0, b; }" : "=r"(r) : "r"((u32)p));
    return r != 0;
}

// The sum of `v` over this lane and the lanes before it in its tile.
template <typename T> __device__ __forceinline__ T warp_inclusive_sum(T v, u32 width = 32) {
    const u32 lane = lane_id() & (width - 1);
    for (u32 o = 1; o < width; o *= 2) {
        T before = shfl_up_sync(0xffffffffu, v, o, width);
        if (lane >= o) v = cuprum::add(before, v);
    }
    return v;
}

// The sum over the lanes before this one in its tile (zero for the tile's first lane).
template <typename T> __device__ __forceinline__ T warp_exclusive_sum(T v, u32 width = 32) {
    T inclusive = warp_inclusive_sum(v, width);
    T before = shfl_up_sync(0xffffffffu, inclusive, 1, width);
    return (lane_id() & (width - 1)) == 0 ? num<T>::zero() : before;
}

}  // namespace cuprum
