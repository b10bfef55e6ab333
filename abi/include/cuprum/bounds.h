// cuprum/bounds.h: Rust's indexing semantics in kernels (docs/semantics.md, row 18). An index out
// of range does not touch memory: a checked read gives `T{}`, a checked write (or atomic) is
// skipped, and the first violation in the context is recorded for the host, which returns it as
// `Error::IndexOutOfBounds` at its next synchronising call (runtime/src/bounds.rs).
//
// The record lives in mapped pinned host memory, one per CUDA context; every module that includes
// this header and checks an index has its own `cuprum_oob_slot_v<>`, which the runtime points at
// the record right after it loads the module (a module whose slot is null records nothing, and
// still skips the access).
// The fast path of a check is one compare and one branch; the report is a cold, never-inlined call.
#pragma once
#include <cuprum/types.h>

// The layout of `cuprum_abi::bounds::OobRecord` (112 bytes): keep the two in step.
struct cuprum_oob_record {
    unsigned int flag;        // 0: empty, 1: being written, 2: complete (the host reads only 2)
    unsigned int info;        // bit 0: the index had a signed type (`index` holds its bits)
    unsigned long long index;
    unsigned long long len;   // the length (or, for a multi-index, the extent of that axis)
    unsigned int block[3];
    unsigned int thread[3];
    char kernel[64];          // the Rust function holding the access, NUL-terminated
};

// This module's pointer to its context's record (set by the runtime; found by its mangled name,
// `_Z17cuprum_oob_slot_vIvE`). A variable template, so that only a module whose code reports a
// violation has one: a part of a fat binary whose kernel checks no index (an elementwise map
// without indexing) then needs no record, and its first call no pinned allocation.
template <typename = void>
__device__ cuprum_oob_record* cuprum_oob_slot_v = nullptr;

