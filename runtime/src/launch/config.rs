//! A launch's geometry: [`LaunchConfig`] (grid, block, dynamic shared memory, stream) and
//! [`check_config`], which checks it against a kernel's [`LaunchLimits`] before anything runs.

pub use crate::function::{CoResidency, LaunchLimits};
pub use crate::dim3::Dim3;
use crate::error::{Error, Result};
use crate::stream::Stream;

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32,)> for Dim3 {
    fn from((x,): (u32,)) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<[u32; 1]> for Dim3 {
    fn from([x]: [u32; 1]) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<[u32; 2]> for Dim3 {
    fn from([x, y]: [u32; 2]) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<[u32; 3]> for Dim3 {
    fn from([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

fn dims_text(d: Dim3) -> String {
    format!("({}, {}, {})", d.x, d.y, d.z)
}

/// Grid, block, dynamic shared memory and stream of a launch (CuPy's
/// `kernel(grid, block, args, shared_mem=..., stream=...)`).
///
/// ```
/// # use cuprum_runtime::LaunchConfig;
/// let cfg = LaunchConfig::new(80, 256).shared_mem(4096);
/// let cfg2 = LaunchConfig::new((16, 16), (8, 8, 4));
/// # let _ = (cfg, cfg2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'s> {
    /// Blocks in the grid (each dimension at least 1).
    pub grid: Dim3,
    /// Threads per block (each dimension at least 1).
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes (`extern __shared__`).
    pub shared_mem_bytes: u32,
    /// The stream; `None`: the current stream of the current device.
    pub stream: Option<&'s Stream>,
}

impl<'s> LaunchConfig<'s> {
    /// A launch of `grid` blocks of `block` threads (1 to 3 dimensions each: `n`, `(x, y)`,
    /// `(x, y, z)` or arrays), no dynamic shared memory, on the current stream.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig<'static> {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            stream: None,
        }
    }

    /// A 1-D launch covering `n` threads with blocks of `block` threads.
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig<'static> {
        let block = block.max(1);
        let blocks = n.div_ceil(block as usize).max(1);
        LaunchConfig::new(u32::try_from(blocks).unwrap_or(u32::MAX), block)
    }

    /// Sets the dynamic shared memory per block, in bytes.
    pub fn shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Launches on `stream` instead of the current stream.
    pub fn stream<'t>(self, stream: &'t Stream) -> LaunchConfig<'t> {
        LaunchConfig {
            grid: self.grid,
            block: self.block,
            shared_mem_bytes: self.shared_mem_bytes,
            stream: Some(stream),
        }
    }
}

/// Checks a configuration against the limits; the error says which limit and what to change.
pub fn check_config(
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared_mem: u32,
    limits: &LaunchLimits,
) -> Result<()> {
    let fail = |detail: String| {
        Err(Error::InvalidLaunch {
            kernel: kernel.to_string(),
            detail,
        })
    };
    let axes = ["x", "y", "z"];
    let g = [grid.x, grid.y, grid.z];
    let b = [block.x, block.y, block.z];
    if g.contains(&0) {
        return fail(format!(
            "the grid {} has a zero dimension: every dimension must be at least 1",
            dims_text(grid)
        ));
    }
    if b.contains(&0) {
        return fail(format!(
            "the block {} has a zero dimension: every dimension must be at least 1",
            dims_text(block)
        ));
    }
    for i in 0..3 {
        if b[i] > limits.max_block_dim[i] {
            return fail(format!(
                "the block {} is {} threads along {}, but this device allows at most {}",
                dims_text(block),
                b[i],
                axes[i],
                limits.max_block_dim[i]
            ));
        }
    }
    let threads = b.iter().map(|&v| v as u64).product::<u64>();
    if threads > limits.max_threads_per_block as u64 {
        return fail(format!(
            "the block {} has {threads} threads, but this kernel allows at most {} per block \
             (its max_threads_per_block attribute: the device's limit, lowered by register use \
             or __launch_bounds__); use smaller blocks",
            dims_text(block),
            limits.max_threads_per_block
        ));
    }
    for i in 0..3 {
        if g[i] > limits.max_grid_dim[i] {
            return fail(format!(
                "the grid {} is {} blocks along {}, but this device allows at most {}",
                dims_text(grid),
                g[i],
                axes[i],
                limits.max_grid_dim[i]
            ));
        }
    }
    if shared_mem > limits.max_dynamic_shared_bytes {
        return Err(Error::SharedMemory {
            kernel: kernel.to_string(),
            requested: shared_mem,
            limit: limits.max_dynamic_shared_bytes,
            optin: limits.max_shared_optin,
            static_bytes: limits.static_shared_bytes,
        });
    }
    Ok(())
}

