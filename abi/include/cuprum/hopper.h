// cuprum/hopper.h: Hopper's data movement and warpgroup tensor cores (docs/kernel-language.md,
// "Hopper: TMA, mbarriers and wgmma"): transaction barriers in shared memory (`mbarrier`), the
// tensor memory accelerator's bulk tensor copies (`cp.async.bulk.tensor`) that complete on them,
// and the warpgroup matrix multiply-accumulates (`wgmma.mma_async`) that read both operands from
// shared memory.
//
// Layouts. Both the copies and the multiplies use the 128-byte swizzle: a tile of rows of 64
// 16-bit elements (128 bytes) whose 16-byte chunk c of row r lies at chunk c ^ (r % 8), the tile
// starting 1024-byte aligned. A TensorMap with a box 64 elements wide and `Swizzle::B128` writes
// exactly that. `wgmma_m64nNk16(acc, a, ai, b, bi)` reads
//   A (64 x 16, K-major): rows 0..64 of the tile at `ai - ai % 4096`, columns `ai % 4096 .. +16`;
//   B (16 x N, N-major): N / 64 consecutive tiles of 64 k-rows x 64 columns from `bi - bi % 4096`,
//     k-rows `(bi % 4096) / 64 .. +16` of each.
// Tiles start at multiples of 4096 elements (8 KiB) of the shared array, whose start must be
// 1024-byte aligned (dynamic shared memory is).
// The FP8 form `wgmma_m64nNk32(acc, a, ai, b, bi)` (f8e4m3 or f8e5m2) reads both operands K-major
// from tiles of 64 rows of 128 one-byte elements (128 bytes: the same swizzle, 8192 elements):
//   A (64 x 32): rows 0..64 of the tile at `ai - ai % 8192`, columns `ai % 8192 .. +32`;
//   B (32 x N), stored transposed (N x K): rows 0..N of the N / 64 tiles from `bi - bi % 8192`,
//     columns (k) `bi % 8192 .. +32` of each.
//
// Checks (as `cp_async`'s): an operand out of its array or misaligned is reported when the
// function returns (`oob_later`). The copy is then not made but its bytes are still counted on the
// barrier, so waiting threads go on; a multiply is skipped; a barrier operation is skipped.
#pragma once
#include <cuprum/types.h>
#include <cuprum/half.h>
#include <cuprum/bounds.h>
#include <cuprum/tensor.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CUPRUM_SM90 0
#else
#define CUPRUM_SM90 1
#endif
// sm_90a: what only the arch-specific target has (wgmma, setmaxnreg).
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CUPRUM_SM90A 0
#else
#define CUPRUM_SM90A 1
#endif

namespace cuprum {

// `&TensorMap<T>`: the driver's 128-byte CUtensorMap and the box it copies, as the runtime
// encodes it (cuprum-runtime `TensorMap`; the same layout, 192 bytes). A kernel receives it as a
// `__grid_constant__` parameter and passes it on by reference, so its address stays the
// parameter's, as the copy instruction needs.
template <typename T>
struct alignas(64) TensorMap {
    u64 map[16];
    u32 box_inner, box_outer;
    u32 swizzle_bytes, reserved;
};

// ---- mbarrier -----------------------------------------------------------------------------------

// Barrier `i` of `bars[..len]`: whether it is in range (noted otherwise) and the shared address of
// it, or of element 0 when it is not, so that the operations below are predicated rather than
// branched around (a branch per barrier operation in a wgmma loop cost 20%: the lengths of dynamic
// shared memory are not constants).
template <typename I>
__device__ __forceinline__ bool bar_at(u64* bars, u64 len, I i, oob_later* later, u32& addr) {
    bool ok = (u64)i < len;
    later->note(ok, (u64)i, len, index_info<I>::signed_bit);
    addr = shared_address(bars) + (ok ? (u32)i * 8u : 0u);
    return ok;
}

// Initialises barrier `i` for `count` arrivals per phase, and makes it visible to the copy engine.
template <typename I>
__device__ __forceinline__ void mbarrier_init(u64* bars, u64 len, I i, u32 count, oob_later* later) {
    u32 a;
    bool ok = bar_at(bars, len, i, later, a);
#if CUPRUM_SM90
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p mbarrier.init.shared::cta.b64 [%0], %1; }\n\tfence.mbarrier_init.release.cluster;" ::"r"(a), "r"(count), "r"((u32)ok) : "memory");
#else
    __trap();
#endif
}

