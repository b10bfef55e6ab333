//! `sort`, `argsort`, `unique` and `unique_all` on each device, against the host's stable sort in NumPy's order
//! (NaN last, -0.0 equal to 0.0; issue 36, item 2). Each test runs on the CPU device (in CI) and
//! on CUDA device 0 (ignored without a GPU; `cargo test -p cuprum-runtime --test gpu_sort --
//! --include-ignored` on a GPU machine).

mod support;
use support::Rng;

use std::cmp::Ordering;
use std::fmt::Debug;

use cuprum_runtime::{Array, Device, Error, Scalar, Slice};

on_both_devices!(
    cuprum_runtime::Device;
    sorts_random_keys_of_every_dtype,
    argsort_is_stable_with_zeros_nan_and_infinities,
    sorts_special_orders,
    sorts_skewed_keys_over_many_tiles,
    sorts_along_every_axis,
    sorts_non_contiguous_views,
    unique_of_edge_cases,
    sort_edge_cases_and_bad_input,
    unique_all_matches_the_host,
    unique_all_of_views_and_shapes,
    unique_all_edge_cases_and_bad_input,
);

/// Lengths around the kernels' tile of 4096 (and the former 2048) and across tiles, and around the CPU device's switch
/// from the standard library's sort to its radix sort (512 keys; runtime/src/cpu/sort.rs); the
/// GPU adds millions (the unoptimised test build's host references would take long on the CPU).
fn lengths() -> Vec<usize> {
    let mut n = vec![1, 2, 127, 511, 512, 2047, 2048, 2049, 4095, 4096, 4097, 3 * 4096 + 7, 9_001, (1 << 17) + 3];
    if !Device::current().unwrap().is_cpu() {
        n.extend([1 << 20, (1 << 22) + 3]);
    }
    n
}

/// A sortable dtype of the tests: NumPy's order, bit equality, random values with duplicates.
trait Key: Scalar + Copy + Debug {
    /// NumPy's order: floats by value, NaN after everything, -0.0 == 0.0.
    fn np_cmp(&self, other: &Self) -> Ordering;
    /// The same bits.
    fn same(&self, other: &Self) -> bool;
    /// A random value: across the whole range, often one of a few repeated values.
    fn random(r: &mut Rng) -> Self;
}

macro_rules! float_key {
    ($t:ty, $bits:ty) => {
        impl Key for $t {
            fn np_cmp(&self, other: &Self) -> Ordering {
                match (self.is_nan(), other.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    _ => self.partial_cmp(other).unwrap(),
                }
            }
            fn same(&self, other: &Self) -> bool {
                self.to_bits() == other.to_bits()
            }
            fn random(r: &mut Rng) -> Self {
                match r.int(0, 12) {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => <$t>::INFINITY,
                    3 => <$t>::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    6 => r.int(-3, 4) as $t,
                    7 => <$t>::from_bits(r.next() as $bits),
                    _ => (r.range(-1.0, 1.0) * 10f64.powi(r.int(-30, 30) as i32)) as $t,
                }
            }
        }
    };
}
float_key!(f32, u32);
float_key!(f64, u64);

macro_rules! int_key {
    ($t:ty) => {
        impl Key for $t {
            fn np_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn same(&self, other: &Self) -> bool {
                self == other
            }
            fn random(r: &mut Rng) -> Self {
                match r.int(0, 6) {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    2 => r.int(-3, 4) as $t,
                    _ => r.next() as $t,
                }
            }
        }
    };
}
int_key!(i32);
int_key!(i64);
int_key!(u32);
int_key!(u64);

/// The host's stable argsort in NumPy's order.
fn host_argsort<T: Key>(x: &[T]) -> Vec<i64> {
    let mut idx: Vec<i64> = (0..x.len() as i64).collect();
    idx.sort_by(|&i, &j| x[i as usize].np_cmp(&x[j as usize]));
    idx
}

/// The host's unique: the first of each run of NumPy-equal values of the sorted `x`.
fn host_unique<T: Key>(x: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in host_argsort(x) {
        let v = x[i as usize];
        if out.last().is_none_or(|l| l.np_cmp(&v) != Ordering::Equal) {
            out.push(v);
        }
    }
    out
}

fn assert_same<T: Key>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same(&want[i])) {
        panic!("{what}: first difference at {i}: {:?} against {:?}", got[i], want[i]);
    }
}

