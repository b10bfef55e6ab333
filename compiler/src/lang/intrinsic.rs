//! The prelude's free functions callable in kernels (`thread_idx()`, `sync_threads()`,
//! `atomic_add(..)`, `shfl_sync(..)`, ...): what the front end resolves a call's name to.
//!
//! The type checker gives each its type (`typeck/calls.rs`), the validator says where each may be
//! used (`valid.rs`) and the CUDA writer spells it (`back/cuda/writer.rs`), each by an exhaustive
//! `match`.

use cuprum_abi::dtype::DType;
use super::Bound;

vocabulary! {
    /// A prelude intrinsic.
    pub enum Intrinsic {
        /// `thread_idx() -> Dim3`
        ThreadIdx = "thread_idx",
        /// `block_idx() -> Dim3`
        BlockIdx = "block_idx",
        /// `block_dim() -> Dim3`
        BlockDim = "block_dim",
        /// `grid_dim() -> Dim3`
        GridDim = "grid_dim",
        /// `grid_1d() -> u32`: the global thread index along x.
        Grid1d = "grid_1d",
        /// `grid_2d() -> (u32, u32)`
        Grid2d = "grid_2d",
        /// `grid_3d() -> (u32, u32, u32)`
        Grid3d = "grid_3d",
        /// `grid_size_1d() -> u32`: the number of threads of the grid along x.
        GridSize1d = "grid_size_1d",
        /// `grid_size_2d() -> (u32, u32)`
        GridSize2d = "grid_size_2d",
        /// `grid_size_3d() -> (u32, u32, u32)`
        GridSize3d = "grid_size_3d",
        /// `lane_id() -> u32`
        LaneId = "lane_id",
        /// `warp_size() -> u32`
        WarpSize = "warp_size",
        /// `sync_threads()`: the block barrier.
        SyncThreads = "sync_threads",
        /// `sync_warp(mask: u32)`
        SyncWarp = "sync_warp",
        /// `thread_fence()`
        ThreadFence = "thread_fence",
        /// `thread_fence_block()`
        ThreadFenceBlock = "thread_fence_block",
        /// `grid_sync()`: the barrier of every thread of the grid (CUDA's
        /// `cooperative_groups::this_grid().sync()`); a kernel that calls it is launched
        /// cooperatively (`Intrinsic::grid_wide`).
        GridSync = "grid_sync",
        /// `shared_array::<T, N>() -> &mut [T; N]`: static shared memory, bound by a `let`.
        SharedArray = "shared_array",
        /// `dynamic_shared::<T>() -> &mut [T]`: the launch's dynamic shared memory.
        DynamicShared = "dynamic_shared",
        /// `index() -> usize`: the element an elementwise or reduction body maps.
        Index = "index",
        /// `loop_size() -> usize`: the number of elements of that loop.
        LoopSize = "loop_size",
        /// `reduce_index() -> usize`: in a reduction's map, the element's position along the
        /// reduced axes (C order, `0..n` for `n` reduced elements per output).
        ReduceIndex = "reduce_index",
        /// `Complex::new(re, im)` (also the literal `Complex { re, im }`); the front end builds it
        /// from the path, never from a single name.
        ComplexNew = "Complex::new",
        /// `cp_async(dst: &mut [T; N], dst_index, src: &[T], src_index)`: starts an asynchronous
        /// copy of 16 bytes from global to shared memory (sm_80+); see `cp_async_wait`.
        CpAsync = "cp_async",
        /// `unsafe { cp_async_unchecked(dst, dst_index, src, src_index) }`: `cp_async` without
        /// its range and alignment checks, for loops where they cost (docs/kernel-language.md).
        CpAsyncUnchecked = "cp_async_unchecked",
        /// `cp_async_commit()`: closes the thread's group of copies started since the last one.
        CpAsyncCommit = "cp_async_commit",
        /// `cp_async_wait::<N>()`: waits until at most `N` of the thread's committed groups are
        /// still in flight (`N` from 0 to 7).
        CpAsyncWait = "cp_async_wait",
        /// `load4(x: &[T], i) -> [T; 4]`: `x[i..i + 4]` in the widest accesses the address's
        /// alignment allows (one 16-byte load for four aligned 4-byte elements).
        Load4 = "load4",
        /// `store4(y: &mut [T], i, v: [T; 4])`: `y[i..i + 4] = v`, as wide as `load4`.
        Store4 = "store4",
        ;
        /// `atomic_*(array, index, operand..) -> T`
        Atomic(AtomicOp),
        /// `shfl_*_sync(mask, value, lane_or_delta[, width]) -> T`
        Shuffle(Shuffle),
        /// `warp_reduce_*(value[, width]) -> T`, `warp_*_sum(value[, width]) -> T`: a warp's (or
        /// a tile's) reduction or prefix sum, built on shuffles.
        Warp(WarpOp),
        /// `mma_*(a, b, c) -> d`: a warp's matrix multiply-accumulate on tensor cores.
        Mma(Mma),
        /// `ldmatrix_x*(shared, index) -> fragment`: a warp's load of 8x8 matrices of 16-bit
        /// elements from shared memory into fragments.
        LdMatrix(LdMatrix),
        /// `erf(x) -> T`, `erfinv(x)`, ... of a float `x`: the error-function family of CUDA's
        /// math library, free functions because std has an unstable `f32::erf`.
        Special(SpecialFn),
        /// Hopper's mbarriers, TMA copies and warpgroup MMA (`mbarrier_*`, `tma_load_2d`,
        /// `wgmma_*`, `warpgroup_reg_*`).
        Hopper(HopperOp),
    }
}

