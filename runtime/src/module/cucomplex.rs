//! CuPy's `translate_cucomplex`: CUDA C written against the toolkit's `cuComplex.h` compiled
//! against cuprum's complex type. Each `#include` of `cuComplex.h` becomes an include of the
//! embedded bridge header `cuprum/cucomplex_bridge.h`, which defines `cuFloatComplex`,
//! `cuDoubleComplex` and cuComplex.h's functions on `cuprum::complex<float>`/`<double>`, the
//! element types of `Array<Complex<f32>>`/`Array<Complex<f64>>`.

/// The include that replaces `#include <cuComplex.h>` (or `"cuComplex.h"`).
pub(crate) const BRIDGE_INCLUDE: &str = "#include <cuprum/cucomplex_bridge.h>";

/// `code` with every `#include` line of `cuComplex.h` replaced by [`BRIDGE_INCLUDE`] (spaces
/// around `#` and `include` allowed, as the preprocessor allows them; a trailing comment is
/// kept). Other lines are unchanged, so line numbers in NVRTC's messages stay those of `code`.
pub(crate) fn translate_cucomplex(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + 32);
    for line in code.split_inclusive('\n') {
        match includes_cucomplex(line) {
            Some(rest) => {
                out.push_str(BRIDGE_INCLUDE);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// When `line` is `#include <cuComplex.h>` or `#include "cuComplex.h"`, what follows the header
/// name (a comment, the line end).
fn includes_cucomplex(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
    ["<cuComplex.h>", "\"cuComplex.h\""].iter().find_map(|h| rest.strip_prefix(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_of_cucomplex_become_the_bridge() {
        let code = "#include <cuComplex.h>\n  #  include \"cuComplex.h\" // c\n#include <cuda_fp16.h>\nint x; // #include <cuComplex.h>\n";
        assert_eq!(
            translate_cucomplex(code),
            "#include <cuprum/cucomplex_bridge.h>\n#include <cuprum/cucomplex_bridge.h> // c\n#include <cuda_fp16.h>\nint x; // #include <cuComplex.h>\n"
        );
        // No newline at the end; code without the include is unchanged.
        assert_eq!(translate_cucomplex("#include<cuComplex.h>"), BRIDGE_INCLUDE);
        assert_eq!(translate_cucomplex("__global__ void k() {}"), "__global__ void k() {}");
        // Only that header: a name that merely contains it is left alone.
        assert_eq!(translate_cucomplex("#include <my_cuComplex.h>\n"), "#include <my_cuComplex.h>\n");
    }

    #[test]
    fn the_bridge_is_embedded() {
        let name = BRIDGE_INCLUDE.trim_start_matches("#include <").trim_end_matches('>');
        let text = cuprum_abi::headers::header(name).expect("the bridge header is embedded");
        for f in ["cuCaddf", "cuCmulf", "cuCdivf", "cuCabsf", "cuCrealf", "make_cuFloatComplex", "cuCadd", "cuCmul", "cuCabs", "cuCfma"] {
            assert!(text.contains(&format!(" {f}(")), "{f} is missing from the bridge");
        }
    }
}
