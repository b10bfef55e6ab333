// Elementwise kernels over `#[device]` structs, written as cuprum's code generator writes them
// (compare compiler/tests/out/elementwise_squared_diff.cu): the runtime's struct tests launch
// them through `elementwise::launch` (gpu_struct_elements.rs) and compile them with NVRTC
// (elementwise_nvrtc.rs). The structs mirror the Rust ones in those tests.
#include <cuprum/types.h>
#include <cuprum/elementwise.h>

// 12 bytes, aligned to 4: no vector type, scalar accesses only.
struct Particle {
    f32 x;
    f32 y;
    f32 mass;
};

// 8 bytes, aligned to 4: two per 16-byte vector access.
struct Pair {
    f32 a;
    f32 b;
};

// advance(p: Particle, dt: f32) -> Particle { x: p.x + p.y * dt, y: p.y, mass: 2 * p.mass }
__device__ __forceinline__ Particle advance_map(u64 _ci, u64 _cn, Particle p, f32 dt) {
    Particle q = p;
    q.x = p.x + p.y * dt;
    q.mass = p.mass * 2.0f;
    return q;
}
#define CUPRUM_INSTANTIATE_advance(NAME, VARIANT) \
    extern "C" __global__ void NAME(cuprum::ew::In<Particle, cuprum::ew::VARIANT> _ca0, cuprum::ew::In<f32, cuprum::ew::VARIANT> _ca1, cuprum::ew::Out<Particle, cuprum::ew::VARIANT> _co0, cuprum::ew::Loop<cuprum::ew::VARIANT> _cloop) { \
        cuprum::ew::run(_cloop, [&](u64 _ci, Particle p, f32 dt, Particle& _cout0) { _cout0 = advance_map(_ci, _cloop.size, p, dt); }, _ca0, _ca1, _co0); \
    }
#define CUPRUM_INSTANTIATE_advance_contig(NAME) CUPRUM_INSTANTIATE_advance(NAME, contig)
#define CUPRUM_INSTANTIATE_advance_s32(NAME) CUPRUM_INSTANTIATE_advance(NAME, s32)
#define CUPRUM_INSTANTIATE_advance_s64(NAME) CUPRUM_INSTANTIATE_advance(NAME, s64)
#define CUPRUM_INSTANTIATE_advance_t32(NAME) CUPRUM_INSTANTIATE_advance(NAME, t32)

// swap(p: Pair) -> (Pair, f32): (Pair { a: p.b, b: p.a }, p.a + p.b)
#define CUPRUM_INSTANTIATE_swap(NAME, VARIANT) \
    extern "C" __global__ void NAME(cuprum::ew::In<Pair, cuprum::ew::VARIANT> _ca0, cuprum::ew::Out<Pair, cuprum::ew::VARIANT> _co0, cuprum::ew::Out<f32, cuprum::ew::VARIANT> _co1, cuprum::ew::Loop<cuprum::ew::VARIANT> _cloop) { \
        cuprum::ew::run(_cloop, [&](u64 _ci, Pair p, Pair& _cout0, f32& _cout1) { Pair q = {p.b, p.a}; _cout0 = q; _cout1 = p.a + p.b; }, _ca0, _co0, _co1); \
    }
#define CUPRUM_INSTANTIATE_swap_contig(NAME) CUPRUM_INSTANTIATE_swap(NAME, contig)
#define CUPRUM_INSTANTIATE_swap_s32(NAME) CUPRUM_INSTANTIATE_swap(NAME, s32)
#define CUPRUM_INSTANTIATE_swap_s64(NAME) CUPRUM_INSTANTIATE_swap(NAME, s64)
#define CUPRUM_INSTANTIATE_swap_t32(NAME) CUPRUM_INSTANTIATE_swap(NAME, t32)

// 200 bytes (the runtime tests' `Big`): a tile of it is more shared memory than a block may have
// statically, so `t32` reads it across (the exchange holds elements of up to 16 bytes).
struct Big {
    f64 v[25];
};

// bump(b: Big) -> Big { v[0] + 1, v[1..] }
#define CUPRUM_INSTANTIATE_bump(NAME, VARIANT) \
    extern "C" __global__ void NAME(cuprum::ew::In<Big, cuprum::ew::VARIANT> _ca0, cuprum::ew::Out<Big, cuprum::ew::VARIANT> _co0, cuprum::ew::Loop<cuprum::ew::VARIANT> _cloop) { \
        cuprum::ew::run(_cloop, [&](u64 _ci, Big b, Big& _cout0) { Big q = b; q.v[0] += 1.0; _cout0 = q; }, _ca0, _co0); \
    }
#define CUPRUM_INSTANTIATE_bump_contig(NAME) CUPRUM_INSTANTIATE_bump(NAME, contig)
#define CUPRUM_INSTANTIATE_bump_s32(NAME) CUPRUM_INSTANTIATE_bump(NAME, s32)
#define CUPRUM_INSTANTIATE_bump_s64(NAME) CUPRUM_INSTANTIATE_bump(NAME, s64)
#define CUPRUM_INSTANTIATE_bump_t32(NAME) CUPRUM_INSTANTIATE_bump(NAME, t32)