impl Intrinsic {
    /// The number of (value) arguments; `shared_array` and `dynamic_shared` take their type and
    /// length as generic arguments.
    pub fn arity(self) -> usize {
        use Intrinsic::*;
        match self {
            ThreadIdx | BlockIdx | BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId
            | WarpSize | SyncThreads | ThreadFence | ThreadFenceBlock | SharedArray | DynamicShared | Index | LoopSize | ReduceIndex => 0,
            GridSync => 0,
            SyncWarp => 1,
            ComplexNew => 2,
            CpAsyncCommit | CpAsyncWait => 0,
            CpAsync | CpAsyncUnchecked => 4,
            Load4 => 2,
            Store4 => 3,
            Atomic(op) => op.arity(),
            Shuffle(s) => s.arity(),
            Warp(w) => w.arity(),
            Mma(_) => 3,
            LdMatrix(_) => 2,
            Special(_) => 1,
            Hopper(h) => h.arity(),
        }
    }

    /// The oldest architecture (`80` for sm_80) whose instructions the intrinsic needs, if it
    /// needs more than every supported GPU has. A kernel that uses it reports a build error for an
    /// older target (`cuprum_build`), and its C helper a compile error (`cuprum/tensor.h`).
    pub fn min_arch(self) -> Option<u32> {
        use Intrinsic::*;
        match self {
            CpAsync | CpAsyncUnchecked | CpAsyncCommit | CpAsyncWait | Mma(_) => Some(80),
            LdMatrix(_) => Some(75),
            Hopper(_) => Some(90),
            ThreadIdx | BlockIdx | BlockDim | GridDim | Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId
            | WarpSize | SyncThreads | SyncWarp | ThreadFence | ThreadFenceBlock | SharedArray | DynamicShared | Index | LoopSize
            | ReduceIndex | ComplexNew | Atomic(_) | Shuffle(_) | Warp(_) | GridSync | Special(_) | Load4 | Store4 => None,
        }
    }

    /// Whether the intrinsic needs the arch-specific target of its `min_arch` (`sm_90a`), whose
    /// code runs on that architecture only: cuprum-build builds a kernel that uses one for that
    /// target alone, and its C helper traps elsewhere (`cuprum/hopper.h`).
    pub fn arch_specific(self) -> bool {
        matches!(self, Intrinsic::Hopper(h) if h.arch_specific())
    }

    /// Whether every lane of the warp must execute the call together (CUDA's `.sync.aligned`
    /// and `_sync` operations): on the CPU device such a call suspends the lane until its warp
    /// has arrived.
    pub fn warp_collective(self) -> bool {
        use Intrinsic::*;
        matches!(self, SyncWarp | Shuffle(_) | Warp(_) | Mma(_) | LdMatrix(_))
    }

    /// Whether the call waits for every thread of the grid: a kernel that uses it, directly or
    /// through `#[device]` functions, needs all its blocks resident at once, so the runtime
    /// launches it cooperatively (`cuLaunchCooperativeKernel`) and checks its grid against the
    /// device's co-residency limit; on the CPU device its blocks run as coroutines of one
    /// scheduler.
    pub fn grid_wide(self) -> bool {
        matches!(self, Intrinsic::GridSync)
    }

