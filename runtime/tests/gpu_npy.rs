//! NumPy's `.npy`/`.npz` files on each device: round trips of every shared dtype through a
//! temporary directory, files NumPy wrote (`fixtures/npy/`, made by `make.py` there: C and
//! Fortran order, big-endian, 0-d, empty, compressed archives) and files cuprum must write byte
//! for byte as NumPy does, and the errors (a dtype other than the file's, `bf16`, a file that
//! is not `.npy`).

mod support;
use support::Rng;

use std::path::{Path, PathBuf};

use cuprum_runtime::array::{Idx, load, load_npz, save, savez, savez_compressed};
use cuprum_runtime::{Array, Error, Scalar, Slice};
use half::{bf16, f16};
use num_complex::Complex;

on_both_devices!(
    cuprum_runtime::Device;
    every_dtype_round_trips,
    numpy_files_load,
    saved_bytes_are_numpys,
    npz_round_trips,
    bad_files_are_errors,
);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/npy")
        .join(name)
}

fn round_trip<T: Scalar + PartialEq + std::fmt::Debug>(dir: &Path, data: Vec<T>, shape: &[usize]) {
    let a = Array::from_shape_vec(shape.to_vec(), data.clone()).unwrap();
    let p = dir.join(format!(
        "{}.npy",
        T::DTYPE.rust_name().replace(['<', '>'], "_")
    ));
    save(&p, &a).unwrap();
    let b = load::<T>(&p).unwrap();
    assert_eq!(b.shape(), shape);
    assert!(b.is_c_contiguous());
    assert_eq!(b.to_vec().unwrap(), data, "{}", T::DTYPE);
}

fn every_dtype_round_trips() {
    let mut r = Rng::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 24;
    let bits = |r: &mut Rng| (0..n).map(|_| r.next()).collect::<Vec<u64>>();
    round_trip(
        d,
        bits(&mut r).iter().map(|&b| b & 1 == 1).collect(),
        &[2, 3, 4],
    );
    round_trip(d, bits(&mut r).iter().map(|&b| b as i8).collect(), &[4, 6]);
    round_trip(d, bits(&mut r).iter().map(|&b| b as i16).collect(), &[24]);
    round_trip(d, bits(&mut r).iter().map(|&b| b as i32).collect(), &[3, 8]);
    round_trip(
        d,
        bits(&mut r).iter().map(|&b| b as i64).collect(),
        &[1, 24],
    );
    round_trip(d, bits(&mut r).iter().map(|&b| b as u8).collect(), &[24, 1]);
    round_trip(d, bits(&mut r).iter().map(|&b| b as u16).collect(), &[6, 4]);
    round_trip(
        d,
        bits(&mut r).iter().map(|&b| b as u32).collect(),
        &[2, 12],
    );
    round_trip(d, bits(&mut r), &[2, 2, 6]);
    round_trip(
        d,
        (0..n)
            .map(|_| f16::from_f64(r.range(-100.0, 100.0)))
            .collect(),
        &[24],
    );
    round_trip(
        d,
        (0..n).map(|_| r.range(-1e6, 1e6) as f32).collect(),
        &[4, 6],
    );
    round_trip(d, (0..n).map(|_| r.range(-1e6, 1e6)).collect(), &[4, 6]);
    round_trip(
        d,
        (0..n)
            .map(|_| Complex::new(r.range(-9.0, 9.0) as f32, r.range(-9.0, 9.0) as f32))
            .collect(),
        &[3, 8],
    );
    round_trip(
        d,
        (0..n)
            .map(|_| Complex::new(r.range(-9.0, 9.0), r.range(-9.0, 9.0)))
            .collect(),
        &[8, 3],
    );
    // NaN, infinities and -0.0 keep their bits
    let special = vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0];
    let a = Array::from_slice(&special).unwrap();
    save(d.join("s.npy"), &a).unwrap();
    let got = load::<f64>(d.join("s.npy")).unwrap().to_vec().unwrap();
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        special.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    // empty, 0-d, and a non-contiguous view (saved in C order)
    round_trip::<f32>(d, Vec::new(), &[3, 0]);
    round_trip(d, vec![42i64], &[]);
    let h: Vec<i32> = (0..12).map(|_| r.int(-1000, 1000) as i32).collect();
    let m = Array::from_shape_vec([3, 4], h.clone()).unwrap();
    let v = m.slice(1, Slice::rev().step_by(-2)).unwrap().transpose(); // [2, 3]
    save(d.join("v.npy"), &v).unwrap();
    let want: Vec<i32> = [3usize, 1]
        .iter()
        .flat_map(|&c| (0..3).map(move |r| (r, c)))
        .map(|(r, c)| h[r * 4 + c])
        .collect();
    let back = load::<i32>(d.join("v.npy")).unwrap();
    assert_eq!(
        (back.shape(), back.to_vec().unwrap()),
        (&[2usize, 3][..], want)
    );
}

