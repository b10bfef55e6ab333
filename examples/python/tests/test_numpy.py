"""The extension on NumPy arrays, on cuprum's CPU device (no GPU needed): arguments taken
through DLPack without a copy, results given back to NumPy without a copy, every dtype that NumPy
and cuprum share, strided views, lifetimes, and bad inputs."""

import os
import weakref

import numpy as np
import pytest

import cuprum_example as ce

# Every dtype NumPy has that cuprum supports (bfloat16 has no NumPy dtype).
DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


def sample(dtype, shape=(3, 5)):
    """Distinct values of `dtype` (not all zero, so that a wrong copy shows)."""
    n = int(np.prod(shape))
    v = np.arange(1, n + 1)
    if np.dtype(dtype) == np.bool_:
        return (v % 3 == 0).reshape(shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (v + 0.5j * v).astype(dtype).reshape(shape)
    return (v % 100).astype(dtype).reshape(shape)


def address(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_both_ways_without_a_copy(dtype):
    x = sample(dtype)
    t = ce.view(x)
    assert t.dtype == x.dtype.str
    assert t.shape == x.shape
    assert t.data_ptr == address(x), "the argument was copied"
    y = np.from_dlpack(t)
    assert y.dtype == x.dtype
    assert address(y) == address(x), "the result was copied"
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_through_a_kernel(dtype):
    x = sample(dtype)
    t = ce.copy(x)
    y = np.from_dlpack(t)
    assert address(y) == t.data_ptr
    assert address(y) != address(x)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_squared_diff_broadcasts_like_numpy(dtype):
    x = sample(dtype, (4, 6)) / 7
    y = (np.arange(6) / 3).astype(dtype)
    got = np.from_dlpack(ce.squared_diff(x, y))
    assert got.dtype == x.dtype and got.shape == (4, 6)
    np.testing.assert_allclose(got, (x - y) ** 2, rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_strided_arguments_transposed_and_sliced():
    base = sample(np.float32, (8, 10)) / 3
    x = base.T  # transposed: strides (4, 40)
    y = base[::2, 1:].T[:, :4]  # sliced then transposed: no unit stride
    t = ce.view(x)
    assert t.strides == x.strides
    v = np.from_dlpack(t)
    assert v.strides == x.strides and address(v) == address(x)
    np.testing.assert_array_equal(v, x)
    z = np.from_dlpack(ce.squared_diff(x[:9, :4], y))
    np.testing.assert_allclose(z, (x[:9, :4] - y) ** 2, rtol=1e-6)
    c = np.from_dlpack(ce.copy(x))
    assert c.flags.c_contiguous
    np.testing.assert_array_equal(c, x)


def test_reversed_view():
    x = np.arange(10, dtype=np.float64)
    r = x[::-1]
    try:
        t = ce.view(r)
    except ValueError as e:
        # cuprum may refuse negative strides; then it must say so clearly.
        assert "stride" in str(e)
        return
    np.testing.assert_array_equal(np.from_dlpack(t), r)
    np.testing.assert_array_equal(np.from_dlpack(ce.squared_diff(r, 1.5 * np.ones(10))), (r - 1.5) ** 2)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_l2norm(axis):
    x = sample(np.float32, (5, 7)) / 10
    got = np.from_dlpack(ce.l2norm(x, axis=axis))
    want = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_softmax(dtype):
    x = (np.sin(np.arange(6 * 33)) * 4).astype(dtype).reshape(6, 33)
    got = np.from_dlpack(ce.softmax(x))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


def test_raw_kernel_writes_into_the_callers_array():
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    ce.axpy(2.0, x, y)
    np.testing.assert_array_equal(y, 1 + 2 * x)


def test_a_result_is_an_argument():
    x = sample(np.float32) / 5
    t = ce.squared_diff(x, np.zeros_like(x))
    u = ce.squared_diff(t, x)
    np.testing.assert_allclose(np.from_dlpack(u), (x * x - x) ** 2, rtol=1e-6)


def test_producer_dropped_first(collect):
    x = sample(np.float64, (50, 20))
    want = x.copy()
    gone = weakref.ref(x)
    t = ce.view(x)
    del x
    collect()
    assert gone() is not None, "the NumPy array was freed while cuprum views it"
    np.testing.assert_array_equal(np.from_dlpack(ce.copy(t)), want)
    np.testing.assert_array_equal(np.from_dlpack(t), want)
    del t
    collect()
    assert gone() is None, "cuprum never released the NumPy array (the DLPack deleter did not run)"


def test_cuprum_result_dropped_first(collect):
    x = sample(np.float32, (64, 64))
    t = ce.copy(x)
    y = np.from_dlpack(t)
    del t
    collect()
    # Reuse cuprum's memory pool: if the result's buffer had gone back to it, these would write over it.
    others = [ce.squared_diff(x, np.full_like(x, i)) for i in range(8)]
    assert all(o.shape == x.shape for o in others)
    np.testing.assert_array_equal(y, x)


def test_unconsumed_capsule_frees_the_array(collect):
    x = sample(np.int32)
    gone = weakref.ref(x)
    t = ce.view(x)
    del x
    capsules = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0))]
    assert "dltensor" in repr(capsules[0]) and "versioned" not in repr(capsules[0])
    assert "dltensor_versioned" in repr(capsules[1])
    del t
    collect()
    assert gone() is not None
    del capsules
    collect()
    assert gone() is None, "an unconsumed capsule's destructor did not call the deleter"