    /// The C spelling: a CUDA builtin (`threadIdx`, `__syncthreads`), a helper of
    /// `include/cuprum/` (`cuprum::grid_1d`), or a name the generated code defines (`_ci`, the
    /// index parameter of the elementwise loop; `_cj`, a reduction map's position along the
    /// reduced axes; `cuprum_dynamic_smem`, the dynamic shared buffer).
    pub fn c_name(self) -> &'static str {
        use Intrinsic::*;
        match self {
            ThreadIdx => "threadIdx",
            BlockIdx => "blockIdx",
            BlockDim => "cuprum::block_dim",
            GridDim => "cuprum::grid_dim",
            Grid1d => "cuprum::grid_1d",
            Grid2d => "cuprum::grid_2d",
            Grid3d => "cuprum::grid_3d",
            GridSize1d => "cuprum::grid_size_1d",
            GridSize2d => "cuprum::grid_size_2d",
            GridSize3d => "cuprum::grid_size_3d",
            LaneId => "cuprum::lane_id",
            WarpSize => "warpSize",
            SyncThreads => "__syncthreads",
            SyncWarp => "__syncwarp",
            ThreadFence => "__threadfence",
            ThreadFenceBlock => "__threadfence_block",
            GridSync => "cuprum::grid_sync",
            SharedArray => "__shared__",
            DynamicShared => "cuprum_dynamic_smem",
            Index => "_ci",
            LoopSize => "_cn",
            ReduceIndex => "_cj",
            ComplexNew => "cuprum::make_complex",
            CpAsync | CpAsyncUnchecked => "cuprum::cp_async",
            CpAsyncCommit => "cuprum::cp_async_commit",
            CpAsyncWait => "cuprum::cp_async_wait",
            Load4 => "cuprum::load4",
            Store4 => "cuprum::store4",
            Atomic(op) => op.c_name(),
            Shuffle(s) => s.c_name(),
            Warp(w) => w.c_name(),
            Mma(m) => m.c_name(),
            LdMatrix(_) => "cuprum::ldmatrix",
            Special(f) => f.c_name(),
            Hopper(h) => h.c_name(),
        }
    }

    /// The CUDA builtin variable holding a `Dim3` intrinsic's value: `block_dim().x` is read as
    /// `blockDim.x` rather than through the helper.
    pub fn c_builtin(self) -> Option<&'static str> {
        use Intrinsic::*;
        match self {
            ThreadIdx => Some("threadIdx"),
            BlockIdx => Some("blockIdx"),
            BlockDim => Some("blockDim"),
            GridDim => Some("gridDim"),
            Grid1d | Grid2d | Grid3d | GridSize1d | GridSize2d | GridSize3d | LaneId | WarpSize | SyncThreads | SyncWarp | ThreadFence
            | ThreadFenceBlock | GridSync | SharedArray | DynamicShared | Index | LoopSize | ReduceIndex | ComplexNew | CpAsync
            | CpAsyncUnchecked | CpAsyncCommit | CpAsyncWait | Load4 | Store4 | Atomic(_) | Shuffle(_) | Warp(_) | Mma(_) | LdMatrix(_)
            | Special(_) | Hopper(_) => None,
        }
    }
}

