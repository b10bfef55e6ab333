//! NumPy's `.npy` and `.npz` files: [`save`], [`load`], [`savez`], [`savez_compressed`],
//! [`load_npz`] (NumPy's `save`, `load`, `savez`, `savez_compressed`; docs/runtime.md, "Array
//! files").
//!
//! A `.npy` file is a 10-byte prefix (`\x93NUMPY`, the version, the header's length), a header
//! that is a Python dict literal (`{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`)
//! and the elements' bytes. The three keys are read and written here (the header is written
//! byte for byte as NumPy writes it, with its padding: checked against NumPy 2.4's files); a
//! `.npz` file is a zip archive of `.npy` files, through the `zip` crate (the default feature
//! `npz`: without it, `.npy` files work and the `.npz` functions are absent). The header is not parsed with a
//! crate: the ones that read it (`npyz`, `ndarray-npy`) parse any Python literal with a `pest`
//! grammar, whose build (proc macros and a C build script) costs more than the three keys need.
//!
//! Every dtype NumPy and cuprum share: `bool` (`|b1`), the integers (`i1`..`i8`, `u1`..`u8`),
//! `f16` (`f2`), `f32`, `f64`, `Complex<f32>` (`c8`) and `Complex<f64>` (`c16`). `bf16`, `f8e4m3`
//! and `f8e5m2` have no NumPy dtype: saving one is an error (convert with `astype::<f32>()` first). Files are
//! written little-endian (the machine's order); big-endian files are byte-swapped on load.
//! A Fortran-order file loads as an F-contiguous array (the transpose of a C-order one), as
//! NumPy loads it; structured dtypes and object arrays are refused with an error.

use std::io::{Read, Write};
use std::path::Path;

use super::{Array, as_bytes};
use crate::error::{Error, Result};
use crate::{DType, Scalar};

const MAGIC: &[u8] = b"\x93NUMPY";
/// NumPy aligns the data at a multiple of 64 bytes from the file's start.
const ALIGN: usize = 64;
/// NumPy leaves room for the growing axis's extent to reach this many digits.
const GROWTH_DIGITS: usize = 21;

/// The NumPy type string (without the byte order) of a dtype, `None` for `bf16` and the 8-bit
/// floats (NumPy has none of them).
fn type_code(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "b1",
        DType::I8 => "i1",
        DType::I16 => "i2",
        DType::I32 => "i4",
        DType::I64 => "i8",
        DType::U8 => "u1",
        DType::U16 => "u2",
        DType::U32 => "u4",
        DType::U64 => "u8",
        DType::F16 => "f2",
        DType::F32 => "f4",
        DType::F64 => "f8",
        DType::C32 => "c8",
        DType::C64 => "c16",
        DType::BF16 | DType::F8E4M3 | DType::F8E5M2 => return None,
    })
}

/// The `descr` NumPy writes for a dtype: `|` for one-byte types, else the byte order.
fn descr(d: DType) -> Option<String> {
    let code = type_code(d)?;
    let order = if d.size() == 1 {
        '|'
    } else if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    Some(format!("{order}{code}"))
}

fn file_error(path: &Path, what: impl Into<String>, source: std::io::Error) -> Error {
    Error::ArrayFile {
        path: path.to_path_buf(),
        what: what.into(),
        source,
    }
}

fn malformed(path: &Path, what: impl Into<String>) -> Error {
    let what = what.into();
    file_error(
        path,
        what.clone(),
        std::io::Error::new(std::io::ErrorKind::InvalidData, what),
    )
}

