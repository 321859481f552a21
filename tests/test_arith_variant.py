"""Tests for toy.arith.variant: two correct methods, each right on part of the × 2-digit steps."""
import re

import numpy as np
import pytest

from toy import arith, metrics
from toy.arith import variant as V
from toy.arith.train import ReinforceConfig


@pytest.fixture(scope="module")
def data():
    return arith.make_dataset(seed=0)


def test_start_model_is_the_table():
    m = V.Model()
    np.testing.assert_allclose(m.probs(), V.P_START)
    np.testing.assert_allclose(m.p_correct(), V.P_START[:, V.USUAL] + V.P_START[:, V.RARE])
    assert m.copy() is not m and isinstance(m.copy(), V.Model)


def test_tricky_steps_by_hand(data):
    train, _ = data
    t = V.tricky_steps(train)
    two = (train.context == arith.MUL2) | (train.context == arith.MUL2_BIG)
    for i in range(20):                                   # a naive loop over steps
        for s in range(train.context.shape[1]):
            assert t[i, s] == (two[i, s] and train.operand[i, s] >= 80)
    np.testing.assert_array_equal(V.is_tricky(train), t.any(1))
    assert 0.05 < V.is_tricky(train).mean() < 0.4


def _always(method):
    """A model that (almost) always uses one method."""
    delta = np.zeros((5, 4))
    delta[:, method] = 60.0
    return V.Model(delta=delta)


def test_each_method_solves_its_own_problems(data):
    train, _ = data
    tricky = V.is_tricky(train)
    two = ((train.context == arith.MUL2) | (train.context == arith.MUL2_BIG)).any(1)
    rng = np.random.default_rng(0)
    usual, rare = _always(V.USUAL), _always(V.RARE)
    r_usual = V.verify(V.sample(usual, train, 1, rng), train)[:, 0]
    r_rare = V.verify(V.sample(rare, train, 1, rng), train)[:, 0]
    np.testing.assert_array_equal(r_usual, ~tricky)                      # usual: all but the tricky
    np.testing.assert_array_equal(r_rare[~two], 1)                       # rare: right off × 2 digits
    np.testing.assert_allclose(V.p_solve(usual, train), ~tricky, atol=1e-12)
    # rare alone solves a problem iff every × 2-digit step is tricky
    t = V.tricky_steps(train)
    only_tricky = ~(((train.context == arith.MUL2) | (train.context == arith.MUL2_BIG)) & ~t).any(1)
    np.testing.assert_allclose(V.p_solve(rare, train), only_tricky, atol=1e-12)


def test_p_solve_matches_sampling(data):
    _, test = data
    sub = test.subset(np.arange(30))
    m = V.Model()
    r = V.verify(V.sample(m, sub, 4000, np.random.default_rng(1)), sub)   # (30, 4000)
    # sampling can only add cancellations of two mistakes (e.g. +3 and −3 slips in two additions)
    p = V.p_solve(m, sub)
    assert np.all(r.mean(1) > p - 0.03)
    assert abs(r.mean() - p.mean()) < 0.01
    assert V.pass1_exact(m, sub) == pytest.approx(V.p_solve(m, sub).mean())


def test_rl_sharpens_and_loses_the_tricky_problems(data):
    train, test = data
    model, h = V.train_reinforce(V.Model(), ReinforceConfig(steps=60), seed=0, train=train, test=test)
    _, h2 = V.train_reinforce(V.Model(), ReinforceConfig(steps=60), seed=0, train=train, test=test)
    np.testing.assert_array_equal(h["pass1"], h2["pass1"])              # reproducible
    assert h["pass1"].shape == (61,) and h["probs"].shape == (61, 5, 4)
    assert h["pass1"][-1] > h["pass1"][0] + 0.5                          # RL wins at k = 1
    p_rare = h["probs"][-1][[arith.MUL2, arith.MUL2_BIG], V.RARE]
    assert np.all(p_rare < 0.2 * V.P_START[[arith.MUL2, arith.MUL2_BIG], V.RARE])   # rare method dropped
    tricky = V.is_tricky(test)
    base, rl = V.p_solve(V.Model(), test)[tricky], V.p_solve(model, test)[tricky]
    k = 256
    assert np.mean(1 - (1 - base) ** k) > np.mean(1 - (1 - rl) ** k) + 0.2   # base wins at large k