vocabulary! {
    /// Hopper's asynchronous data movement and warpgroup tensor cores (docs/kernel-language.md,
    /// "Hopper: TMA, mbarriers and wgmma"; `cuprum/hopper.h`). Barriers are `u64` elements of a
    /// shared array (static or dynamic), named by the array and an index; tiles are 128-byte
    /// swizzled (`Swizzle::B128`).
    pub enum HopperOp {
        /// `mbarrier_init(bars, i, count)`: barrier `i` expects `count` arrivals per phase.
        MbarrierInit = "mbarrier_init",
        /// `mbarrier_arrive(bars, i)`: one arrival.
        MbarrierArrive = "mbarrier_arrive",
        /// `mbarrier_arrive_expect_tx(bars, i, bytes)`: one arrival, and `bytes` more that the
        /// phase waits for (the copies that complete on it).
        MbarrierArriveExpectTx = "mbarrier_arrive_expect_tx",
        /// `mbarrier_wait(bars, i, parity)`: waits until the phase of parity `parity` completed.
        MbarrierWait = "mbarrier_wait",
        /// `tma_load_2d(dst, dst_index, map, x, y, bars, i)`: the box of `map: &TensorMap<T>` at
        /// element coordinates (x along rows, y down columns) into `dst[dst_index..]`, completing
        /// on barrier `i`.
        TmaLoad2d = "tma_load_2d",
        /// `wgmma_fence()`: orders register accesses before the warpgroup's next multiplies.
        WgmmaFence = "wgmma_fence",
        /// `wgmma_commit()`: closes the group of multiplies started since the last one.
        WgmmaCommit = "wgmma_commit",
        /// `wgmma_wait::<N>(&mut acc)`: waits until at most `N` groups are in flight; `acc` may be
        /// read after it.
        WgmmaWait = "wgmma_wait",
        /// `wgmma_m64n64k16(&mut acc: [f32; 32], a, a_index, b, b_index)`.
        M64N64K16 = "wgmma_m64n64k16",
        /// `wgmma_m64n128k16(&mut acc: [f32; 64], a, a_index, b, b_index)`.
        M64N128K16 = "wgmma_m64n128k16",
        /// `wgmma_m64n256k16(&mut acc: [f32; 128], a, a_index, b, b_index)`.
        M64N256K16 = "wgmma_m64n256k16",
        /// `unsafe { wgmma_m64n64k16_unchecked(..) }`: without the operands' checks.
        M64N64K16Unchecked = "wgmma_m64n64k16_unchecked",
        /// `unsafe { wgmma_m64n128k16_unchecked(..) }`.
        M64N128K16Unchecked = "wgmma_m64n128k16_unchecked",
        /// `unsafe { wgmma_m64n256k16_unchecked(..) }`.
        M64N256K16Unchecked = "wgmma_m64n256k16_unchecked",
        /// `wgmma_m64n64k32(&mut acc: [f32; 32], a, a_index, b, b_index)`: FP8 (`f8e4m3` or
        /// `f8e5m2`) operands, both K-major (B stored transposed).
        M64N64K32 = "wgmma_m64n64k32",
        /// `wgmma_m64n128k32(&mut acc: [f32; 64], a, a_index, b, b_index)`: FP8.
        M64N128K32 = "wgmma_m64n128k32",
        /// `wgmma_m64n256k32(&mut acc: [f32; 128], a, a_index, b, b_index)`: FP8.
        M64N256K32 = "wgmma_m64n256k32",
        /// `unsafe { wgmma_m64n64k32_unchecked(..) }`: without the operands' checks.
        M64N64K32Unchecked = "wgmma_m64n64k32_unchecked",
        /// `unsafe { wgmma_m64n128k32_unchecked(..) }`.
        M64N128K32Unchecked = "wgmma_m64n128k32_unchecked",
        /// `unsafe { wgmma_m64n256k32_unchecked(..) }`.
        M64N256K32Unchecked = "wgmma_m64n256k32_unchecked",
        /// `wgmma_m64n64k16_bt(&mut acc: [f32; 32], a, a_index, b, b_index)`: B stored
        /// transposed (N x K, K-major, as A), e.g. the keys of `Q K^T`.
        M64N64K16Bt = "wgmma_m64n64k16_bt",
        /// `wgmma_m64n128k16_bt(&mut acc: [f32; 64], a, a_index, b, b_index)`.
        M64N128K16Bt = "wgmma_m64n128k16_bt",
        /// `wgmma_m64n256k16_bt(&mut acc: [f32; 128], a, a_index, b, b_index)`.
        M64N256K16Bt = "wgmma_m64n256k16_bt",
        /// `unsafe { wgmma_m64n64k16_bt_unchecked(..) }`: without the operands' checks.
        M64N64K16BtUnchecked = "wgmma_m64n64k16_bt_unchecked",
        /// `unsafe { wgmma_m64n128k16_bt_unchecked(..) }`.
        M64N128K16BtUnchecked = "wgmma_m64n128k16_bt_unchecked",
        /// `unsafe { wgmma_m64n256k16_bt_unchecked(..) }`.
        M64N256K16BtUnchecked = "wgmma_m64n256k16_bt_unchecked",
        /// `wgmma_m64n64k16_rs(&mut acc: [f32; 32], a: [T; 8], b, b_index)`: A from registers
        /// (each thread's fragment), B from shared memory (N-major).
        M64N64K16Rs = "wgmma_m64n64k16_rs",
        /// `wgmma_m64n128k16_rs(&mut acc: [f32; 64], a: [T; 8], b, b_index)`.
        M64N128K16Rs = "wgmma_m64n128k16_rs",
        /// `wgmma_m64n256k16_rs(&mut acc: [f32; 128], a: [T; 8], b, b_index)`.
        M64N256K16Rs = "wgmma_m64n256k16_rs",
        /// `unsafe { wgmma_m64n64k16_rs_unchecked(..) }`: without the operand's checks.
        M64N64K16RsUnchecked = "wgmma_m64n64k16_rs_unchecked",
        /// `unsafe { wgmma_m64n128k16_rs_unchecked(..) }`.
        M64N128K16RsUnchecked = "wgmma_m64n128k16_rs_unchecked",
        /// `unsafe { wgmma_m64n256k16_rs_unchecked(..) }`.
        M64N256K16RsUnchecked = "wgmma_m64n256k16_rs_unchecked",
        /// `named_barrier_sync(id, threads)`: waits until `threads` threads of the block (a
        /// multiple of 32) have arrived at hardware barrier `id` (1 to 15; 0 is `sync_threads`).
        NamedBarrierSync = "named_barrier_sync",
        /// `named_barrier_arrive(id, threads)`: arrives at barrier `id` without waiting.
        NamedBarrierArrive = "named_barrier_arrive",
        /// `warpgroup_reg_alloc::<N>()`: raises the warpgroup's registers per thread to `N`.
        RegAlloc = "warpgroup_reg_alloc",
        /// `warpgroup_reg_dealloc::<N>()`: lowers them to `N`, for the others to take.
        RegDealloc = "warpgroup_reg_dealloc",
    }
}