fn numpy_files_load() {
    let a = load::<f32>(fixture("f32_2x3.npy")).unwrap();
    assert_eq!(
        (a.shape(), a.to_vec().unwrap()),
        (&[2usize, 3][..], vec![1.5, -2.25, 3.0, 4.0, 5.5, -6.75])
    );
    // Fortran order: an F-contiguous array with the same elements
    let f = load::<f64>(fixture("f64_fortran_3x2.npy")).unwrap();
    assert_eq!(f.shape(), &[3, 2]);
    assert!(f.is_f_contiguous() && !f.is_c_contiguous());
    assert_eq!(f.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        load::<bool>(fixture("bool_4.npy"))
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![true, false, false, true]
    );
    // big-endian files are swapped
    assert_eq!(
        load::<i16>(fixture("i16_be_5.npy"))
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![1, -2, 300, -32768, 32767]
    );
    assert_eq!(
        load::<Complex<f64>>(fixture("c16_be_2.npy"))
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![Complex::new(1.0, 2.0), Complex::new(-3.5, -0.25)]
    );
    let c = load::<Complex<f32>>(fixture("c8_0d.npy")).unwrap();
    assert_eq!((c.ndim(), c.item().unwrap()), (0, Complex::new(1.5, -2.0)));
    assert_eq!(
        load::<f16>(fixture("f16_3.npy")).unwrap().to_vec().unwrap(),
        [0.5, -1.0, 65504.0].map(f16::from_f32).to_vec()
    );
    let e = load::<u64>(fixture("u64_2x0.npy")).unwrap();
    assert_eq!((e.shape(), e.len()), (&[2usize, 0][..], 0));
    assert_eq!(
        load::<u8>(fixture("u8_2.npy")).unwrap().to_vec().unwrap(),
        vec![7, 255]
    );
    for name in ["pair.npz", "pair_compressed.npz"] {
        let mut z = load_npz(fixture(name)).unwrap();
        assert_eq!(z.names(), vec!["a", "b"]);
        let a = z.get::<i32>("a").unwrap();
        assert_eq!(
            (a.shape(), a.to_vec().unwrap()),
            (&[2usize, 3][..], (0..6).collect::<Vec<i32>>())
        );
        assert_eq!(z.get::<f64>("b").unwrap().to_vec().unwrap(), vec![0.5, 1.5]);
        assert!(matches!(z.get::<f64>("c"), Err(Error::ArrayFile { .. })));
        assert!(matches!(
            z.get::<f32>("b"),
            Err(Error::DtypeMismatch { .. })
        ));
    }
}