/// sort, argsort and unique of `x` (1-d, flattened) against the host.
fn check_1d<T: Key>(x: &[T], what: &str) {
    let a = Array::<T>::from_vec(x.to_vec()).unwrap();
    let want_idx = host_argsort(x);
    let idx = a.argsort(None).unwrap().to_vec().unwrap();
    if let Some(i) = (0..x.len()).find(|&i| idx[i] != want_idx[i]) {
        panic!(
            "{what}: argsort differs first at {i}: {} ({:?}) against {} ({:?})",
            idx[i], x[idx[i] as usize], want_idx[i], x[want_idx[i] as usize]
        );
    }
    let want: Vec<T> = want_idx.iter().map(|&i| x[i as usize]).collect();
    assert_same(&a.sort(None).unwrap().to_vec().unwrap(), &want, &format!("{what}: sort"));
    assert_same(&a.sort(Some(-1)).unwrap().to_vec().unwrap(), &want, &format!("{what}: sort along -1"));
    assert_same(&a.unique().unwrap().to_vec().unwrap(), &host_unique(x), &format!("{what}: unique"));
}

fn random_keys<T: Key>(r: &mut Rng) {
    for n in lengths() {
        let x: Vec<T> = (0..n).map(|_| T::random(r)).collect();
        check_1d(&x, &format!("{} of {n}", std::any::type_name::<T>()));
    }
}

fn sorts_random_keys_of_every_dtype() {
    let r = &mut Rng::new();
    random_keys::<f32>(r);
    random_keys::<f64>(r);
    random_keys::<i32>(r);
    random_keys::<i64>(r);
    random_keys::<u32>(r);
    random_keys::<u64>(r);
}

fn argsort_is_stable_with_zeros_nan_and_infinities() {
    let r = &mut Rng::new();
    // Few distinct keys among many: every key's equals must keep their input order.
    let specials = [0.0f32, -0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.5, -1.5];
    let x: Vec<f32> = (0..5000).map(|_| specials[r.int(0, 7) as usize]).collect();
    check_1d(&x, "f32 specials");
    let a = Array::<f32>::from_vec(x.clone()).unwrap();
    let s = a.sort(None).unwrap().to_vec().unwrap();
    let zeros: Vec<u32> = s.iter().filter(|v| **v == 0.0).map(|v| v.to_bits()).collect();
    let zeros_in: Vec<u32> = x.iter().filter(|v| **v == 0.0).map(|v| v.to_bits()).collect();
    assert_eq!(zeros, zeros_in, "-0.0 and 0.0 keep their input order (NumPy's stable sort)");
    let first_nan = s.iter().position(|v| v.is_nan()).unwrap();
    assert!(s[first_nan..].iter().all(|v| v.is_nan()), "every NaN last");
    assert_eq!(s[first_nan - 1], f32::INFINITY);
    assert_eq!(s[0], f32::NEG_INFINITY);
    let d: Vec<f64> = (0..3000).map(|_| [0.0, -0.0, f64::NAN, 2.0][r.int(0, 3) as usize]).collect();
    check_1d(&d, "f64 specials");
    let i: Vec<i64> = (0..3000).map(|_| r.int(-2, 2)).collect();
    check_1d(&i, "i64 with duplicates");
}

fn sorts_special_orders() {
    // Integer keys with few varying bits (the passes over the other digits are skipped).
    let r = &mut Rng::new();
    let small: Vec<i64> = (0..5000).map(|_| r.int(0, 1000)).collect();
    check_1d(&small, "small i64");
    let top: Vec<u64> = (0..5000).map(|_| (r.int(0, 1) as u64) << 63 | r.int(0, 1) as u64).collect();
    check_1d(&top, "u64 varying in bits 0 and 63");
    let mid: Vec<i32> = (0..5000).map(|_| (r.int(-4, 3) as i32) << 12).collect();
    check_1d(&mid, "i32 multiples of 4096");
    for n in [1usize, 2049, 7000] {
        let up: Vec<f32> = (0..n).map(|i| i as f32 - 100.5).collect();
        check_1d(&up, "sorted f32");
        let down: Vec<f32> = up.iter().rev().copied().collect();
        check_1d(&down, "reversed f32");
        let same = vec![-7i32; n];
        check_1d(&same, "all-equal i32");
        let a = Array::<i32>::from_vec(same).unwrap();
        assert_eq!(a.argsort(None).unwrap().to_vec().unwrap(), (0..n as i64).collect::<Vec<_>>());
        let downu: Vec<u64> = (0..n as u64).rev().map(|i| i << 40).collect();
        check_1d(&downu, "reversed u64");
    }
}

