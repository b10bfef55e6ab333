//! Tests of the ndarray attributes, basic indexing, `diagonal`/`trace`, the creation routines
//! (`eye`, `diag`, `*_like`, ...) and the manipulation routines (`concatenate`, `stack`, the
//! splits, `moveaxis`, ...) on each device, against host references computed by plain index
//! arithmetic on C-order data (no strides). Each runs on the CPU device (in CI) and on CUDA
//! device 0 (ignored without a GPU: `cargo test -p cuprum-runtime --test gpu_manipulation --
//! --include-ignored` on a GPU machine).

mod support;
use support::Rng;

use cuprum_runtime::array::{
    self, Idx, List, Sections, array_split, broadcast_arrays, column_stack, concatenate, dsplit,
    dstack, hsplit, hstack, split, stack, vsplit, vstack,
};
use cuprum_runtime::{Array, Error, Slice};

on_both_devices!(
    cuprum_runtime::Device;
    attributes_and_flags,
    view_reinterprets_bytes,
    tolist_and_tofile,
    basic_indexing_matches_host,
    index_assignment_broadcasts,
    bad_indices_write_nothing,
    diagonal_and_trace,
    creation_routines,
    concatenate_matches_host,
    stack_family_matches_host,
    join_errors_allocate_nothing,
    splits_match_host,
    axis_moves_and_atleast,
    take_matches_host,
    take_refuses_bad_indices,
);

// ---- the host model -------------------------------------------------------------------------

/// C-order host data of a shape: the reference every result is compared with.
#[derive(Clone, Debug, PartialEq)]
struct Host {
    shape: Vec<usize>,
    data: Vec<f64>,
}

impl Host {
    fn random(r: &mut Rng, shape: &[usize]) -> Host {
        let n = shape.iter().product();
        // Distinct non-zero integers (exact in f32, i64 and f64), so a wrong element shows.
        let data = (0..n)
            .map(|i| {
                (i as f64 + 1.0) * if r.next() & 1 == 1 { 1.0 } else { -1.0 }
                    + (r.int(0, 1) as f64) * 0.5
            })
            .collect();
        Host {
            shape: shape.to_vec(),
            data,
        }
    }

    fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> f64) -> Host {
        let n: usize = shape.iter().product();
        let data = (0..n).map(|flat| f(&unravel(flat, shape))).collect();
        Host {
            shape: shape.to_vec(),
            data,
        }
    }

    fn at(&self, idx: &[usize]) -> f64 {
        assert_eq!(idx.len(), self.shape.len());
        let mut flat = 0;
        for (&i, &d) in idx.iter().zip(&self.shape) {
            assert!(i < d, "{idx:?} outside {:?}", self.shape);
            flat = flat * d + i;
        }
        self.data[flat]
    }

    fn device(&self) -> Array<f64> {
        Array::from_shape_vec(self.shape.clone(), self.data.clone()).unwrap()
    }
}

fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (i, &d) in idx.iter_mut().zip(shape).rev() {
        *i = flat % d;
        flat /= d;
    }
    idx
}

fn host_of(a: &Array<f64>) -> Host {
    Host {
        shape: a.shape().to_vec(),
        data: a.to_vec().unwrap(),
    }
}

fn random_shape(r: &mut Rng, nd: usize, max: i64) -> Vec<usize> {
    (0..nd).map(|_| r.int(1, max) as usize).collect()
}

// ---- attributes -----------------------------------------------------------------------------

fn attributes_and_flags() {
    let a = Array::<f32>::zeros([3, 4]).unwrap();
    assert_eq!((a.itemsize(), a.size(), a.nbytes()), (4, 12, 48));
    assert_eq!(Array::<f64>::zeros([2, 0]).unwrap().size(), 0);
    assert_eq!(Array::<u16>::zeros([0usize; 0]).unwrap().size(), 1);
    let f = a.flags();
    assert!(
        f.c_contiguous && !f.f_contiguous && f.owndata && f.writeable,
        "{f:?}"
    );
    let t = a.transpose();
    let f = t.flags();
    assert!(
        !f.c_contiguous && f.f_contiguous && !f.owndata && f.writeable,
        "{f:?}"
    );
    assert!(t.shares_buffer(&a) && !a.shares_buffer(&Array::<f32>::zeros([1]).unwrap()));
    drop(t);
    assert!(a.flags().owndata, "no other view left");
    // memory another library owns (here a DLPack import) is not the array's own
    let x = Array::<f32>::zeros([3]).unwrap();
    let t = x.to_dlpack_versioned();
    // SAFETY: `t` is the live export just made, owned here until the import takes it.
    let y = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    drop(x);
    assert!(!y.flags().owndata);
    let b = Array::<f32>::zeros([4])
        .unwrap()
        .broadcast_to([3, 4])
        .unwrap();
    assert!(!b.flags().writeable);
    assert_eq!(b.strides(), &[0, 1]);
    assert_eq!(
        a.slice(1, Slice::rev().step_by(-2)).unwrap().byte_strides(),
        vec![16, -8]
    );
}