impl HopperOp {
    pub fn arity(self) -> usize {
        use HopperOp::*;
        match self {
            WgmmaFence | WgmmaCommit | RegAlloc | RegDealloc => 0,
            WgmmaWait => 1,
            MbarrierArrive => 2,
            MbarrierInit | MbarrierArriveExpectTx | MbarrierWait => 3,
            M64N64K16 | M64N128K16 | M64N256K16 | M64N64K16Unchecked | M64N128K16Unchecked | M64N256K16Unchecked => 5,
            M64N64K32 | M64N128K32 | M64N256K32 | M64N64K32Unchecked | M64N128K32Unchecked | M64N256K32Unchecked => 5,
            M64N64K16Bt | M64N128K16Bt | M64N256K16Bt | M64N64K16BtUnchecked | M64N128K16BtUnchecked | M64N256K16BtUnchecked => 5,
            M64N64K16Rs | M64N128K16Rs | M64N256K16Rs | M64N64K16RsUnchecked | M64N128K16RsUnchecked | M64N256K16RsUnchecked => 4,
            NamedBarrierSync | NamedBarrierArrive => 2,
            TmaLoad2d => 7,
        }
    }

    /// The warpgroup instructions only sm_90a has.
    pub fn arch_specific(self) -> bool {
        use HopperOp::*;
        !matches!(self, MbarrierInit | MbarrierArrive | MbarrierArriveExpectTx | MbarrierWait | TmaLoad2d | NamedBarrierSync | NamedBarrierArrive)
    }

    /// The N of a `wgmma_m64nNk16` or `wgmma_m64nNk32`.
    pub fn wgmma_n(self) -> Option<u64> {
        use HopperOp::*;
        match self {
            M64N64K16 | M64N64K16Unchecked | M64N64K32 | M64N64K32Unchecked | M64N64K16Bt | M64N64K16BtUnchecked | M64N64K16Rs | M64N64K16RsUnchecked => Some(64),
            M64N128K16 | M64N128K16Unchecked | M64N128K32 | M64N128K32Unchecked | M64N128K16Bt | M64N128K16BtUnchecked | M64N128K16Rs | M64N128K16RsUnchecked => {
                Some(128)
            }
            M64N256K16 | M64N256K16Unchecked | M64N256K32 | M64N256K32Unchecked | M64N256K16Bt | M64N256K16BtUnchecked | M64N256K16Rs | M64N256K16RsUnchecked => {
                Some(256)
            }
            _ => None,
        }
    }

    /// Whether a `wgmma_*` is the FP8 form (k = 32, `f8e4m3`/`f8e5m2` operands).
    pub fn wgmma_fp8(self) -> bool {
        use HopperOp::*;
        matches!(self, M64N64K32 | M64N128K32 | M64N256K32 | M64N64K32Unchecked | M64N128K32Unchecked | M64N256K32Unchecked)
    }

    /// Whether a `wgmma_*` reads B stored transposed (N x K, K-major): `wgmma_m64nNk16_bt`.
    pub fn wgmma_bt(self) -> bool {
        use HopperOp::*;
        matches!(self, M64N64K16Bt | M64N128K16Bt | M64N256K16Bt | M64N64K16BtUnchecked | M64N128K16BtUnchecked | M64N256K16BtUnchecked)
    }

    /// Whether a `wgmma_*` takes A from registers: `wgmma_m64nNk16_rs`.
    pub fn wgmma_rs(self) -> bool {
        use HopperOp::*;
        matches!(self, M64N64K16Rs | M64N128K16Rs | M64N256K16Rs | M64N64K16RsUnchecked | M64N128K16RsUnchecked | M64N256K16RsUnchecked)
    }

    /// Whether a `wgmma_*` checks its operands (the `_unchecked` forms do not).
    pub fn checked(self) -> bool {
        use HopperOp::*;
        !matches!(
            self,
            M64N64K16Unchecked
                | M64N128K16Unchecked
                | M64N256K16Unchecked
                | M64N64K32Unchecked
                | M64N128K32Unchecked
                | M64N256K32Unchecked
                | M64N64K16BtUnchecked
                | M64N128K16BtUnchecked
                | M64N256K16BtUnchecked
                | M64N64K16RsUnchecked
                | M64N128K16RsUnchecked
                | M64N256K16RsUnchecked
        )
    }

    /// The helper of `cuprum/hopper.h`.
    pub fn c_name(self) -> &'static str {
        use HopperOp::*;
        match self {
            MbarrierInit => "cuprum::mbarrier_init",
            MbarrierArrive => "cuprum::mbarrier_arrive",
            MbarrierArriveExpectTx => "cuprum::mbarrier_arrive_expect_tx",
            MbarrierWait => "cuprum::mbarrier_wait",
            TmaLoad2d => "cuprum::tma_load_2d",
            WgmmaFence => "cuprum::wgmma_fence",
            WgmmaCommit => "cuprum::wgmma_commit",
            WgmmaWait => "cuprum::wgmma_wait",
            M64N64K16 | M64N128K16 | M64N256K16 | M64N64K16Unchecked | M64N128K16Unchecked | M64N256K16Unchecked => "cuprum::wgmma",
            M64N64K32 | M64N128K32 | M64N256K32 | M64N64K32Unchecked | M64N128K32Unchecked | M64N256K32Unchecked => "cuprum::wgmma_fp8",
            M64N64K16Bt | M64N128K16Bt | M64N256K16Bt | M64N64K16BtUnchecked | M64N128K16BtUnchecked | M64N256K16BtUnchecked => "cuprum::wgmma_bt",
            M64N64K16Rs | M64N128K16Rs | M64N256K16Rs | M64N64K16RsUnchecked | M64N128K16RsUnchecked | M64N256K16RsUnchecked => "cuprum::wgmma_rs",
            NamedBarrierSync => "cuprum::named_barrier_sync",
            NamedBarrierArrive => "cuprum::named_barrier_arrive",
            RegAlloc => "cuprum::warpgroup_reg_alloc",
            RegDealloc => "cuprum::warpgroup_reg_dealloc",
        }
    }
}

