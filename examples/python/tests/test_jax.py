"""JAX arrays through the extension (DLPack): on cuprum's CPU device (JAX's CPU arrays are host
memory; placed there explicitly, since a JAX with a GPU backend puts new arrays on the GPU), and,
where JAX has a GPU, on the GPU. scripts/python-tests.sh installs jax[cpu], so the CPU tests run in
CI; on a machine without JAX they are skipped."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import cuprum_example as ce  # noqa: E402


def random(shape, dtype, seed):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape).astype(dtype) + 0.25


def on_cpu(a):
    """`a` as a JAX array in host memory (JAX's CPU device)."""
    return jax.device_put(a, jax.devices("cpu")[0])


def gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_squared_diff_on_jax_arrays_both_ways(dtype):
    xs, ys = random((33, 17), dtype, 1), random((17,), dtype, 2)
    x, y = on_cpu(xs), on_cpu(ys)
    r = ce.squared_diff(x, y)
    want = ((xs.astype(np.float64) - ys.astype(np.float64)) ** 2)
    got = np.asarray(jnp.from_dlpack(r)).astype(np.float64)
    tol = 1e-2 if dtype == np.float16 else 1e-6
    assert got.shape == (33, 17)
    assert np.allclose(got, want, rtol=tol, atol=tol)


def test_jax_arrays_are_taken_without_a_copy():
    x = on_cpu(random((64,), np.float32, 3))
    assert ce.view(x).data_ptr == x.unsafe_buffer_pointer()


def test_the_jax_array_may_go_first(collect):
    xs = random((1000,), np.float32, 4)
    x = on_cpu(xs)
    t = ce.view(x)
    del x
    collect()
    assert np.array_equal(np.from_dlpack(t), xs)


def test_a_reduction_and_the_fused_softmax_on_jax_arrays():
    xs = random((8, 100), np.float32, 5)
    x = on_cpu(xs)
    norms = np.from_dlpack(ce.l2norm(x, axis=1))
    assert np.allclose(norms, np.sqrt((xs.astype(np.float64) ** 2).sum(axis=1)), rtol=1e-6)
    s = np.from_dlpack(ce.softmax(x)).astype(np.float64)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    assert np.allclose(s, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not gpus(), reason="JAX has no GPU here")
def test_jax_gpu_arrays_both_ways_without_a_copy():
    xs, ys = random((257, 33), np.float32, 6), random((33,), np.float32, 7)
    x = jax.device_put(xs, gpus()[0])
    y = jax.device_put(ys, gpus()[0])
    assert ce.view(x).data_ptr == x.unsafe_buffer_pointer()
    r = ce.squared_diff(x, y)
    got = jnp.from_dlpack(r)
    assert list(got.devices())[0].platform == "gpu"
    want = (xs.astype(np.float64) - ys.astype(np.float64)) ** 2
    assert np.allclose(np.asarray(got).astype(np.float64), want, rtol=1e-6, atol=1e-6)
    s = np.asarray(jnp.from_dlpack(ce.softmax(x))).astype(np.float64)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    assert np.allclose(s, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