/// Checks a cooperative launch's grid against the device's co-residency limit:
/// [`Error::CooperativeGrid`] when it has more blocks than the device keeps resident (then
/// blocks at a `grid_sync()` would wait forever for blocks that cannot start).
/// `cooperative_groups`: the kernel is a `RawKernel` launched cooperatively (for the message).
pub fn check_cooperative(
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared_mem: u32,
    limit: CoResidency,
    cooperative_groups: bool,
) -> Result<()> {
    let blocks = u64::from(grid.x) * u64::from(grid.y) * u64::from(grid.z);
    if blocks <= limit.blocks() {
        return Ok(());
    }
    Err(Error::CooperativeGrid {
        kernel: kernel.to_string(),
        blocks,
        limit: limit.blocks(),
        per_multiprocessor: limit.per_multiprocessor,
        multiprocessors: limit.multiprocessors,
        block_threads: block.x.saturating_mul(block.y).saturating_mul(block.z),
        shared_bytes: shared_mem,
        cooperative_groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: LaunchLimits = LaunchLimits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [2147483647, 65535, 65535],
        max_dynamic_shared_bytes: 48 * 1024,
        max_shared_optin: 227 * 1024,
        static_shared_bytes: 0,
    };

    fn check(grid: impl Into<Dim3>, block: impl Into<Dim3>, smem: u32) -> Result<()> {
        check_config("k", grid.into(), block.into(), smem, &LIMITS)
    }

    #[test]
    fn dims_from_tuples() {
        assert_eq!(Dim3::from(5), Dim3 { x: 5, y: 1, z: 1 });
        assert_eq!(Dim3::from((5, 2)), Dim3 { x: 5, y: 2, z: 1 });
        assert_eq!(Dim3::from([5, 2, 3]), Dim3 { x: 5, y: 2, z: 3 });
        let c = LaunchConfig::for_elements(1000, 256);
        assert_eq!((c.grid.x, c.block.x), (4, 256));
        assert_eq!(LaunchConfig::for_elements(0, 256).grid.x, 1);
    }

    #[test]
    fn launch_checks() {
        assert!(check(100, 256, 0).is_ok());
        assert!(check((1, 65535), (32, 32), 48 * 1024).is_ok());
        let msg = |r: Result<()>| r.unwrap_err().to_string();
        assert!(msg(check(0, 32, 0)).contains("zero dimension"));
        assert!(msg(check(1, (32, 0), 0)).contains("zero dimension"));
        assert!(msg(check(1, 2048, 0)).contains("at most 1024"));
        assert!(msg(check(1, (1, 1, 65), 0)).contains("along z"));
        let m = msg(check(1, (32, 32, 2), 0));
        assert!(
            m.contains("2048 threads") && m.contains("max_threads_per_block"),
            "{m}"
        );
        assert!(msg(check((1, 65536), 1, 0)).contains("along y"));
        let m = msg(check(1, 32, 48 * 1024 + 1));
        assert!(
            m.contains("max_dynamic_shared_size_bytes")
                && m.contains("set_max_dynamic_shared_size_bytes"),
            "{m}"
        );
        // At the opt-in maximum (a raised `#[rawkernel]`): no attribute left to raise.
        let raised = LaunchLimits { max_dynamic_shared_bytes: 227 * 1024 - 1024, static_shared_bytes: 1024, ..LIMITS };
        let m = msg(check_config("k", Dim3::from(1), Dim3::from(32), 227 * 1024, &raised));
        assert!(
            m.contains("may use at most 231424, the most this device allows")
                && m.contains("static shared memory takes 1024")
                && m.contains("max_dynamic_shared_size_bytes")
                && !m.contains("set_max_dynamic_shared_size_bytes"),
            "{m}"
        );
    }

    #[test]
    fn cooperative_grids_fit_the_co_residency_limit() {
        let limit = CoResidency { per_multiprocessor: 8, multiprocessors: 4 };
        assert_eq!(limit.blocks(), 32);
        assert!(check_cooperative("k", Dim3::from(32), Dim3::from(256), 0, limit, false).is_ok());
        assert!(check_cooperative("k", Dim3::from((4, 8)), Dim3::from(256), 0, limit, false).is_ok());
        let e = check_cooperative("k", Dim3::from((3, 11)), Dim3::from((16, 16)), 1024, limit, false).unwrap_err();
        assert!(
            matches!(e, Error::CooperativeGrid { blocks: 33, limit: 32, block_threads: 256, shared_bytes: 1024, .. }),
            "{e:?}"
        );
        let m = e.to_string();
        assert!(
            m.contains("33 blocks") && m.contains("at most 32 blocks") && m.contains("8 per multiprocessor x 4")
                && m.contains("k::max_cooperative_blocks(&config)"),
            "{m}"
        );
        let none = CoResidency { per_multiprocessor: 0, multiprocessors: 132 };
        let m = check_cooperative("k", Dim3::from(1), Dim3::from(1024), 0, none, false).unwrap_err().to_string();
        assert!(m.contains("no block of 1024 threads"), "{m}");
        // A RawKernel launched cooperatively: the message names its switch and its limit function.
        let m = check_cooperative("grid_sum", Dim3::from(33), Dim3::from(256), 0, limit, true).unwrap_err().to_string();
        assert!(
            m.contains("enable_cooperative_groups") && m.contains("RawKernel::max_cooperative_blocks(&config)")
                && !m.contains("grid_sync()"),
            "{m}"
        );
    }

}
