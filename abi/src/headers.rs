//! The CUDA headers generated code includes (`abi/include/cuprum/`, shipped with this crate),
//! embedded so that NVRTC needs only the driver and libnvrtc: the runtime passes them to NVRTC as
//! in-memory headers, and the build crate writes them next to a unit for nvcc.

/// `(include name, text)` for every header, in dependency order.
pub const HEADERS: &[(&str, &str)] = &[
    ("cuprum/types.h", include_str!("../include/cuprum/types.h")),
    ("cuprum/bounds.h", include_str!("../include/cuprum/bounds.h")),
    ("cuprum/small_float.h", include_str!("../include/cuprum/small_float.h")),
    ("cuprum/fp8.h", include_str!("../include/cuprum/fp8.h")),
    ("cuprum/half.h", include_str!("../include/cuprum/half.h")),
    ("cuprum/arith.h", include_str!("../include/cuprum/arith.h")),
    ("cuprum/math.h", include_str!("../include/cuprum/math.h")),
    ("cuprum/complex.h", include_str!("../include/cuprum/complex.h")),
    ("cuprum/atomic.h", include_str!("../include/cuprum/atomic.h")),
    ("cuprum/vector.h", include_str!("../include/cuprum/vector.h")),
    ("cuprum/thread.h", include_str!("../include/cuprum/thread.h")),
    ("cuprum/warp.h", include_str!("../include/cuprum/warp.h")),
    ("cuprum/tensor.h", include_str!("../include/cuprum/tensor.h")),
    ("cuprum/hopper.h", include_str!("../include/cuprum/hopper.h")),
    ("cuprum/grid.h", include_str!("../include/cuprum/grid.h")),
    ("cuprum/kernel.h", include_str!("../include/cuprum/kernel.h")),
    ("cuprum/elementwise.h", include_str!("../include/cuprum/elementwise.h")),
    ("cuprum/reduction.h", include_str!("../include/cuprum/reduction.h")),
    ("cuprum/cucomplex_bridge.h", include_str!("../include/cuprum/cucomplex_bridge.h")),
];

/// The text of one header by its include name.
pub fn header(name: &str) -> Option<&'static str> {
    HEADERS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// A header as the build crate writes it to disk for nvcc: a directive naming it by its include
/// name first (`#line 1 "cuprum/types.h"`; its lines keep their numbers), so that a line table
/// (`-lineinfo`) and nvcc's messages name `cuprum/types.h` rather than the folder of the build
/// machine it was written to (docs/debugging.md).
pub fn as_written(name: &str, text: &str) -> String {
    format!("#line 1 \"{name}\"\n{text}")
}

/// The `#include` lines an instance with these dtypes needs besides what its unit includes (a
/// unit includes only the headers its default instances use): put before the instantiation line
/// of an instance compiled on demand.
pub fn includes_for(instance: &[crate::dtype::DType]) -> String {
    use crate::dtype::DType;
    let mut s = String::new();
    if instance.iter().any(|d| d.is_half() || d.is_complex()) {
        s.push_str("#include <cuprum/half.h>\n#include <cuprum/arith.h>\n#include <cuprum/math.h>\n");
    }
    if instance.iter().any(|d| matches!(d, DType::C32 | DType::C64)) {
        s.push_str("#include <cuprum/complex.h>\n");
    }
    s
}
