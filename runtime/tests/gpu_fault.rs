//! A kernel fault loses the device's CUDA context (issue 15, item 4): the first error names the
//! fault and the kernel (`Error::KernelFault`), and every later call on the device is
//! `Error::ContextLost` naming it, with `is_context_lost()` true for both.
//!
//! A lost context stays lost for the whole process, so each case runs in a child process (this
//! binary re-run with `CUPRUM_GPU_FAULT_CHILD` naming the case), which prints one line per call
//! that the parent checks. Needs a CUDA GPU and libnvrtc: `#[ignore = "needs a CUDA GPU"]`; run
//! with `cargo test -p cuprum-runtime --test gpu_fault -- --include-ignored`.

use std::process::Command;

use cuprum_runtime::{Array, Device, DevicePtr, Error, LaunchConfig, RawKernel, nvrtc};

const KERNELS: &str = r#"
extern "C" __global__ void cuprum_test_trap(int* p) {
    if (threadIdx.x == 0) __trap();
    p[threadIdx.x] = 1;
}
extern "C" __global__ void cuprum_test_wild_store(int* p) {
    p[threadIdx.x] = 1;
}
extern "C" __global__ void cuprum_test_fill(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
"#;

/// What the child printed for each step: `STEP <name> <variant> <is_context_lost> <message>`.
struct Step {
    variant: String,
    lost: bool,
    message: String,
}

fn run_child(case: &str, blocking: bool) -> (String, Vec<(String, Step)>) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_entry", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env("CUPRUM_GPU_FAULT_CHILD", case);
    if blocking {
        cmd.env("CUDA_LAUNCH_BLOCKING", "1");
    } else {
        cmd.env_remove("CUDA_LAUNCH_BLOCKING");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child `{case}` failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = stdout
        .lines()
        // libtest prints `test child_entry ... ` before the child's first line, on the same line.
        .filter_map(|l| l.find("STEP ").map(|i| &l[i + "STEP ".len()..]))
        .map(|l| {
            let mut w = l.splitn(4, ' ');
            let name = w.next().unwrap().to_string();
            let step = Step {
                variant: w.next().unwrap().to_string(),
                lost: w.next().unwrap() == "true",
                message: w.next().unwrap_or_default().to_string(),
            };
            (name, step)
        })
        .collect();
    (stdout, steps)
}

/// Checks a child's steps: the first error is the fault of `kernel` with `codes`, the rest are
/// `ContextLost` naming it.
fn check(case: &str, blocking: bool, kernel: &str, codes: &[&str]) {
    let (stdout, steps) = run_child(case, blocking);
    println!("{stdout}");
    let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fault", "alloc", "launch", "to_vec", "copy_in", "synchronize", "stream"], "{stdout}");
    let (_, first) = &steps[0];
    assert_eq!(first.variant, "KernelFault", "{stdout}");
    assert!(first.lost, "{stdout}");
    assert!(first.message.contains(&format!("`{kernel}`")), "the fault does not name {kernel}: {}", first.message);
    assert!(codes.iter().any(|c| first.message.contains(c)), "none of {codes:?} in: {}", first.message);
    assert!(first.message.contains("restart the process"), "{}", first.message);
    if blocking {
        // The launch itself reported it: the kernel is known to be the one.
        assert!(
            first.message.starts_with(&format!("kernel `{kernel}` faulted on device")),
            "{}",
            first.message
        );
    }
    for (name, step) in &steps[1..] {
        assert_eq!(step.variant, "ContextLost", "{name}: {stdout}");
        assert!(step.lost, "{name}");
        assert!(step.message.contains("cannot be used") && step.message.contains(&format!("`{kernel}`")), "{name}: {}", step.message);
        assert!(codes.iter().any(|c| step.message.contains(c)), "{name}: {}", step.message);
    }
    assert!(stdout.contains("DEVICE-FAULT Some"), "{stdout}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_illegal_address_loses_the_context_and_every_later_call_says_so() {
    check("wild-store", false, "cuprum_test_wild_store", &["CUDA_ERROR_ILLEGAL_ADDRESS"]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_trap_loses_the_context_and_every_later_call_says_so() {
    // `__trap()` is reported as a launch failure (or, on some GPUs, an illegal instruction).
    check("trap", false, "cuprum_test_trap", &["CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION"]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn with_blocking_launches_the_faulting_launch_is_named() {
    check("wild-store", true, "cuprum_test_wild_store", &["CUDA_ERROR_ILLEGAL_ADDRESS"]);
}

fn variant(e: &Error) -> &'static str {
    match e {
        Error::KernelFault { .. } => "KernelFault",
        Error::ContextLost { .. } => "ContextLost",
        _ => "Other",
    }
}

fn print_step<T>(name: &str, r: Result<T, Error>) {
    match r {
        Ok(_) => println!("STEP {name} Ok false -"),
        Err(e) => println!("STEP {name} {} {} {}", variant(&e), e.is_context_lost(), e.to_string().replace('\n', " ")),
    }
}

/// Child processes (does nothing in a normal run).
#[test]
#[ignore = "needs a CUDA GPU"]
fn child_entry() {
    let Ok(case) = std::env::var("CUPRUM_GPU_FAULT_CHILD") else {
        return;
    };
    if let Err(e) = nvrtc::info() {
        panic!("GPU tests need libnvrtc: {e}");
    }
    let dev = Device::current().unwrap_or_else(|e| panic!("GPU tests need a CUDA GPU: {e}"));
    let kernel = match case.as_str() {
        "trap" => "cuprum_test_trap",
        "wild-store" => "cuprum_test_wild_store",
        other => panic!("unknown case {other}"),
    };
    // Everything the later steps use exists before the fault.
    let faulty = RawKernel::new(KERNELS, kernel);
    let fill = RawKernel::new(KERNELS, "cuprum_test_fill");
    faulty.compile().unwrap();
    fill.compile().unwrap();
    let mut x = Array::<f32>::zeros(256).unwrap();
    // SAFETY: cuprum_test_fill(float*, float, int) writes x[0..256).
    unsafe { fill.launch(&LaunchConfig::new(1, 256), (&mut x, 1.0f32, 256i32)) }.unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![1.0; 256]);
    assert!(dev.fault().is_none());

    // The fault: a trap (the other threads store into `y`), or a store to address 16 (never
    // mapped). With blocking launches the launch reports it; otherwise the synchronize after it.
    let y = Array::<i32>::zeros(32).unwrap();
    let target = if case == "trap" { DevicePtr(y.device_ptr()) } else { DevicePtr(16) };
    // SAFETY: deliberately not: the kernel faults, which is what this test is about. The fault
    // is contained by the driver (the context is lost); no host memory is touched.
    let launched = unsafe { faulty.launch(&LaunchConfig::new(1, 32), (target,)) };
    print_step("fault", launched.and_then(|()| dev.synchronize()));

    print_step("alloc", Array::<f32>::zeros(16));
    // SAFETY: as above for `fill` (never reached the device: the context is lost).
    print_step("launch", unsafe { fill.launch(&LaunchConfig::new(1, 256), (&mut x, 2.0f32, 256i32)) });
    print_step("to_vec", x.to_vec());
    print_step("copy_in", x.copy_from_slice(&[3.0; 256]));
    print_step("synchronize", dev.synchronize());
    print_step("stream", cuprum_runtime::Stream::new(&dev));
    println!("DEVICE-FAULT {:?}", dev.fault());
}
