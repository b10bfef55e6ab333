// cuprum/elementwise.h: the loops of every elementwise kernel (`#[elementwise]` items and
// `ElementwiseKernel`). A kernel is one `extern "C" __global__` function per launch variant; its
// body is a call of `cuprum::ew::run(loop, f, operands...)` where `f(i, element...)` computes one
// element. Everything about memory access lives here: the generated code only says which
// parameters are inputs, outputs and raw arrays.
//
// Variants (chosen per launch by the runtime's planner, `runtime/src/elementwise/plan.rs`):
// - `contig`: every array operand is C-contiguous with the same layout: a 1-D loop over chunks of
//   VEC elements, one 16-byte access per chunk of the widest operand when every pointer is aligned
//   (`Loop<contig>::vec > 1`), a scalar tail for the last `size % VEC` elements.
// - `s32`: strided or broadcast operands over the collapsed loop shape, with 32-bit index
//   arithmetic (division by a precomputed multiplier, no 64-bit division).
// - `s64`: the same with 64-bit indices, for loops or offsets past 2^31.
// - `t32`: a 2-D loop with 32-bit offsets in which some operand is contiguous along the outer axis
//   (a transposed input or output): visited by 32 x 32 tiles (`TiledBody`), its own entry point
//   so that its registers, not the strided loops', set its occupancy. Parameters as `s32`'s.
// In `s32`/`s64`, when every operand's innermost axis is contiguous or broadcast (`vec > 1`), one
// item is VEC consecutive elements of that axis, loaded as one vector (or one broadcast value).
//
// Each thread handles CUPRUM_EW_UNROLL items per block-sized step (fewer for kernels with more
// than 4 operands: `unroll_for`), loading all of them before computing any (loads in flight are
// what a memory-bound loop needs); a block covers a contiguous tile of `blockDim.x * U` items,
// then strides by the grid.
//
// The structs below are kernel parameters: their layout is mirrored by the runtime
// (`runtime/src/elementwise/params.rs`); change both together.
#pragma once
#include <cuprum/types.h>

// Items (chunks or strided elements) per thread per step.
#define CUPRUM_EW_UNROLL 4

