"""Shared fixtures of the example extension's tests.

The NumPy tests (test_numpy.py) run wherever the wheel is installed, on cuprum's CPU device
(NumPy arrays are host memory); the GPU tests skip themselves unless torch sees a GPU or CuPy
is installed (test_torch.py, test_cupy.py).
"""

import gc

import pytest


@pytest.fixture
def collect():
    """A full garbage collection, twice (capsules and their owners may form short cycles)."""

    def run():
        gc.collect()
        gc.collect()

    return run
