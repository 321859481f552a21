"""§III.3's "GRPO in a few lines": the ``grpo_step`` function shown in the notebook is one step of
``tinylm.train_rl``. The function is taken from the notebook itself (no copy of it here)."""
from pathlib import Path

import nbformat
import numpy as np
import pytest

import toy
from toy import tinylm
from toy.tinylm import model as tlm

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "part3" / "s03_why_grpo.ipynb"
LR = 1e-4


@pytest.fixture(scope="module")
def grpo_step():
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
             if c.cell_type == "code" and c.source.startswith("def grpo_step(")]
    assert len(cells) == 1, "the notebook must define grpo_step in exactly one cell"
    namespace = {"np": np, "toy": toy, "tinylm": tinylm, "tlm": tlm}
    exec(cells[0], namespace)
    return namespace["grpo_step"]


@pytest.fixture(scope="module")
def sft64():
    return tinylm.warmup_model(verbose=False).copy().astype(np.float64)


def _gap(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return max(float(np.abs(sa[k] - sb[k]).max()) for k in sb)


@pytest.mark.parametrize("seed", [1, 2])
def test_grpo_step_is_train_rls_first_step(grpo_step, sft64, seed):
    mine = sft64.copy()
    ro, adv, loss = grpo_step(mine, tinylm.Adam(LR, grad_clip=1.0), np.random.default_rng(seed))
    ref, hist = tinylm.train_rl(sft64, tinylm.RLConfig(steps=1, lr=LR), seed=seed)
    assert _gap(mine, ref) < 1e-9 * LR
    assert np.isclose(loss, hist["loss"][0], rtol=1e-9, atol=1e-12)
    assert np.array_equal(adv, toy.rl.grpo_advantages(ro.reward.reshape(32, 8)).ravel())


def test_the_comparison_can_fail(grpo_step, sft64):
    """A negative control: the same step is far from Dr. GRPO's first step (every parameter
    moves by about one learning rate in a first Adam step, so a wrong step shows)."""
    mine = sft64.copy()
    grpo_step(mine, tinylm.Adam(LR, grad_clip=1.0), np.random.default_rng(1))
    other, _ = tinylm.train_rl(sft64, tinylm.RLConfig(algo="dr_grpo", steps=1, lr=LR), seed=1)
    assert _gap(mine, other) > 0.1 * LR


def test_three_grpo_steps_are_train_rls_three_steps(grpo_step, sft64):
    """The notebook's step, repeated with one generator and one Adam, is ``train_rl``'s loop:
    the same parameters after three steps (float64: to rounding), the same losses."""
    mine, opt, rng = sft64.copy(), tinylm.Adam(LR, grad_clip=1.0), np.random.default_rng(3)
    losses = [grpo_step(mine, opt, rng)[2] for _ in range(3)]
    ref, hist = tinylm.train_rl(sft64, tinylm.RLConfig(steps=3, lr=LR), seed=3)
    assert _gap(mine, ref) < 1e-9 * LR
    assert np.allclose(losses, hist["loss"], rtol=1e-9, atol=1e-12)