/// Skewed digits over many tiles (on a GPU, 1025 tiles of the kernels' 4096 keys: each pass's
/// look-back adds zero counts for most digits and meets one digit in every tile): all keys
/// equal, two distinct values, sorted and reverse-sorted input.
fn sorts_skewed_keys_over_many_tiles() {
    let r = &mut Rng::new();
    let n = if Device::current().unwrap().is_cpu() { 40_000 } else { (1 << 22) + 3 };
    check_1d(&vec![0.75f32; n], "all-equal f32");
    let two: Vec<f32> = (0..n).map(|_| if r.int(0, 1) == 0 { f32::NAN } else { -0.0 }).collect();
    check_1d(&two, "f32 NaN and -0.0");
    let up: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 1e5).collect();
    check_1d(&up, "sorted f32");
    let down: Vec<f32> = up.iter().rev().copied().collect();
    check_1d(&down, "reverse-sorted f32");
    let two_u: Vec<u32> = (0..n).map(|_| if r.int(0, 1) == 0 { 7 } else { 1 << 31 }).collect();
    check_1d(&two_u, "u32 of two values");
    let down_i: Vec<i64> = (0..n as i64).rev().map(|i| i - 1000).collect();
    check_1d(&down_i, "reverse-sorted i64");
    let same_d = vec![-1.25f64; n];
    check_1d(&same_d, "all-equal f64");
}

/// The host's sort of each row along `axis` of the C-order `x` of `shape`: (values, indices).
fn host_along<T: Key>(x: &[T], shape: &[usize], axis: usize) -> (Vec<T>, Vec<i64>) {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut vals = x.to_vec();
    let mut idx = vec![0i64; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let row: Vec<T> = (0..n).map(|k| x[at(k)]).collect();
            for (k, &j) in host_argsort(&row).iter().enumerate() {
                vals[at(k)] = row[j as usize];
                idx[at(k)] = j;
            }
        }
    }
    (vals, idx)
}

fn check_along<T: Key>(x: &[T], shape: &[usize], r: &str) {
    let a = Array::<T>::from_shape_vec(shape.to_vec(), x.to_vec()).unwrap();
    for axis in 0..shape.len() {
        let (want, want_idx) = host_along(x, shape, axis);
        for ax in [axis as isize, axis as isize - shape.len() as isize] {
            let what = format!("{r} {shape:?} along {ax}");
            let s = a.sort(Some(ax)).unwrap();
            assert_eq!(s.shape(), shape, "{what}");
            assert_same(&s.to_vec().unwrap(), &want, &what);
            let i = a.argsort(Some(ax)).unwrap();
            assert_eq!(i.shape(), shape, "{what}");
            assert_eq!(i.to_vec().unwrap(), want_idx, "{what}: argsort");
        }
    }
}

fn sorts_along_every_axis() {
    let r = &mut Rng::new();
    for shape in [vec![5usize, 300], vec![300, 7], vec![3, 4, 50], vec![1, 1], vec![2049, 2]] {
        let len: usize = shape.iter().product();
        let x: Vec<f32> = (0..len).map(|_| f32::random(r)).collect();
        check_along(&x, &shape, "f32");
        let y: Vec<i64> = (0..len).map(|_| r.int(-5, 5)).collect();
        check_along(&y, &shape, "i64");
    }
    if !Device::current().unwrap().is_cpu() {
        // Many rows (a row index of 17 bits) and long rows.
        for shape in [vec![1usize << 17, 33], vec![3, 1 << 20]] {
            let len: usize = shape.iter().product();
            let x: Vec<f32> = (0..len).map(|_| f32::random(r)).collect();
            check_along(&x, &shape, "f32");
        }
    }
}

