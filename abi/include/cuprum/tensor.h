// cuprum/tensor.h: tensor cores and asynchronous copies (docs/kernel-language.md, "Tensor cores"):
// the warp-level matrix multiply-accumulates (`mma.sync`), `ldmatrix`, and `cp.async` from global
// to shared memory. Fragments are `Array`s in PTX's layouts; 16-bit elements travel in pairs,
// packed into the 32-bit registers the instructions take.
//
// Each helper needs a minimum architecture; for an older target its instantiation is a compile
// error that names it (cuprum-build reports the same before nvcc runs). The shared-memory helpers
// check what the hardware would fault on: an index out of the array or a row that is not 16-byte
// aligned is reported as an index violation (cuprum/bounds.h) and replaced by element 0.
#pragma once
#include <cuprum/types.h>
#include <cuprum/half.h>
#include <cuprum/bounds.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define CUPRUM_SM80 false
#else
#define CUPRUM_SM80 true
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750
#define CUPRUM_SM75 false
#else
#define CUPRUM_SM75 true
#endif

namespace cuprum {

// True, but only once `T` is known: a `static_assert` on it fires where a helper is instantiated,
// not where the header is included.
template <typename T> struct arch_ok { static constexpr bool sm80 = CUPRUM_SM80, sm75 = CUPRUM_SM75; };

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
    static_assert(arch_ok<T>::sm80, "cuprum: mma_m16n8k16 needs compute capability 8.0 or newer (sm_80); this target is older");
    static_assert(same_type<T, half>::value || same_type<T, bfloat16>::value, "cuprum: mma_m16n8k16 takes f16 or bf16 fragments");
    u32 a0 = pack2(&a.v[0]), a1 = pack2(&a.v[2]), a2 = pack2(&a.v[4]), a3 = pack2(&a.v[6]);
    u32 b0 = pack2(&b.v[0]), b1 = pack2(&b.v[2]);
    Array<float, 4> d;
    if constexpr (same_type<T, bfloat16>::value) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
            : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
            : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    }
    return d;
}

template <typename T = float>
__device__ __forceinline__ Array<float, 4> mma_m16n8k8_tf32(const Array<float, 4>& a, const Array<float, 2>& b, const Array<float, 4>& c) {
    static_assert(arch_ok<T>::sm80, "cuprum: mma_m16n8k8_tf32 needs compute capability 8.0 or newer (sm_80); this target is older");
    Array<float, 4> d;
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
        : "r"(tf32(a.v[0])), "r"(tf32(a.v[1])), "r"(tf32(a.v[2])), "r"(tf32(a.v[3])), "r"(tf32(b.v[0])), "r"(tf32(b.v[1])),
          "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
    return d;
}

template <typename T = i8>
__device__ __forceinline__ Array<i32, 4> mma_m16n8k32_i8(const Array<i8, 16>& a, const Array<i8, 8>& b, const Array<i32, 4>& c) {
    static_assert(arch_ok<T>::sm80, "cuprum: mma_m16n8k32_i8 needs compute capability 8.0 or newer (sm_80); this target is older");
    Array<i32, 4> d;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=r"(d.v[0]), "=r"(d.v[1]), "=r"(d.v[2]), "=r"(d.v[3])
        : "r"(pack4(&a.v[0])), "r"(pack4(&a.v[4])), "r"(pack4(&a.v[8])), "r"(pack4(&a.v[12])), "r"(pack4(&b.v[0])), "r"(pack4(&b.v[4])),
          "r"(c.v[0]), "r"(c.v[1]), "r"(c.v[2]), "r"(c.v[3]));
    return d;
}

// ---- shared-memory addresses and their checks --------------------------------------------------

// The shared-window address of a shared-memory pointer.
template <typename T>
__device__ __forceinline__ u32 shared_address(const T* p) {
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// Whether `n` elements from `i` lie in `0..len` and `i` is a multiple of `align`; reports the
// violation otherwise (the last index out of range, or the misaligned index).
template <typename I>
__device__ __forceinline__ bool rows_ok(I i, u64 n, u64 len, u64 align, const char* fn) {
    u64 u = (u64)i;
    if (__builtin_expect(u % align == 0 && u < len && n <= len - u, 1)) return true;
    if (u % align != 0 && u < len) oob_report(fn, u, align, index_info<I>::signed_bit | oob_misaligned);
    else oob_report(fn, u < len ? u + n - 1 : u, len, index_info<I>::signed_bit);
    return false;
}

// ---- ldmatrix: a warp loads X 8x8 matrices of 16-bit elements ---------------------------------

// Lane `l < 8 * X` gives the index of row `l % 8` of matrix `l / 8`: 8 elements, 16-byte
// aligned. Every lane executes the instruction (it is warp-collective), a lane whose row is out of
// range or misaligned with row 0 of the array instead.
template <int X, bool TRANS, u64 N, typename T, typename I>
__device__ __forceinline__ Array<T, 2 * X> ldmatrix(const T* s, I i, const char* fn) {
    static_assert(arch_ok<T>::sm75, "cuprum: ldmatrix needs compute capability 7.5 or newer (sm_75); this target is older");
    static_assert(sizeof(T) == 2, "cuprum: ldmatrix loads 16-bit elements");
    u32 lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    u64 row = (u64)i;
    if (lane < 8 * X && !rows_ok(i, 8, N, 8, fn)) row = 0;
    if (lane >= 8 * X) row = 0;
    u32 addr = shared_address(s + row);
    u32 r[4];
    if constexpr (X == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
    if constexpr (X == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    if constexpr (X == 4 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
    if constexpr (X == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
    if constexpr (X == 2 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
    if constexpr (X == 4 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
    Array<T, 2 * X> out;
    for (int k = 0; k < X; ++k) {
        out.v[2 * k] = from_bits16<T>((u16)(r[k] & 0xffffu));
        out.v[2 * k + 1] = from_bits16<T>((u16)(r[k] >> 16));
    }
    return out;
}

// ---- cp.async: 16 bytes from global to shared memory, completed by commit and wait -------------

// Copies 16 bytes (16 / sizeof(T) elements) from `src[si..]` to `dst[di..]`, both 16-byte
// aligned. Out of range or misaligned: reported, and nothing is copied.
template <u64 N, typename T, typename S, typename I, typename J>
__device__ __forceinline__ void cp_async(T* dst, I di, const S& src, J si, const char* fn) {
    static_assert(arch_ok<T>::sm80, "cuprum: cp_async needs compute capability 8.0 or newer (sm_80); this target is older");
    static_assert(16 % sizeof(T) == 0, "cuprum: cp_async copies 16 bytes: the element size must divide 16");
    constexpr u64 n = 16 / sizeof(T);
    if (!rows_ok(di, n, N, n, fn)) return;
    if (!rows_ok(si, n, src.len, 1, fn)) return;
    const T* from = &src.ptr[(u64)si];
    if (((u64)from & 15u) != 0) {
        oob_report(fn, (u64)si, n, index_info<J>::signed_bit | oob_misaligned);
        return;
    }
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst + (u64)di)), "l"(from) : "memory");
}

template <typename T = void>
__device__ __forceinline__ void cp_async_commit() {
    static_assert(arch_ok<T>::sm80, "cuprum: cp_async_commit needs compute capability 8.0 or newer (sm_80); this target is older");
    asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
    static_assert(arch_ok<char[PENDING + 1]>::sm80, "cuprum: cp_async_wait needs compute capability 8.0 or newer (sm_80); this target is older");
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

}  // namespace cuprum