namespace cuprum {
namespace ew {

// ---- variant tags (named as the variant strings of `mangle::ELEMENTWISE_VARIANTS`) -------------

struct contig {};
struct s32 {};
struct s64 {};
struct t32 {};

// Index arithmetic of a strided variant: unsigned for the loop index, signed for offsets.
template <typename V> struct IndexOf;
template <> struct IndexOf<s32> { typedef u32 uint; typedef i32 sint; };
template <> struct IndexOf<s64> { typedef u64 uint; typedef i64 sint; };
template <> struct IndexOf<t32> { typedef u32 uint; typedef i32 sint; };

// n / d for a 32-bit n as a multiply-high, an add and a shift (Granlund-Montgomery; `m` and `s`
// are computed on the host: s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1).
struct Div32 {
    u32 d;
    u32 m;
    u32 s;
    __device__ __forceinline__ u32 div(u32 n) const { return (u32)(((u64)__umulhi(n, m) + n) >> s); }
};

// ---- the loop shape ----------------------------------------------------------------------------

template <typename V> struct Loop;
// `size`: elements (the kernel's `loop_size()`); `vec`: elements per vector access (1: scalar).
template <> struct Loop<contig> {
    u64 size;
    u32 vec;
};
// `items` = size / vec; `dims`: the collapsed shape in items (innermost extent divided by vec);
// bit p of `bcast`: operand p (in parameter order) has innermost stride 0 (vector loops only).
template <> struct Loop<s32> {
    u64 size;
    u32 items;
    i32 ndim;
    u32 vec;
    u32 bcast;
    Div32 dims[CUPRUM_MAX_NDIM];
    __device__ __forceinline__ u32 div(int k, u32 n) const { return dims[k].div(n); }
    __device__ __forceinline__ u32 dim(int k) const { return dims[k].d; }
};
template <> struct Loop<s64> {
    u64 size;
    u64 items;
    i32 ndim;
    u32 vec;
    u32 bcast;
    u64 dims[CUPRUM_MAX_NDIM];
    __device__ __forceinline__ u64 div(int k, u64 n) const { return n / dims[k]; }
    __device__ __forceinline__ u64 dim(int k) const { return dims[k]; }
};
// `t32`: `s32`'s loop; bit p of `bcast` marks operand p as contiguous along the outer axis.
template <> struct Loop<t32> : Loop<s32> {};

// ---- operands (kernel parameters) --------------------------------------------------------------
// An input is an array (`p` set) or a scalar passed by value (`p` null, value `s`). Strides are in
// elements over the collapsed loop shape; in a vector loop the innermost stride is scaled by vec
// (0 for a broadcast axis).

template <typename T, typename V> struct In;
template <typename T> struct In<T, contig> { const T* p; T s; };
template <typename T> struct In<T, s32> { const T* p; i32 st[CUPRUM_MAX_NDIM]; T s; };
template <typename T> struct In<T, s64> { const T* p; i64 st[CUPRUM_MAX_NDIM]; T s; };
template <typename T> struct In<T, t32> : In<T, s32> {};

// An output: written only.
template <typename T, typename V> struct Out;
template <typename T> struct Out<T, contig> { T* p; };
template <typename T> struct Out<T, s32> { T* p; i32 st[CUPRUM_MAX_NDIM]; };
template <typename T> struct Out<T, s64> { T* p; i64 st[CUPRUM_MAX_NDIM]; };
template <typename T> struct Out<T, t32> : Out<T, s32> {};

// An output parameter (`&mut T`): read, then written.
template <typename T, typename V> struct InOut;
template <typename T> struct InOut<T, contig> { T* p; };
template <typename T> struct InOut<T, s32> { T* p; i32 st[CUPRUM_MAX_NDIM]; };
template <typename T> struct InOut<T, s64> { T* p; i64 st[CUPRUM_MAX_NDIM]; };
template <typename T> struct InOut<T, t32> : InOut<T, s32> {};

// A raw argument as `ElementwiseKernel` code sees it (CuPy's CArray): the layout of `Raw<T>`, with
// `size()`, `ndim()`, `shape()`, `strides()` (in elements), a flat C-order `operator[]` and CuPy's
// multi-index `operator[]`.
template <typename T>
struct CArray {
    Raw<T> r;
    __device__ __forceinline__ i64 size() const { return (i64)r.size; }
    __device__ __forceinline__ int ndim() const { return r.ndim; }
    __device__ __forceinline__ const i64* shape() const { return r.shape; }
    __device__ __forceinline__ const i64* strides() const { return r.strides; }
    __device__ __forceinline__ T* data() const { return r.ptr; }
    // `x[i]`: the i-th element in C order, whatever the strides.
    template <typename I>
    __device__ __forceinline__ T& operator[](I flat) const { return r[flat]; }
    // `x[idx]`: the element at the multi-index `idx`, an array of ndim() integers
    // (`ptrdiff_t idx[2] = {row, col}; x[idx]`, or `x[{row, col}]`), through the strides. Partial
    // ordering prefers this overload to the flat one for an array argument (the flat template
    // would take the decayed pointer). An index array whose length is not ndim() is a bug that no
    // result could hide: the kernel traps (a fault, reported at the next synchronisation).
    template <typename I, int N>
    __device__ __forceinline__ T& operator[](const I (&idx)[N]) const {
        if (N != r.ndim) __trap();
        i64 off = 0;
#pragma unroll
        for (int k = 0; k < N; ++k) off += (i64)idx[k] * r.strides[k];
        return r.ptr[off];
    }
};

// `_ind` of `ElementwiseKernel` code: `_ind.size()` is the loop size (CuPy's).
struct Ind {
    u64 n;
    __device__ __forceinline__ i64 size() const { return (i64)n; }
};

// ---- vector access -----------------------------------------------------------------------------

// N elements of T as one aligned access (N * sizeof(T) is 1, 2, 4, 8 or 16 bytes).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

// ---- per-thread registers of each operand ------------------------------------------------------
// `Buf<Op, U, VEC>` holds U * VEC elements of an operand (and, in strided loops, the offset of each
// of its U items); `b[k]` is what the element function receives for element k.

template <typename V> struct Offsets {
    template <int U> struct Of { typename IndexOf<V>::uint off[U]; };
};
template <> struct Offsets<contig> {
    template <int U> struct Of {};
};

// Common to In, Out, InOut: the element buffer and the offsets.
template <typename T, typename V, int U, int VEC>
struct ArrayBuf : Offsets<V>::template Of<U> {
    T v[U * VEC];
    bool inner_bcast;  // strided vector loops: the innermost stride is 0
    bool swap;         // tiled loops: contiguous along the outer axis (TiledBody)
    __device__ __forceinline__ T& operator[](int k) { return v[k]; }
    // Tiled loops with 32 x 32 tiles (blockDim.x == 1024 / U): item u of the thread with lane
    // `lane` and warp `wrow` sits at (lane, wrow + u * 32 / U) of the tile (TO_ROWS, after a
    // swapped load) or at (wrow + u * 32 / U, lane) (before a swapped store); exchange the items
    // through shared memory `sm` (32 x 33 elements: rows padded by one, so that neither direction
    // has a bank conflict for 4-byte elements) for those of the other orientation. Every thread
    // of the block calls it.
    template <bool TO_ROWS>
    __device__ __forceinline__ void mirror(unsigned char* sm, u32 lane, u32 wrow) {
        if (!swap) return;
        T* t = reinterpret_cast<T*>(sm);
        const u32 across = lane * 33 + wrow, along = wrow * 33 + lane;
#pragma unroll
        for (int u = 0; u < U; ++u) t[TO_ROWS ? across + u * (32 / U) : along + u * (32 / U) * 33] = v[u];
        __syncthreads();
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = t[TO_ROWS ? along + u * (32 / U) * 33 : across + u * (32 / U)];
        __syncthreads();
    }
    __device__ __forceinline__ void splat(int u, T x) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[u * VEC + j] = x;
    }
    template <int W>
    __device__ __forceinline__ void load_from(int u, const T* p) {
        if constexpr (W == 1) {  // no `Vec<T, 1>`: a 12-byte T has no such type
            v[u * VEC] = *p;
        } else {
            const Vec<T, W> w = *reinterpret_cast<const Vec<T, W>*>(p);
#pragma unroll
            for (int j = 0; j < W; ++j) v[u * VEC + j] = w.v[j];
        }
    }
    template <int W>
    __device__ __forceinline__ void store_to(int u, T* p) const {
        if constexpr (W == 1) {  // no `Vec<T, 1>`: a 12-byte T has no such type
            *p = v[u * VEC];
        } else {
            Vec<T, W> w;
#pragma unroll
            for (int j = 0; j < W; ++j) w.v[j] = v[u * VEC + j];
            *reinterpret_cast<Vec<T, W>*>(p) = w;
        }
    }
};

template <typename Op, int U, int VEC> struct Buf;

// Offsets in strided loops: `reset`, then `add` per axis, then the element pointer.
#define CUPRUM_EW_STRIDED_OFFSETS(V)                                                              \
    __device__ __forceinline__ void reset(int u) { this->off[u] = 0; }                            \
    template <typename I>                                                                         \
    __device__ __forceinline__ void add(int u, I idx, int k) {                                    \
        this->off[u] += idx * (typename IndexOf<V>::uint)op.st[k];                                \
    }                                                                                             \
    __device__ __forceinline__ void init(bool bcast) { this->inner_bcast = bcast; }               \
    __device__ __forceinline__ void set_swap(bool s) { this->swap = s; }                          \
    __device__ __forceinline__ bool swapped() const { return this->swap; }                        \
    /* Tiled loops: item u at (r + u dr, c + u dc) of the 2-D loop. */                            \
    __device__ __forceinline__ void tile_at(u32 r, u32 c, u32 dr, u32 dc) {                       \
        typedef typename IndexOf<V>::uint I;                                                      \
        const I base = (I)r * (I)op.st[0] + (I)c * (I)op.st[1];                                   \
        const I step = (I)dr * (I)op.st[0] + (I)dc * (I)op.st[1];                                 \
        _Pragma("unroll") for (int u = 0; u < (int)(sizeof(this->off) / sizeof(this->off[0])); ++u) \
            this->off[u] = base + (I)u * step;                                                    \
    }                                                                                             \
    __device__ __forceinline__ i64 offset(int u) const {                                          \
        return (i64)(typename IndexOf<V>::sint)this->off[u];                                      \
    }

// -- inputs

template <typename T, int U, int VEC>
struct Buf<In<T, contig>, U, VEC> : ArrayBuf<T, contig, U, VEC> {
    const In<T, contig>& op;
    __device__ __forceinline__ explicit Buf(const In<T, contig>& o) : op(o) {}
    __device__ __forceinline__ void init(bool) {}
    template <int W>
    __device__ __forceinline__ void load(int u, u64 e) {
        if (op.p == nullptr) this->splat(u, op.s);
        else this->template load_from<W>(u, op.p + e);
    }
    template <int W>
    __device__ __forceinline__ void store(int, u64) {}
};

template <typename T, typename V, int U, int VEC>
struct Buf<In<T, V>, U, VEC> : ArrayBuf<T, V, U, VEC> {
    const In<T, V>& op;
    __device__ __forceinline__ explicit Buf(const In<T, V>& o) : op(o) {}
    CUPRUM_EW_STRIDED_OFFSETS(V)
    template <int W>
    __device__ __forceinline__ void load(int u) {
        if (op.p == nullptr) this->splat(u, op.s);
        else if (W > 1 && this->inner_bcast) this->splat(u, op.p[offset(u)]);
        else this->template load_from<W>(u, op.p + offset(u));
    }

