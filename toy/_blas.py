"""Process settings: one BLAS thread (set when ``toy`` is imported), and freed memory kept for
reuse during training.

**One BLAS thread, always.** A matrix product split over several threads may add its terms in
another order, so its last bits can depend on how many threads run; a reader on a 1-core
laptop would then see other digits than the committed outputs. ``import toy`` therefore calls
``one_blas_thread()``: every output is the same at any ``OMP_NUM_THREADS`` /
``OPENBLAS_NUM_THREADS``, and the toy's small matrices lose nothing by it.

The tiny model's matrices are small (64 × 192): on a shared 2-core machine OpenBLAS's
threading costs more than it saves (we measured 2–4× slower training with 2 threads). The
environment variable OPENBLAS_NUM_THREADS only works before numpy is imported, so
``single_thread_blas`` calls OpenBLAS's own setter through ctypes, and is a no-op when numpy is
linked against another BLAS.

A training step allocates and frees ~100 temporary arrays of 0.1–3 MB. glibc's malloc serves
such sizes with fresh ``mmap`` pages and returns them on ``free``, so every step pays ~6000
page faults (~20–30 ms of kernel time per GRPO step, ~12 % of it). ``single_thread_blas``
therefore also raises glibc's mmap and trim thresholds once (``mallopt``), so that freed
arrays stay in the heap and are reused; the process keeps up to a few hundred MB it no longer
uses. A no-op where glibc is not the C library.
"""
import ctypes
import functools
import glob
import os

import numpy as np

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


def openblas():
    """The OpenBLAS library inside numpy's wheel (a ctypes CDLL), or None."""
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*.so*"))):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def _find():
    lib = openblas()
    for s, g in zip(_SETTERS, _GETTERS):
        if lib is not None and hasattr(lib, s) and hasattr(lib, g):
            return getattr(lib, s), getattr(lib, g)
    return None


_API = _find()


def one_blas_thread():
    """Set OpenBLAS to one thread for the rest of the process; a no-op where numpy is linked
    against another BLAS. Returns the number of threads it was using (None if unknown)."""
    if _API is None:
        return None
    setter, getter = _API
    before = getter()
    setter(1)
    return before


def blas_threads():
    """The number of threads OpenBLAS uses now (None where numpy uses another BLAS)."""
    return None if _API is None else _API[1]()


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3       # glibc's mallopt parameter numbers
_heap_kept = False


def keep_freed_memory():
    """Make glibc keep freed blocks up to 32 MB in the heap (once per process)."""
    global _heap_kept
    if _heap_kept:
        return
    _heap_kept = True
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)    # malloc ≤ 32 MB from the heap, not mmap
        libc.mallopt(_M_TRIM_THRESHOLD, 256 << 20)   # give memory back only above 256 MB free
    except (OSError, AttributeError):
        pass


def single_thread_blas(fn):
    """Decorator: run ``fn`` with one BLAS thread, then restore the previous setting (and
    ``keep_freed_memory()``)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        keep_freed_memory()
        if _API is None:
            return fn(*args, **kwargs)
        setter, getter = _API
        before = getter()
        setter(1)
        try:
            return fn(*args, **kwargs)
        finally:
            setter(before)
    return wrapper
