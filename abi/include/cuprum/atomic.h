// cuprum/atomic.h: the eleven atomics of cupyx.jit (`atomic_add(a, i, v)` is
// `cuprum::atomic_add(&a[i], v)`), each returning the old value, for every type CUDA supports.
#pragma once
#include <cuprum/types.h>
#include <cuprum/half.h>

namespace cuprum {

__device__ __forceinline__ i32 atomic_add(i32* p, i32 v) { return atomicAdd(p, v); }
__device__ __forceinline__ u32 atomic_add(u32* p, u32 v) { return atomicAdd(p, v); }
__device__ __forceinline__ u64 atomic_add(u64* p, u64 v) { return atomicAdd(p, v); }
__device__ __forceinline__ i64 atomic_add(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)v); }
__device__ __forceinline__ f32 atomic_add(f32* p, f32 v) { return atomicAdd(p, v); }
__device__ __forceinline__ f64 atomic_add(f64* p, f64 v) { return atomicAdd(p, v); }
__device__ __forceinline__ half atomic_add(half* p, half v) {
    half old;
    asm volatile("atom.add.noftz.f16 %0, [%1], %2;" : "=h"(old.bits) : "l"(p), "h"(v.bits) : "memory");
    return old;
}
__device__ __forceinline__ bfloat16 atomic_add(bfloat16* p, bfloat16 v) {
#if __CUDA_ARCH__ >= 900
    bfloat16 old;
    asm volatile("atom.add.noftz.bf16 %0, [%1], %2;" : "=h"(old.bits) : "l"(p), "h"(v.bits) : "memory");
    return old;
#else
    // A CAS loop on the aligned 32-bit word holding the value.
    u32* word = (u32*)((u64)p & ~(u64)3);
    u32 shift = ((u64)p & 2) ? 16 : 0;
    u32 old = *word, assumed;
    do {
        assumed = old;
        bfloat16 cur; cur.bits = (u16)(assumed >> shift);
        u32 nv = (assumed & ~(0xffffu << shift)) | ((u32)(cur + v).bits << shift);
        old = atomicCAS(word, assumed, nv);
    } while (old != assumed);
    bfloat16 r; r.bits = (u16)(old >> shift);
    return r;
#endif
}

__device__ __forceinline__ i32 atomic_sub(i32* p, i32 v) { return atomicSub(p, v); }
__device__ __forceinline__ u32 atomic_sub(u32* p, u32 v) { return atomicSub(p, v); }
__device__ __forceinline__ u64 atomic_sub(u64* p, u64 v) { return atomicAdd(p, (u64)0 - v); }
__device__ __forceinline__ i64 atomic_sub(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)0 - (u64)v); }
__device__ __forceinline__ f32 atomic_sub(f32* p, f32 v) { return atomicAdd(p, -v); }
__device__ __forceinline__ f64 atomic_sub(f64* p, f64 v) { return atomicAdd(p, -v); }

__device__ __forceinline__ i32 atomic_exch(i32* p, i32 v) { return atomicExch(p, v); }
__device__ __forceinline__ u32 atomic_exch(u32* p, u32 v) { return atomicExch(p, v); }
__device__ __forceinline__ u64 atomic_exch(u64* p, u64 v) { return atomicExch(p, v); }
__device__ __forceinline__ i64 atomic_exch(i64* p, i64 v) { return (i64)atomicExch((u64*)p, (u64)v); }
__device__ __forceinline__ f32 atomic_exch(f32* p, f32 v) { return atomicExch(p, v); }
__device__ __forceinline__ f64 atomic_exch(f64* p, f64 v) {
    return __longlong_as_double((i64)atomicExch((u64*)p, (u64)__double_as_longlong(v)));
}
__device__ __forceinline__ u16 atomic_exch(u16* p, u16 v) {
    u16 old = *p, assumed;
    do { assumed = old; old = atomicCAS(p, assumed, v); } while (old != assumed);
    return old;
}

