"""The book's reference arithmetic: the settings under which every committed output was made.

Two machines can compute different last bits for the same numpy program: OpenBLAS picks its
matrix kernels by CPU family (AVX-512 "SkylakeX" kernels add float32 products in another order
than the AVX2 "Haswell" ones), and numpy has AVX-512 loops for ``exp``/``log`` that are 1 ulp
off glibc on a few percent of inputs. A sampled training run turns one flipped bit into another
sampled token, and the run goes elsewhere. So the book fixes one **reference arithmetic**:

- OpenBLAS's Haswell kernels (``OPENBLAS_CORETYPE=Haswell``), and
- numpy's dispatch capped at ``X86_V3`` (AVX2 + FMA):
  ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"`` (numpy 2.4's names).

Both only work if they are set **before numpy is imported**, which ``import toy`` is too late
for. ``make setup`` therefore installs this file into the virtual environment with a ``.pth``
line (``rl_by_hand_reference.pth``), which Python runs at the start of every process of that
environment: pytest, the Jupyter kernels nbval starts, JupyterLab, ``toy.parallel`` workers.

It sets the two variables only on Linux x86-64 with glibc on a CPU with AVX2 and FMA (every
such machine can run the Haswell kernels; on an older x86 they would crash with SIGILL), and
never overrides a value the user set. Elsewhere (ARM, macOS, Windows, musl, x86 without AVX2)
nothing is forced: the arithmetic cannot match there, and ``make test`` checks the book's
claims rather than its digits (``toy.numerics``, ``scripts/arith_mode.py``).

This module uses only the standard library: it runs before anything else is imported.
"""
import os
import platform
import sys

REFERENCE_ENV = {
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}
REQUIRED_CPU_FLAGS = ("avx2", "fma")        # what the Haswell kernels and numpy's X86_V3 loops use


def cpu_flags(path="/proc/cpuinfo"):
    """The CPU's feature flags as Linux reports them (an empty set where it cannot be read)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def supports_reference():
    """``(True, "")`` if this machine can run the reference arithmetic, else ``(False, why)``."""
    system, machine = platform.system(), platform.machine().lower()
    if system != "Linux":
        return False, f"the operating system is {system} (the reference is Linux)"
    if machine not in ("x86_64", "amd64"):
        return False, f"the CPU is {machine} (the reference is x86-64)"
    libc = platform.libc_ver()[0]
    if libc != "glibc":
        return False, f"the C library is {libc or 'not glibc'} (the reference is glibc)"
    missing = [f for f in REQUIRED_CPU_FLAGS if f not in cpu_flags()]
    if missing:
        return False, f"the CPU lacks {' and '.join(missing).upper()}"
    return True, ""


def apply(environ=None):
    """Set the reference variables in ``environ`` (default ``os.environ``) where this machine
    supports them, keeping any value the user set. Returns the names it set."""
    environ = os.environ if environ is None else environ
    if "numpy" in sys.modules or environ.get("RL_BY_HAND_NATIVE_ARITHMETIC"):
        return []
    ok, _ = supports_reference()
    if not ok:
        return []
    set_now = [k for k in REFERENCE_ENV if k not in environ]
    for k in set_now:
        environ[k] = REFERENCE_ENV[k]
    return set_now