namespace cuprum {

// Records the first violation of the context (later ones find the flag taken and return).
// A template (instantiated only where a check is), like the slot it reads.
template <typename = void>
static __device__ __noinline__ void oob_report(const char* fn, u64 index, u64 len, u32 info) {
    cuprum_oob_record* r = cuprum_oob_slot_v<>;
    if (r == nullptr || atomicCAS(&r->flag, 0u, 1u) != 0u) return;
    r->info = info;
    r->index = index;
    r->len = len;
    r->block[0] = blockIdx.x;
    r->block[1] = blockIdx.y;
    r->block[2] = blockIdx.z;
    r->thread[0] = threadIdx.x;
    r->thread[1] = threadIdx.y;
    r->thread[2] = threadIdx.z;
    int k = 0;
    for (; k < 63 && fn[k] != 0; ++k) r->kernel[k] = fn[k];
    r->kernel[k] = 0;
    __threadfence_system();
    *(volatile unsigned int*)&r->flag = 2u;
}

// `info` bit 1: the index was not a multiple of the alignment an access needs (`len` holds that
// alignment, in elements): `cuprum_abi::bounds::INFO_MISALIGNED`.
constexpr u32 oob_misaligned = 2u;

template <typename I> struct index_info { static constexpr u32 signed_bit = (I)-1 < (I)0 ? 1u : 0u; };

// Whether `i` is in `0..len`; reports `fn`'s violation when not. A negative signed index is out of
// range (its unsigned bits are larger than any length).
template <typename I>
__device__ __forceinline__ bool in_bounds(I i, u64 len, const char* fn) {
    if (__builtin_expect((u64)i < len, 1)) return true;
    oob_report(fn, (u64)i, len, index_info<I>::signed_bit);
    return false;
}

template <typename T> struct unconst { typedef T type; };
template <typename T> struct unconst<const T> { typedef T type; };

// Where a skipped write through a reference lands (`&mut a[i]` passed to a device function with
// `i` out of range): a per-type scratch variable of the module, never user memory.
template <typename T> __device__ typename unconst<T>::type oob_sink_v;
template <typename T>
__device__ __forceinline__ T& oob_sink() { return oob_sink_v<T>; }

// ---- `cuprum::get(a, "fn", i...)`: a checked read, `T{}` when out of range --------------------

template <typename T, typename I>
__device__ __forceinline__ typename unconst<T>::type get(const Slice<T>& a, const char* fn, I i) {
    if (in_bounds(i, a.len, fn)) return a.ptr[i];
    return {};
}
template <typename T, typename I>
__device__ __forceinline__ T get(const RoSlice<T>& a, const char* fn, I i) {
    if (in_bounds(i, a.len, fn)) return a[i];
    return {};
}
template <typename T, int N, typename I>
__device__ __forceinline__ T get(const Array<T, N>& a, const char* fn, I i) {
    if (in_bounds(i, (u64)N, fn)) return a.v[i];
    return {};
}
// A shared array (`__shared__ T s[N]`, or the pointer a device function receives): `get<N>(s, ..)`.
template <u64 N, typename T, typename I>
__device__ __forceinline__ typename unconst<T>::type get(T* a, const char* fn, I i) {
    if (in_bounds(i, N, fn)) return a[i];
    return {};
}
template <typename T, typename I>
__device__ __forceinline__ typename unconst<T>::type get(const Raw<T>& a, const char* fn, I i) {
    if (in_bounds(i, a.size, fn)) return a[i];
    return {};
}
// A view: one index is flat (C order), N indices are a multi-index checked axis by axis.
template <typename T, int N, typename I>
__device__ __forceinline__ typename unconst<T>::type get(const View<T, N>& a, const char* fn, I i) {
    if (in_bounds(i, a.size(), fn)) return a[i];
    return {};
}
template <typename T, int N, typename... I>
__device__ __forceinline__ bool has_nd(const View<T, N>& a, const char* fn, I... idx) {
    static_assert(sizeof...(I) == N, "a multi-index has one index per axis");
    bool ok = true;
    int k = 0;
    // Axis by axis, stopping at the first one out of range (so only it is reported).
    ((ok = ok && in_bounds(idx, (u64)a.shape[k++], fn)), ...);
    return ok;
}
template <typename T, int N, typename I0, typename I1, typename... I>
__device__ __forceinline__ typename unconst<T>::type get(const View<T, N>& a, const char* fn, I0 i0, I1 i1, I... rest) {
    if (has_nd(a, fn, i0, i1, rest...)) return a(i0, i1, rest...);
    return {};
}

// ---- `cuprum::has(a, "fn", i...)`: guards a write (`if (cuprum::has(a, "f", i)) a[i] = v;`) -----

template <typename T, typename I>
__device__ __forceinline__ bool has(const Slice<T>& a, const char* fn, I i) { return in_bounds(i, a.len, fn); }
template <typename T, typename I>
__device__ __forceinline__ bool has(const RoSlice<T>& a, const char* fn, I i) { return in_bounds(i, a.len, fn); }
template <typename T, int N, typename I>
__device__ __forceinline__ bool has(const Array<T, N>&, const char* fn, I i) { return in_bounds(i, (u64)N, fn); }
template <u64 N, typename T, typename I>
__device__ __forceinline__ bool has(T*, const char* fn, I i) { return in_bounds(i, N, fn); }
template <typename T, typename I>
__device__ __forceinline__ bool has(const Raw<T>& a, const char* fn, I i) { return in_bounds(i, a.size, fn); }
template <typename T, int N, typename I>
__device__ __forceinline__ bool has(const View<T, N>& a, const char* fn, I i) { return in_bounds(i, a.size(), fn); }
template <typename T, int N, typename I0, typename I1, typename... I>
__device__ __forceinline__ bool has(const View<T, N>& a, const char* fn, I0 i0, I1 i1, I... rest) {
    return has_nd(a, fn, i0, i1, rest...);
}

// ---- `cuprum::at(a, "fn", i...)`: a checked place as a reference (the element, or the sink) ----

template <typename T, typename I>
__device__ __forceinline__ T& at(const Slice<T>& a, const char* fn, I i) {
    return in_bounds(i, a.len, fn) ? a.ptr[i] : oob_sink<T>();
}
template <typename T, int N, typename I>
__device__ __forceinline__ T& at(Array<T, N>& a, const char* fn, I i) {
    return in_bounds(i, (u64)N, fn) ? a.v[i] : oob_sink<T>();
}
template <u64 N, typename T, typename I>
__device__ __forceinline__ T& at(T* a, const char* fn, I i) {
    return in_bounds(i, N, fn) ? a[i] : oob_sink<T>();
}
template <typename T, int N, typename I>
__device__ __forceinline__ T& at(const View<T, N>& a, const char* fn, I i) {
    return in_bounds(i, a.size(), fn) ? a[i] : oob_sink<T>();
}
template <typename T, int N, typename I0, typename I1, typename... I>
__device__ __forceinline__ T& at(const View<T, N>& a, const char* fn, I0 i0, I1 i1, I... rest) {
    return has_nd(a, fn, i0, i1, rest...) ? a(i0, i1, rest...) : oob_sink<T>();
}

}  // namespace cuprum