vocabulary! {
    /// CUDA's atomic read-modify-write operations on an element of a `&mut [T]` or a shared
    /// array; each returns the old value.
    pub enum AtomicOp {
        Add = "atomic_add",
        Sub = "atomic_sub",
        Exch = "atomic_exch",
        Min = "atomic_min",
        Max = "atomic_max",
        /// `u32` only, as CUDA's `atomicInc`.
        Inc = "atomic_inc",
        /// `u32` only, as CUDA's `atomicDec`.
        Dec = "atomic_dec",
        And = "atomic_and",
        Or = "atomic_or",
        Xor = "atomic_xor",
        /// Compare-and-swap: `atomic_cas(array, index, compare, value)`.
        Cas = "atomic_cas",
        /// `atomic_load(array, index)`: a relaxed load that sees what other blocks published (a
        /// volatile load on the GPU, no read-modify-write: polling a flag costs no atomic).
        Load = "atomic_load",
    }
}

impl AtomicOp {
    /// The array, the index, then one operand (two for compare-and-swap).
    pub fn arity(self) -> usize {
        use AtomicOp::*;
        match self {
            Cas => 4,
            Load => 2,
            Add | Sub | Exch | Min | Max | Inc | Dec | And | Or | Xor => 3,
        }
    }

    /// The helper of `cuprum/atomic.h`, called with the element's address.
    pub fn c_name(self) -> &'static str {
        use AtomicOp::*;
        match self {
            Add => "cuprum::atomic_add",
            Sub => "cuprum::atomic_sub",
            Exch => "cuprum::atomic_exch",
            Min => "cuprum::atomic_min",
            Max => "cuprum::atomic_max",
            Inc => "cuprum::atomic_inc",
            Dec => "cuprum::atomic_dec",
            And => "cuprum::atomic_and",
            Or => "cuprum::atomic_or",
            Xor => "cuprum::atomic_xor",
            Cas => "cuprum::atomic_cas",
            Load => "cuprum::atomic_load",
        }
    }

    /// Whether CUDA has the operation for elements of type `d` (others: a clear error rather than
    /// one from nvcc).
    pub fn supports(self, d: DType) -> bool {
        use AtomicOp::*;
        use DType::*;
        match self {
            Add => matches!(d, I32 | U32 | I64 | U64 | F16 | BF16 | F32 | F64),
            Sub => matches!(d, I32 | U32 | I64 | U64 | F32 | F64),
            Exch | Cas => matches!(d, I32 | U32 | I64 | U64 | F32 | F64 | U16),
            Load => matches!(d, I32 | U32 | I64 | U64 | F32 | F64),
            Min | Max => matches!(d, I32 | U32 | I64 | U64 | F32 | F64),
            Inc | Dec => d == U32,
            And | Or | Xor => matches!(d, I32 | U32 | I64 | U64),
        }
    }

    /// The bound a generic element type needs; `None` when no generic element will do (the
    /// operation exists for one concrete type only).
    pub fn generic_bound(self) -> Option<Bound> {
        use AtomicOp::*;
        match self {
            And | Or | Xor => Some(Bound::Int),
            Min | Max => Some(Bound::Real),
            Add | Sub | Load => Some(Bound::Number),
            Exch | Cas => Some(Bound::Scalar),
            Inc | Dec => None,
        }
    }
}

vocabulary! {
    /// Warp shuffles: `shfl_sync(mask, value, src_lane)` and its `up`/`down`/`xor` forms; the
    /// `_width` forms take a sub-warp width last.
    pub enum Shuffle {
        Idx = "shfl_sync",
        Up = "shfl_up_sync",
        Down = "shfl_down_sync",
        Xor = "shfl_xor_sync",
        IdxWidth = "shfl_sync_width",
        UpWidth = "shfl_up_sync_width",
        DownWidth = "shfl_down_sync_width",
        XorWidth = "shfl_xor_sync_width",
    }
}

impl Shuffle {
    /// Whether the sub-warp width is given (the last argument).
    pub fn has_width(self) -> bool {
        use Shuffle::*;
        match self {
            Idx | Up | Down | Xor => false,
            IdxWidth | UpWidth | DownWidth | XorWidth => true,
        }
    }

