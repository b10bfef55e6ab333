//! `cuprum info`: what this machine offers cuprum. Without a driver, a GPU or libnvrtc it says
//! so and still exits 0 (each part is reported on its own).

use cuprum_runtime::cache::{self, CacheConfig};
use cuprum_runtime::{Device, audit, device, nccl, nvrtc};
// The variables the runtime reads and its parsers of them: not API (the runtime's `__workspace`),
// the command line lists what this runtime reads.
use cuprum_runtime::__workspace::env;

pub fn run(args: &[String]) -> i32 {
    if !args.is_empty() {
        eprintln!("usage: cuprum info");
        return 2;
    }
    println!("cuprum {}", env!("CARGO_PKG_VERSION"));
    let devices = report_devices();
    report_cpu();
    report_nvrtc(&devices);
    report_nccl();
    report_cache();
    report_environment();
    report_audit(&devices);
    0
}

/// The audit of the kernels this binary links (the runtime's built-ins, when the linker keeps
/// them). Another program's audit: `cuprum audit PROGRAM` (`audit.rs`), or
/// `cuprum::audit::report` called inside that program.
fn report_audit(devices: &[(usize, (u32, u32))]) {
    let device = devices.first().and_then(|(i, _)| Device::get(*i).ok());
    let audit = audit::report(device.as_ref());
    if audit.units.is_empty() {
        println!(
            "kernels: the cuprum command embeds none. To see which kernels a program carries and how each \
             reaches the GPU (precompiled, PTX JIT by the driver, NVRTC at first use), run \
             `cuprum audit PROGRAM` (or print `cuprum::audit::report(Some(&device))` in that program)"
        );
    } else {
        // One line: the command's own kernels are the runtime's built-ins, the same in every
        // program; a program's own list is `cuprum audit PROGRAM`.
        let kernels: usize = audit.units.iter().map(|u| u.kernels.len()).sum();
        println!(
            "kernels: this command embeds the runtime's built-ins ({} files, {kernels} kernels, {} precompiled \
             instances); a program's kernels and how each reaches the GPU: `cuprum audit PROGRAM`",
            audit.units.len(),
            audit.instances()
        );
    }
}

/// Prints the driver and devices; returns the compute capabilities found.
fn report_devices() -> Vec<(usize, (u32, u32))> {
    let mut found = Vec::new();
    match device::driver_version() {
        Ok(v) => println!("CUDA driver: {}.{} ({v})", v / 1000, (v % 1000) / 10),
        Err(e) => {
            // The error's message says that the driver is not available and what to do.
            println!("CUDA driver: {e}");
            return found;
        }
    }
    let count = match Device::count() {
        Ok(n) => n,
        Err(e) => {
            println!("devices: none usable: {e}");
            return found;
        }
    };
    println!("devices: {count}");
    for i in 0..count {
        match Device::get(i) {
            Ok(d) => {
                let (ma, mi) = d.compute_capability();
                println!(
                    "  {i}: {}, compute capability {ma}.{mi} (sm_{ma}{mi}), {} SMs, {:.1} GiB, \
                     {} KiB shared memory per block ({} KiB opt-in)",
                    d.name(),
                    d.multiprocessor_count(),
                    d.total_memory() as f64 / (1u64 << 30) as f64,
                    d.max_shared_memory_per_block() / 1024,
                    d.max_shared_memory_per_block_optin() / 1024
                );
                found.push((i, (ma, mi)));
            }
            Err(e) => println!("  {i}: cannot be opened: {e}"),
        }
    }
    found
}

fn report_nvrtc(devices: &[(usize, (u32, u32))]) {
    match nvrtc::info() {
        Ok(i) => {
            let from = match &i.loaded_from {
                Some(p) => format!(" from {} (CUDA_PATH)", p.display()),
                None => " from the loader path".to_string(),
            };
            let archs: Vec<String> = i
                .supported_archs
                .iter()
                .map(|a| format!("sm_{a}"))
                .collect();
            println!("NVRTC: {}.{}{from}", i.version.0, i.version.1);
            println!("  targets: {}", archs.join(" "));
            let ptx = env::flag(env::COMPILE_WITH_PTX).unwrap_or(false);
            for (ordinal, cc) in devices {
                match nvrtc::choose_target(*cc, &i.supported_archs, ptx, i.version) {
                    Ok(t) => println!(
                        "  device {ordinal}: JIT emits {} ({})",
                        t.name(),
                        match t {
                            nvrtc::CodeTarget::Cubin(_) => "CUBIN",
                            nvrtc::CodeTarget::Ptx(_) => "PTX, finished by the driver",
                        }
                    ),
                    Err(e) => println!("  device {ordinal}: {e}"),
                }
            }
        }
        Err(e) => println!("NVRTC: {e}"),
    }
}

