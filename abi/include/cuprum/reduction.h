// cuprum/reduction.h: the loops every reduction kernel instantiates (`#[reduction]` items and
// `ReductionKernel`), and the warp, block and grid combining steps they share.
//
// A reduction sees its iteration space as (outputs, reduced): `oshape` holds the output axes and
// `rshape` the reduced axes, both already collapsed by the runtime's planner. Output `o` combines
// the mapped values of the elements (o, r) for every r < rshape.size. Three strategies, one
// kernel each, chosen by the planner from the layout:
//
// - `reduce_rows`: a block per output (per part of an output when `gridDim.x` > 1, the parts then
//   combined by the last block to finish). A full reduction is this with one output and the row
//   split across the whole grid; a reduction along the contiguous axis with long rows is it too.
// - `reduce_warps`: a warp per output, for rows too short to feed a block.
// - `reduce_cols`: a thread per output, consecutive threads on consecutive outputs (coalesced
//   when the reduced axis is strided); the reduced axis split over `gridDim.y` when outputs are
//   too few to fill the GPU, the parts combined by the last block of each column tile.
//
// Each loop is generic over the kernel's parts, passed as lambdas by the generated entry point:
//   base(o) -> Row                     per-input offsets of output o (a small struct)
//   elem(row, o, r) -> A               the mapped value of element (o, r), as the accumulator type
//   load(row, r) -> Pack               16-byte loads of V consecutive elements of every input
//   mapk(pack, o, r, k) -> A           the mapped value of lane k of a pack (element r + k)
//   align(row, r) -> int               elements before the inputs are V-aligned, -1 when they
//                                      never are together (then no vector loads)
//   red(a, b) -> A                     the reduce function
//   fin(o, acc, has)                   post-map and store of output o (`has`: any element seen)
//
// No identity is needed: every partial carries a "has value" flag, so a reduction without one is
// still correct; the identity is used only for an output with no elements.
#pragma once
#include <cuprum/types.h>
#include <cuprum/thread.h>
#include <cuprum/kernel.h>

// Threads per block of every reduction kernel (a multiple of 32).
#define CUPRUM_REDUCE_THREADS 256
// Independent loads each thread issues before combining them: 16-byte vectors in `rows` and
// `warps` (64 bytes in flight per thread, 128 KB per SM at 2048 threads), single elements in
// `cols` (a thread walks down its column).
#define CUPRUM_REDUCE_UNROLL 4
#define CUPRUM_REDUCE_COL_UNROLL 16

namespace cuprum {

// The launch-wide parameters of a reduction kernel (mirrored by the runtime's `ReduceArgs`).
struct ReduceArgs {
    Shape oshape;        // output axes after collapsing; size = number of outputs
    Shape rshape;        // reduced axes after collapsing; size = elements per output
    u64 loop_size;       // oshape.size * rshape.size: the map's `loop_size()`
    void* partials;      // scratch for split reductions: one slot of `slot_bytes` per part
    u32* counters;       // zero before the launch; each combining step resets the one it used
    u32 splits;          // parts per output (rows: gridDim.x; cols: gridDim.y)
    u32 contiguous;      // 1: every strided input has one reduced axis, of stride 1 or 0
    u32 slot_bytes;      // bytes per partial slot (at least sizeof(Partial<A>))
    u32 broadcast;       // with `contiguous`, bit k: strided input k has stride 0 along it
};

// An array argument of a reduction: strides (in elements) over the output axes and over the
// reduced axes. The output array uses `ostrides` only.
template <typename T>
struct ReduceOperand {
    T* ptr;
    i64 ostrides[CUPRUM_MAX_NDIM];
    i64 rstrides[CUPRUM_MAX_NDIM];
};

template <typename I> struct UnsignedOf;
template <> struct UnsignedOf<i32> { typedef u32 type; };
template <> struct UnsignedOf<i64> { typedef u64 type; };

// The offset (in elements) of flat index `flat` of shape `s` with `strides`. Index type `I` is
// i32 when the runtime proved every offset and index fits, else i64.
template <typename I>
__device__ __forceinline__ I offset_of(const Shape& s, const i64* strides, I flat) {
    if (s.ndim <= 1) return s.ndim == 0 ? (I)0 : flat * (I)strides[0];
    typedef typename UnsignedOf<I>::type U;
    U f = (U)flat;
    I off = 0;
    // Not unrolled: each unrolled copy is inlined into every element read of every strategy
    // (2.6x the machine code of a reduction), and the loop runs only for 2+ reduced axes.
#pragma unroll 1
    for (int k = s.ndim - 1; k > 0; --k) {
        U e = (U)s.dims[k];
        U q = f / e;
        off += (I)(f - q * e) * (I)strides[k];
        f = q;
    }
    return off + (I)f * (I)strides[0];
}

// Elements of `V` consecutive values loaded at once (16 bytes for the widest input).
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
    T v[V];
};