/// The header of a `.npy` file for `shape` of dtype `d` (C order), prefix included, as NumPy
/// writes it (version 1.0).
fn header(d: DType, shape: &[usize]) -> Option<Vec<u8>> {
    let shape_text = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut text = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        descr(d)?
    );
    if let Some(first) = shape.first() {
        text.push_str(&" ".repeat(GROWTH_DIGITS.saturating_sub(first.to_string().len())));
    }
    let len = text.len() + 1; // the final newline
    let pad = ALIGN - (MAGIC.len() + 2 + 2 + len) % ALIGN;
    let total = len + pad;
    let mut out = Vec::with_capacity(10 + total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(total as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    Some(out)
}

/// An error for a dtype NumPy lacks (`bf16`, `f8e4m3`, `f8e5m2`), before anything is written.
fn check_savable(d: DType, path: &Path) -> Result<()> {
    if type_code(d).is_none() {
        return Err(Error::Unsupported {
            what: format!(
                "saving {d} to {}: NumPy has no {d} dtype; convert first (`astype::<f32>()`)",
                path.display()
            ),
        });
    }
    Ok(())
}

/// Writes `a` as a `.npy` file to `w` (`path` names it in errors).
fn write_npy<T: Scalar>(a: &Array<T>, w: &mut dyn Write, path: &Path) -> Result<()> {
    check_savable(T::DTYPE, path)?;
    let head = header(T::DTYPE, a.shape()).expect("a dtype NumPy has (checked)");
    let data = a.to_vec()?;
    let io = |e| file_error(path, "cannot write the array", e);
    w.write_all(&head).map_err(io)?;
    w.write_all(as_bytes(&data)).map_err(io)?;
    Ok(())
}

/// What a `.npy` header says.
#[derive(Debug, PartialEq)]
struct Header {
    dtype: DType,
    big_endian: bool,
    fortran: bool,
    shape: Vec<usize>,
}

/// The value after `'key':` in the header dict `text`, up to the next top-level `,` or `}`.
fn dict_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let at = text
        .find(&format!("'{key}'"))
        .or_else(|| text.find(&format!("\"{key}\"")))?;
    let rest = text[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

fn parse_header(text: &str, path: &Path) -> Result<Header> {
    let bad = |what: String| malformed(path, what);
    let descr = dict_value(text, "descr")
        .ok_or_else(|| bad(format!("the header has no 'descr': {text:?}")))?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.strip_suffix('\''))
        .or_else(|| descr.strip_prefix('"').and_then(|d| d.strip_suffix('"')))
        .ok_or_else(|| {
            bad(format!("the dtype {descr} is structured or not a plain type string: only plain dtypes are supported"))
        })?;
    let (order, code) = descr.split_at(
        descr
            .chars()
            .next()
            .map_or(0, |c| if "<>|=".contains(c) { 1 } else { 0 }),
    );
    let dtype = DType::ALL
        .iter()
        .copied()
        .find(|&d| type_code(d) == Some(code))
        .ok_or_else(|| bad(format!("the dtype {descr:?} has no cuprum element type (bool, integers, f2, f4, f8, c8, c16 do)")))?;
    let big_endian = order == ">" || (order == "=" && cfg!(target_endian = "big"));
    let fortran = match dict_value(text, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        other => {
            return Err(bad(format!(
                "'fortran_order' is {other:?}, not True or False"
            )));
        }
    };
    let shape_text = dict_value(text, "shape")
        .ok_or_else(|| bad(format!("the header has no 'shape': {text:?}")))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| bad(format!("'shape' is {shape_text:?}, not a tuple")))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            bad(format!(
                "'shape' {shape_text:?} is not a tuple of extents: {e}"
            ))
        })?;
    Ok(Header {
        dtype,
        big_endian,
        fortran,
        shape,
    })
}

/// Reads a `.npy` file's header from `r`.
fn read_header(r: &mut dyn Read, path: &Path) -> Result<Header> {
    let io = |e| file_error(path, "cannot read the header", e);
    let mut prefix = [0u8; 8];
    r.read_exact(&mut prefix).map_err(io)?;
    if &prefix[..6] != MAGIC {
        return Err(malformed(
            path,
            "not a .npy file (no \\x93NUMPY magic string)",
        ));
    }
    let len = match prefix[6] {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(io)?;
            u16::from_le_bytes(b) as usize
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(io)?;
            u32::from_le_bytes(b) as usize
        }
        v => {
            return Err(malformed(
                path,
                format!(
                    "format version {v}.{} is not supported (1.0 to 3.0 are)",
                    prefix[7]
                ),
            ));
        }
    };
    let mut text = vec![0u8; len];
    r.read_exact(&mut text).map_err(io)?;
    let text = String::from_utf8(text).map_err(|_| malformed(path, "the header is not text"))?;
    parse_header(&text, path)
}

