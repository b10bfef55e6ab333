//! `audit::report` on a GPU: a unit without a fat binary (as a build without nvcc leaves it) is
//! audited as `NVRTC at first use`, and its first launch is indeed served by NVRTC (or by the
//! disk cache a previous run filled).
//!
//! Needs a CUDA GPU and libnvrtc: `cargo test -p cuprum-runtime --lib tests::audit_gpu -- --include-ignored`.
//! The CPU side (parsing, routes, the text) is tested in `runtime/src/audit.rs`.

use crate::audit::{self, BuildStatus, Route};
use crate::registry::{self, Kernel, KernelEntry, KernelUnit, Signature, UnitEntry, UnitRef};
use crate::stats::Layer;
use crate::Device;

/// What the macros would generate for a file `tests/audit_probe.rs` holding one raw kernel, built
/// without nvcc.
static UNIT: KernelUnit = KernelUnit::new(
    "a0d17a0d17a0d17a",
    "tests/audit_probe.rs",
    "extern \"C\" __global__ void cuprum_rawkernel_audit_probe(float* x) { x[threadIdx.x] = 1.0f; }\n",
    false,
    None,
    &[],
    &["cuprum_rawkernel_audit_probe"],
    "cuprum-build 1\nstatus no-nvcc\ntargets \ninstances 1\nfatbin_bytes 0\nnvcc_seconds 0.000\n",
    &[],
);
// SAFETY: the unit has no fat binary (nothing compiled from anything else).
inventory::submit! { unsafe { UnitEntry::new(&UNIT) } }
// SAFETY: a rawkernel signature (no erased launch exists for it).
static KERNEL: Kernel = unsafe { Kernel::new(UnitRef::Embedded(&UNIT), "audit_probe", Signature::RawKernel) };
inventory::submit! { KernelEntry { kernel: &KERNEL } }

#[test]
fn the_audit_lists_the_program_without_a_gpu() {
    let audit = audit::report(None);
    let unit = audit.unit("tests/audit_probe.rs").expect("the probe unit is listed");
    assert_eq!(unit.build.as_ref().map(|b| b.status.clone()), Some(BuildStatus::NoNvcc));
    assert_eq!(unit.kernels[0].instances, ["cuprum_rawkernel_audit_probe"]);
    let text = audit.to_string();
    assert!(text.contains("  on any GPU: NVRTC at first use (no fat binary in this build)\n"), "{text}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_audit_matches_what_serves_the_kernel() {
    let device = Device::get(0).expect("a CUDA GPU");
    let audit = audit::report(Some(&device));
    println!("{audit}");
    let unit = audit.unit("tests/audit_probe.rs").unwrap();
    assert_eq!(unit.route, Some(Route::Nvrtc("no fat binary in this build".into())));
    let (ma, mi) = device.compute_capability();
    assert!(audit.to_string().contains(&format!("; for device 0: {} (sm_{ma}{mi})", device.name())));

    KERNEL.instance(0, &[], None).expect("the probe compiles and loads");
    let served = registry::served();
    let probe = served.iter().find(|s| s.symbol == "cuprum_rawkernel_audit_probe").unwrap();
    assert!(matches!(probe.layer, Layer::Nvrtc | Layer::Disk), "{probe:?}");
}