    template <int W>
    __device__ __forceinline__ void store(int) {}
    __device__ __forceinline__ void mirror_in(unsigned char* sm, u32 l, u32 w) { this->template mirror<true>(sm, l, w); }
    __device__ __forceinline__ void mirror_out(unsigned char*, u32, u32) {}
};

// An input that the launch passed as an array (not a scalar): `run_unswitched`'s view of an
// `In<T, contig>`, whose loads need no check of the pointer. A load behind that check is
// conditional, and nvcc then issues a compute-heavy map's loads less far ahead: `power` of f32
// ran at 0.88-0.90 of copy on an H200 with the check in the loop, 0.93-0.94 without.
template <typename T> struct InArray { const T* p; };
template <typename T, int U, int VEC>
struct Buf<InArray<T>, U, VEC> : ArrayBuf<T, contig, U, VEC> {
    const InArray<T>& op;
    __device__ __forceinline__ explicit Buf(const InArray<T>& o) : op(o) {}
    __device__ __forceinline__ void init(bool) {}
    template <int W>
    __device__ __forceinline__ void load(int u, u64 e) { this->template load_from<W>(u, op.p + e); }
    template <int W>
    __device__ __forceinline__ void store(int, u64) {}
};
// -- outputs

template <typename T, int U, int VEC>
struct Buf<Out<T, contig>, U, VEC> : ArrayBuf<T, contig, U, VEC> {
    const Out<T, contig>& op;
    __device__ __forceinline__ explicit Buf(const Out<T, contig>& o) : op(o) {}
    __device__ __forceinline__ void init(bool) {}
    template <int W>
    __device__ __forceinline__ void load(int, u64) {}
    template <int W>
    __device__ __forceinline__ void store(int u, u64 e) { this->template store_to<W>(u, op.p + e); }
};

template <typename T, typename V, int U, int VEC>
struct Buf<Out<T, V>, U, VEC> : ArrayBuf<T, V, U, VEC> {
    const Out<T, V>& op;
    __device__ __forceinline__ explicit Buf(const Out<T, V>& o) : op(o) {}
    CUPRUM_EW_STRIDED_OFFSETS(V)
    template <int W>
    __device__ __forceinline__ void load(int) {}
    template <int W>
    __device__ __forceinline__ void store(int u) { this->template store_to<W>(u, op.p + offset(u)); }
    __device__ __forceinline__ void mirror_in(unsigned char*, u32, u32) {}
    __device__ __forceinline__ void mirror_out(unsigned char* sm, u32 l, u32 w) { this->template mirror<false>(sm, l, w); }
};

// -- output parameters (read and written)

template <typename T, int U, int VEC>
struct Buf<InOut<T, contig>, U, VEC> : ArrayBuf<T, contig, U, VEC> {
    const InOut<T, contig>& op;
    __device__ __forceinline__ explicit Buf(const InOut<T, contig>& o) : op(o) {}
    __device__ __forceinline__ void init(bool) {}
    template <int W>
    __device__ __forceinline__ void load(int u, u64 e) { this->template load_from<W>(u, op.p + e); }
    template <int W>
    __device__ __forceinline__ void store(int u, u64 e) { this->template store_to<W>(u, op.p + e); }
};

template <typename T, typename V, int U, int VEC>
struct Buf<InOut<T, V>, U, VEC> : ArrayBuf<T, V, U, VEC> {
    const InOut<T, V>& op;
    __device__ __forceinline__ explicit Buf(const InOut<T, V>& o) : op(o) {}
    CUPRUM_EW_STRIDED_OFFSETS(V)
    template <int W>
    __device__ __forceinline__ void load(int u) { this->template load_from<W>(u, op.p + offset(u)); }
    template <int W>
    __device__ __forceinline__ void store(int u) { this->template store_to<W>(u, op.p + offset(u)); }
    __device__ __forceinline__ void mirror_in(unsigned char* sm, u32 l, u32 w) { this->template mirror<true>(sm, l, w); }
    __device__ __forceinline__ void mirror_out(unsigned char* sm, u32 l, u32 w) { this->template mirror<false>(sm, l, w); }
};

#undef CUPRUM_EW_STRIDED_OFFSETS

// -- raw arguments: passed through, indexed by the kernel's own code

template <typename R>
struct RawBuf {
    const R& op;
    __device__ __forceinline__ explicit RawBuf(const R& o) : op(o) {}
    __device__ __forceinline__ const R& operator[](int) const { return op; }
    __device__ __forceinline__ void init(bool) {}
    __device__ __forceinline__ void set_swap(bool) {}
    __device__ __forceinline__ bool swapped() const { return false; }
    __device__ __forceinline__ void mirror_in(unsigned char*, u32, u32) {}
    __device__ __forceinline__ void mirror_out(unsigned char*, u32, u32) {}
    __device__ __forceinline__ void tile_at(u32, u32, u32, u32) {}
    __device__ __forceinline__ void reset(int) {}
    template <typename I>
    __device__ __forceinline__ void add(int, I, int) {}
    template <int W>
    __device__ __forceinline__ void load(int, u64 = 0) {}
    template <int W>
    __device__ __forceinline__ void store(int, u64 = 0) {}
};
template <typename T, int U, int VEC>
struct Buf<Raw<T>, U, VEC> : RawBuf<Raw<T> > {
    __device__ __forceinline__ explicit Buf(const Raw<T>& o) : RawBuf<Raw<T> >(o) {}
};
template <typename T, int U, int VEC>
struct Buf<CArray<T>, U, VEC> : RawBuf<CArray<T> > {
    __device__ __forceinline__ explicit Buf(const CArray<T>& o) : RawBuf<CArray<T> >(o) {}
};

// ---- compile-time facts about operand lists ----------------------------------------------------

// Element bytes of an array operand (0 for raw arguments).
template <typename Op> struct ElemBytes { static const int value = 0; };
template <typename T, typename V> struct ElemBytes<In<T, V> > { static const int value = sizeof(T); };
template <typename T, typename V> struct ElemBytes<Out<T, V> > { static const int value = sizeof(T); };
template <typename T, typename V> struct ElemBytes<InOut<T, V> > { static const int value = sizeof(T); };

__host__ __device__ constexpr int cmax(int a) { return a; }
template <typename... R>
__host__ __device__ constexpr int cmax(int a, int b, R... r) { return cmax(a > b ? a : b, r...); }

__host__ __device__ constexpr bool all_pow2() { return true; }
template <typename... R>
__host__ __device__ constexpr bool all_pow2(int a, R... r) { return (a & (a - 1)) == 0 && all_pow2(r...); }

// Elements per vector: 16 bytes of the widest operand; 1 when there is none, when it is 16 bytes
// or wider (a struct element), or when an element size is not a power of two (a 12-byte struct
// has no aligned vector type). The runtime computes the same number (`plan::vec_width`).
template <typename... Ops>
__host__ __device__ constexpr int vec_width() {
    return (cmax(0, ElemBytes<Ops>::value...) == 0 || cmax(0, ElemBytes<Ops>::value...) >= 16 || !all_pow2(ElemBytes<Ops>::value...))
        ? 1
        : 16 / cmax(1, ElemBytes<Ops>::value...);
}

// Calls `k(buf...)` with one `Buf` per operand, living in this frame (registers once inlined).
// Function objects, not generic lambdas: NVRTC treats a generic lambda's call operator as host code.
template <typename K, typename B>
struct Bind {
    K& k;
    B& b;
    template <typename... Bs>
    __device__ __forceinline__ void operator()(Bs&... bs) { k(b, bs...); }
};
template <int U, int VEC, typename K>
__device__ __forceinline__ void with_bufs(K& k) { k(); }
template <int U, int VEC, typename K, typename Op, typename... Rest>
__device__ __forceinline__ void with_bufs(K& k, const Op& op, const Rest&... rest) {
    Buf<Op, U, VEC> b(op);
    Bind<K, Buf<Op, U, VEC> > next{k, b};
    with_bufs<U, VEC>(next, rest...);
}

// ---- the loops ---------------------------------------------------------------------------------

// Contiguous: chunk c is elements [c * W, c * W + W), U chunks per thread per step.
template <int W, int U, typename F>
struct ContigBody {
    const Loop<contig>& L;
    F& f;
    template <typename... B>
    __device__ __forceinline__ void operator()(B&... b) {
        const u64 chunks = L.size / W;
        const u64 tile = (u64)blockDim.x * U;
        for (u64 base = (u64)blockIdx.x * tile; base < chunks; base += (u64)gridDim.x * tile) {
            const u64 first = base + threadIdx.x;
            const bool full = base + tile <= chunks;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 c = first + (u64)u * blockDim.x;
                if (full || c < chunks) (b.template load<W>(u, c * W), ...);
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 c = first + (u64)u * blockDim.x;
                if (full || c < chunks) {
#pragma unroll
                    for (int j = 0; j < W; ++j) f(c * W + j, b[u * W + j]...);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 c = first + (u64)u * blockDim.x;
                if (full || c < chunks) (b.template store<W>(u, c * W), ...);
            }
        }
        // The scalar tail: the last size % W elements, one per thread of block 0.
        if (W > 1 && blockIdx.x == 0 && threadIdx.x < L.size - chunks * W) {
            const u64 e = chunks * W + threadIdx.x;
            (b.template load<1>(0, e), ...);
            f(e, b[0]...);
            (b.template store<1>(0, e), ...);
        }
    }
};
template <int W, int U, typename F, typename... Ops>
__device__ __forceinline__ void contig_loop(const Loop<contig>& L, F& f, const Ops&... ops) {
    ContigBody<W, U, F> body{L, f};
    with_bufs<U, W>(body, ops...);
}

// Strided: item g of the collapsed item shape; its multi-index times each operand's strides.
template <int W, int U, typename V, typename F>
struct StridedBody {
    const Loop<V>& L;
    F& f;
    template <typename... B>
    __device__ __forceinline__ void operator()(B&... b) {
        typedef typename IndexOf<V>::uint I;
        // Operand p's innermost stride is 0 when bit p of `bcast` is set.
        int p = 0;
        (b.init(((L.bcast >> p++) & 1u) != 0), ...);
        const u64 items = L.items;
        const u64 tile = (u64)blockDim.x * U;
        for (u64 base = (u64)blockIdx.x * tile; base < items; base += (u64)gridDim.x * tile) {
            const u64 first = base + threadIdx.x;
            const bool full = base + tile <= items;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 g = first + (u64)u * blockDim.x;
                if (full || g < items) {
                    I rem = (I)g;
                    (b.reset(u), ...);
#pragma unroll
                    for (int k = CUPRUM_MAX_NDIM - 1; k > 0; --k) {
                        if (k < L.ndim) {
                            const I q = L.div(k, rem);
                            const I r = rem - q * L.dim(k);
                            (b.add(u, r, k), ...);
                            rem = q;
                        }
                    }
                    (b.add(u, rem, 0), ...);
                    (b.template load<W>(u), ...);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 g = first + (u64)u * blockDim.x;
                if (full || g < items) {
#pragma unroll
                    for (int j = 0; j < W; ++j) f(g * W + j, b[u * W + j]...);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 g = first + (u64)u * blockDim.x;
                if (full || g < items) (b.template store<W>(u), ...);
            }
        }
    }
};
template <int W, int U, typename V, typename F, typename... Ops>
__device__ __forceinline__ void strided_loop(const Loop<V>& L, F& f, const Ops&... ops) {
    StridedBody<W, U, V, F> body{L, f};
    with_bufs<U, W>(body, ops...);
}

// Tiled 2-D (`t32`): items are visited by tiles of (blockDim.x * U / 32) rows x 32 columns, one
// tile per block step: item u of thread w = threadIdx.x + u * blockDim.x is (w / 32, w % 32) of the
// tile, so a warp covers a row, whole sectors of every row-contiguous operand. With 32 x 32 tiles
// (blockDim.x * U == 1024), each operand flagged by bit p of `bcast` (contiguous along the outer
// axis) is read and written with lanes along its contiguous axis, at (w % 32, w / 32), and its
// items are exchanged through shared memory (`mirror`) for the others': whole sectors for it too,
// one wavefront per warp access instead of 32. Other block sizes visit it at (w / 32, w % 32) like
// the rest (whole sectors per block step, from L1).
// One operand's offsets for a tile whose first item is at (r, c) (`k`: the thread's row within
// the tile, `lane` its column), and its loads; swapped operands at the mirrored positions.
template <typename B>
__device__ __forceinline__ void tile_load(B& b, u32 r0, u32 c0, u32 k, u32 lane, u32 step, u32 okm, u32 oksm) {
    const bool sw = b.swapped();
    b.tile_at(r0 + (sw ? lane : k), c0 + (sw ? k : lane), sw ? 0 : step, sw ? step : 0);
    const u32 m = sw ? oksm : okm;
#pragma unroll
    for (int u = 0; u < CUPRUM_EW_UNROLL; ++u) {
        if ((m >> u) & 1u) b.template load<1>(u);
    }
}
template <typename B>
__device__ __forceinline__ void tile_store(B& b, u32 okm, u32 oksm) {
    const u32 m = b.swapped() ? oksm : okm;
#pragma unroll
    for (int u = 0; u < CUPRUM_EW_UNROLL; ++u) {
        if ((m >> u) & 1u) b.template store<1>(u);
    }
}
template <typename F, int ELEM_BYTES>
struct TiledBody {
    const Loop<t32>& L;
    F& f;
    template <typename... B>
    __device__ __forceinline__ void operator()(B&... b) {
        const int U = CUPRUM_EW_UNROLL;
        // The exchange holds a tile of the widest element: up to 16 bytes (17 KiB); wider struct
        // elements (up to 48 KiB of static shared memory per block) read across, from L1.
        constexpr bool EXCHANGE = ELEM_BYTES <= 16;
        __shared__ alignas(16) unsigned char sm[32 * 33 * (EXCHANGE ? ELEM_BYTES : 1)];
        const bool square = EXCHANGE && blockDim.x * U == 1024;
        int p = 0;
        (b.init(false), ...);
        (b.set_swap(square && ((L.bcast >> p++) & 1u) != 0), ...);
        const u32 d0 = L.dim(0), d1 = L.dim(1);
        const u32 lane = threadIdx.x % 32, wrow = threadIdx.x / 32, rstep = blockDim.x / 32;
        const u32 rows = rstep * U;
        const u32 tiles_c = (d1 + 31) / 32, tiles = ((d0 + rows - 1) / rows) * tiles_c;
        for (u32 t = blockIdx.x; t < tiles; t += gridDim.x) {
            const u32 tr = t / tiles_c;
            const u32 r0 = tr * rows, c0 = (t - tr * tiles_c) * 32;
            // Item u: (r0 + wrow + u rstep, c0 + lane); mirrored (square tiles only):
            // (r0 + lane, c0 + wrow + u rstep). Bit u of `okm` / `oksm`: inside the loop.
            u32 okm = 0, oksm = 0;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u32 k = wrow + (u32)u * rstep;
                okm |= (u32)(c0 + lane < d1 && r0 + k < d0) << u;
                oksm |= (u32)(r0 + lane < d0 && c0 + k < d1) << u;
            }
            (tile_load(b, r0, c0, wrow, lane, rstep, okm, oksm), ...);
            if (square) (b.mirror_in(sm, lane, wrow), ...);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u32 r = r0 + wrow + (u32)u * rstep;
                if ((okm >> u) & 1u) f((u64)r * d1 + c0 + lane, b[u]...);
            }
            if (square) (b.mirror_out(sm, lane, wrow), ...);
            (tile_store(b, okm, oksm), ...);
        }
    }
};
template <typename F, typename... Ops>
__device__ __forceinline__ void tiled_loop(const Loop<t32>& L, F& f, const Ops&... ops) {
    TiledBody<F, cmax(1, ElemBytes<Ops>::value...)> body{L, f};
    with_bufs<CUPRUM_EW_UNROLL, 1>(body, ops...);
}