/// Reads a `.npy` file's array of element type `T` from `r`.
fn read_npy<T: Scalar>(r: &mut dyn Read, path: &Path) -> Result<Array<T>> {
    let h = read_header(r, path)?;
    if h.dtype != T::DTYPE {
        return Err(Error::DtypeMismatch {
            context: format!("loading {}", path.display()),
            expected: T::ELEM,
            found: crate::element::ElemType::Scalar(h.dtype),
        });
    }
    let n = super::shape::size_of(&h.shape)?;
    let size = std::mem::size_of::<T>();
    let mut bytes = vec![0u8; n * size];
    r.read_exact(&mut bytes).map_err(|e| {
        file_error(
            path,
            format!("cannot read the {n} elements of shape {:?}", h.shape),
            e,
        )
    })?;
    if h.big_endian && size > 1 {
        // Complex numbers swap each part.
        let part = if h.dtype.is_complex() { size / 2 } else { size };
        bytes.chunks_exact_mut(part).for_each(<[u8]>::reverse);
    }
    // C order of the file's shape, or of its reverse for Fortran order (then transposed).
    let stored: Vec<usize> = if h.fortran {
        h.shape.iter().rev().copied().collect()
    } else {
        h.shape.clone()
    };
    let flat: Array<T> = if T::DTYPE == DType::Bool {
        if let Some(b) = bytes.iter().find(|&&b| b > 1) {
            return Err(malformed(
                path,
                format!("a bool element has the byte {b}, not 0 or 1"),
            ));
        }
        Array::from_vec(bytes.iter().map(|&b| b == 1).collect())?.view::<T>()?
    } else {
        Array::<u8>::from_vec(bytes)?.view::<T>()?
    };
    let a = flat.reshape(stored)?;
    Ok(if h.fortran { a.transpose() } else { a })
}

/// Writes `a` to the file `path` in NumPy's `.npy` format (NumPy's `save`; the name is used as
/// given, no `.npy` is appended). Any layout; the file holds the elements in C order. Errors: a
/// `bf16`, `f8e4m3` or `f8e5m2` array (no NumPy dtype), the file cannot be written.
pub fn save<T: Scalar>(path: impl AsRef<Path>, a: &Array<T>) -> Result<()> {
    let path = path.as_ref();
    check_savable(T::DTYPE, path)?;
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).map_err(|e| file_error(path, "cannot create the file", e))?,
    );
    write_npy(a, &mut f, path)?;
    f.flush()
        .map_err(|e| file_error(path, "cannot write the array", e))
}

/// The array of the `.npy` file `path`, on the current device (NumPy's `load` of a `.npy`
/// file). `T` must be the file's dtype (an [`Error::DtypeMismatch`] names it otherwise; NumPy
/// converts nothing on load either). C-order files load C-contiguous, Fortran-order files
/// F-contiguous.
pub fn load<T: Scalar>(path: impl AsRef<Path>) -> Result<Array<T>> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|e| file_error(path, "cannot open the file", e))?;
    read_npy(&mut std::io::BufReader::new(f), path)
}

/// An array of any dtype, for [`savez`]: `&x` for an `Array<T>` (`&dyn` coerces).
pub trait NpyArray {
    /// The element's dtype.
    fn dtype(&self) -> DType;
    /// Writes the array as a `.npy` file to `w` (`path` names the file in errors).
    fn write_npy(&self, w: &mut dyn Write, path: &Path) -> Result<()>;
}

impl<T: Scalar> NpyArray for Array<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn write_npy(&self, w: &mut dyn Write, path: &Path) -> Result<()> {
        write_npy(self, w, path)
    }
}

#[cfg(feature = "npz")]
pub use npz::{Npz, load_npz, savez, savez_compressed};

