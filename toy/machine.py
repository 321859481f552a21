"""Which arithmetic this process computes with: ``toy.numerics()`` (this module is ``toy.machine``: the floating-point arithmetic of this machine, not Part II's ``toy.arith``).

The book's outputs are committed under one reference arithmetic (``toy._reference``: OpenBLAS's
Haswell kernels, numpy's dispatch capped at X86_V3, Linux x86-64 with glibc). ``numerics()``
reads what the running process really uses — the BLAS and the kernel family it picked, numpy's
SIMD dispatch, the platform — so that

- ``import toy`` can say, once and in plain words, when a machine is off the reference;
- a cached model is keyed by the arithmetic that made it (``toy.tinylm.cache``), not only by
  the code and the config: a shared cache never hands a model trained with other kernels to a
  reference run;
- ``make test`` knows whether to compare every digit (``mode() == "reference"``) or the book's
  claims (``"claims"``; ``scripts/arith_mode.py``).
"""
import ctypes
import platform
import warnings

import numpy as np

from . import _reference
from ._blas import openblas

__all__ = ["numerics", "fingerprint", "on_reference", "mode", "explain"]

_BLAS_FUNCS = (("scipy_openblas_get_config64_", "scipy_openblas_get_corename64_"),
               ("scipy_openblas_get_config", "scipy_openblas_get_corename"),
               ("openblas_get_config64_", "openblas_get_corename64_"),
               ("openblas_get_config", "openblas_get_corename"))


def _openblas():
    """(config string, core name) of the OpenBLAS inside numpy's wheel, or (None, None)."""
    lib = openblas()
    for config, core in _BLAS_FUNCS:
        if lib is not None and hasattr(lib, config) and hasattr(lib, core):
            fc, fk = getattr(lib, config), getattr(lib, core)
            fc.restype = fk.restype = ctypes.c_char_p
            return fc().decode(errors="replace").strip(), fk().decode(errors="replace").strip()
    return None, None


def _simd():
    """numpy's SIMD dispatch targets that are enabled in this process, e.g. ``["X86_V3"]``."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:                                   # another numpy layout: say so, do not guess
        return ["unknown"]
    return [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]


_CACHE = {}


def numerics():
    """A dict describing this process's arithmetic: ``platform``, ``numpy``, ``blas`` (the
    library and version), ``blas_core`` (the kernel family it runs), ``simd`` (numpy's enabled
    dispatch targets), ``reference`` (True if all of it is the book's reference) and ``why``
    (what differs, in words; empty on the reference)."""
    if not _CACHE:
        config, core = _openblas()
        blas = " ".join(config.split()[:2]) if config else "not OpenBLAS"
        libc = "-".join(x for x in platform.libc_ver() if x) or "unknown libc"
        info = {"platform": f"{platform.system()}-{platform.machine()}-{libc}",
                "numpy": np.__version__, "blas": blas, "blas_core": core or "unknown",
                "simd": _simd()}
        why = []
        ok, reason = _reference.supports_reference()
        if not ok:
            why.append(reason)
        if core != _reference.REFERENCE_ENV["OPENBLAS_CORETYPE"]:
            why.append(f"OpenBLAS runs its {core or 'unknown'} kernels (the reference: Haswell)")
        if info["simd"] != ["X86_V3"]:
            simd = " ".join(info["simd"]) or "baseline only"
            why.append(f"numpy dispatches to {simd} (the reference: X86_V3 only)")
        info["reference"] = not why
        info["why"] = "; ".join(why)
        _CACHE.update(info)
    return dict(_CACHE)


def fingerprint():
    """One line naming this process's arithmetic (part of every model cache key)."""
    n = numerics()
    return f"{n['platform']} | numpy {n['numpy']} | {n['blas']} {n['blas_core']} | simd {'+'.join(n['simd'])}"


def on_reference():
    """True if this process computes with the book's reference arithmetic."""
    return numerics()["reference"]


def mode():
    """``"reference"``: committed outputs reproduce digit for digit here; ``"claims"``: they
    cannot, and ``make test`` checks what the book claims instead."""
    return "reference" if on_reference() else "claims"


def explain():
    """A few plain sentences: is this the reference arithmetic, and if not, why and what to do."""
    n = numerics()
    if n["reference"]:
        return f"toy: reference arithmetic ({fingerprint()})."
    ok, _ = _reference.supports_reference()
    fix = ("This machine can run the reference: create the environment with `make setup` (it "
           "sets OPENBLAS_CORETYPE=Haswell and NPY_DISABLE_CPU_FEATURES=\"X86_V4 AVX512_ICL "
           "AVX512_SPR\" before numpy is imported), or set both yourself before starting Python."
           if ok else
           "The reference cannot run here, so trained numbers may differ from the book's in the "
           "last digits; the book's claims (verdicts, effects within their standard errors) "
           "still hold, and `make test` checks those.")
    return (f"toy: this machine is not on the book's reference arithmetic: {n['why']}. {fix} "
            f"({fingerprint()})")


_warned = False


def warn_once():
    """Warn once per process, in plain words, when off the reference arithmetic."""
    global _warned
    if not _warned and not on_reference():
        _warned = True
        warnings.warn(explain(), RuntimeWarning, stacklevel=3)