// The entry point of every elementwise kernel: `f(i, element...)` for every element i of the loop,
// one `element` per operand (a value of an input, a reference to an output, a raw argument).
// Items per thread per step: CUPRUM_EW_UNROLL, fewer for kernels with many operands, whose items
// would hold so many registers that few warps fit on an SM (a Black-Scholes kernel, 5 inputs and
// 2 outputs of f64: 158 registers, one block of 256 per SM at 4 items; one item leaves room for
// several). Such kernels keep loads in flight through their operands' number instead.
template <typename... Ops>
__host__ __device__ constexpr int unroll_for() {
    return sizeof...(Ops) <= 4 ? CUPRUM_EW_UNROLL : sizeof...(Ops) <= 6 ? 2 : 1;
}

template <typename F, typename... Ops>
__device__ __forceinline__ void run(const Loop<contig>& L, F f, const Ops&... ops) {
    const int VEC = vec_width<Ops...>();
    const int U = unroll_for<Ops...>();
    if (VEC > 1 && L.vec > 1) contig_loop<VEC, U>(L, f, ops...);
    else contig_loop<1, U>(L, f, ops...);
}

// `run` with the contiguous vector loop specialised for launches whose inputs are all arrays
// (`InArray`, no scalar passed by value): the loop without a check per load, beside the general
// one. Kernels compiled with a residency cap (`#[elementwise(max_threads = .., min_blocks = ..)]`,
// the compute-heavy maps) call it; the others keep one loop (the second costs code size).
template <typename Op> __device__ __forceinline__ bool is_array(const Op&) { return true; }
template <typename T> __device__ __forceinline__ bool is_array(const In<T, contig>& o) { return o.p != nullptr; }
template <typename Op> __device__ __forceinline__ const Op& array_view(const Op& o) { return o; }
template <typename T> __device__ __forceinline__ InArray<T> array_view(const In<T, contig>& o) { return InArray<T>{o.p}; }