class Producer:
    """A DLPack producer that records the capsule it hands out (and can speak only DLPack 0.x)."""

    def __init__(self, array, legacy):
        self.array = array
        self.legacy = legacy
        self.calls = []
        self.capsule = None

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        self.calls.append(max_version)
        if self.legacy and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.capsule = self.array.__dlpack__(stream=stream, max_version=max_version) if max_version else self.array.__dlpack__(stream=stream)
        return self.capsule


@pytest.mark.parametrize("legacy", [False, True], ids=["dlpack1", "dlpack0"])
def test_capsule_protocol(legacy):
    x = sample(np.float32)
    p = Producer(x, legacy)
    t = ce.view(p)
    np.testing.assert_array_equal(np.from_dlpack(t), x)
    assert p.calls == ([(1, 0), None] if legacy else [(1, 0)])
    name = "used_dltensor" if legacy else "used_dltensor_versioned"
    assert f'"{name}"' in repr(p.capsule), repr(p.capsule)


def test_export_options():
    x = sample(np.float32)
    t = ce.view(x)
    assert t.__dlpack_device__() == (1, 0)
    assert not hasattr(t, "__cuda_array_interface__")
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    copied = np.from_dlpack(t, copy=True) if np.lib.NumpyVersion(np.__version__) >= "2.1.0" else None
    if copied is not None:
        assert address(copied) != address(x)
        np.testing.assert_array_equal(copied, x)
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=5)


def test_wrong_dtype_is_a_type_error_naming_the_dtype():
    with pytest.raises(TypeError, match="float32"):
        ce.l2norm(np.ones(4, dtype=np.float64))
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        ce.squared_diff(np.ones(4, dtype=np.int32), np.ones(4, dtype=np.int32))
    with pytest.raises(TypeError, match="float64"):
        ce.squared_diff(np.ones(4, dtype=np.float64), np.ones(4, dtype=np.float32))


def test_wrong_ndim_is_a_value_error():
    with pytest.raises(ValueError, match="2 dimensions"):
        ce.softmax(np.ones(8, dtype=np.float32))


def test_not_an_array():
    with pytest.raises(TypeError, match="__dlpack__"):
        ce.view([1.0, 2.0])


def test_cuprum_errors_carry_cuprums_message():
    with pytest.raises(ce.CuprumError) as e:
        ce.squared_diff(np.ones((3, 4), dtype=np.float32), np.ones(5, dtype=np.float32))
    assert isinstance(e.value, RuntimeError)
    assert "(3, 4)" in str(e.value) or "[3, 4]" in str(e.value), str(e.value)


def test_read_only_array_is_not_written():
    x = np.ones(16, dtype=np.float32)
    y = np.ones(16, dtype=np.float32)
    y.flags.writeable = False
    with pytest.raises(Exception):
        ce.axpy(1.0, x, y)
    np.testing.assert_array_equal(y, np.ones(16, dtype=np.float32))


def test_a_rust_panic_is_an_exception():
    with pytest.raises(ce.CuprumError, match="boom 42"):
        ce._panic("boom 42")
    # The interpreter and the module still work.
    np.testing.assert_array_equal(np.from_dlpack(ce.view(np.arange(3))), np.arange(3))


class InterfaceOnly:
    """An object with only a __cuda_array_interface__ (as Numba's device arrays)."""

    def __init__(self, **fields):
        d = {"version": 3, "shape": (4,), "typestr": "<f4", "data": (0, False), "strides": None, "stream": None, **fields}
        self.__cuda_array_interface__ = {k: v for k, v in d.items() if v is not MISSING}


MISSING = object()


@pytest.mark.parametrize(
    "fields, error, text",
    [
        ({"typestr": ">f4"}, TypeError, "typestr '>f4'"),
        ({"typestr": "<U1"}, TypeError, "typestr '<U1'"),
        ({"mask": object()}, ValueError, "mask"),
        ({"strides": (6,)}, ValueError, "not a multiple of the 4-byte float32"),
        ({"strides": (4, 4)}, ValueError, "2 strides for 1 axes"),
        ({"stream": 0}, ValueError, "stream 0 is disallowed"),
        ({"typestr": MISSING}, ValueError, "has no 'typestr'"),
    ],
    ids=["big-endian", "string", "mask", "stride", "strides", "stream0", "no-typestr"],
)
def test_cuda_array_interface_checked_before_anything_is_taken(fields, error, text):
    with pytest.raises(error, match=text):
        ce.view(InterfaceOnly(**fields))


@pytest.mark.skipif(os.environ.get("CUPRUM_DEVICE", "").lower() != "cpu", reason="checks the CPU device's refusal (CUPRUM_DEVICE=cpu)")
def test_cuda_memory_on_the_cpu_device_is_refused():
    with pytest.raises(ValueError, match="CPU device"):
        ce.view(InterfaceOnly(data=(0x1000, False)))
