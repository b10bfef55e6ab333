// cuprum/tensor.h: tensor cores and asynchronous copies (docs/kernel-language.md, "Tensor cores"):
// the warp-level matrix multiply-accumulates (`mma.sync`), `ldmatrix`, and `cp.async` from global
// to shared memory. Fragments are `Array`s in PTX's layouts; 16-bit elements travel in pairs,
// packed into the 32-bit registers the instructions take.
//
// Each helper needs a minimum architecture. For an older target its body is a trap, so that a
// file's other kernels still build there; a kernel that uses one (directly or through device
// functions) asserts its architecture in its entry point (`cuprum::arch_at_least`, cuprum/types.h):
// nvcc and NVRTC name the kernel and the intrinsic, and cuprum-build reports the same before nvcc. The shared-memory helpers
// check what the hardware would fault on: an index out of the array or a row that is not 16-byte
// aligned is reported as an index violation (cuprum/bounds.h, when the function returns:
// `oob_later`) and replaced by element 0, unless the Rust code called the `unsafe` `_unchecked`
// form.
#pragma once
#include <cuprum/types.h>
#include <cuprum/half.h>
#include <cuprum/bounds.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define CUPRUM_SM80 0
#else
#define CUPRUM_SM80 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750
#define CUPRUM_SM75 0
#else
#define CUPRUM_SM75 1
#endif

namespace cuprum {


template <typename A, typename B> struct same_type { static constexpr bool value = false; };
template <typename A> struct same_type<A, A> { static constexpr bool value = true; };

// The bits of a 16-bit element, and back.
__device__ __forceinline__ u16 bits16(half x) { return x.bits; }
__device__ __forceinline__ u16 bits16(bfloat16 x) { return x.bits; }
__device__ __forceinline__ u16 bits16(i16 x) { return (u16)x; }
__device__ __forceinline__ u16 bits16(u16 x) { return x; }
template <typename T> __device__ __forceinline__ T from_bits16(u16 b) { T x; x.bits = b; return x; }
template <> __device__ __forceinline__ i16 from_bits16<i16>(u16 b) { return (i16)b; }
template <> __device__ __forceinline__ u16 from_bits16<u16>(u16 b) { return b; }

template <typename T>
__device__ __forceinline__ u32 pack2(const T* p) { return (u32)bits16(p[0]) | ((u32)bits16(p[1]) << 16); }
__device__ __forceinline__ u32 pack4(const i8* p) {
    return (u32)(u8)p[0] | ((u32)(u8)p[1] << 8) | ((u32)(u8)p[2] << 16) | ((u32)(u8)p[3] << 24);
}

// Round to TF32 (10 mantissa bits) to nearest, ties away from zero: what the host does too.
__device__ __forceinline__ u32 tf32(float x) {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

// ---- mma.sync: d = a * b + c on a 16 x 8 tile, A row-major, B column-major -------------------

template <typename T>
__device__ __forceinline__ Array<float, 4> mma_m16n8k16(const Array<T, 8>& a, const Array<T, 4>& b, const Array<float, 4>& c) {
    static_assert(same_type<T, half>::value || same_type<T, bfloat16>::value, "cuprum: mma_m16n8k16 takes f16 or bf16 fragments");
    u32 a0 = pack2(&a.v[0]), a1 = pack2(&a.v[2]), a2 = pack2(&a.v[4]), a3 = pack2(&a.v[6]);
    u32 b0 = pack2(&b.v[0]), b1 = pack2(&b.v[2]);
    Array<float, 4> d;
#if CUPRUM_SM80
    if constexpr (same_type<T, bfloat16>::value) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
            : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
            : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    }
#else
    d = c;
    __trap();
#endif
    return d;
}

template <typename T = float>
__device__ __forceinline__ Array<float, 4> mma_m16n8k8_tf32(const Array<float, 4>& a, const Array<float, 2>& b, const Array<float, 4>& c) {
    Array<float, 4> d;
#if CUPRUM_SM80
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
        : "r"(tf32(a.v[0])), "r"(tf32(a.v[1])), "r"(tf32(a.v[2])), "r"(tf32(a.v[3])), "r"(tf32(b.v[0])), "r"(tf32(b.v[1])),
          "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
#else
    d = c;
    __trap();
#endif
    return d;
}

template <typename T = i8>
__device__ __forceinline__ Array<i32, 4> mma_m16n8k32_i8(const Array<i8, 16>& a, const Array<i8, 8>& b, const Array<i32, 4>& c) {
    Array<i32, 4> d;
#if CUPRUM_SM80
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=r"(d.v[0]), "=r"(d.v[1]), "=r"(d.v[2]), "=r"(d.v[3])
        : "r"(pack4(&a.v[0])), "r"(pack4(&a.v[4])), "r"(pack4(&a.v[8])), "r"(pack4(&a.v[12])), "r"(pack4(&b.v[0])), "r"(pack4(&b.v[4])),
          "r"(c.v[0]), "r"(c.v[1]), "r"(c.v[2]), "r"(c.v[3]));
#else
    d = c;
    __trap();
#endif
    return d;
}