template <typename I>
__device__ __forceinline__ void mbarrier_arrive(u64* bars, u64 len, I i, oob_later* later) {
    u32 a;
    bool ok = bar_at(bars, len, i, later, a);
#if CUPRUM_SM90
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %1, 0; @p mbarrier.arrive.shared::cta.b64 _, [%0]; }" ::"r"(a), "r"((u32)ok) : "memory");
#else
    __trap();
#endif
}

// Arrives and adds `bytes` to the transactions the current phase waits for.
template <typename I>
__device__ __forceinline__ void mbarrier_arrive_expect_tx(u64* bars, u64 len, I i, u32 bytes, oob_later* later) {
    u32 a;
    bool ok = bar_at(bars, len, i, later, a);
#if CUPRUM_SM90
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1; }" ::"r"(a), "r"(bytes), "r"((u32)ok) : "memory");
#else
    __trap();
#endif
}

// Waits until the phase of barrier `i` with parity `parity` (0 or 1) has completed (a barrier out
// of range: no wait).
template <typename I>
__device__ __forceinline__ void mbarrier_wait(u64* bars, u64 len, I i, u32 parity, oob_later* later) {
    u32 a;
    bool ok = bar_at(bars, len, i, later, a);
#if CUPRUM_SM90
    u32 done;
    do {
        asm volatile("{ .reg .pred p, q; setp.ne.b32 q, %3, 0; mov.pred p, 1; @q mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(a), "r"(parity & 1u), "r"((u32)ok) : "memory");
    } while (!done);
#else
    __trap();
#endif
}

// ---- TMA: a box of a tensor map into shared memory ----------------------------------------------

// Copies the box of `map` at element coordinates (x inner, y outer) to `dst[di..]`, completing
// on barrier `bi` (which must expect its bytes: `mbarrier_arrive_expect_tx`). Elements of the
// box outside the tensor are zeros.
template <typename T, typename I, typename J>
__device__ __forceinline__ void tma_load_2d(T* dst, u64 dst_len, I di, const TensorMap<T>& map, i32 x, i32 y, u64* bars, u64 bars_len, J bi, oob_later* later) {
    u32 bar;
    bool bok = bar_at(bars, bars_len, bi, later, bar);
    u64 d = (u64)di, n = (u64)map.box_inner * map.box_outer;
    u32 to = shared_address(dst) + (u32)d * (u32)sizeof(T);
    u32 align = map.swizzle_bytes == 128u ? 1024u : 128u;
    bool ok = d < dst_len && n <= dst_len - d && to % align == 0;
    bool mis = to % align != 0 && d < dst_len;
    later->note(ok, mis ? d : (d < dst_len ? d + n - 1 : d), mis ? align / sizeof(T) : dst_len, index_info<I>::signed_bit | (mis ? oob_misaligned : 0u));
#if CUPRUM_SM90
    if (ok && bok) {
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(to), "l"((u64)&map), "r"(x), "r"(y), "r"(bar) : "memory");
    } else if (bok) {
        // The copy is skipped; its bytes still complete the phase, so the waiting threads go on.
        asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"((u32)(n * sizeof(T))) : "memory");
    }
#else
    __trap();
#endif
}

// ---- wgmma ---------------------------------------------------------------------------------------