// The V elements from `base + r`, or with `repeat` the element at `base` V times (an input of
// stride 0 along the reduced axis: one value per output, the same for every element it reduces).
template <typename T, int V, typename I>
__device__ __forceinline__ Vec<T, V> load_vec(const T* base, I r, u32 repeat) {
    if (repeat) {
        Vec<T, V> w;
        const T x = *base;
#pragma unroll
        for (int i = 0; i < V; ++i) w.v[i] = x;
        return w;
    }
    return *reinterpret_cast<const Vec<T, V>*>(base + r);
}

template <typename... T> struct MaxSize;
template <typename T> struct MaxSize<T> { enum { value = sizeof(T) }; };
template <typename T, typename U, typename... R> struct MaxSize<T, U, R...> {
    enum { rest = MaxSize<U, R...>::value, value = (int)sizeof(T) > (int)rest ? (int)sizeof(T) : (int)rest };
};
// Elements per vector load for inputs of types T...: 16 bytes of the widest, at least 1.
template <typename... T> struct VecElems {
    enum { value = MaxSize<T...>::value >= 16 ? 1 : 16 / MaxSize<T...>::value };
};

// Elements from `p` to the next boundary of V elements, or -1 when `p` is not even aligned to
// its element size.
template <int V, typename T>
__device__ __forceinline__ int align_head(const T* p) {
    u64 a = (u64)p;
    if (a % sizeof(T) != 0) return -1;
    u64 e = a / sizeof(T);
    return (int)((V - (int)(e % V)) % V);
}

// One partial result: a value and whether it holds one.
template <typename A>
struct Partial {
    A v;
    u32 has;
};

// Reads a partial written by another block in this launch, through L2 (not the SM's L1).
template <typename A>
__device__ __forceinline__ Partial<A> load_partial(const Partial<A>* p) {
    static_assert(sizeof(Partial<A>) % 4 == 0, "partials are read as 32-bit words");
    union U { Partial<A> t; u32 w[sizeof(Partial<A>) / 4]; } u;
    const u32* src = reinterpret_cast<const u32*>(p);
    for (int k = 0; k < (int)(sizeof(Partial<A>) / 4); ++k) {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(u.w[k]) : "l"(src + k));
    }
    return u.t;
}

template <typename A, typename R>
__device__ __forceinline__ void push(A& acc, bool& has, A v, R red) {
    acc = has ? red(acc, v) : v;
    has = true;
}

template <typename A, typename R>
__device__ __forceinline__ void push_if(A& acc, bool& has, A v, bool vhas, R red) {
    if (vhas) {
        acc = has ? red(acc, v) : v;
        has = true;
    }
}

// Combines the 32 lanes' (acc, has) pairs; lane 0 ends with the warp's result.
template <typename A, typename R>
__device__ __forceinline__ void warp_reduce(A& acc, bool& has, R red) {
#pragma unroll
    for (u32 d = 16; d > 0; d >>= 1) {
        A w = shfl_down_sync(0xffffffffu, acc, d, 32u);
        bool h = __shfl_down_sync(0xffffffffu, (int)has, d) != 0;
        push_if(acc, has, w, h, red);
    }
}

// Combines the block's (acc, has) pairs (blockDim.x a multiple of 32); thread 0 ends with the
// block's result. Ends with a barrier, so it may be called again.
template <typename A, typename R>
__device__ __forceinline__ void block_reduce(A& acc, bool& has, R red) {
    __shared__ Partial<A> warps[32];
    warp_reduce(acc, has, red);
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) {
        warps[warp].v = acc;
        warps[warp].has = has;
    }
    __syncthreads();
    if (warp == 0) {
        has = lane < (blockDim.x >> 5) && warps[lane].has != 0;
        if (has) acc = warps[lane].v;
        warp_reduce(acc, has, red);
    }
    __syncthreads();
}