fn sorts_non_contiguous_views() {
    let r = &mut Rng::new();
    let x: Vec<f64> = (0..40 * 60).map(|_| f64::random(r)).collect();
    let a = Array::<f64>::from_shape_vec([40, 60], x.clone()).unwrap();
    // The transpose: rows of the transpose are columns of `x`.
    let t = a.transpose();
    let (want, want_idx) = host_along(&x, &[40, 60], 0);
    let s = t.sort(Some(1)).unwrap();
    assert_eq!(s.shape(), [60, 40]);
    let sv = s.to_vec().unwrap();
    let iv = t.argsort(Some(1)).unwrap().to_vec().unwrap();
    for c in 0..60 {
        for k in 0..40 {
            assert!(sv[c * 40 + k].same(&want[k * 60 + c]), "transpose: column {c} at {k}");
            assert_eq!(iv[c * 40 + k], want_idx[k * 60 + c], "transpose argsort: column {c} at {k}");
        }
    }
    // Every other column, reversed rows: a strided view.
    let v = a.slice(1, Slice::new(None, None, -2)).unwrap();
    let host: Vec<f64> = (0..40).flat_map(|i| (0..30).map(move |j| (i, 59 - 2 * j))).map(|(i, j)| x[i * 60 + j]).collect();
    let (want, want_idx) = host_along(&host, &[40, 30], 1);
    assert_same(&v.sort(Some(1)).unwrap().to_vec().unwrap(), &want, "strided view");
    assert_eq!(v.argsort(Some(-1)).unwrap().to_vec().unwrap(), want_idx, "strided view argsort");
    // A contiguous view that starts inside its buffer (an offset).
    let o = Array::<f64>::from_vec(x.clone()).unwrap().slice(0, 7..).unwrap();
    assert_eq!(o.argsort(None).unwrap().to_vec().unwrap(), host_argsort(&x[7..]), "offset view argsort");
    assert_same(&o.sort(Some(0)).unwrap().to_vec().unwrap(), &host_along(&x[7..], &[x.len() - 7], 0).0, "offset view");
    let flat_idx = host_argsort(&host);
    assert_eq!(v.argsort(None).unwrap().to_vec().unwrap(), flat_idx, "strided view flattened");
    assert_same(&v.unique().unwrap().to_vec().unwrap(), &host_unique(&host), "strided view unique");
}

fn unique_of_edge_cases() {
    let nan = f32::NAN;
    let x = Array::<f32>::from_vec(vec![nan, 1.0, -0.0, -nan, 0.0, 1.0, f32::INFINITY, nan]).unwrap();
    let u = x.unique().unwrap().to_vec().unwrap();
    assert_eq!(u.len(), 4, "{u:?}: one zero, one 1, inf and one NaN");
    assert_eq!(u[0].to_bits(), (-0.0f32).to_bits(), "the first zero in sorted (input) order");
    assert_eq!(&u[1..3], [1.0, f32::INFINITY]);
    assert!(u[3].is_nan());
    let e = Array::<i64>::from_vec(vec![]).unwrap();
    assert_eq!(e.unique().unwrap().shape(), [0]);
    let one = Array::<u32>::from_vec(vec![9]).unwrap();
    assert_eq!(one.unique().unwrap().to_vec().unwrap(), [9]);
    let same = Array::<u64>::from_vec(vec![u64::MAX; 5000]).unwrap();
    assert_eq!(same.unique().unwrap().to_vec().unwrap(), [u64::MAX]);
    let all: Vec<i32> = (0..4100).rev().collect();
    let a = Array::<i32>::from_shape_vec([41, 100], all.clone()).unwrap();
    assert_eq!(a.unique().unwrap().to_vec().unwrap(), (0..4100).collect::<Vec<i32>>());
    let z = Array::<f64>::from_shape_vec(Vec::<usize>::new(), vec![2.5]).unwrap();
    assert_eq!(z.unique().unwrap().to_vec().unwrap(), [2.5]);
}