def test_steps_right_is_the_event_p_solve_computes(data):
    """Against sampling (its mean → p_solve), against verify (every right-step solution has the
    right answer; the converse fails only on cancelling mistakes), and by hand for one-method models."""
    _, test = data
    sub = test.subset(np.arange(40))
    m = V.Model()
    s = V.sample(m, sub, 4000, np.random.default_rng(2))
    ok, ans = V.steps_right(s, sub), V.verify(s, sub)
    assert ok.shape == ans.shape == (40, 4000)
    assert np.all(ok <= ans)                                               # right steps → right answer
    assert 0 < (ans - ok).sum() < 0.1 * ans.sum()                          # a few cancellations
    se = np.sqrt(V.p_solve(m, sub) * (1 - V.p_solve(m, sub)) / 4000) + 1e-9
    assert np.all(np.abs(ok.mean(1) - V.p_solve(m, sub)) < 5 * se + 1e-3)
    usual = _always(V.USUAL)
    np.testing.assert_array_equal(V.steps_right(V.sample(usual, sub, 3, np.random.default_rng(0)), sub),
                                  np.repeat(~V.is_tricky(sub)[:, None], 3, axis=1).astype(float))


def test_bad_input(data):
    train, test = data
    with pytest.raises(ValueError, match="n must"):
        V.sample(V.Model(), train, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="G must"):
        V.train_reinforce(V.Model(), ReinforceConfig(G=1), train=train, test=test)
    with pytest.raises(ValueError, match="lr must"):
        V.train_reinforce(V.Model(), ReinforceConfig(lr=0), train=train, test=test)


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_TR, _TE = arith.make_problems(20, seed=1), arith.make_problems(5, seed=2)
_RNG = np.random.default_rng(0)
_S = V.sample(V.Model(), _TE, 2, _RNG)
BAD_INPUTS = [
    (V.Model, (), {"delta": np.zeros((5, 3))}, "delta"),
    (V.Model().probs, (), {"temperature": 0}, "temperature"),
    (V.tricky_steps, ("problems",), {}, "problems"),
    (V.steps_right, ("samples", _TE), {}, "samples"),
    (V.steps_right, (_S, _TR), {}, "samples and problems"),
    (V.is_tricky, (None,), {}, "problems"),
    (V.sample, (V.Model(), _TE, 0, _RNG), {}, "n"),
    (V.sample, (V.Model(), _TE, 2, None), {}, "rng"),
    (V.sample, (arith.Model(), _TE, 2, _RNG), {}, "model"),          # three methods, not four
    (V.sample, (V.Model(), _TE, 2, _RNG), {"temperature": "1"}, "temperature"),
    (V.verify, (None, _TE), {}, "samples"),
    (V.verify, (_S, _TR), {}, "samples"),
    (V.p_solve, (V.Model(), [1]), {}, "problems"),
    (V.p_solve, (V.Model(), _TE), {"temperature": -1}, "temperature"),
    (V.pass1_exact, (V.Model(), _TE.subset([])), {}, "problems"),
    (V.train_reinforce, (V.Model(), "cfg"), {"train": _TR, "test": _TE}, "cfg"),
    (V.train_reinforce, (V.Model(), ReinforceConfig(algo="baseline")), {"train": _TR, "test": _TE}, "cfg.algo"),
    (V.train_reinforce, (V.Model(), ReinforceConfig(match_abs="grpo")), {"train": _TR, "test": _TE}, "cfg.match_abs"),
    (V.train_reinforce_seeds, (V.Model(),), {"train": _TR, "test": _TE, "seeds": []}, "seeds"),
    (V.train_reinforce, (V.Model(), ReinforceConfig(n_prompts=21)), {"train": _TR, "test": _TE}, "cfg.n_prompts"),
    (ReinforceConfig, (), {"lr": "4"}, "lr"),
    (ReinforceConfig, (), {"steps": None}, "steps"),
    (V.train_reinforce, (V.Model(),), {"train": _TR, "test": _TE, "seed": -1}, "seed"),
    (V.train_reinforce, (V.Model(),), {"train": _TR, "test": 3}, "test"),
    (V.train_reinforce, (arith.Model(),), {"train": _TR, "test": _TE}, "policy"),     # Part II's model, not the variant's
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_train_seeds_stacks_the_single_runs():
    tr, te = arith.make_problems(40, seed=1), arith.make_problems(10, seed=2)
    cfg = ReinforceConfig(steps=3, n_prompts=8, G=4)
    models, h = V.train_reinforce_seeds(V.Model(), cfg, seeds=(1, 0), train=tr, test=te)
    assert h["probs"].shape == (2, 4, 5, 4)
    for k, seed in enumerate((1, 0)):
        model, one = V.train_reinforce(V.Model(), cfg, seed=seed, train=tr, test=te)
        np.testing.assert_array_equal(h["pass1"][k], one["pass1"])
        np.testing.assert_array_equal(models[k].delta, model.delta)