// A shared-memory matrix descriptor: 128-byte swizzle, strides in bytes.
__device__ __forceinline__ u64 wgmma_desc(u32 addr, u32 lbo, u32 sbo) {
    return (u64)((addr & 0x3ffffu) >> 4) | ((u64)((lbo & 0x3ffffu) >> 4) << 16) | ((u64)((sbo & 0x3ffffu) >> 4) << 32) | (1ull << 62);
}

// `wgmma_desc(base + offset, lbo, sbo)` for a `base` that is a multiple of 16 (the shared address
// of an array the multiplies accept: 1024-byte aligned) and an in-range tile: the address field
// is base / 16 + offset / 16, added into the word rather than masked and or-ed, so that the
// compiler computes base / 16 once and each multiply of an unrolled loop adds a constant.
__device__ __forceinline__ u64 wgmma_desc_at(u32 base, u32 offset, u32 lbo, u32 sbo) {
    u32 lo = (base >> 4) + (offset >> 4) + ((lbo >> 4) << 16);
    return ((u64)((sbo >> 4) | (1u << 30)) << 32) | lo;
}

template <typename T = void>
__device__ __forceinline__ void wgmma_fence() {
#if CUPRUM_SM90A
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
    __trap();
#endif
}

template <typename T = void>
__device__ __forceinline__ void wgmma_commit() {
#if CUPRUM_SM90A
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
    __trap();
#endif
}

// Waits until at most PENDING committed groups are in flight. `acc`, the registers the multiplies
// write, are tied to the wait so that the compiler reads them only after it.
template <int PENDING, int R>
__device__ __forceinline__ void wgmma_wait(Array<float, R>& acc) {
#if CUPRUM_SM90A
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
#else
    __trap();
#endif
#pragma unroll
    for (int k = 0; k < R; ++k) asm volatile("" : "+f"(acc.v[k])::"memory");
}

template <int REGS>
__device__ __forceinline__ void warpgroup_reg_alloc() {
#if CUPRUM_SM90A
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
#else
    __trap();
#endif
}

template <int REGS>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
#if CUPRUM_SM90A
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
#else
    __trap();
#endif
}

// ---- generated by benches/experiments/gemm_wgmma/gen_wgmma.py: begin
template <typename T, int TB = 1>
__device__ __forceinline__ void wgmma_m64n64k16_raw(Array<float, 32>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, %35; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, %35; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    }
#else
    __trap();
#endif
}

template <typename T, int TB = 1>
__device__ __forceinline__ void wgmma_m64n128k16_raw(Array<float, 64>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, %67; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, %67; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    }
#else
    __trap();
#endif
}

template <typename T, int TB = 1>
__device__ __forceinline__ void wgmma_m64n256k16_raw(Array<float, 128>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0; wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, %131; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0; wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, %131; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "l"(da), "l"(db), "r"(1), "n"(TB));
    }
#else
    __trap();