    /// How many arguments the call takes (mask, value, lane or delta, and the width when given).
    pub fn arity(self) -> usize {
        if self.has_width() { 4 } else { 3 }
    }

    /// The helper of `cuprum/thread.h`; the width forms are overloads of the same helper.
    pub fn c_name(self) -> &'static str {
        use Shuffle::*;
        match self {
            Idx | IdxWidth => "cuprum::shfl_sync",
            Up | UpWidth => "cuprum::shfl_up_sync",
            Down | DownWidth => "cuprum::shfl_down_sync",
            Xor | XorWidth => "cuprum::shfl_xor_sync",
        }
    }
}

vocabulary! {
    /// Warp collectives (CUB's `WarpReduce`/`WarpScan`, cooperative groups' `reduce` and
    /// `inclusive_scan` on a tile): every lane of the warp calls them together and gets its result;
    /// the `_width` forms work within tiles of `width` lanes (a power of two up to 32).
    pub enum WarpOp {
        ReduceSum = "warp_reduce_sum",
        ReduceMin = "warp_reduce_min",
        ReduceMax = "warp_reduce_max",
        InclusiveSum = "warp_inclusive_sum",
        ExclusiveSum = "warp_exclusive_sum",
        ReduceSumWidth = "warp_reduce_sum_width",
        ReduceMinWidth = "warp_reduce_min_width",
        ReduceMaxWidth = "warp_reduce_max_width",
        InclusiveSumWidth = "warp_inclusive_sum_width",
        ExclusiveSumWidth = "warp_exclusive_sum_width",
        /// `warp_any(p: bool) -> bool`: whether `p` holds in any lane of the warp (CUDA's
        /// `__any_sync` with the full mask); the result is the same in every lane, so a branch
        /// on it is uniform and the compiler keeps it a branch.
        Any = "warp_any",
        /// `warp_all(p: bool) -> bool`: whether `p` holds in every lane (`__all_sync`).
        All = "warp_all",
    }
}

impl WarpOp {
    /// Whether the tile width is given (the last argument).
    pub fn has_width(self) -> bool {
        use WarpOp::*;
        matches!(self, ReduceSumWidth | ReduceMinWidth | ReduceMaxWidth | InclusiveSumWidth | ExclusiveSumWidth)
    }

    /// How many arguments the call takes (the value, and the width when given).
    pub fn arity(self) -> usize {
        if self.has_width() { 2 } else { 1 }
    }

    /// Whether the collective is a vote (`warp_any`, `warp_all`: a `bool` in, a `bool` out).
    pub fn is_vote(self) -> bool {
        matches!(self, WarpOp::Any | WarpOp::All)
    }

    /// The bound the value's type needs: `Number` for sums, `Real` for the minimum and maximum
    /// (votes take a `bool`: typeck checks them on their own).
    pub fn bound(self) -> Bound {
        use WarpOp::*;
        match self {
            ReduceMin | ReduceMax | ReduceMinWidth | ReduceMaxWidth => Bound::Real,
            _ => Bound::Number,
        }
    }

    /// The helper of `cuprum/warp.h`; the width forms are overloads of the same helper.
    pub fn c_name(self) -> &'static str {
        use WarpOp::*;
        match self {
            ReduceSum | ReduceSumWidth => "cuprum::warp_reduce_sum",
            ReduceMin | ReduceMinWidth => "cuprum::warp_reduce_min",
            ReduceMax | ReduceMaxWidth => "cuprum::warp_reduce_max",
            InclusiveSum | InclusiveSumWidth => "cuprum::warp_inclusive_sum",
            ExclusiveSum | ExclusiveSumWidth => "cuprum::warp_exclusive_sum",
            Any => "cuprum::warp_any",
            All => "cuprum::warp_all",
        }
    }
}

vocabulary! {
    /// The warp-level matrix multiply-accumulates (PTX `mma.sync.aligned`, row-major A, column-major
    /// B): `d = a * b + c` for a 16 x 8 tile of `d`, each lane holding its part of every operand in
    /// PTX's fragment layout (docs/kernel-language.md, "Tensor cores").
    pub enum Mma {
        /// `mma_m16n8k16(a: [T; 8], b: [T; 4], c: [f32; 4]) -> [f32; 4]`, `T` = `f16` or `bf16`.
        M16N8K16 = "mma_m16n8k16",
        /// `mma_m16n8k8_tf32(a: [f32; 4], b: [f32; 2], c: [f32; 4]) -> [f32; 4]`: the inputs
        /// rounded to TF32 (10 mantissa bits, to nearest, ties away from zero).
        M16N8K8Tf32 = "mma_m16n8k8_tf32",
        /// `mma_m16n8k32_i8(a: [i8; 16], b: [i8; 8], c: [i32; 4]) -> [i32; 4]`, wrapping.
        M16N8K32I8 = "mma_m16n8k32_i8",
    }
}