fn view_reinterprets_bytes() {
    let mut r = Rng::new();
    let v: Vec<f32> = (0..12).map(|_| r.range(-1e3, 1e3) as f32).collect();
    let a = Array::from_shape_vec([3, 4], v.clone()).unwrap();
    // Same size: the bits.
    let bits = a.view::<u32>().unwrap();
    assert_eq!(bits.shape(), &[3, 4]);
    assert_eq!(
        bits.to_vec().unwrap(),
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    // Smaller elements: the last axis grows.
    let bytes = a.view::<u8>().unwrap();
    assert_eq!(bytes.shape(), &[3, 16]);
    let want: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    assert_eq!(bytes.to_vec().unwrap(), want);
    // Larger elements: pairs of f32 as f64, and a column slice's view.
    let pairs = a.view::<f64>().unwrap();
    assert_eq!(pairs.shape(), &[3, 2]);
    let want: Vec<f64> = v
        .chunks(2)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&c[0].to_ne_bytes());
            b[4..].copy_from_slice(&c[1].to_ne_bytes());
            f64::from_ne_bytes(b)
        })
        .collect();
    assert_eq!(
        pairs
            .to_vec()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let rows = a
        .slice(0, Slice::from(1..3))
        .unwrap()
        .view::<u16>()
        .unwrap();
    assert_eq!(rows.shape(), &[2, 8]);
    // Refused: a strided last axis, a last axis whose bytes do not divide, a 0-d array, bool.
    assert!(matches!(
        a.transpose().view::<u8>(),
        Err(Error::InvalidShape { .. })
    ));
    assert!(matches!(
        a.slice(1, Slice::from(0..3)).unwrap().view::<f64>(),
        Err(Error::InvalidShape { .. })
    ));
    assert!(
        a.slice(1, Slice::from(1..3))
            .unwrap()
            .view::<f64>()
            .is_err(),
        "starts at an odd f32"
    );
    assert!(
        a.index(&[Idx::Int(0), Idx::Int(0)])
            .unwrap()
            .view::<u8>()
            .is_err()
    );
    assert!(bytes.view::<bool>().is_err());
    // Same size on a 0-d array is fine.
    assert_eq!(
        a.index(&[Idx::Int(1), Idx::Int(2)])
            .unwrap()
            .view::<i32>()
            .unwrap()
            .item()
            .unwrap(),
        v[6].to_bits() as i32
    );
}

fn tolist_and_tofile() {
    let a = Array::from_shape_vec([2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    let l = a.tolist().unwrap();
    assert_eq!(format!("{l:?}"), "[[1, 2, 3], [4, 5, 6]]");
    assert_eq!(
        l.entries().unwrap()[1].entries().unwrap()[2].item(),
        Some(6)
    );
    let t = a.transpose().tolist().unwrap();
    assert_eq!(format!("{t:?}"), "[[1, 4], [2, 5], [3, 6]]");
    let z = a
        .index(&[Idx::Int(1), Idx::Int(0)])
        .unwrap()
        .tolist()
        .unwrap();
    assert_eq!(z, List::Item(4));
    assert_eq!(
        format!(
            "{:?}",
            Array::<i32>::zeros([2, 0]).unwrap().tolist().unwrap()
        ),
        "[[], []]"
    );

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.bin");
    a.transpose().tofile(&p).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let want: Vec<u8> = [1i32, 4, 2, 5, 3, 6]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    assert_eq!(bytes, want);
    let e = a.tofile(dir.path().join("no/such/dir/a.bin")).unwrap_err();
    assert!(matches!(e, Error::ArrayFile { .. }), "{e}");
}

// ---- indexing -------------------------------------------------------------------------------

fn basic_indexing_matches_host() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[3, 4, 5]);
    let a = h.device();
    // x[-1, 1:, None, ...] : shape [3, 1, 5]
    let v = a
        .index(&[Idx::from(-1), (1..).into(), Idx::NewAxis, Idx::Ellipsis])
        .unwrap();
    assert_eq!(v.shape(), &[3, 1, 5]);
    assert_eq!(
        host_of(&v),
        Host::from_fn(&[3, 1, 5], |i| h.at(&[2, 1 + i[0], i[2]]))
    );
    // x[..., ::-2] : the last axis reversed by twos
    let v = a
        .index(&[Idx::Ellipsis, Slice::rev().step_by(-2).into()])
        .unwrap();
    assert_eq!(
        host_of(&v),
        Host::from_fn(&[3, 4, 3], |i| h.at(&[i[0], i[1], 4 - 2 * i[2]]))
    );
    // x[1] (later axes whole), x[None] and x[...] (the whole array)
    assert_eq!(
        host_of(&a.index(&[Idx::from(1)]).unwrap()),
        Host::from_fn(&[4, 5], |i| h.at(&[1, i[0], i[1]]))
    );
    assert_eq!(a.index(&[Idx::NewAxis]).unwrap().shape(), &[1, 3, 4, 5]);
    assert_eq!(host_of(&a.index(&[Idx::Ellipsis]).unwrap()), h);
    // x[0, 0, 0]: a 0-d view; x[:, 5:] an empty one
    let e = a.index(&[Idx::Int(0), Idx::Int(-1), Idx::Int(2)]).unwrap();
    assert_eq!((e.ndim(), e.item().unwrap()), (0, h.at(&[0, 3, 2])));
    assert_eq!(
        a.index(&[Idx::Slice(Slice::full()), (5..).into()])
            .unwrap()
            .shape(),
        &[3, 0, 5]
    );
    // a 0-d array: only new axes and an ellipsis
    let z = e
        .index(&[Idx::NewAxis, Idx::Ellipsis, Idx::NewAxis])
        .unwrap();
    assert_eq!(
        (z.shape(), z.to_vec().unwrap()),
        (&[1usize, 1][..], vec![h.at(&[0, 3, 2])])
    );
    // of a non-contiguous view
    let t = a.transpose(); // [5, 4, 3]
    let v = t.index(&[(1..4).into(), Idx::Int(2)]).unwrap();
    assert_eq!(
        host_of(&v),
        Host::from_fn(&[3, 3], |i| h.at(&[i[1], 2, 1 + i[0]]))
    );
    // errors
    for bad in [
        vec![Idx::Int(3)],
        vec![Idx::Int(-4)],
        vec![Idx::Int(0), Idx::Int(0), Idx::Int(0), Idx::Int(0)],
        vec![Idx::Ellipsis, Idx::Int(0), Idx::Ellipsis],
        vec![Idx::Slice(Slice::new(None, None, 0))],
    ] {
        assert!(
            matches!(a.index(&bad), Err(Error::InvalidSlice { .. })),
            "{bad:?}"
        );
    }
}