template <typename F, typename... Ops>
__device__ __forceinline__ void run_unswitched(const Loop<contig>& L, F f, const Ops&... ops) {
    const int VEC = vec_width<Ops...>();
    const int U = unroll_for<Ops...>();
    if (VEC > 1 && L.vec > 1 && (is_array(ops) && ...)) contig_loop<VEC, U>(L, f, array_view(ops)...);
    else run(L, f, ops...);
}

template <typename V, typename F, typename... Ops>
__device__ __forceinline__ void run(const Loop<V>& L, F f, const Ops&... ops) {
    const int VEC = vec_width<Ops...>();
    const int U = unroll_for<Ops...>();
    if (VEC > 1 && L.vec > 1) strided_loop<VEC, U>(L, f, ops...);
    else strided_loop<1, U>(L, f, ops...);
}

// `t32`: by tiles when the block is whole warps (the planner's launches), else element by element.
template <typename F, typename... Ops>
__device__ __forceinline__ void run(const Loop<t32>& L, F f, const Ops&... ops) {
    if (L.ndim == 2 && blockDim.x % 32 == 0) tiled_loop(L, f, ops...);
    else strided_loop<1, unroll_for<Ops...>()>(L, f, ops...);
}

template <typename V, typename F, typename... Ops>
__device__ __forceinline__ void run_unswitched(const Loop<V>& L, F f, const Ops&... ops) {
    run(L, f, ops...);
}

}  // namespace ew
}  // namespace cuprum