fn saved_bytes_are_numpys() {
    let dir = tempfile::tempdir().unwrap();
    let check = |name: &str, write: &dyn Fn(&Path)| {
        let p = dir.path().join(name);
        write(&p);
        let (got, want) = (
            std::fs::read(&p).unwrap(),
            std::fs::read(fixture(name)).unwrap(),
        );
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert!(
            got == want,
            "{name}: {} bytes written, NumPy's {}; first difference at {first:?}",
            got.len(),
            want.len()
        );
    };
    check("expect_f32_2x3.npy", &|p| {
        save(
            p,
            &Array::from_shape_vec([2, 3], vec![1.5f32, -2.25, 3.0, 4.0, 5.5, -6.75]).unwrap(),
        )
        .unwrap()
    });
    check("expect_i64_0d.npy", &|p| {
        save(p, &Array::from_shape_vec([0usize; 0], vec![-7i64]).unwrap()).unwrap()
    });
    // np.ones(12345, bool)[::-1] & (arange(12345) % 3 == 0): written from a reversed view
    check("expect_bool_12345.npy", &|p| {
        let v: Vec<bool> = (0..12345usize).map(|j| (12344 - j) % 3 == 0).collect();
        let a = Array::from_vec(v).unwrap().slice(0, Slice::rev()).unwrap();
        save(p, &a).unwrap()
    });
}

fn npz_round_trips() {
    let mut r = Rng::new();
    let dir = tempfile::tempdir().unwrap();
    let x = Array::from_shape_vec([3, 5], (0..15).map(|_| r.range(-1.0, 1.0) as f32).collect())
        .unwrap();
    let y = Array::from_vec((0..7).map(|_| r.int(-99, 99)).collect::<Vec<i64>>()).unwrap();
    let z = Array::from_vec(vec![true, false])
        .unwrap()
        .index(&[Idx::Int(1)])
        .unwrap();
    for (name, compressed) in [("plain.npz", false), ("small.npz", true)] {
        let p = dir.path().join(name);
        let arrays: [(&str, &dyn cuprum_runtime::array::NpyArray); 3] =
            [("x", &x), ("y", &y), ("flag", &z)];
        if compressed {
            savez_compressed(&p, &arrays).unwrap()
        } else {
            savez(&p, &arrays).unwrap()
        }
        let mut f = load_npz(&p).unwrap();
        assert_eq!(f.names(), vec!["flag", "x", "y"]);
        assert_eq!(
            f.get::<f32>("x").unwrap().to_vec().unwrap(),
            x.to_vec().unwrap()
        );
        assert_eq!(
            f.get::<i64>("y").unwrap().to_vec().unwrap(),
            y.to_vec().unwrap()
        );
        let flag = f.get::<bool>("flag").unwrap();
        assert_eq!((flag.ndim(), flag.item().unwrap()), (0, false));
    }
    // a repeated name is refused before the file is made
    let p = dir.path().join("twice.npz");
    assert!(savez(&p, &[("a", &x), ("a", &x)]).is_err());
    assert!(!p.exists());
}

fn bad_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    save(&p, &Array::from_slice(&[1.0f32, 2.0]).unwrap()).unwrap();
    let e = load::<f64>(&p).unwrap_err();
    assert!(matches!(e, Error::DtypeMismatch { .. }), "{e}");
    // bf16 has no NumPy dtype: nothing is written
    let b = dir.path().join("b.npy");
    let e = save(&b, &Array::from_slice(&[bf16::ONE]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("bf16"), "{e}");
    assert!(!b.exists(), "nothing written");
    let e = savez(
        dir.path().join("b.npz"),
        &[
            ("x", &Array::from_slice(&[1.0f32]).unwrap()),
            ("y", &Array::from_slice(&[bf16::ONE]).unwrap()),
        ],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("bf16") && !dir.path().join("b.npz").exists(),
        "{e}"
    );
    // not a .npy file; a truncated one; a missing one
    std::fs::write(dir.path().join("c.npy"), b"hello world, this is no array").unwrap();
    assert!(matches!(
        load::<f32>(dir.path().join("c.npy")),
        Err(Error::ArrayFile { .. })
    ));
    let full = std::fs::read(&p).unwrap();
    std::fs::write(dir.path().join("d.npy"), &full[..full.len() - 3]).unwrap();
    let e = load::<f32>(dir.path().join("d.npy")).unwrap_err();
    assert!(
        matches!(e, Error::ArrayFile { .. }) && e.to_string().contains("2 elements"),
        "{e}"
    );
    assert!(matches!(
        load::<f32>(dir.path().join("missing.npy")),
        Err(Error::ArrayFile { .. })
    ));
    assert!(matches!(load_npz(&p), Err(Error::ArrayFile { .. })));
}