// ---- shared-memory addresses and their checks --------------------------------------------------

// The shared-window address of a pointer into shared memory (folded to a constant for a
// `__shared__` array).
template <typename T>
__device__ __forceinline__ u32 shared_address(const T* p) {
    return (u32)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ u32 lane() {
    u32 l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

// Whether `n` elements from `u` lie in `0..len` and `u` is a multiple of `align`.
__device__ __forceinline__ bool rows_ok(u64 u, u64 n, u64 len, u64 align) {
    return u % align == 0 && u < len && n <= len - u;
}

// The first violation of a function's checked tensor operations, reported when the function
// returns (its destructor): a check then costs selects and no branch, so that the loop around it
// stays one block the scheduler can overlap (a branch per `ldmatrix` made examples/gemm_bf16.rs
// 2.6 times slower). The generated code declares one per function that uses them. A class
// template (`oob_later` names its one specialization), so that its destructor, which reports,
// is instantiated only where one is destroyed (cuprum/bounds.h: the slot is then only in
// modules whose code checks).
template <typename = void>
struct oob_later_t {
    const char* fn;
    u64 index, len;
    u32 info;
    bool bad;
    __device__ __forceinline__ explicit oob_later_t(const char* f) : fn(f), index(0), len(0), info(0), bad(false) {}
    // Keeps (index, len, info) when `ok` is false and nothing was kept before.
    __device__ __forceinline__ void note(bool ok, u64 i, u64 l, u32 f) {
        bool first = !ok && !bad;
        index = first ? i : index;
        len = first ? l : len;
        info = first ? f : info;
        bad = bad || !ok;
    }
    __device__ __forceinline__ ~oob_later_t() {
        if (bad) oob_report(fn, index, len, info);
    }
};
using oob_later = oob_later_t<>;

// Notes a row check of `n` elements at `u` in `0..len` aligned to `align`: the misaligned index,
// or the last index out of range.
template <typename I>
__device__ __forceinline__ void note_rows(oob_later* later, bool ok, u64 u, u64 n, u64 len, u64 align) {
    bool mis = u % align != 0 && u < len;
    later->note(ok, mis ? u : (u < len ? u + n - 1 : u), mis ? align : len, index_info<I>::signed_bit | (mis ? oob_misaligned : 0u));
}

// ---- ldmatrix: a warp loads X 8x8 matrices of 16-bit elements ---------------------------------

// Lane `l < 8 * X` gives the index of row `l % 8` of matrix `l / 8`: 8 elements, 16-byte
// aligned. Every lane executes the instruction (it is warp-collective); with CHECK, a lane whose
// row is out of range or misaligned reads row 0 of the array instead, and `later` reports it.
// Without (`ldmatrix_*_unchecked`, `unsafe` in Rust), the rows are the caller's promise.
// `ldmatrix_n` reads shared memory of `N` elements known at run time (`dynamic_shared`),
// `ldmatrix` a static shared array of `N`.
template <int X, bool TRANS, bool CHECK, typename T, typename I>
__device__ __forceinline__ Array<T, 2 * X> ldmatrix_n(const T* s, u64 N, I i, oob_later* later) {
    static_assert(sizeof(T) == 2, "cuprum: ldmatrix loads 16-bit elements");
    u64 row = (u64)i;
    if constexpr (CHECK) {
        // Only lanes 0..8X give rows (the others' are ignored).
        bool ok = rows_ok(row, 8, N, 8) || (X < 4 && lane() >= 8 * X);
        note_rows<I>(later, ok, row, 8, N, 8);
        row = ok ? row : 0;
    }
    u32 addr = shared_address(s) + (u32)row * 2u;
    u32 r[4] = {0u, 0u, 0u, 0u};
#if CUPRUM_SM75
    if constexpr (X == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
    if constexpr (X == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    if constexpr (X == 4 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
    if constexpr (X == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
    if constexpr (X == 2 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    if constexpr (X == 4 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
#else
    (void)addr;
    __trap();
#endif
    Array<T, 2 * X> out;
    for (int k = 0; k < X; ++k) {
        out.v[2 * k] = from_bits16<T>((u16)(r[k] & 0xffffu));
        out.v[2 * k + 1] = from_bits16<T>((u16)(r[k] >> 16));
    }
    return out;
}

template <int X, bool TRANS, bool CHECK, u64 N, typename T, typename I>
__device__ __forceinline__ Array<T, 2 * X> ldmatrix(const T* s, I i, oob_later* later) {
    static_assert(N >= 8, "cuprum: ldmatrix reads rows of 8 elements: the shared array needs at least 8");
    return ldmatrix_n<X, TRANS, CHECK>(s, N, i, later);
}

// ---- cp.async: 16 bytes from global to shared memory, completed by commit and wait -------------

// Copies 16 bytes (16 / sizeof(T) elements) from `src[si..]` to `dst[di..]`, both 16-byte
// aligned. With CHECK, a copy out of range or misaligned is skipped (predicated off) and `later`
// reports it; without (`cp_async_unchecked`), the operands are the caller's promise.
// `cp_async_n` copies into shared memory of `N` elements known at run time (`dynamic_shared`),
// `cp_async` into a static shared array of `N`.
template <bool CHECK, typename T, typename S, typename I, typename J>
__device__ __forceinline__ void cp_async_n(T* dst, u64 N, I di, const S& src, J si, oob_later* later) {
    static_assert(16 % sizeof(T) == 0, "cuprum: cp_async copies 16 bytes: the element size must divide 16");
    constexpr u64 n = 16 / sizeof(T);
    u64 d = (u64)di, s = (u64)si;
    const T* from = src.ptr + s;
    u32 to = shared_address(dst) + (u32)d * (u32)sizeof(T);
#if CUPRUM_SM80
    if constexpr (CHECK) {
        bool dok = rows_ok(d, n, N, n), sok = rows_ok(s, n, src.len, 1), aok = ((u64)from & 15u) == 0;
        bool ok = dok && sok && aok;
        if (!dok) note_rows<I>(later, false, d, n, N, n);
        else if (!sok) note_rows<J>(later, false, s, n, src.len, 1);
        else later->note(aok, s, n, index_info<J>::signed_bit | oob_misaligned);
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p cp.async.cg.shared.global [%0], [%1], 16; }" ::"r"(ok ? to : 0u), "l"(ok ? from : src.ptr), "r"((u32)ok) : "memory");
    } else {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from) : "memory");
    }
#else
    (void)to;
    (void)later;
    __trap();
#endif
}

template <u64 N, bool CHECK, typename T, typename S, typename I, typename J>
__device__ __forceinline__ void cp_async(T* dst, I di, const S& src, J si, oob_later* later) {
    cp_async_n<CHECK>(dst, N, di, src, si, later);
}

// Whether the slice `s` starts 16-byte aligned, as `cp_async_unchecked` needs of its source;
// reports index 0 as misaligned otherwise. The generated code calls it when a function that
// passes `s` to `cp_async_unchecked` is entered, and returns at once if not.
template <typename S>
__device__ __forceinline__ bool cp_async_source_ok(const S& s, const char* fn) {
    if (__builtin_expect(((u64)s.ptr & 15u) == 0, 1)) return true;
    oob_report(fn, 0, 16 / sizeof(*s.ptr), oob_misaligned);
    return false;
}

template <typename T = void>
__device__ __forceinline__ void cp_async_commit() {
#if CUPRUM_SM80
    asm volatile("cp.async.commit_group;" ::: "memory");
#else
    __trap();
#endif
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if CUPRUM_SM80
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#else
    __trap();
#endif
}

}  // namespace cuprum