/// libnccl, for the collectives between GPUs (docs/multi-gpu.md): its version and file, or why not.
fn report_nccl() {
    match nccl::version() {
        Ok(((major, minor, patch), from)) => println!("NCCL: {major}.{minor}.{patch} from {from}"),
        Err(e) => println!("NCCL: {e}"),
    }
}

fn report_cache() {
    let config = match CacheConfig::from_env() {
        Ok(c) => c,
        Err(e) => {
            println!("kernel cache: {e}");
            return;
        }
    };
    let Some(dir) = config.dir.as_deref() else {
        println!("kernel cache: in memory only (neither CUPY_CACHE_DIR nor HOME is set)");
        return;
    };
    let source = if env::var(env::CACHE_DIR).is_some() {
        "CUPY_CACHE_DIR"
    } else {
        "default"
    };
    if config.in_memory {
        println!(
            "kernel cache: in memory only (CUPY_CACHE_IN_MEMORY=1); {} is not used",
            dir.display()
        );
        return;
    }
    match cache::scan::usage(dir) {
        Ok(u) => {
            println!(
                "kernel cache: {} ({source}): {} entries, {} saved sources, {}",
                dir.display(),
                u.entries,
                u.sources,
                crate::cache::human_bytes(u.bytes)
            );
            if u.damaged > 0 {
                println!(
                    "  {} damaged entries (`cuprum cache verify` lists them, `--remove` deletes \
                     them)",
                    u.damaged
                );
            }
        }
        Err(e) => println!(
            "kernel cache: {} ({source}): cannot be read: {e}",
            dir.display()
        ),
    }
    if config.save_source {
        println!("  new entries get their CUDA source saved (CUPY_CACHE_SAVE_CUDA_SOURCE=1)");
    }
}

/// What the CPU device runs (a test runs each kind there: `cli/tests/info.rs`).
const CPU_RUNS: &str = "`Device::cpu()`: arrays, copies and every kernel written in Rust \
     (#[rawkernel], #[elementwise], #[reduction], #[fuse], the built-in operators and reductions) on the \
     host's threads; kernels from CUDA C text need a GPU";

/// The CPU device, and which device a program starts on (`CUPRUM_DEVICE`).
fn report_cpu() {
    let cpu = Device::cpu();
    println!(
        "CPU device: {}, {:.1} GiB host memory ({CPU_RUNS}; docs/cpu.md)",
        cpu.name(),
        cpu.total_memory() as f64 / (1u64 << 30) as f64
    );
    match env::default_device() {
        Ok(env::DefaultDevice::Cpu) => println!("default device: the CPU ({}=cpu)", env::DEVICE),
        Ok(env::DefaultDevice::Cuda) => println!("default device: CUDA device 0 ({}=cpu selects the CPU)", env::DEVICE),
        Err(e) => println!("default device: {e}"),
    }
}

fn report_environment() {
    let vars = [
        env::DEVICE,
        env::CUDA_PATH,
        env::CACHE_DIR,
        env::CACHE_IN_MEMORY,
        env::CACHE_SAVE_CUDA_SOURCE,
        env::CACHE_QUIET,
        env::COMPILE_WITH_PTX,
        env::CUDA_COMPILE_WITH_DEBUG,
        env::DUMP_CUDA_SOURCE_ON_ERROR,
        env::GPU_MEMORY_LIMIT,
        env::PER_THREAD_DEFAULT_STREAM,
        env::TF32,
        env::NCCL_PATH,
        env::NCCL_NVLS_ENABLE,
    ];
    let set: Vec<String> = vars
        .iter()
        .filter_map(|v| env::var(v).map(|val| format!("  {v}={val}")))
        .collect();
    if set.is_empty() {
        println!("environment: no cuprum variable is set");
    } else {
        println!("environment:");
        for line in set {
            println!("{line}");
        }
    }
}
