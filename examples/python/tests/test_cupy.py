"""The extension on CuPy arrays (skipped unless CuPy and a GPU are there): results checked
against CuPy, zero-copy both ways, CuPy's current stream, and the CUDA Array Interface's stream
protocol (CUPY_CUDA_ARRAY_INTERFACE_SYNC, CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION)."""

import pytest

cp = pytest.importorskip("cupy")
try:
    cp.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001
    pytest.skip("CuPy sees no CUDA GPU", allow_module_level=True)

import cuprum_example as ce  # noqa: E402

# Spins for `cycles` GPU clock cycles, then writes `value` (a producer whose write comes late).
SPIN = cp.RawKernel(
    r"""
extern "C" __global__ void spin_then_fill(long long cycles, float* x, float value, long long n) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) x[i] = value;
}
""",
    "spin_then_fill",
)
CYCLES = 300_000_000  # about 0.15 s


def warm_up(n):
    """Loads the kernels the stream tests run and leaves blocks of `n` float32 in cuprum's
    memory pool (a module load or a new allocation may synchronize the device, which would hide
    a missing stream dependency)."""
    a = cp.ones(n, dtype=cp.float32)
    results = [ce.copy(a), ce.squared_diff(a, a)]
    late_fill(a, 1.0, cycles=0)
    cp.cuda.Device().synchronize()
    del results


def late_fill(x, value, cycles=CYCLES):
    SPIN((64,), (256,), (cp.int64(cycles), x, cp.float32(value), cp.int64(x.size)))


class InterfaceOnly:
    """An object with only __cuda_array_interface__ (as Numba's device arrays)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def test_squared_diff_against_cupy():
    x = cp.random.standard_normal((300, 70), dtype=cp.float32)
    y = cp.random.standard_normal((70,), dtype=cp.float32)
    cp.testing.assert_allclose(cp.from_dlpack(ce.squared_diff(x, y)), (x - y) ** 2, rtol=1e-6)
    cp.testing.assert_allclose(cp.asarray(ce.softmax(x)), cp.exp(x) / cp.exp(x).sum(axis=-1, keepdims=True), rtol=1e-5)


def test_zero_copy_both_ways():
    x = cp.arange(1000, dtype=cp.float64).reshape(10, 100)
    t = ce.view(x)
    assert t.data_ptr == x.data.ptr
    assert cp.from_dlpack(t).data.ptr == x.data.ptr
    assert cp.asarray(t).data.ptr == x.data.ptr  # the CUDA Array Interface
    v = ce.view(InterfaceOnly(x[:, ::2]))
    assert v.data_ptr == x.data.ptr and v.strides == x[:, ::2].strides


def test_runs_on_cupys_current_stream():
    n = 1 << 20
    warm_up(n)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.zeros(n, dtype=cp.float32)
        late_fill(x, 3.0)
        r = ce.squared_diff(x, cp.zeros(n, dtype=cp.float32))
        out = cp.from_dlpack(r) + 0
    s.synchronize()
    assert bool(cp.all(out == 9.0))


def test_cai_stream_is_waited_for(monkeypatch):
    """A CUDA Array Interface producer on a non-blocking stream: cuprum (launching on the legacy
    default stream for an object of no known library) waits for the `stream` it names."""
    monkeypatch.delenv("CUPY_CUDA_ARRAY_INTERFACE_SYNC", raising=False)
    n = 1 << 20
    warm_up(n)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.zeros(n, dtype=cp.float32)
        late_fill(x, 2.0)
        wrapped = InterfaceOnly(x)
    assert wrapped.__cuda_array_interface__["stream"] == s.ptr
    r = ce.copy(wrapped)
    got = cp.asarray(r)
    cp.cuda.Device().synchronize()
    assert bool(cp.all(got == 2.0))


def test_cai_sync_0_does_not_wait(monkeypatch):
    monkeypatch.setenv("CUPY_CUDA_ARRAY_INTERFACE_SYNC", "0")
    n = 1 << 20
    warm_up(n)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.full(n, 1.0, dtype=cp.float32)
        s.synchronize()
        late_fill(x, 2.0)
        wrapped = InterfaceOnly(x)
    r = ce.copy(wrapped)  # not ordered after the late fill: it copies the 1.0s
    got = cp.asarray(r)
    cp.cuda.Device().synchronize()
    assert bool(cp.all(got == 1.0))


def test_export_versions(monkeypatch):
    x = cp.ones(10, dtype=cp.float32)
    r = ce.copy(x)
    d3 = r.__cuda_array_interface__
    assert d3["version"] == 3 and "stream" in d3 and d3["stream"] != 0
    assert d3["data"][0] == r.data_ptr and d3["typestr"] == "<f4" and d3["shape"] == (10,)
    monkeypatch.setenv("CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "2")
    d2 = r.__cuda_array_interface__
    assert d2["version"] == 2 and "stream" not in d2
