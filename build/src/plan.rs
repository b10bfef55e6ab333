//! The plan of a build: the targets, and which parts (one nvcc run each) each unit is compiled
//! as, with which targets.

use std::path::PathBuf;
use std::time::Duration;

use cuprum_abi::parts;
use cuprum_compiler::back::cuda::Unit;

use crate::env::Env;
use crate::nvcc::{self, Nvcc};
use crate::report::{FileReport, Status};
use crate::targets::{self, Asked, Gencode, Request};
use crate::Error;

/// A kernel file translated: its path, its unit and the time the translation took.
pub(crate) type Translated = (PathBuf, Unit, Duration);

/// One nvcc run: a part of a unit's fat binary (a kernel, an instance, or an instance and a
/// variant, as `cuprum_abi::parts::part_of` decides), loaded alone at run time.
pub(crate) struct PartJob {
    /// The unit's index in the build's translated files.
    pub unit: usize,
    /// The part's name (`sum[f32]:rows`).
    pub name: String,
    /// The entry points it instantiates.
    pub symbols: Vec<String>,
    /// Its kernel's targets.
    pub gencodes: Vec<Gencode>,
}

/// What a build with nvcc compiles: each distinct unit with kernels once, as parts, each with its
/// kernel's own targets.
pub(crate) struct PartPlan {
    /// The index of the first file of each distinct unit that has kernels.
    pub units: Vec<usize>,
    /// The nvcc runs.
    pub parts: Vec<PartJob>,
    /// The targets the report lists: the build's, then any a kernel has of its own (sm_90a with
    /// the default targets).
    pub shown: Vec<Gencode>,
}

impl PartPlan {
    /// The plan for `units` (reported as `files`) with the build's targets `gencodes`; `asked`:
    /// whether the targets were asked for (`CUPY_NVCC_GENERATE_CODE`). An error names each
    /// kernel that no target serves.
    pub fn new(
        units: &[Translated],
        files: &[FileReport],
        asked: Asked,
        gencodes: &[Gencode],
        nvcc: &Nvcc,
        machine_code_only: bool,
        split: parts::Split,
    ) -> Result<PartPlan, Error> {
        let mut todo: Vec<usize> = Vec::new();
        for (i, f) in files.iter().enumerate() {
            if f.status != Status::NoKernels && !todo.iter().any(|&j| files[j].id == f.id) {
                todo.push(i);
            }
        }
        let kernel_gencodes = kernel_targets(units, &todo, asked, gencodes, nvcc, machine_code_only)?;
        let mut shown = if machine_code_only {
            targets::machine_code_only(gencodes.to_vec())
        } else {
            gencodes.to_vec()
        };
        for g in kernel_gencodes.iter().flatten().flatten() {
            if !shown.contains(g) {
                shown.push(g.clone());
            }
        }
        let parts = part_jobs(units, &todo, &kernel_gencodes, split);
        Ok(PartPlan { units: todo, parts, shown })
    }
}

/// Each kernel's own targets (targets::for_kernel): a kernel that needs a newer architecture
/// than a requested target (tensor cores, cp.async) is an error when the targets were asked for,
/// else built for the targets that have what it needs; one that needs an arch-specific target
/// (sm_90a) is built for that alone (docs/building.md, "Architecture-specific kernels",
/// "Architecture-specific targets (sm_90a)"). Indexed like `units[i].1.kernels`.
fn kernel_targets(
    units: &[Translated],
    todo: &[usize],
    asked: Asked,
    gencodes: &[Gencode],
    nvcc: &Nvcc,
    machine_code_only: bool,
) -> Result<Vec<Vec<Vec<Gencode>>>, Error> {
    let mut kernel_gencodes: Vec<Vec<Vec<Gencode>>> = vec![Vec::new(); units.len()];
    let mut errors = Vec::new();
    for &i in todo {
        let (path, unit, _) = &units[i];
        let mut problems = Vec::new();
        for kernel in &unit.kernels {
            let needs = targets::Needs {
                min_arch: kernel.min_arch,
                arch_specific: kernel.arch_specific,
            };
            match targets::for_kernel(&kernel.name, needs, asked, gencodes, &nvcc.supported()) {
                Ok(list) if machine_code_only => {
                    kernel_gencodes[i].push(targets::machine_code_only(list))
                }
                Ok(list) => kernel_gencodes[i].push(list),
                Err(problem) => problems.push(problem),
            }
        }
        if !problems.is_empty() {
            errors.push(Error::Kernel {
                file: path.clone(),
                message: problems.join("\n"),
            });
        }
    }
    match Error::from_list(errors) {
        Some(e) => Err(e),
        None => Ok(kernel_gencodes),
    }
}

/// The parts: the entry points of each kernel grouped as cuprum_abi::parts::part_of decides (per
/// kernel, per instance, per instance and variant; `split`).
fn part_jobs(units: &[Translated], todo: &[usize], kernel_gencodes: &[Vec<Vec<Gencode>>], split: parts::Split) -> Vec<PartJob> {
    let mut jobs: Vec<PartJob> = Vec::new();
    for &i in todo {
        for (kernel, own) in units[i].1.kernels.iter().zip(&kernel_gencodes[i]) {
            let mut distinct: Vec<&[cuprum_abi::DType]> = Vec::new();
            for (inst, _, _) in &kernel.instances {
                if !distinct.contains(&inst.as_slice()) {
                    distinct.push(inst);
                }
            }
            for (inst, variant, symbol) in &kernel.instances {
                let name = parts::part_of(&kernel.name, kernel.kind, inst, *variant, distinct.len(), split);
                match jobs.iter_mut().find(|j| j.unit == i && j.name == name) {
                    Some(j) => j.symbols.push(symbol.clone()),
                    None => jobs.push(PartJob { unit: i, name, symbols: vec![symbol.clone()], gencodes: own.clone() }),
                }
            }
        }
    }
    jobs
}

/// `CUPY_NVCC_GENERATE_CODE` resolved against this nvcc (and, for `current`, the GPUs).
pub(crate) fn resolve_targets(
    request: &Request,
    text: Option<&str>,
    nvcc: &Nvcc,
    env: &Env,
) -> Result<Vec<Gencode>, Error> {
    let targets_error = |message| Error::Targets { message };
    match request {
        Request::Default => {
            targets::default_list(&nvcc.sass, &nvcc.virtual_archs).map_err(targets_error)
        }
        Request::Current => {
            let list = targets::current_list(&nvcc::gpu_capabilities(env)?);
            targets::check_supported(
                &list,
                &nvcc.supported(),
                "CUPY_NVCC_GENERATE_CODE=current (the GPUs of this machine)",
            )
            .map_err(targets_error)?;
            Ok(list)
        }
        Request::List(list) => {
            let source = format!("CUPY_NVCC_GENERATE_CODE={:?}", text.unwrap_or_default());
            targets::check_supported(list, &nvcc.supported(), &source).map_err(targets_error)?;
            Ok(list.clone())
        }
    }
}