#[cfg(feature = "npz")]
mod npz {
    use std::collections::HashSet;
    use std::io::{BufReader, Write};
    use std::path::{Path, PathBuf};

    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, ZipArchive, ZipWriter};

    use super::{NpyArray, check_savable, file_error, read_npy};
    use crate::Scalar;
    use crate::array::Array;
    use crate::error::{Error, Result};

    fn zip_error(path: &Path, what: &str, e: zip::result::ZipError) -> Error {
        file_error(path, what, std::io::Error::other(e))
    }

    fn write_npz(
        path: &Path,
        arrays: &[(&str, &dyn NpyArray)],
        method: CompressionMethod,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        for (name, _) in arrays {
            if !seen.insert(*name) {
                return Err(Error::InvalidShape {
                    op: "savez",
                    detail: format!("the name {name:?} is given twice"),
                });
            }
        }
        for (_, a) in arrays {
            check_savable(a.dtype(), path)?;
        }
        let f = std::fs::File::create(path)
            .map_err(|e| file_error(path, "cannot create the file", e))?;
        let mut z = ZipWriter::new(std::io::BufWriter::new(f));
        let options = SimpleFileOptions::default()
            .compression_method(method)
            .large_file(true);
        for (name, a) in arrays {
            z.start_file(format!("{name}.npy"), options)
                .map_err(|e| zip_error(path, "cannot add an array", e))?;
            a.write_npy(&mut z, path)?;
        }
        let mut inner = z
            .finish()
            .map_err(|e| zip_error(path, "cannot finish the archive", e))?;
        inner
            .flush()
            .map_err(|e| file_error(path, "cannot write the archive", e))
    }

    /// Writes the named arrays (any dtypes) to `path` as an uncompressed `.npz` archive, each as
    /// `NAME.npy` (NumPy's `savez(path, name=array, ...)`). Errors: a name given twice, a `bf16`,
    /// `f8e4m3` or `f8e5m2` array, the file cannot be written.
    pub fn savez(path: impl AsRef<Path>, arrays: &[(&str, &dyn NpyArray)]) -> Result<()> {
        write_npz(path.as_ref(), arrays, CompressionMethod::Stored)
    }

    /// [`savez`] with each array deflate-compressed (NumPy's `savez_compressed`).
    pub fn savez_compressed(
        path: impl AsRef<Path>,
        arrays: &[(&str, &dyn NpyArray)],
    ) -> Result<()> {
        write_npz(path.as_ref(), arrays, CompressionMethod::Deflated)
    }

    /// An opened `.npz` archive (NumPy's `load` of a `.npz` file, an `NpzFile`): its
    /// [`names`](Npz::names) and each array by name ([`get`](Npz::get)).
    pub struct Npz {
        path: PathBuf,
        zip: ZipArchive<BufReader<std::fs::File>>,
    }

    impl std::fmt::Debug for Npz {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Npz({}, {:?})", self.path.display(), self.names())
        }
    }

    /// Opens the `.npz` archive `path` (compressed or not).
    pub fn load_npz(path: impl AsRef<Path>) -> Result<Npz> {
        let path = path.as_ref();
        let f =
            std::fs::File::open(path).map_err(|e| file_error(path, "cannot open the file", e))?;
        let zip = ZipArchive::new(BufReader::new(f))
            .map_err(|e| zip_error(path, "not a zip archive", e))?;
        Ok(Npz {
            path: path.to_path_buf(),
            zip,
        })
    }

    impl Npz {
        /// The names of the arrays (the archive's `NAME.npy` entries, without `.npy`), sorted.
        pub fn names(&self) -> Vec<String> {
            let mut v: Vec<String> = self
                .zip
                .file_names()
                .filter_map(|n| {
                    n.ok()
                        .and_then(|n| n.strip_suffix(".npy").map(str::to_string))
                })
                .collect();
            v.sort();
            v
        }

        /// The array `name` on the current device; `T` must be its dtype (as [`load`](super::load)).
        /// Errors: no such array (the message lists the names), another dtype.
        pub fn get<T: Scalar>(&mut self, name: &str) -> Result<Array<T>> {
            let names = self.names();
            let path = self.path.join(name);
            let mut entry = self.zip.by_name(&format!("{name}.npy")).map_err(|e| {
                file_error(
                    &self.path,
                    format!("no array {name:?} (the archive has {names:?})"),
                    std::io::Error::other(e),
                )
            })?;
            read_npy(&mut entry, &path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_numpys() {
        let h = header(DType::F32, &[2, 3]).unwrap();
        assert_eq!(h.len() % ALIGN, 0);
        assert_eq!(&h[..10], b"\x93NUMPY\x01\x00v\x00");
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(
            text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
            "{text:?}"
        );
        assert!(text.ends_with(" \n"));
        let p = Path::new("x.npy");
        let parsed = parse_header(text, p).unwrap();
        assert_eq!(
            parsed,
            Header {
                dtype: DType::F32,
                big_endian: false,
                fortran: false,
                shape: vec![2, 3]
            }
        );
        assert_eq!(
            parse_header("{'descr': '|b1', 'fortran_order': True, 'shape': (), }", p)
                .unwrap()
                .shape,
            Vec::<usize>::new()
        );
        let h = parse_header(
            "{'descr': '>c16', 'fortran_order': False, 'shape': (5,), }",
            p,
        )
        .unwrap();
        assert!(h.big_endian && h.dtype == DType::C64 && h.shape == vec![5]);
        for bad in [
            "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<U3', 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': [5], }",
            "{'descr': '<f4', 'fortran_order': False}",
        ] {
            assert!(
                matches!(parse_header(bad, p), Err(Error::ArrayFile { .. })),
                "{bad}"
            );
        }
        assert!(header(DType::BF16, &[1]).is_none());
    }
}