fn index_assignment_broadcasts() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[4, 6]);
    let mut a = h.device();
    // x[1:, ::2] = y with y of shape [3] broadcast over 3 rows
    let y = Host::random(&mut r, &[3]);
    a.assign_index(
        &[(1..).into(), Slice::full().step_by(2).into()],
        &y.device(),
    )
    .unwrap();
    let want = Host::from_fn(&[4, 6], |i| {
        if i[0] >= 1 && i[1] % 2 == 0 {
            y.data[i[1] / 2]
        } else {
            h.at(i)
        }
    });
    assert_eq!(host_of(&a), want);
    // x[-1] = 7.5 ; x[..., None] of a [4, 6] array is [4, 6, 1]: assign a [1] array
    a.fill_index(&[Idx::Int(-1)], 7.5).unwrap();
    let want = Host::from_fn(&[4, 6], |i| if i[0] == 3 { 7.5 } else { want.at(i) });
    assert_eq!(host_of(&a), want);
    a.assign_index(
        &[Idx::Int(0), Idx::Ellipsis, Idx::NewAxis],
        &Array::from_slice(&[-2.0]).unwrap(),
    )
    .unwrap();
    let want = Host::from_fn(&[4, 6], |i| if i[0] == 0 { -2.0 } else { want.at(i) });
    assert_eq!(host_of(&a), want);
    // through a transposed view
    let mut t = a.transpose();
    t.fill_index(&[Idx::Int(5), (1..3).into()], 9.0).unwrap();
    let want = Host::from_fn(&[4, 6], |i| {
        if i[1] == 5 && (1..3).contains(&i[0]) {
            9.0
        } else {
            want.at(i)
        }
    });
    assert_eq!(host_of(&a), want);
}

fn bad_indices_write_nothing() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[3, 4]);
    let mut a = h.device();
    let y = Array::<f64>::from_slice(&[1.0, 2.0, 3.0]).unwrap();
    // shape [4] does not take [3]; an index out of range; a broadcast view as the target
    assert!(matches!(
        a.assign_index(&[Idx::Int(0)], &y),
        Err(Error::Broadcast { .. })
    ));
    assert!(a.assign_index(&[Idx::Int(3)], &y).is_err());
    assert!(a.fill_index(&[Idx::Int(0), Idx::Int(4)], 1.0).is_err());
    assert_eq!(host_of(&a), h, "nothing written");
}

// ---- diagonal and trace ---------------------------------------------------------------------

fn diagonal_and_trace() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[4, 6]);
    let a = h.device();
    for k in -5isize..=7 {
        let d = a.diagonal(k, 0, 1).unwrap();
        let want: Vec<f64> = (0..4usize)
            .flat_map(|i| {
                let j = i as isize + k;
                (0..6).contains(&j).then(|| h.at(&[i, j as usize]))
            })
            .collect();
        assert_eq!(d.to_vec().unwrap(), want, "offset {k}");
        let t = a.trace(k, 0, 1).unwrap();
        assert_eq!(t.ndim(), 0);
        let s: f64 = want.iter().sum();
        assert!(
            (t.item().unwrap() - s).abs() <= 1e-9 * s.abs().max(1.0),
            "trace offset {k}"
        );
        // swapped axes: the transpose's diagonal
        assert_eq!(
            a.diagonal(-k, 1, 0).unwrap().to_vec().unwrap(),
            want,
            "axes (1, 0) offset {}",
            -k
        );
    }
    // 3-d: axes (0, 2) and negative axes; the diagonal is the last axis
    let h3 = Host::random(&mut r, &[3, 2, 5]);
    let a3 = h3.device();
    let d = a3.diagonal(1, -3, -1).unwrap();
    assert_eq!(d.shape(), &[2, 3]);
    assert_eq!(
        host_of(&d),
        Host::from_fn(&[2, 3], |i| h3.at(&[i[1], i[0], i[1] + 1]))
    );
    let t = a3.trace(1, 0, 2).unwrap();
    assert_eq!(t.shape(), &[2]);
    let want: Vec<f64> = (0..2)
        .map(|j| (0..3).map(|i| h3.at(&[i, j, i + 1])).sum())
        .collect();
    let got = t.to_vec().unwrap();
    assert!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| (g - w).abs() <= 1e-9 * w.abs().max(1.0)),
        "{got:?} {want:?}"
    );
    // the diagonal is a view: writing it writes the array
    let m = h.device();
    m.diagonal(0, 0, 1).unwrap().fill(0.25).unwrap();
    assert_eq!(
        host_of(&m),
        Host::from_fn(&[4, 6], |i| if i[0] == i[1] { 0.25 } else { h.at(i) })
    );
    // integer trace wraps; an empty diagonal sums to 0
    let big = Array::<i32>::full([2, 2], i32::MAX).unwrap();
    assert_eq!(
        big.trace(0, 0, 1).unwrap().item().unwrap(),
        i32::MAX.wrapping_add(i32::MAX)
    );
    assert_eq!(a.trace(6, 0, 1).unwrap().item().unwrap(), 0.0);
    // errors
    assert!(matches!(
        Array::<f64>::zeros([3]).unwrap().diagonal(0, 0, 1),
        Err(Error::InvalidShape { .. })
    ));
    assert!(matches!(
        a.diagonal(0, 1, -1),
        Err(Error::InvalidShape { .. })
    ));
    assert!(matches!(
        a.diagonal(0, 0, 2),
        Err(Error::InvalidAxis { .. })
    ));
}