impl Mma {
    /// The element types the operands may have (one of them, the same for `a` and `b`), and
    /// the fragment lengths of `a`, `b` and `c` (= `d`), whose element type is the accumulator's.
    pub fn shape(self) -> (&'static [DType], usize, usize, DType) {
        match self {
            Mma::M16N8K16 => (&[DType::F16, DType::BF16], 8, 4, DType::F32),
            Mma::M16N8K8Tf32 => (&[DType::F32], 4, 2, DType::F32),
            Mma::M16N8K32I8 => (&[DType::I8], 16, 8, DType::I32),
        }
    }

    /// The helper of `cuprum/tensor.h`.
    pub fn c_name(self) -> &'static str {
        match self {
            Mma::M16N8K16 => "cuprum::mma_m16n8k16",
            Mma::M16N8K8Tf32 => "cuprum::mma_m16n8k8_tf32",
            Mma::M16N8K32I8 => "cuprum::mma_m16n8k32_i8",
        }
    }
}

vocabulary! {
    /// `ldmatrix_x{1,2,4}[_trans](shared, index)`: lane `l < 8 * count` gives the index of row
    /// `l % 8` of matrix `l / 8` (8 consecutive 16-bit elements, 16-byte aligned); each lane gets
    /// two elements of every matrix, in the layout of an `mma` fragment (transposed for `_trans`).
    pub enum LdMatrix {
        X1 = "ldmatrix_x1",
        X2 = "ldmatrix_x2",
        X4 = "ldmatrix_x4",
        X1Trans = "ldmatrix_x1_trans",
        X2Trans = "ldmatrix_x2_trans",
        X4Trans = "ldmatrix_x4_trans",
        /// The same loads without the range and alignment checks of their rows: `unsafe`
        /// (docs/kernel-language.md, "Tensor cores").
        X1Unchecked = "ldmatrix_x1_unchecked",
        X2Unchecked = "ldmatrix_x2_unchecked",
        X4Unchecked = "ldmatrix_x4_unchecked",
        X1TransUnchecked = "ldmatrix_x1_trans_unchecked",
        X2TransUnchecked = "ldmatrix_x2_trans_unchecked",
        X4TransUnchecked = "ldmatrix_x4_trans_unchecked",
    }
}

impl LdMatrix {
    /// The number of 8x8 matrices loaded (1, 2 or 4): each lane gets two elements of each.
    pub fn count(self) -> u32 {
        use LdMatrix::*;
        match self {
            X1 | X1Trans | X1Unchecked | X1TransUnchecked => 1,
            X2 | X2Trans | X2Unchecked | X2TransUnchecked => 2,
            X4 | X4Trans | X4Unchecked | X4TransUnchecked => 4,
        }
    }

    /// Whether the matrices are transposed on the way (`.trans`).
    pub fn trans(self) -> bool {
        use LdMatrix::*;
        matches!(self, X1Trans | X2Trans | X4Trans | X1TransUnchecked | X2TransUnchecked | X4TransUnchecked)
    }

    /// Whether each lane's row is checked (in range, 16-byte aligned); the `_unchecked` forms
    /// are `unsafe`.
    pub fn checked(self) -> bool {
        use LdMatrix::*;
        matches!(self, X1 | X2 | X4 | X1Trans | X2Trans | X4Trans)
    }
}

vocabulary! {
    /// The error-function family, `name(x: T) -> T` for a float `x` (`f16`, `bf16`, `f32`, `f64`
    /// or `T: Float`): CUDA's `erff`/`erf`, ... through `cuprum/math.h`, which computes `f16` and
    /// `bf16` in `f32`. Free functions, not methods: std has an unstable `f32::erf`, with which a
    /// prelude method of that name would collide (`x.erf()` is an error that says so).
    pub enum SpecialFn {
        /// The error function.
        Erf = "erf",
        /// `1 - erf(x)`, accurate where `erf(x)` is close to 1.
        Erfc = "erfc",
        /// The inverse of `erf`, on `[-1, 1]`.
        Erfinv = "erfinv",
        /// The inverse of `erfc`, on `[0, 2]`.
        Erfcinv = "erfcinv",
        /// The standard normal distribution function.
        Normcdf = "normcdf",
        /// Its inverse, on `[0, 1]`.
        Normcdfinv = "normcdfinv",
    }
}

impl SpecialFn {
    /// The overloaded helper of `cuprum/math.h` (`cuprum::erfinv` calls `erfinvf` for a `float`).
    pub fn c_name(self) -> &'static str {
        use SpecialFn::*;
        match self {
            Erf => "cuprum::erf",
            Erfc => "cuprum::erfc",
            Erfinv => "cuprum::erfinv",
            Erfcinv => "cuprum::erfcinv",
            Normcdf => "cuprum::normcdf",
            Normcdfinv => "cuprum::normcdfinv",
        }
    }
}