fn sort_edge_cases_and_bad_input() {
    let e = Array::<f32>::from_vec(vec![]).unwrap();
    assert_eq!(e.sort(None).unwrap().shape(), [0]);
    assert_eq!(e.argsort(Some(0)).unwrap().shape(), [0]);
    let e2 = Array::<f32>::zeros([3, 0]).unwrap();
    assert_eq!(e2.sort(Some(0)).unwrap().shape(), [3, 0]);
    assert_eq!(e2.argsort(Some(1)).unwrap().shape(), [3, 0]);
    let z = Array::<f64>::from_shape_vec(Vec::<usize>::new(), vec![-4.0]).unwrap();
    assert_eq!(z.sort(None).unwrap().to_vec().unwrap(), [-4.0]);
    assert_eq!(z.argsort(None).unwrap().to_vec().unwrap(), [0]);
    assert!(matches!(z.sort(Some(0)), Err(Error::InvalidAxis { .. })));
    let x = Array::<i32>::from_shape_vec([2, 3], vec![1, 2, 3, 4, 5, 6]).unwrap();
    assert!(matches!(x.sort(Some(2)), Err(Error::InvalidAxis { .. })));
    assert!(matches!(x.argsort(Some(-3)), Err(Error::InvalidAxis { .. })));
    let b = Array::<i16>::from_vec(vec![3, 1]).unwrap();
    for r in [b.sort(None).map(|_| ()), b.argsort(None).map(|_| ()), b.unique().map(|_| ())] {
        match r {
            Err(Error::Unsupported { what }) => assert!(what.contains("astype::<i32>"), "{what}"),
            other => panic!("i16 sort: {other:?}"),
        }
    }
    assert_eq!(b.to_vec().unwrap(), [3, 1], "the input is untouched");
}

/// The host's `unique_all` of the flattened `x`: values, first indices, inverse (flat), counts.
fn host_unique_all<T: Key>(x: &[T]) -> (Vec<T>, Vec<i64>, Vec<i64>, Vec<i64>) {
    let values = host_unique(x);
    let find = |v: &T| values.binary_search_by(|u| u.np_cmp(v)).expect("every value is among the unique ones") as i64;
    let inverse: Vec<i64> = x.iter().map(find).collect();
    let mut indices = vec![-1i64; values.len()];
    let mut counts = vec![0i64; values.len()];
    for (i, &k) in inverse.iter().enumerate() {
        if indices[k as usize] < 0 {
            indices[k as usize] = i as i64;
        }
        counts[k as usize] += 1;
    }
    (values, indices, inverse, counts)
}

/// `unique_all` of `a` (whose C-order elements are `x`) against the host, and `unique` with it.
fn check_unique_all<T: Key>(a: &Array<T>, x: &[T], what: &str) {
    let (values, indices, inverse, counts) = host_unique_all(x);
    let u = a.unique_all().unwrap();
    assert_same(&u.values.to_vec().unwrap(), &values, &format!("{what}: values"));
    assert_same(&a.unique().unwrap().to_vec().unwrap(), &values, &format!("{what}: unique"));
    assert_eq!(u.values.shape(), [values.len()], "{what}");
    assert_eq!(u.indices.to_vec().unwrap(), indices, "{what}: indices (first occurrences)");
    assert_eq!(u.inverse.shape(), a.shape(), "{what}: the inverse has the input's shape");
    assert_eq!(u.inverse.to_vec().unwrap(), inverse, "{what}: inverse");
    assert_eq!(u.counts.to_vec().unwrap(), counts, "{what}: counts");
    if !x.is_empty() {
        // The inverse rebuilds the input (up to the NaNs' bits and the zeros' signs).
        let back = u.values.take(&u.inverse, None).unwrap().to_vec().unwrap();
        for (i, (b, v)) in back.iter().zip(x).enumerate() {
            assert!(b.np_cmp(v) == Ordering::Equal, "{what}: values[inverse] at {i}: {b:?} against {v:?}");
        }
    }
}

fn unique_all_of<T: Key>(r: &mut Rng) {
    for n in lengths() {
        let x: Vec<T> = (0..n).map(|_| T::random(r)).collect();
        let a = Array::<T>::from_vec(x.clone()).unwrap();
        check_unique_all(&a, &x, &format!("{} of {n}", std::any::type_name::<T>()));
        // Many duplicates: a few values drawn again and again.
        let few: Vec<T> = (0..5).map(|_| T::random(r)).collect();
        let y: Vec<T> = (0..n).map(|_| few[r.int(0, 4) as usize]).collect();
        let b = Array::<T>::from_vec(y.clone()).unwrap();
        check_unique_all(&b, &y, &format!("{} of {n} from 5 values", std::any::type_name::<T>()));
    }
}

fn unique_all_matches_the_host() {
    let r = &mut Rng::new();
    unique_all_of::<f32>(r);
    unique_all_of::<f64>(r);
    unique_all_of::<i32>(r);
    unique_all_of::<i64>(r);
    unique_all_of::<u32>(r);
    unique_all_of::<u64>(r);
}