// ---- creation -------------------------------------------------------------------------------

fn creation_routines() {
    let mut r = Rng::new();
    for _ in 0..6 {
        let (n, m, k) = (
            r.int(0, 5) as usize,
            r.int(0, 5) as usize,
            r.int(-6, 6) as isize,
        );
        let e = Array::<f32>::eye(n, m, k).unwrap();
        let want: Vec<f32> = (0..n * m)
            .map(|f| {
                if (f % m) as isize - (f / m) as isize == k {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(
            (e.shape(), e.to_vec().unwrap()),
            (&[n, m][..], want),
            "eye({n}, {m}, {k})"
        );
    }
    assert_eq!(
        Array::<i64>::identity(3).unwrap().to_vec().unwrap(),
        vec![1, 0, 0, 0, 1, 0, 0, 0, 1]
    );

    let proto = Array::<f64>::zeros([2, 3]).unwrap().transpose();
    let o = Array::<i16>::ones_like(&proto).unwrap();
    assert_eq!(
        (o.shape(), o.to_vec().unwrap(), o.is_c_contiguous()),
        (&[3usize, 2][..], vec![1; 6], true)
    );
    assert_eq!(
        Array::<f32>::full_like(&proto, -1.5)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![-1.5; 6]
    );
    let mut z = Array::<u8>::full([3, 2], 9).unwrap();
    z = Array::<u8>::zeros_like(&z).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0; 6]);
    assert_eq!(Array::<bool>::empty_like(&proto).unwrap().shape(), &[3, 2]);
    assert_eq!(
        Array::<f32>::zeros_like(&Array::<f32>::zeros([0usize; 0]).unwrap())
            .unwrap()
            .shape(),
        &[] as &[usize]
    );

    // diag of a 1-d array, of a 2-d one; diagflat
    let v = Host::random(&mut r, &[3]);
    for k in [-2isize, 0, 1] {
        let d = Array::diag(&v.device(), k).unwrap();
        let n = 3 + k.unsigned_abs();
        let want = Host::from_fn(&[n, n], |i| {
            if i[1] as isize - i[0] as isize == k {
                v.data[i[0].min(i[1])]
            } else {
                0.0
            }
        });
        assert_eq!(host_of(&d), want, "diag k={k}");
        assert_eq!(
            Array::diag(&d, k).unwrap().to_vec().unwrap(),
            v.data,
            "diag of diag k={k}"
        );
    }
    let m = Host::random(&mut r, &[2, 2]);
    let df = Array::diagflat(&m.device().transpose(), -1).unwrap();
    let want = Host::from_fn(&[5, 5], |i| {
        if i[0] == i[1] + 1 {
            [m.data[0], m.data[2], m.data[1], m.data[3]][i[1]]
        } else {
            0.0
        }
    });
    assert_eq!(host_of(&df), want);
    assert!(matches!(
        Array::diag(&Array::<f64>::zeros([2, 2, 2]).unwrap(), 0),
        Err(Error::InvalidShape { .. })
    ));

    // asarray: a view of an array, a copy of host data
    let a = v.device();
    let b = Array::asarray(&a).unwrap();
    assert!(b.shares_buffer(&a));
    // array: always a new buffer
    let fresh = Array::array(a.slice(0, Slice::rev()).unwrap()).unwrap();
    assert!(!fresh.shares_buffer(&a) && fresh.is_c_contiguous());
    assert_eq!(
        fresh.to_vec().unwrap(),
        v.data.iter().rev().copied().collect::<Vec<_>>()
    );
    assert_eq!(
        Array::array(vec![5u16, 6]).unwrap().to_vec().unwrap(),
        vec![5, 6]
    );
    assert_eq!(
        Array::asarray(vec![1i32, 2]).unwrap().to_vec().unwrap(),
        vec![1, 2]
    );
    assert_eq!(
        Array::asarray(&[3u8, 4][..]).unwrap().to_vec().unwrap(),
        vec![3, 4]
    );
    assert_eq!(
        Array::<f64>::asarray(&cuprum_runtime::ndarray::arr2(&[[1.0, 2.0]]))
            .unwrap()
            .shape(),
        &[1, 2]
    );
    // ascontiguousarray: a view when contiguous, else a copy; 0-d becomes 1-d
    let c = a.ascontiguousarray().unwrap();
    assert!(c.shares_buffer(&a));
    let t = m.device().transpose();
    let tc = t.ascontiguousarray().unwrap();
    assert!(!tc.shares_buffer(&t) && tc.is_c_contiguous());
    assert_eq!(
        tc.to_vec().unwrap(),
        vec![m.data[0], m.data[2], m.data[1], m.data[3]]
    );
    let s = a
        .index(&[Idx::Int(1)])
        .unwrap()
        .ascontiguousarray()
        .unwrap();
    assert_eq!(
        (s.shape(), s.to_vec().unwrap()),
        (&[1usize][..], vec![v.data[1]])
    );
}

// ---- joining --------------------------------------------------------------------------------

/// The host reference of `concatenate`: the element of the result at `idx` is the element of
/// the input whose range along `axis` holds `idx[axis]`.
fn host_concat(parts: &[Host], axis: usize) -> Host {
    let mut shape = parts[0].shape.clone();
    shape[axis] = parts.iter().map(|p| p.shape[axis]).sum();
    Host::from_fn(&shape, |i| {
        let mut at = i[axis];
        for p in parts {
            if at < p.shape[axis] {
                let mut j = i.to_vec();
                j[axis] = at;
                return p.at(&j);
            }
            at -= p.shape[axis];
        }
        unreachable!()
    })
}

fn concatenate_matches_host() {
    let mut r = Rng::new();
    for round in 0..20 {
        let nd = r.int(1, 3) as usize;
        let axis = r.int(0, nd as i64 - 1) as usize;
        let base = random_shape(&mut r, nd, 4);
        let count = r.int(1, 4) as usize;
        let mut hosts = Vec::new();
        let mut devs = Vec::new();
        for _ in 0..count {
            let mut s = base.clone();
            s[axis] = r.int(0, 3) as usize; // empty parts too
            let h = Host::random(&mut r, &s);
            // Sometimes a non-contiguous input: the transpose of a copy of the transposed data.
            let d = if r.next() & 1 == 1 && nd > 1 {
                let rev: Vec<usize> = s.iter().rev().copied().collect();
                let ht =
                    Host::from_fn(&rev, |i| h.at(&i.iter().rev().copied().collect::<Vec<_>>()));
                ht.device().transpose()
            } else {
                h.device()
            };
            assert_eq!(host_of(&d), h);
            hosts.push(h);
            devs.push(d);
        }
        let neg = if r.next() & 1 == 1 {
            axis as isize - nd as isize
        } else {
            axis as isize
        };
        let got = concatenate(&devs.iter().collect::<Vec<_>>(), neg).unwrap();
        assert!(got.is_c_contiguous());
        assert_eq!(
            host_of(&got),
            host_concat(&hosts, axis),
            "round {round}: axis {neg} of {:?}",
            hosts.iter().map(|h| &h.shape).collect::<Vec<_>>()
        );
    }
    // NaN, infinities and -0.0 keep their bits; complex and 16-bit elements
    let special = Array::from_slice(&[f32::NAN, -0.0, f32::INFINITY]).unwrap();
    let got = concatenate(&[&special, &special.slice(0, Slice::rev()).unwrap()], 0)
        .unwrap()
        .to_vec()
        .unwrap();
    let want = [f32::NAN, -0.0, f32::INFINITY, f32::INFINITY, -0.0, f32::NAN];
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let c = Array::from_slice(&[num_complex::Complex::new(1.5f64, -2.0)]).unwrap();
    assert_eq!(
        stack(&[&c, &c], 1).unwrap().to_vec().unwrap(),
        vec![num_complex::Complex::new(1.5, -2.0); 2]
    );
    let h = Array::from_slice(&[half::f16::from_f32(0.5), half::f16::from_f32(-3.0)]).unwrap();
    assert_eq!(
        vstack(&[&h, &h]).unwrap().to_vec().unwrap(),
        [0.5f32, -3.0, 0.5, -3.0].map(half::f16::from_f32).to_vec()
    );
    // integers and bool keep every bit
    let a = Array::from_slice(&[i64::MIN, -1]).unwrap();
    let b = Array::from_slice(&[i64::MAX]).unwrap();
    assert_eq!(
        concatenate(&[&a, &b], 0).unwrap().to_vec().unwrap(),
        vec![i64::MIN, -1, i64::MAX]
    );
    let t = Array::from_slice(&[true, false]).unwrap();
    assert_eq!(
        concatenate(&[&t, &t], -1).unwrap().to_vec().unwrap(),
        vec![true, false, true, false]
    );
}

fn stack_family_matches_host() {
    let mut r = Rng::new();
    let (x, y) = (Host::random(&mut r, &[2, 3]), Host::random(&mut r, &[2, 3]));
    let (dx, dy) = (x.device(), y.device());
    for axis in [-3isize, -1, 0, 1, 2] {
        let s = stack(&[&dx, &dy], axis).unwrap();
        let ax = axis.rem_euclid(3) as usize;
        let mut shape = vec![2, 3];
        shape.insert(ax, 2);
        let want = Host::from_fn(&shape, |i| {
            let mut j = i.to_vec();
            let which = j.remove(ax);
            [&x, &y][which].at(&j)
        });
        assert_eq!(host_of(&s), want, "stack axis {axis}");
    }
    assert!(matches!(
        stack(&[&dx, &dy], 3),
        Err(Error::InvalidAxis { .. })
    ));
    assert!(matches!(
        stack(&[&dx, &dx.transpose()], 0),
        Err(Error::InvalidShape { .. })
    ));

    // 1-d inputs
    let (u, w) = (Host::random(&mut r, &[3]), Host::random(&mut r, &[3]));
    let (du, dw) = (u.device(), w.device());
    let cat = |a: &[f64], b: &[f64]| [a, b].concat();
    assert_eq!(
        hstack(&[&du, &dw]).unwrap().to_vec().unwrap(),
        cat(&u.data, &w.data)
    );
    let v = vstack(&[&du, &dw]).unwrap();
    assert_eq!(
        (v.shape(), v.to_vec().unwrap()),
        (&[2usize, 3][..], cat(&u.data, &w.data))
    );
    let d = dstack(&[&du, &dw]).unwrap();
    assert_eq!(
        host_of(&d),
        Host::from_fn(&[1, 3, 2], |i| [&u, &w][i[2]].data[i[1]])
    );
    let c = column_stack(&[&du, &dw]).unwrap();
    assert_eq!(
        host_of(&c),
        Host::from_fn(&[3, 2], |i| [&u, &w][i[1]].data[i[0]])
    );
    // 2-d inputs
    assert_eq!(
        host_of(&hstack(&[&dx, &dy]).unwrap()),
        host_concat(&[x.clone(), y.clone()], 1)
    );
    assert_eq!(
        host_of(&vstack(&[&dx, &dy, &dx]).unwrap()),
        host_concat(&[x.clone(), y.clone(), x.clone()], 0)
    );
    let d2 = dstack(&[&dx, &dy]).unwrap();
    assert_eq!(
        host_of(&d2),
        Host::from_fn(&[2, 3, 2], |i| [&x, &y][i[2]].at(&i[..2]))
    );
    let col = Host::random(&mut r, &[2]);
    let cs = column_stack(&[&col.device(), &dx]).unwrap();
    assert_eq!(
        host_of(&cs),
        Host::from_fn(&[2, 4], |i| if i[1] == 0 {
            col.data[i[0]]
        } else {
            x.at(&[i[0], i[1] - 1])
        })
    );
    // 0-d inputs: hstack makes them 1-d
    let s0 = dx.index(&[Idx::Int(1), Idx::Int(2)]).unwrap();
    assert_eq!(
        hstack(&[&s0, &du]).unwrap().to_vec().unwrap(),
        cat(&[x.at(&[1, 2])], &u.data)
    );
    assert_eq!(
        stack(&[&s0, &s0], 0).unwrap().to_vec().unwrap(),
        vec![x.at(&[1, 2]); 2]
    );
}

fn join_errors_allocate_nothing() {
    let a = Array::<f32>::zeros([2, 3]).unwrap();
    let b = Array::<f32>::zeros([2, 4]).unwrap();
    let none: [&Array<f32>; 0] = [];
    for e in [
        concatenate(&[&a, &b], 0).unwrap_err(),
        concatenate(&[&a, &b.reshape([4, 2]).unwrap()], 1).unwrap_err(),
        concatenate(&[&a, &a.reshape([6]).unwrap()], 0).unwrap_err(),
        concatenate(
            &[&a.reshape([6]).unwrap().index(&[Idx::Int(0)]).unwrap()],
            0,
        )
        .unwrap_err(),
        concatenate(&none, 0).unwrap_err(),
        vstack(&[&a, &b]).unwrap_err(),
    ] {
        assert!(matches!(e, Error::InvalidShape { .. }), "{e}");
    }
    assert!(matches!(
        concatenate(&[&a, &a], 2),
        Err(Error::InvalidAxis { .. })
    ));
    assert!(matches!(
        concatenate(&[&a, &a], -3),
        Err(Error::InvalidAxis { .. })
    ));
    // the good call along axis 1
    assert_eq!(concatenate(&[&a, &b], -1).unwrap().shape(), &[2, 7]);
}

// ---- splitting ------------------------------------------------------------------------------

fn splits_match_host() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[7, 4]);
    let a = h.device();
    // array_split into 3: rows 3, 2, 2
    let parts = array_split(&a, 3, 0).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.shape()[0]).collect::<Vec<_>>(),
        vec![3, 2, 2]
    );
    assert!(parts.iter().all(|p| p.shares_buffer(&a)));
    assert_eq!(
        host_of(&concatenate(&parts.iter().collect::<Vec<_>>(), 0).unwrap()),
        h
    );
    // more sections than rows: empty parts at the end
    let parts = array_split(&a, 9, 0).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.shape()[0]).collect::<Vec<_>>(),
        vec![1, 1, 1, 1, 1, 1, 1, 0, 0]
    );
    // split at indices with Python's rules (negative, out of range, decreasing)
    let parts = split(&a, [2, -2, 10, 1], 0).unwrap();
    let rows = |p: &Array<f64>| p.shape()[0];
    assert_eq!(
        parts.iter().map(rows).collect::<Vec<_>>(),
        vec![2, 3, 2, 0, 6]
    );
    assert_eq!(
        host_of(&parts[1]),
        Host::from_fn(&[3, 4], |i| h.at(&[2 + i[0], i[1]]))
    );
    assert_eq!(
        host_of(&parts[4]),
        Host::from_fn(&[6, 4], |i| h.at(&[1 + i[0], i[1]]))
    );
    // split along axis -1 into 2 equal parts; an unequal split is an error
    let parts = split(&a, 2, -1).unwrap();
    assert_eq!(
        host_of(&parts[1]),
        Host::from_fn(&[7, 2], |i| h.at(&[i[0], 2 + i[1]]))
    );
    assert!(matches!(split(&a, 3, 1), Err(Error::InvalidShape { .. })));
    assert!(matches!(split(&a, 0, 1), Err(Error::InvalidShape { .. })));
    assert!(matches!(split(&a, 2, 2), Err(Error::InvalidAxis { .. })));
    assert!(split(&a.index(&[Idx::Int(0), Idx::Int(0)]).unwrap(), 1, 0).is_err());
    // hsplit / vsplit / dsplit
    let hs = hsplit(&a, Sections::At(vec![1])).unwrap();
    assert_eq!(
        hs.iter().map(|p| p.shape().to_vec()).collect::<Vec<_>>(),
        vec![vec![7, 1], vec![7, 3]]
    );
    let one = Array::<f64>::arange(6).unwrap();
    assert_eq!(
        hsplit(&one, 3).unwrap()[2].to_vec().unwrap(),
        vec![4.0, 5.0]
    );
    assert_eq!(vsplit(&a, [3]).unwrap()[1].shape(), &[4, 4]);
    assert!(vsplit(&one, 2).is_err());
    let h3 = Host::random(&mut r, &[2, 2, 4]);
    let ds = dsplit(&h3.device(), 2).unwrap();
    assert_eq!(
        host_of(&ds[1]),
        Host::from_fn(&[2, 2, 2], |i| h3.at(&[i[0], i[1], 2 + i[2]]))
    );
    assert!(dsplit(&a, 2).is_err());
    // a non-contiguous input
    let t = a.transpose();
    let ts = array_split(&t, 2, 1).unwrap();
    assert_eq!(
        host_of(&ts[0]),
        Host::from_fn(&[4, 4], |i| h.at(&[i[1], i[0]]))
    );
}