// Reduces elements [r0, r1) of output `o` with a group of `g` threads (this thread is `lane`),
// into (acc, has). `head` >= 0 enables vector loads: the first `head` elements are read one by
// one, then V at a time, the tail one by one. Each thread keeps CUPRUM_REDUCE_UNROLL loads in
// flight before it combines them. `broadcast` is the launch's `ReduceArgs::broadcast` (uniform).
template <int V, int U, typename A, typename I, typename Row, typename Elem, typename Load, typename MapK, typename Red>
__device__ __forceinline__ void reduce_segment(const Row& row, I o, I r0, I r1, I lane, I g, int head, u32 broadcast,
                                               A& acc, bool& has, Elem elem, Load load, MapK mapk, Red red) {
    if (V > 1 && head >= 0 && r1 - r0 >= (I)(head + V)) {
        if (lane < (I)head) push(acc, has, elem(row, o, r0 + lane), red);
        const I v0 = r0 + (I)head;
        const I nvec = (r1 - v0) / (I)V;
        I j = lane;
        for (; j + (I)(U - 1) * g < nvec; j += (I)U * g) {
            decltype(load(row, v0)) p[U];
            // The same loads in both arms: a branch of their own around the U loads (on the
            // launch-uniform `broadcast`) makes ptxas if-convert `load_vec`'s choice between a
            // vector and a repeated element for all of them together, so that the U loads are
            // in flight at once. Without it each load sat in its own diamond, ptxas gave them
            // the same registers, and a thread had one 16-byte load in flight: bandwidth lost
            // wherever few threads were resident or each read few vectors (0.70 of the copy
            // ceiling for a full f32 sum of 64 MB on the H200, 0.80-0.88 for `var`).
            if (broadcast == 0u) {
#pragma unroll
                for (int u = 0; u < U; ++u) p[u] = load(row, v0 + (j + (I)u * g) * (I)V);
            } else {
#pragma unroll
                for (int u = 0; u < U; ++u) p[u] = load(row, v0 + (j + (I)u * g) * (I)V);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const I r = v0 + (j + (I)u * g) * (I)V;
                A b = mapk(p[u], o, r, 0);
#pragma unroll
                for (int k = 1; k < V; ++k) b = red(b, mapk(p[u], o, r + (I)k, k));
                push(acc, has, b, red);
            }
        }
        for (; j < nvec; j += g) {
            const I r = v0 + j * (I)V;
            auto p = load(row, r);
            A b = mapk(p, o, r, 0);
#pragma unroll
            for (int k = 1; k < V; ++k) b = red(b, mapk(p, o, r + (I)k, k));
            push(acc, has, b, red);
        }
        for (I t = v0 + nvec * (I)V + lane; t < r1; t += g) push(acc, has, elem(row, o, t), red);
        return;
    }
    I t = r0 + lane;
    for (; t + (I)(U - 1) * g < r1; t += (I)U * g) {
        A b[U];
#pragma unroll
        for (int u = 0; u < U; ++u) b[u] = elem(row, o, t + (I)u * g);
#pragma unroll
        for (int u = 1; u < U; ++u) b[0] = red(b[0], b[u]);
        push(acc, has, b[0], red);
    }
    for (; t < r1; t += g) push(acc, has, elem(row, o, t), red);
}

// After each block wrote its part to slot `mine` (and fenced): whether this block is the last of
// the `parts` blocks counted by `*counter` to finish. The last one resets the counter.
__device__ __forceinline__ bool last_to_finish(u32* counter, u32 parts) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 ticket = atomicAdd(counter, 1u);
        last = ticket == parts - 1;
        if (last) *counter = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

template <typename A>
__device__ __forceinline__ Partial<A>* slot(const ReduceArgs& a, u64 k) {
    return reinterpret_cast<Partial<A>*>(static_cast<char*>(a.partials) + k * a.slot_bytes);
}

template <typename I>
__device__ __forceinline__ I ceil_div(I a, I b) { return (a + b - 1) / b; }
template <typename I>
__device__ __forceinline__ I imin(I a, I b) { return a < b ? a : b; }

// A block per output (grid-stride over outputs along y); each output's row split into gridDim.x
// parts of whole vectors, combined by the last block to finish.
template <int V, typename A, typename I, typename Base, typename Elem, typename Load, typename MapK, typename Align,
          typename Red, typename Fin>