#endif
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n64k16_rs_raw(Array<float, 32>& d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %37, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %37, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n128k16_rs_raw(Array<float, 64>& d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %69, 0; wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %69, 0; wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16_rs_raw(Array<float, 128>& d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %133, 0; wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %133, 0; wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}
// ---- generated: end

// d += A * B on a 64 x N tile of the warpgroup (layouts at the top of this file). The checks are
// a few integer operations and one note, with no data-dependent branch and no call between the
// multiplies (such a branch makes ptxas serialise them, a call leaves it short of registers): a
// rejected operand is replaced by the array's first tile (arrays too short to have one skip it). Each lane checks its own indices, so whichever lane's
// descriptor the warpgroup's instruction takes lies in the arrays (the indices should be the same
// in every thread).
// BT: B stored transposed (N x K, K-major as A: `wgmma_m64nNk16_bt`), its columns (k) at 0, 16,
// 32 or 48 of N / 64 consecutive tiles of 64 rows (n).
template <int N, bool CHECK, bool BT, typename T, typename I, typename J>
__device__ __forceinline__ void wgmma_ss(Array<float, N / 2>& d, const T* a, u64 a_len, I ai, const T* b, u64 b_len, J bi, oob_later* later) {
    static_assert(same_type<T, half>::value || same_type<T, bfloat16>::value, "cuprum: wgmma takes f16 or bf16 operands");
    u64 ia = (u64)ai, ib = (u64)bi;
    u32 sa = shared_address(a), sb = shared_address(b);
    if constexpr (!CHECK) {
        // `wgmma_*_unchecked` (`unsafe` in Rust): the operands are the caller's promise.
        (void)a_len;
        (void)b_len;
        (void)later;
        u64 da = wgmma_desc_at(sa, (u32)ia * 2u, 16u, 1024u), db = wgmma_desc_at(sb, (u32)ib * 2u, BT ? 16u : 8192u, 1024u);
        if constexpr (N == 64) wgmma_m64n64k16_raw<T, BT ? 0 : 1>(d, da, db);
        if constexpr (N == 128) wgmma_m64n128k16_raw<T, BT ? 0 : 1>(d, da, db);
        if constexpr (N == 256) wgmma_m64n256k16_raw<T, BT ? 0 : 1>(d, da, db);
        return;
    }
    // A's columns start at 0, 16, 32 or 48 of a tile; B's rows at 0, 16, 32 or 48 (x 64 elements),
    // or (BT) its columns at 0, 16, 32 or 48.
    bool amis = ((u32)ia & 4095u & ~48u) != 0, bmis = ((u32)ib & 4095u & (BT ? ~48u : ~3072u)) != 0;
    // A's tile (4096 elements from ia rounded down) ends at ia | 4095; B's N / 64 tiles end
    // (N - 64) * 64 elements after that (limits that do not depend on the index: hoisted).
    constexpr u64 more = (u64)(N - 64) * 64;
    u64 b_limit = b_len > more ? b_len - more : 0;
    bool aok = !amis && (ia | 4095u) < a_len;
    bool bok = !bmis && (ib | 4095u) < b_limit;
    bool ok = aok && bok && ((sa | sb) & 1023u) == 0;
    // One note: the first wrong operand (A, else B, else the arrays' alignment). A misaligned index
    // reports the alignment it needs (A's columns: 16; B's rows: 1024), one out of range the length.
    u64 index = !aok ? ia : (!bok ? ib : 0);
    u64 len = !aok ? (amis ? 16 : a_len) : (!bok ? (bmis ? (BT ? 16 : 1024) : b_len) : 1024 / sizeof(T));
    bool mis = !aok ? amis : (!bok ? bmis : true);
    u32 sign = !aok ? index_info<I>::signed_bit : index_info<J>::signed_bit;
    later->note(ok, index, len, sign | (mis ? oob_misaligned : 0u));
    // Arrays shorter than a first tile have nothing to substitute: the multiply is skipped (a
    // branch on the lengths alone, the same for every call of a loop).
    if (a_len < 4096 || b_len < (u64)N * 64) return;
    u64 da = wgmma_desc_at(sa, ok ? (u32)ia * 2u : 0u, 16u, 1024u);
    u64 db = wgmma_desc_at(sb, ok ? (u32)ib * 2u : 0u, BT ? 16u : 8192u, 1024u);
    if constexpr (N == 64) wgmma_m64n64k16_raw<T, BT ? 0 : 1>(d, da, db);
    if constexpr (N == 128) wgmma_m64n128k16_raw<T, BT ? 0 : 1>(d, da, db);
    if constexpr (N == 256) wgmma_m64n256k16_raw<T, BT ? 0 : 1>(d, da, db);
}

// `wgmma_m64nNk16`: B N-major (row-major K x N, as it is in memory).
template <int N, bool CHECK, typename T, typename I, typename J>
__device__ __forceinline__ void wgmma(Array<float, N / 2>& d, const T* a, u64 a_len, I ai, const T* b, u64 b_len, J bi, oob_later* later) {
    wgmma_ss<N, CHECK, false>(d, a, a_len, ai, b, b_len, bi, later);
}

// `wgmma_m64nNk16_bt`: B stored transposed (N x K), K-major as A: the descriptor of A's layout
// (rows of 64 elements, 8-row groups 1024 bytes apart, N / 64 tiles one after the other) with
// imm-trans-b = 0.
template <int N, bool CHECK, typename T, typename I, typename J>
__device__ __forceinline__ void wgmma_bt(Array<float, N / 2>& d, const T* a, u64 a_len, I ai, const T* b, u64 b_len, J bi, oob_later* later) {
    wgmma_ss<N, CHECK, true>(d, a, a_len, ai, b, b_len, bi, later);
}

// Two 16-bit elements in one register, the first in the low half (the order of an mma fragment).
template <typename T>
__device__ __forceinline__ u32 pack_pair(T lo, T hi) {
    return (u32)lo.bits | ((u32)hi.bits << 16);
}

// `wgmma_m64nNk16_rs`: d += A * B with A (64 x 16) from registers, each thread's fragment `a` as
// mma.m16n8k16's A fragment for the 16 rows of its warp (a[0..2]: row l / 4, columns 2 (l % 4)
// and the next; a[2..4]: row l / 4 + 8; a[4..8]: the same 8 columns on), B (16 x N, N-major)
// from shared memory as `wgmma`'s. Only B is checked (as `wgmma`'s B).
template <int N, bool CHECK, typename T, typename J>
__device__ __forceinline__ void wgmma_rs(Array<float, N / 2>& d, const Array<T, 8>& a, const T* b, u64 b_len, J bi, oob_later* later) {
    static_assert(same_type<T, half>::value || same_type<T, bfloat16>::value, "cuprum: wgmma_m64nNk16_rs takes f16 or bf16 operands");
    u64 ib = (u64)bi;
    u32 sb = shared_address(b);
    u32 a0 = pack_pair(a.v[0], a.v[1]), a1 = pack_pair(a.v[2], a.v[3]), a2 = pack_pair(a.v[4], a.v[5]), a3 = pack_pair(a.v[6], a.v[7]);
    u64 db;
    if constexpr (!CHECK) {
        (void)b_len;
        (void)later;
        db = wgmma_desc_at(sb, (u32)ib * 2u, 8192u, 1024u);
    } else {
        bool bmis = ((u32)ib & 4095u & ~3072u) != 0;
        constexpr u64 more = (u64)(N - 64) * 64;
        u64 b_limit = b_len > more ? b_len - more : 0;
        bool bok = !bmis && (ib | 4095u) < b_limit;
        bool ok = bok && (sb & 1023u) == 0;
        // As `wgmma`'s note: B's index, else the array's alignment.
        u64 index = !bok ? ib : 0;
        u64 len = !bok ? (bmis ? 1024 : b_len) : 1024 / sizeof(T);
        bool mis = !bok ? bmis : true;
        later->note(ok, index, len, index_info<J>::signed_bit | (mis ? oob_misaligned : 0u));
        if (b_len < (u64)N * 64) return;
        db = wgmma_desc_at(sb, ok ? (u32)ib * 2u : 0u, 8192u, 1024u);
    }
    if constexpr (N == 64) wgmma_m64n64k16_rs_raw<T>(d, a0, a1, a2, a3, db);
    if constexpr (N == 128) wgmma_m64n128k16_rs_raw<T>(d, a0, a1, a2, a3, db);
    if constexpr (N == 256) wgmma_m64n256k16_rs_raw<T>(d, a0, a1, a2, a3, db);
}

// ---- named barriers ------------------------------------------------------------------------------

// Waits until `threads` threads of the block (a multiple of 32, the warps arriving whole) have
// arrived at hardware barrier `id` (0 to 15; `sync_threads` uses 0): `bar.sync id, threads`.
template <typename T = void>
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Arrives at barrier `id` without waiting (a producer signalling the threads that sync on it):
// `bar.arrive id, threads`.
template <typename T = void>
__device__ __forceinline__ void named_barrier_arrive(u32 id, u32 threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}



// ---- generated by benches/experiments/gemm_wgmma/gen_wgmma.py --fp8: begin
template <typename T>
__device__ __forceinline__ void wgmma_m64n64k32_raw(Array<float, 32>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, fp8_e4m3>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "l"(da), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31])
            : "l"(da), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n128k32_raw(Array<float, 64>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, fp8_e4m3>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "l"(da), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63])
            : "l"(da), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k32_raw(Array<float, 128>& d, u64 da, u64 db) {
#if CUPRUM_SM90A
    if constexpr (same_type<T, fp8_e4m3>::value) {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0; wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "l"(da), "l"(db), "r"(1));
    } else {
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0; wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1; }"
            : "+f"(d.v[0]), "+f"(d.v[1]), "+f"(d.v[2]), "+f"(d.v[3]), "+f"(d.v[4]), "+f"(d.v[5]), "+f"(d.v[6]), "+f"(d.v[7]), "+f"(d.v[8]), "+f"(d.v[9]), "+f"(d.v[10]), "+f"(d.v[11]), "+f"(d.v[12]), "+f"(d.v[13]), "+f"(d.v[14]), "+f"(d.v[15]), "+f"(d.v[16]), "+f"(d.v[17]), "+f"(d.v[18]), "+f"(d.v[19]), "+f"(d.v[20]), "+f"(d.v[21]), "+f"(d.v[22]), "+f"(d.v[23]), "+f"(d.v[24]), "+f"(d.v[25]), "+f"(d.v[26]), "+f"(d.v[27]), "+f"(d.v[28]), "+f"(d.v[29]), "+f"(d.v[30]), "+f"(d.v[31]), "+f"(d.v[32]), "+f"(d.v[33]), "+f"(d.v[34]), "+f"(d.v[35]), "+f"(d.v[36]), "+f"(d.v[37]), "+f"(d.v[38]), "+f"(d.v[39]), "+f"(d.v[40]), "+f"(d.v[41]), "+f"(d.v[42]), "+f"(d.v[43]), "+f"(d.v[44]), "+f"(d.v[45]), "+f"(d.v[46]), "+f"(d.v[47]), "+f"(d.v[48]), "+f"(d.v[49]), "+f"(d.v[50]), "+f"(d.v[51]), "+f"(d.v[52]), "+f"(d.v[53]), "+f"(d.v[54]), "+f"(d.v[55]), "+f"(d.v[56]), "+f"(d.v[57]), "+f"(d.v[58]), "+f"(d.v[59]), "+f"(d.v[60]), "+f"(d.v[61]), "+f"(d.v[62]), "+f"(d.v[63]), "+f"(d.v[64]), "+f"(d.v[65]), "+f"(d.v[66]), "+f"(d.v[67]), "+f"(d.v[68]), "+f"(d.v[69]), "+f"(d.v[70]), "+f"(d.v[71]), "+f"(d.v[72]), "+f"(d.v[73]), "+f"(d.v[74]), "+f"(d.v[75]), "+f"(d.v[76]), "+f"(d.v[77]), "+f"(d.v[78]), "+f"(d.v[79]), "+f"(d.v[80]), "+f"(d.v[81]), "+f"(d.v[82]), "+f"(d.v[83]), "+f"(d.v[84]), "+f"(d.v[85]), "+f"(d.v[86]), "+f"(d.v[87]), "+f"(d.v[88]), "+f"(d.v[89]), "+f"(d.v[90]), "+f"(d.v[91]), "+f"(d.v[92]), "+f"(d.v[93]), "+f"(d.v[94]), "+f"(d.v[95]), "+f"(d.v[96]), "+f"(d.v[97]), "+f"(d.v[98]), "+f"(d.v[99]), "+f"(d.v[100]), "+f"(d.v[101]), "+f"(d.v[102]), "+f"(d.v[103]), "+f"(d.v[104]), "+f"(d.v[105]), "+f"(d.v[106]), "+f"(d.v[107]), "+f"(d.v[108]), "+f"(d.v[109]), "+f"(d.v[110]), "+f"(d.v[111]), "+f"(d.v[112]), "+f"(d.v[113]), "+f"(d.v[114]), "+f"(d.v[115]), "+f"(d.v[116]), "+f"(d.v[117]), "+f"(d.v[118]), "+f"(d.v[119]), "+f"(d.v[120]), "+f"(d.v[121]), "+f"(d.v[122]), "+f"(d.v[123]), "+f"(d.v[124]), "+f"(d.v[125]), "+f"(d.v[126]), "+f"(d.v[127])
            : "l"(da), "l"(db), "r"(1));
    }