// ---- axes -----------------------------------------------------------------------------------

fn axis_moves_and_atleast() {
    let mut r = Rng::new();
    let h = Host::random(&mut r, &[2, 3, 4]);
    let a = h.device();
    let m = a.moveaxis(&[0], &[-1]).unwrap();
    assert_eq!(
        host_of(&m),
        Host::from_fn(&[3, 4, 2], |i| h.at(&[i[2], i[0], i[1]]))
    );
    let m = a.moveaxis(&[0, 1], &[-1, -2]).unwrap();
    assert_eq!(
        host_of(&m),
        Host::from_fn(&[4, 3, 2], |i| h.at(&[i[2], i[1], i[0]]))
    );
    assert!(a.moveaxis(&[0, 0], &[1, 2]).is_err());
    assert!(a.moveaxis(&[0], &[1, 2]).is_err());
    assert!(matches!(
        a.moveaxis(&[3], &[0]),
        Err(Error::InvalidAxis { .. })
    ));
    // rollaxis(2, 0): [4, 2, 3]; rollaxis(0, 3): [3, 4, 2]; rollaxis(1, 2): unchanged
    assert_eq!(
        host_of(&a.rollaxis(2, 0).unwrap()),
        Host::from_fn(&[4, 2, 3], |i| h.at(&[i[1], i[2], i[0]]))
    );
    assert_eq!(
        host_of(&a.rollaxis(0, 3).unwrap()),
        Host::from_fn(&[3, 4, 2], |i| h.at(&[i[2], i[0], i[1]]))
    );
    assert_eq!(a.rollaxis(1, 2).unwrap().shape(), &[2, 3, 4]);
    assert!(a.rollaxis(0, 4).is_err());
    assert_eq!(
        host_of(&a.swapaxes(-1, 0).unwrap()),
        Host::from_fn(&[4, 3, 2], |i| h.at(&[i[2], i[1], i[0]]))
    );
    assert!(a.swapaxes(0, -4).is_err());
    // atleast
    let z = a.index(&[Idx::Int(1), Idx::Int(2), Idx::Int(3)]).unwrap();
    let v = a.index(&[Idx::Int(1), Idx::Int(2)]).unwrap();
    let m2 = a.index(&[Idx::Int(1)]).unwrap();
    assert_eq!(z.atleast_1d().shape(), &[1]);
    assert_eq!(z.atleast_2d().shape(), &[1, 1]);
    assert_eq!(z.atleast_3d().shape(), &[1, 1, 1]);
    assert_eq!(v.atleast_2d().shape(), &[1, 4]);
    assert_eq!(v.atleast_3d().shape(), &[1, 4, 1]);
    assert_eq!(
        host_of(&m2.atleast_3d()),
        Host::from_fn(&[3, 4, 1], |i| h.at(&[1, i[0], i[1]]))
    );
    assert_eq!(a.atleast_3d().shape(), &[2, 3, 4]);
    // broadcast (the shape) and broadcast_arrays (the views)
    let bc = array::broadcast(&[&a, &v, &z]).unwrap();
    assert_eq!(
        (bc.shape(), bc.ndim(), bc.size(), bc.numiter()),
        (&[2usize, 3, 4][..], 3, 24, 3)
    );
    assert!(matches!(
        array::broadcast(&[&a, &m2.transpose()]),
        Err(Error::Broadcast { .. })
    ));
    let col = Host::random(&mut r, &[3, 1]);
    let b = broadcast_arrays(&[&col.device(), &v.index(&[Idx::NewAxis]).unwrap()]).unwrap();
    assert_eq!(b[0].shape(), &[3, 4]);
    assert_eq!(host_of(&b[0]), Host::from_fn(&[3, 4], |i| col.data[i[0]]));
    assert_eq!(
        host_of(&b[1]),
        Host::from_fn(&[3, 4], |i| h.at(&[1, 2, i[1]]))
    );
    assert!(matches!(
        broadcast_arrays(&[&a, &v.index(&[(0..3).into()]).unwrap()]),
        Err(Error::Broadcast { .. })
    ));
}