__device__ __forceinline__ void reduce_rows(const ReduceArgs& a, Base base, Elem elem, Load load, MapK mapk,
                                            Align align, Red red, Fin fin) {
    if (sizeof(Partial<A>) > a.slot_bytes && gridDim.x > 1) __trap();
    const I R = (I)a.rshape.size, O = (I)a.oshape.size, S = (I)gridDim.x;
    const I chunk = ceil_div<I>(ceil_div<I>(R, S), (I)V) * (I)V;
    for (I o = (I)blockIdx.y; o < O; o += (I)gridDim.y) {
        auto row = base(o);
        const I r0 = imin<I>(R, (I)blockIdx.x * chunk), r1 = imin<I>(R, r0 + chunk);
        A acc;
        bool has = false;
        const int head = a.contiguous ? align(row, r0) : -1;
        reduce_segment<V, CUPRUM_REDUCE_UNROLL>(row, o, r0, r1, (I)threadIdx.x, (I)blockDim.x, head, a.broadcast, acc, has, elem, load, mapk, red);
        block_reduce(acc, has, red);
        if (S == 1) {
            if (threadIdx.x == 0) fin(o, acc, has);
            continue;
        }
        if (threadIdx.x == 0) {
            Partial<A>* p = slot<A>(a, (u64)o * (u64)S + blockIdx.x);
            p->v = acc;
            p->has = has;
            __threadfence();
        }
        if (!last_to_finish(a.counters + o, (u32)S)) continue;
        has = false;
        // PU partials in flight per thread before they are combined: read one by one, each
        // thread's partials were as many L2 round trips in a row (4 of them, about 2 us, at the
        // end of a 64 MB full sum split over 800 blocks). Only for small accumulators: PU
        // partials of a large one (`var`'s 32 bytes) raise the whole kernel's registers, and
        // with them the loop's occupancy.
        enum { PU = sizeof(Partial<A>) <= 8 ? 4 : 1 };
        for (I k0 = (I)threadIdx.x; k0 < S; k0 += (I)PU * (I)blockDim.x) {
            Partial<A> q[PU];
#pragma unroll
            for (int u = 0; u < PU; ++u) {
                const I k = k0 + (I)u * (I)blockDim.x;
                q[u].has = 0;
                if (k < S) q[u] = load_partial(slot<A>(a, (u64)o * (u64)S + (u64)k));
            }
#pragma unroll
            for (int u = 0; u < PU; ++u) push_if(acc, has, q[u].v, q[u].has != 0, red);
        }
        block_reduce(acc, has, red);
        if (threadIdx.x == 0) fin(o, acc, has);
    }
}

// A warp per output (grid-stride over outputs).
template <int V, typename A, typename I, typename Base, typename Elem, typename Load, typename MapK, typename Align,
          typename Red, typename Fin>
__device__ __forceinline__ void reduce_warps(const ReduceArgs& a, Base base, Elem elem, Load load, MapK mapk,
                                             Align align, Red red, Fin fin) {
    const I R = (I)a.rshape.size, O = (I)a.oshape.size;
    const I per_block = (I)(blockDim.x >> 5);
    const I lane = (I)(threadIdx.x & 31u);
    for (I o = (I)blockIdx.x * per_block + (I)(threadIdx.x >> 5); o < O; o += (I)gridDim.x * per_block) {
        auto row = base(o);
        A acc;
        bool has = false;
        const int head = a.contiguous ? align(row, (I)0) : -1;
        reduce_segment<V, CUPRUM_REDUCE_UNROLL>(row, o, (I)0, R, lane, (I)32, head, a.broadcast, acc, has, elem, load, mapk, red);
        warp_reduce(acc, has, red);
        if (lane == 0) fin(o, acc, has);
    }
}

// A thread per output (consecutive threads on consecutive outputs); the reduced range split in
// gridDim.y parts, combined by the last block of each column tile to finish.
template <int V, typename A, typename I, typename Base, typename Elem, typename Load, typename MapK, typename Align,
          typename Red, typename Fin>
__device__ __forceinline__ void reduce_cols(const ReduceArgs& a, Base base, Elem elem, Load load, MapK mapk,
                                            Align align, Red red, Fin fin) {
    if (sizeof(Partial<A>) > a.slot_bytes && gridDim.y > 1) __trap();
    const I R = (I)a.rshape.size, O = (I)a.oshape.size, S = (I)gridDim.y;
    const I chunk = ceil_div<I>(R, S);
    const I o = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
    const bool active = o < O;
    A acc;
    bool has = false;
    if (active) {
        auto row = base(o);
        const I r0 = imin<I>(R, (I)blockIdx.y * chunk), r1 = imin<I>(R, r0 + chunk);
        reduce_segment<1, CUPRUM_REDUCE_COL_UNROLL>(row, o, r0, r1, (I)0, (I)1, -1, 0u, acc, has, elem, load, mapk, red);
    }
    if (S == 1) {
        if (active) fin(o, acc, has);
        return;
    }
    if (active) {
        Partial<A>* p = slot<A>(a, (u64)blockIdx.y * (u64)O + (u64)o);
        p->v = acc;
        p->has = has;
    }
    __threadfence();
    if (!last_to_finish(a.counters + blockIdx.x, (u32)S)) return;
    if (!active) return;
    has = false;
    for (I k = 0; k < S; ++k) {
        Partial<A> q = load_partial(slot<A>(a, (u64)k * (u64)O + (u64)o));
        push_if(acc, has, q.v, q.has != 0, red);
    }
    fin(o, acc, has);
}

}  // namespace cuprum
