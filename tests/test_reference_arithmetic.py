"""The reference arithmetic (``toy._reference``, ``toy.machine``): one clear failure instead of
dozens of nbval diffs when a machine that can run it is not on it, and bit-for-bit hashes that
prove another CPU model computes the book's numbers exactly (CI runs this file under
``qemu-x86_64 -cpu EPYC-Rome`` and ``-cpu Haswell-v4``).

The expected hashes live in ``tests/reference_hashes.json``. They were made on the reference
arithmetic; after a deliberate change of the code a hash covers (the short SFT run), rewrite them
with ``.venv/bin/python tests/test_reference_arithmetic.py --update`` on a reference machine and
say why in the commit.
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from toy import _reference, machine as arithmetic

HASHES = pathlib.Path(__file__).with_name("reference_hashes.json")


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def _primitives():
    """A dozen operations whose last bits depend on the BLAS kernels or numpy's SIMD loops."""
    rng = np.random.default_rng(20261202)
    a32 = rng.standard_normal((64, 192)).astype(np.float32)
    b32 = rng.standard_normal((192, 64)).astype(np.float32)
    x64 = rng.standard_normal(4096) * 20
    a64, b64 = rng.standard_normal((50, 70)), rng.standard_normal((70, 30))
    stack = rng.standard_normal((8, 4, 17, 16)).astype(np.float32)
    logits = rng.standard_normal((256, 24)) * 3
    return {
        "sgemm 64x192x64": lambda: a32 @ b32,
        "sgemm transposed": lambda: a32.T @ a32,
        "sgemv": lambda: a32 @ b32[:, 0],
        "batched matmul float32": lambda: stack @ np.swapaxes(stack, -1, -2),
        "dgemm 50x70x30": lambda: a64 @ b64,
        "exp float64": lambda: np.exp(x64 / 10),
        "log float64": lambda: np.log(np.abs(x64) + 1e-3),
        "exp float32": lambda: np.exp((x64 / 10).astype(np.float32)),
        "tanh float64": lambda: np.tanh(x64 / 5),
        "sum float32 (pairwise, SIMD)": lambda: np.float32(a32.sum()) * np.ones(1, np.float32) + a32.sum(axis=0),
        "log-softmax float64": lambda: logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1,
                                                          keepdims=True)) - logits.max(1, keepdims=True),
        "einsum float32": lambda: np.einsum("bhtd,bhsd->bhts", stack, stack),
    }


def _sft_run():
    """A short SFT warm-up of the book's model: the training path every Part III number rests on."""
    from toy.tinylm import train
    model, hist = train.train_sft(train.SFTConfig(steps=6, batch_size=8))
    state = model.state_dict()
    return [state[k] for k in sorted(state)] + [np.asarray(hist["loss"], dtype=np.float64)]


def current_hashes():
    out = {name: _digest(fn()) for name, fn in _primitives().items()}
    out["short SFT run (6 steps)"] = _digest(*_sft_run())
    return out


def test_a_machine_that_can_run_the_reference_runs_it():
    ok, why = _reference.supports_reference()
    if not ok:
        pytest.skip(f"this machine cannot run the reference arithmetic ({why}): make test checks claims")
    assert arithmetic.on_reference(), (
        "this machine can run the book's reference arithmetic but this process is not on it, so "
        "nbval would fail on every trained number: " + arithmetic.explain())


@pytest.mark.skipif(not arithmetic.on_reference(), reason="bit-for-bit hashes hold only on the reference arithmetic")
@pytest.mark.parametrize("name", list(json.loads(HASHES.read_text())) if HASHES.exists() else [])
def test_bit_for_bit_on_the_reference(name, _hashes={}):
    if not _hashes:
        _hashes.update(current_hashes())
    expected = json.loads(HASHES.read_text())[name]
    assert _hashes[name] == expected, (
        f"{name}: hash {_hashes[name]} != the reference {expected} on {arithmetic.fingerprint()}; "
        "the same arithmetic gives other bits here")


def test_the_hash_file_covers_every_operation():
    assert HASHES.exists() and set(json.loads(HASHES.read_text())) == set(_primitives()) | {"short SFT run (6 steps)"}


def test_the_startup_file_sets_the_reference_only_where_it_can_and_never_over_the_user(monkeypatch):
    """``_reference.apply`` is what the venv's .pth runs: it fills in the two variables where the
    machine supports them and keeps a value the user set."""
    ok, _ = _reference.supports_reference()
    assert _reference.apply({}) == []                            # numpy already imported: too late, do nothing
    monkeypatch.delitem(sys.modules, "numpy")                    # as at interpreter start
    env = {"OPENBLAS_CORETYPE": "Prescott"}
    set_now = _reference.apply(env)
    assert env["OPENBLAS_CORETYPE"] == "Prescott"                # the user's value stays
    assert set_now == (["NPY_DISABLE_CPU_FEATURES"] if ok else [])
    assert env.get("NPY_DISABLE_CPU_FEATURES") == (_reference.REFERENCE_ENV["NPY_DISABLE_CPU_FEATURES"] if ok else None)


def test_a_fresh_process_of_the_environment_starts_on_the_reference():
    """The .pth runs before numpy in a new process (pytest, nbval kernels, toy.parallel workers)."""
    ok, why = _reference.supports_reference()
    if not ok:
        pytest.skip(why)
    env = {k: v for k, v in os.environ.items() if k not in _reference.REFERENCE_ENV}
    out = subprocess.run([sys.executable, "-c", "import toy; print(toy.numerics()['reference'])"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr


def _write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    if not arithmetic.on_reference():
        sys.exit("not on the reference arithmetic: " + arithmetic.explain())
    _write_atomic(HASHES, json.dumps(current_hashes(), indent=1) + "\n")
    print(f"wrote {HASHES} on {arithmetic.fingerprint()}")