// ---- take -----------------------------------------------------------------------------------

fn take_matches_host() {
    let mut r = Rng::new();
    for round in 0..16 {
        let nd = r.int(1, 3) as usize;
        let shape = random_shape(&mut r, nd, 4);
        let h = Host::random(&mut r, &shape);
        // sometimes a transposed (non-contiguous) source: the same elements through a view
        let a = if round % 3 == 1 && nd > 1 {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            Host::from_fn(&rev, |i| h.at(&i.iter().rev().copied().collect::<Vec<_>>()))
                .device()
                .transpose()
        } else {
            h.device()
        };
        let axis = if round % 4 == 0 {
            None
        } else {
            Some(r.int(-(nd as i64), nd as i64 - 1) as isize)
        };
        let n = match axis {
            None => h.data.len(),
            Some(ax) => shape[ax.rem_euclid(nd as isize) as usize],
        } as i64;
        let ind = r.int(1, 2) as usize;
        let ishape = random_shape(&mut r, ind, 3);
        let idx: Vec<i64> = (0..ishape.iter().product::<usize>())
            .map(|_| r.int(-n, n - 1))
            .collect();
        let di = Array::from_shape_vec(ishape.clone(), idx.clone()).unwrap();
        // sometimes non-contiguous indices: a reversed view of reversed data
        let di = if round % 2 == 0 && ishape.len() == 1 {
            let rev: Vec<i64> = idx.iter().rev().copied().collect();
            Array::from_vec(rev)
                .unwrap()
                .slice(0, Slice::rev())
                .unwrap()
        } else {
            di
        };
        let got = a.take(&di, axis).unwrap();
        let norm = |j: i64| (if j < 0 { j + n } else { j }) as usize;
        let want = match axis {
            None => Host::from_fn(&ishape, |i| {
                let flat = i.iter().zip(&ishape).fold(0, |acc, (&x, &d)| acc * d + x);
                h.data[norm(idx[flat])]
            }),
            Some(ax) => {
                let ax = ax.rem_euclid(nd as isize) as usize;
                let mut out_shape = shape[..ax].to_vec();
                out_shape.extend(&ishape);
                out_shape.extend(&shape[ax + 1..]);
                Host::from_fn(&out_shape, |i| {
                    let k = &i[ax..ax + ishape.len()];
                    let flat = k.iter().zip(&ishape).fold(0, |acc, (&x, &d)| acc * d + x);
                    let mut src = i[..ax].to_vec();
                    src.push(norm(idx[flat]));
                    src.extend(&i[ax + ishape.len()..]);
                    h.at(&src)
                })
            }
        };
        assert_eq!(
            host_of(&got),
            want,
            "round {round}: shape {shape:?} axis {axis:?} indices {idx:?}"
        );
    }
    // other index types: i32 (negative too) and u8
    let v = Array::from_slice(&[10.5f64, -20.0, 30.25, 40.0]).unwrap();
    let i32s = Array::from_slice(&[3i32, -4, 1]).unwrap();
    assert_eq!(
        v.take(&i32s, None).unwrap().to_vec().unwrap(),
        vec![40.0, 10.5, -20.0]
    );
    let u8s = Array::from_slice(&[2u8, 2, 0]).unwrap();
    assert_eq!(
        v.take(&u8s, Some(-1)).unwrap().to_vec().unwrap(),
        vec![30.25, 30.25, 10.5]
    );
    assert!(v.take(&Array::from_slice(&[4u16]).unwrap(), None).is_err());
    // other dtypes, 0-d indices, empty indices
    let b = Array::from_slice(&[true, false, true]).unwrap();
    assert_eq!(
        b.take(&Array::from_slice(&[2i64, 1, -3]).unwrap(), None)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![true, false, true]
    );
    let i = Array::from_slice(&[5i32, -6, 7]).unwrap();
    let zero_d = Array::from_shape_vec([0usize; 0], vec![-1i64]).unwrap();
    let t = i.take(&zero_d, Some(0)).unwrap();
    assert_eq!((t.ndim(), t.item().unwrap()), (0, 7));
    let e = i.take(&Array::<i64>::zeros([0]).unwrap(), Some(0)).unwrap();
    assert_eq!(e.shape(), &[0]);
    let m = Array::from_shape_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(
        m.take(&Array::from_slice(&[1i64]).unwrap(), Some(-1))
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![2.0, 4.0]
    );
}

fn take_refuses_bad_indices() {
    let a = Array::from_shape_vec([2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    for bad in [vec![0i64, 3], vec![-4, 0], vec![i64::MAX], vec![i64::MIN]] {
        let e = a
            .take(&Array::from_slice(&bad).unwrap(), Some(1))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidSlice { .. }), "{bad:?}: {e}");
    }
    let e = a
        .take(&Array::from_slice(&[6i64]).unwrap(), None)
        .unwrap_err();
    assert!(e.to_string().contains("index 6"), "{e}");
    assert!(
        a.take(&Array::from_slice(&[-6i64, 5]).unwrap(), None)
            .is_ok()
    );
    assert!(matches!(
        a.take(&Array::from_slice(&[0i64]).unwrap(), Some(2)),
        Err(Error::InvalidAxis { .. })
    ));
    // an empty axis has no index to take
    assert!(
        Array::<f32>::zeros([2, 0])
            .unwrap()
            .take(&Array::from_slice(&[0i64]).unwrap(), Some(1))
            .is_err()
    );
}