fn unique_all_of_views_and_shapes() {
    let r = &mut Rng::new();
    let x: Vec<f32> = (0..30 * 50).map(|_| f32::random(r)).collect();
    let a = Array::<f32>::from_shape_vec([30, 50], x.clone()).unwrap();
    check_unique_all(&a, &x, "[30, 50]");
    let a3 = a.reshape([5, 6, 50]).unwrap();
    check_unique_all(&a3, &x, "[5, 6, 50]");
    // The transpose: flattened in its own C order.
    let t: Vec<f32> = (0..50).flat_map(|j| (0..30).map(move |i| (i, j))).map(|(i, j)| x[i * 50 + j]).collect();
    check_unique_all(&a.transpose(), &t, "transpose");
    // Every other row backwards, columns 3..: strides and an offset.
    let v = a.slice(0, Slice::new(None, None, -2)).unwrap().slice(1, 3..).unwrap();
    let host: Vec<f32> = (0..15).flat_map(|k| (3..50).map(move |j| (29 - 2 * k, j))).map(|(i, j)| x[i * 50 + j]).collect();
    check_unique_all(&v, &host, "strided view");
    // A broadcast view: each value counted once per row.
    let row: Vec<i64> = (0..40).map(|_| r.int(-3, 3)).collect();
    let b = Array::<i64>::from_vec(row.clone()).unwrap().broadcast_to([4, 40]).unwrap();
    let host: Vec<i64> = (0..4).flat_map(|_| row.iter().copied()).collect();
    check_unique_all(&b, &host, "broadcast view");
}

fn unique_all_edge_cases_and_bad_input() {
    // NaNs (both signs) are one value counted together, its index the first NaN's; -0.0 and 0.0
    // one zero, the first in input order.
    let nan = f32::NAN;
    let x = vec![nan, 1.0, -0.0, -nan, 0.0, 1.0, f32::INFINITY, nan];
    let a = Array::<f32>::from_vec(x.clone()).unwrap();
    check_unique_all(&a, &x, "specials");
    let u = a.unique_all().unwrap();
    assert_eq!(u.counts.to_vec().unwrap(), [2, 2, 1, 3]);
    assert_eq!(u.indices.to_vec().unwrap(), [2, 1, 6, 0]);
    assert_eq!(u.values.to_vec().unwrap()[0].to_bits(), (-0.0f32).to_bits());
    // Empty arrays: empty results, the inverse of the input's shape.
    for shape in [vec![0usize], vec![3, 0]] {
        let e = Array::<i64>::zeros(shape.clone()).unwrap();
        let u = e.unique_all().unwrap();
        assert_eq!(u.values.shape(), [0]);
        assert_eq!(u.indices.shape(), [0]);
        assert_eq!(u.counts.shape(), [0]);
        assert_eq!(u.inverse.shape(), shape);
    }
    // 0-d: one value, a 0-d inverse.
    let z = Array::<f64>::from_shape_vec(Vec::<usize>::new(), vec![-2.5]).unwrap();
    let u = z.unique_all().unwrap();
    assert_eq!(u.values.to_vec().unwrap(), [-2.5]);
    assert_eq!(u.indices.to_vec().unwrap(), [0]);
    assert_eq!(u.counts.to_vec().unwrap(), [1]);
    assert_eq!(u.inverse.shape(), [0usize; 0]);
    assert_eq!(u.inverse.to_vec().unwrap(), [0]);
    // All equal, across tiles; all distinct.
    let same = vec![u64::MAX; 5000];
    check_unique_all(&Array::<u64>::from_vec(same.clone()).unwrap(), &same, "all equal");
    let all: Vec<i32> = (0..4100).rev().collect();
    check_unique_all(&Array::<i32>::from_vec(all.clone()).unwrap(), &all, "all distinct");
    // Unsupported element types: a clear error, the input untouched.
    let b = Array::<i16>::from_vec(vec![3, 1]).unwrap();
    match b.unique_all() {
        Err(Error::Unsupported { what }) => assert!(what.contains("unique_all") && what.contains("astype::<i32>"), "{what}"),
        other => panic!("i16 unique_all: {other:?}"),
    }
    assert_eq!(b.to_vec().unwrap(), [3, 1]);
}
