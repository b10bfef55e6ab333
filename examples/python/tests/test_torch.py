"""The extension on torch CUDA tensors (skipped unless torch sees a GPU): results checked against
torch computing the same thing, zero-copy both ways (equal data pointers), and the launch on
torch's current stream."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA GPU", allow_module_level=True)

import cuprum_example as ce  # noqa: E402

DEV = "cuda"


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_squared_diff_against_torch(dtype):
    x = torch.randn(257, 129, device=DEV, dtype=dtype)
    y = torch.randn(129, device=DEV, dtype=dtype)
    got = torch.from_dlpack(ce.squared_diff(x, y))
    assert got.dtype == dtype and got.device == x.device
    torch.testing.assert_close(got, (x - y) ** 2)


def test_zero_copy_both_ways():
    x = torch.randn(1000, 3, device=DEV)
    t = ce.view(x)
    assert t.data_ptr == x.data_ptr()
    assert torch.from_dlpack(t).data_ptr() == x.data_ptr()
    r = ce.squared_diff(x, x)
    assert torch.from_dlpack(r).data_ptr() == r.data_ptr
    # The CUDA Array Interface too (torch.as_tensor reads it).
    assert torch.as_tensor(r, device=DEV).data_ptr() == r.data_ptr
    # A transposed view keeps its strides.
    xt = x.t()
    v = torch.from_dlpack(ce.view(xt))
    assert v.data_ptr() == xt.data_ptr() and v.stride() == xt.stride()


@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128])
def test_every_dtype_through_a_kernel(dtype):
    x = (torch.arange(60, device=DEV) % 7).to(dtype).reshape(6, 10)
    y = torch.from_dlpack(ce.copy(x.t()))
    assert y.dtype == dtype and y.is_contiguous()
    assert torch.equal(y, x.t())


def test_views_torch_reads_in_c():
    """Views whose metadata the fast path (DLPack's C exchange API, or torch's attributes) reads:
    a storage offset, negative-free strides of a slice with a step, a 0-d tensor; each checked
    against torch, so that a wrong data pointer, offset or stride shows."""
    base = torch.randn(40, 30, device=DEV)
    x = base[3:, 5::2]  # storage offset 95, strides (30, 2)
    y = base[:37, 2:15]
    assert x.storage_offset() > 0
    torch.testing.assert_close(torch.from_dlpack(ce.squared_diff(x, y)), (x - y) ** 2)
    s = torch.tensor(1.5, device=DEV)
    torch.testing.assert_close(torch.from_dlpack(ce.squared_diff(s, s + 1.0)), torch.tensor(1.0, device=DEV))
    e = torch.empty(0, 3, device=DEV)
    assert tuple(torch.from_dlpack(ce.squared_diff(e, e)).shape) == (0, 3)


@pytest.mark.skipif(not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"), reason="torch < 2.10 has no C exchange API")
def test_plain_tensors_take_the_c_exchange_api():
    """Each plain torch tensor argument is read through DLPack's C exchange API (the host-cost
    fast path), not through `__dlpack__` or its attributes: the extension's counter moves by one
    per argument."""
    x = torch.randn(100, device=DEV)
    before = ce.stats()["torch_exchange_imports"]
    ce.squared_diff(x, x + 1.0)
    assert ce.stats()["torch_exchange_imports"] - before == 2


def test_negated_or_grad_tensors_are_never_read_raw():
    """A tensor with torch's pending negation (a `_neg_view`) holds -x in memory as x: cuprum must
    not read its memory as is (torch 2.11's own `__dlpack__` does: it was seen to give (x - y)^2
    here), so it refuses it, naming `resolve_neg`; a tensor that requires a gradient is refused
    with torch's own message, as torch's DLPack export does."""
    x = torch.randn(1000, device=DEV)
    y = torch.randn(1000, device=DEV)
    n = torch._neg_view(x)
    assert n.is_neg()
    with pytest.raises(ValueError, match="resolve_neg"):
        ce.squared_diff(n, y)
    torch.testing.assert_close(torch.from_dlpack(ce.squared_diff(n.resolve_neg(), y)), (-x - y) ** 2)
    c = torch.randn(100, dtype=torch.complex64, device=DEV).conj()
    assert c.is_conj()
    with pytest.raises(ValueError, match="resolve_conj"):
        ce.copy(c)
    g = torch.randn(10, device=DEV, requires_grad=True)
    # torch 2.11 raises BufferError (earlier versions RuntimeError).
    with pytest.raises((BufferError, RuntimeError), match="grad"):
        ce.squared_diff(g, g)


def test_l2norm_and_softmax_against_torch():
    x = torch.randn(64, 300, device=DEV)
    torch.testing.assert_close(torch.from_dlpack(ce.l2norm(x, axis=1)), torch.linalg.vector_norm(x.double(), dim=1))
    torch.testing.assert_close(torch.from_dlpack(ce.l2norm(x)), torch.linalg.vector_norm(x.double()))
    torch.testing.assert_close(torch.from_dlpack(ce.softmax(x)), torch.softmax(x, dim=-1))


def test_axpy_in_place():
    x = torch.randn(10000, device=DEV)
    y = torch.randn(10000, device=DEV)
    want = y + 0.5 * x
    ce.axpy(0.5, x, y)
    torch.testing.assert_close(y, want)


def test_producer_dropped_first():
    x = torch.randn(1 << 16, device=DEV)
    want = x.clone()
    t = ce.view(x)
    del x
    torch.cuda.empty_cache()
    junk = [torch.randn(1 << 16, device=DEV) for _ in range(8)]
    assert torch.equal(torch.from_dlpack(t), want)
    del junk


def test_cuprum_result_dropped_first():
    x = torch.randn(1 << 16, device=DEV)
    x1 = x + 1
    want = (x - x1) ** 2  # near 1, not exactly: x + 1 rounds
    t = ce.squared_diff(x, x1)
    y = torch.from_dlpack(t)
    del t
    # Pool reuse must not hand y's memory to these while torch still holds it.
    others = [ce.squared_diff(x, x) for _ in range(8)]
    assert others
    assert torch.equal(y, want)


SLEEP = 200_000_000  # GPU cycles of torch.cuda._sleep: about 0.1 s


def warm_up(n):
    """Loads the kernel the stream tests run and leaves a block of `n` float32 in cuprum's
    memory pool (a module load or a new allocation may synchronize the device, which would hide
    a missing stream dependency)."""
    a = torch.ones(n, device=DEV)
    r = ce.squared_diff(a, a)
    torch.cuda.synchronize()
    del r


def test_runs_on_torchs_current_stream():
    """Producer on a side stream (a long sleep, then the write), cuprum on the same current
    stream, the consumer on it too. Launched on any other stream, cuprum would read x before the
    write (torch's side streams do not synchronize with the legacy default stream)."""
    n = 1 << 20
    warm_up(n)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.zeros(n, device=DEV)
        y = torch.zeros(n, device=DEV)
        torch.cuda._sleep(SLEEP)
        x.fill_(3.0)
        r = ce.squared_diff(x, y)
        out = torch.from_dlpack(r) + 0
    side.synchronize()
    assert torch.all(out == 9.0)


def test_consumer_on_another_stream_waits_for_the_result():
    """cuprum's kernel queued on a side stream behind a long sleep; the consumer on the default
    stream must see its output (__dlpack__(stream=...) orders the consumer's stream after it)."""
    n = 1 << 20
    warm_up(n)
    side = torch.cuda.Stream()
    x = torch.full((n,), 5.0, device=DEV)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP)
        r = ce.squared_diff(x, torch.zeros(n, device=DEV))
    got = torch.from_dlpack(r).clone()  # on the default stream
    torch.cuda.synchronize()
    assert torch.all(got == 25.0)
