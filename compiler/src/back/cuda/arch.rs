//! The architecture a kernel needs: the newest of the minimum architectures of the intrinsics it
//! and the `#[device]` functions it calls use (`Intrinsic::min_arch`). cuprum-build refuses to
//! compile a kernel for an older target in `CUPY_NVCC_GENERATE_CODE` (docs/building.md,
//! "Architecture-specific kernels").

use std::collections::HashMap;

use crate::ir::{Callee, ExprKind, Item, Module, each_expr_of_item};

/// What a kernel needs that not every GPU has: the architecture number (`80` for sm_80) and the
/// Rust name of an intrinsic that needs it.
pub type ArchNeed = Option<(u32, &'static str)>;

/// What an item needs, its device calls included: the oldest architecture, and the intrinsic
/// that needs that architecture's arch-specific target (`sm_90a`), if any.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Need {
    pub min: ArchNeed,
    pub specific: Option<&'static str>,
}

/// Per item name: what it needs, its device calls included.
pub(crate) fn needs(module: &Module) -> HashMap<&str, Need> {
    let mut own: HashMap<&str, (Need, Vec<String>)> = HashMap::new();
    for item in &module.items {
        let (mut need, mut calls): (Need, Vec<String>) = (Need::default(), Vec::new());
        each_expr_of_item(item, &mut |e| {
            if let ExprKind::Call { callee, .. } = &e.kind {
                match callee {
                    Callee::Intrinsic { intrinsic, .. } => {
                        if let Some(a) = intrinsic.min_arch() {
                            need.min = newer(need.min, Some((a, intrinsic.rust_name())));
                        }
                        if intrinsic.arch_specific() {
                            need.specific = need.specific.or(Some(intrinsic.rust_name()));
                        }
                    }
                    Callee::Device { name, .. } => calls.push(name.text.clone()),
                    Callee::Assoc { .. } => {}
                }
            }
        });
        own.insert(item.name.text.as_str(), (need, calls));
    }
    module
        .items
        .iter()
        .map(|item: &Item| {
            // Device functions do not recurse (the validator), but walk with a visited set anyway.
            let (mut need, mut stack, mut seen) = (Need::default(), vec![item.name.text.as_str()], Vec::<&str>::new());
            while let Some(n) = stack.pop() {
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                if let Some((own_need, calls)) = own.get(n) {
                    need.min = newer(need.min, own_need.min);
                    need.specific = need.specific.or(own_need.specific);
                    stack.extend(calls.iter().map(String::as_str));
                }
            }
            (item.name.text.as_str(), need)
        })
        .collect()
}

fn newer(a: ArchNeed, b: ArchNeed) -> ArchNeed {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 > x.0 { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}