#else
    __trap();
#endif
}
// ---- generated: end

// d += A * B on a 64 x N tile of the warpgroup from 8-bit float operands (T = fp8_e4m3 or
// fp8_e5m2, both operands the same), k = 32: both K-major (FP8 wgmma reads neither operand
// transposed), in tiles of 64 rows of 128 elements (128 bytes, 128-byte swizzle, 8192 elements);
// A's columns start at 0, 32, 64 or 96 of its tile; B is stored N x K (B^T) in N / 64 consecutive
// tiles, its columns (k) starting at 0, 32, 64 or 96. The checks are those of `wgmma` above.
template <int N, bool CHECK, typename T, typename I, typename J>
__device__ __forceinline__ void wgmma_fp8(Array<float, N / 2>& d, const T* a, u64 a_len, I ai, const T* b, u64 b_len, J bi, oob_later* later) {
    static_assert(same_type<T, fp8_e4m3>::value || same_type<T, fp8_e5m2>::value, "cuprum: wgmma_m64nNk32 takes f8e4m3 or f8e5m2 operands");
    u64 ia = (u64)ai, ib = (u64)bi;
    u32 sa = shared_address(a), sb = shared_address(b);
    if constexpr (!CHECK) {
        (void)a_len;
        (void)b_len;
        (void)later;
        u64 da = wgmma_desc_at(sa, (u32)ia, 16u, 1024u), db = wgmma_desc_at(sb, (u32)ib, 16u, 1024u);
        if constexpr (N == 64) wgmma_m64n64k32_raw<T>(d, da, db);
        if constexpr (N == 128) wgmma_m64n128k32_raw<T>(d, da, db);
        if constexpr (N == 256) wgmma_m64n256k32_raw<T>(d, da, db);
        return;
    }
    bool amis = ((u32)ia & 8191u & ~96u) != 0, bmis = ((u32)ib & 8191u & ~96u) != 0;
    constexpr u64 more = (u64)(N - 64) * 128;
    u64 b_limit = b_len > more ? b_len - more : 0;
    bool aok = !amis && (ia | 8191u) < a_len;
    bool bok = !bmis && (ib | 8191u) < b_limit;
    bool ok = aok && bok && ((sa | sb) & 1023u) == 0;
    u64 index = !aok ? ia : (!bok ? ib : 0);
    u64 len = !aok ? (amis ? 32 : a_len) : (!bok ? (bmis ? 32 : b_len) : 1024);
    bool mis = !aok ? amis : (!bok ? bmis : true);
    u32 sign = !aok ? index_info<I>::signed_bit : index_info<J>::signed_bit;
    later->note(ok, index, len, sign | (mis ? oob_misaligned : 0u));
    if (a_len < 8192 || b_len < (u64)N * 128) return;
    u64 da = wgmma_desc_at(sa, ok ? (u32)ia : 0u, 16u, 1024u);
    u64 db = wgmma_desc_at(sb, ok ? (u32)ib : 0u, 16u, 1024u);
    if constexpr (N == 64) wgmma_m64n64k32_raw<T>(d, da, db);
    if constexpr (N == 128) wgmma_m64n128k32_raw<T>(d, da, db);
    if constexpr (N == 256) wgmma_m64n256k32_raw<T>(d, da, db);
}

}  // namespace cuprum