__device__ __forceinline__ i32 atomic_cas(i32* p, i32 c, i32 v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ u32 atomic_cas(u32* p, u32 c, u32 v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ u64 atomic_cas(u64* p, u64 c, u64 v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ i64 atomic_cas(i64* p, i64 c, i64 v) { return (i64)atomicCAS((u64*)p, (u64)c, (u64)v); }
__device__ __forceinline__ u16 atomic_cas(u16* p, u16 c, u16 v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ f32 atomic_cas(f32* p, f32 c, f32 v) {
    return __uint_as_float(atomicCAS((u32*)p, __float_as_uint(c), __float_as_uint(v)));
}
__device__ __forceinline__ f64 atomic_cas(f64* p, f64 c, f64 v) {
    return __longlong_as_double((i64)atomicCAS((u64*)p, (u64)__double_as_longlong(c), (u64)__double_as_longlong(v)));
}

#define CUPRUM_ATOMIC_MINMAX(T)                                                           \
    __device__ __forceinline__ T atomic_min(T* p, T v) { return atomicMin(p, v); }       \
    __device__ __forceinline__ T atomic_max(T* p, T v) { return atomicMax(p, v); }
CUPRUM_ATOMIC_MINMAX(i32)
CUPRUM_ATOMIC_MINMAX(u32)
CUPRUM_ATOMIC_MINMAX(u64)
CUPRUM_ATOMIC_MINMAX(i64)
#undef CUPRUM_ATOMIC_MINMAX
// Floats: a CAS loop; like Rust's f32::min, a NaN operand is ignored.
#define CUPRUM_ATOMIC_FMINMAX(T, BITS, TO, FROM, NAME, CMP)                                 \
    __device__ __forceinline__ T NAME(T* p, T v) {                                           \
        BITS* w = (BITS*)p;                                                                  \
        BITS old = *w, assumed;                                                              \
        do {                                                                                 \
            assumed = old;                                                                   \
            T cur = FROM(assumed);                                                           \
            if (v != v || (cur == cur && !(v CMP cur))) break;                               \
            old = atomicCAS(w, assumed, TO(v));                                              \
        } while (old != assumed);                                                            \
        return FROM(old);                                                                    \
    }
__device__ __forceinline__ u64 f64_bits(f64 x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ f64 f64_of(u64 b) { return __longlong_as_double((i64)b); }
CUPRUM_ATOMIC_FMINMAX(f32, u32, __float_as_uint, __uint_as_float, atomic_min, <)
CUPRUM_ATOMIC_FMINMAX(f32, u32, __float_as_uint, __uint_as_float, atomic_max, >)
CUPRUM_ATOMIC_FMINMAX(f64, u64, f64_bits, f64_of, atomic_min, <)
CUPRUM_ATOMIC_FMINMAX(f64, u64, f64_bits, f64_of, atomic_max, >)
#undef CUPRUM_ATOMIC_FMINMAX

// A relaxed load of what another thread or block stored or published with an atomic (a volatile
// load: it goes to the L2 cache, which every multiprocessor sees alike, and is not cached in L1).
// Polling a flag this way costs no read-modify-write: many blocks polling one flag with atomics
// queue at its L2 slice.
template <typename T>
__device__ __forceinline__ T atomic_load(T* p) { return *(const volatile T*)p; }

__device__ __forceinline__ u32 atomic_inc(u32* p, u32 v) { return atomicInc(p, v); }
__device__ __forceinline__ u32 atomic_dec(u32* p, u32 v) { return atomicDec(p, v); }

#define CUPRUM_ATOMIC_BITS(T, U)                                                                       \
    __device__ __forceinline__ T atomic_and(T* p, T v) { return (T)atomicAnd((U*)p, (U)v); }          \
    __device__ __forceinline__ T atomic_or(T* p, T v) { return (T)atomicOr((U*)p, (U)v); }            \
    __device__ __forceinline__ T atomic_xor(T* p, T v) { return (T)atomicXor((U*)p, (U)v); }
CUPRUM_ATOMIC_BITS(i32, i32)
CUPRUM_ATOMIC_BITS(u32, u32)
CUPRUM_ATOMIC_BITS(u64, u64)
CUPRUM_ATOMIC_BITS(i64, u64)
#undef CUPRUM_ATOMIC_BITS

}  // namespace cuprum
