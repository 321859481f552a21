"""toy.length_toy against enumeration, naive loops and the lecture's claim."""
from math import comb

import numpy as np
import pytest

from toy import length_toy as lt
from toy import rl
from toy.prob import sigmoid


def _p_length(theta, Lmax):
    q = sigmoid(theta)
    L = np.arange(Lmax + 1)
    return np.where(L < Lmax, q ** L * (1 - q), q ** Lmax)


def test_expected_length_by_enumeration_and_inverse():
    for theta in (-1.0, 0.5, 2.2):
        pL = _p_length(theta, 12)
        assert np.isclose(pL.sum(), 1.0)
        assert np.isclose(lt.expected_length(theta, 12), (np.arange(13) * pL).sum())
    th = lt.theta_for_length(8.0, 32)
    assert np.isclose(lt.expected_length(th, 32), 8.0)


def test_score_is_the_derivative_of_log_prob():
    Lmax, h = 6, 1e-6
    for L in range(Lmax + 1):
        for theta in (-0.3, 1.1):
            fd = (np.log(_p_length(theta + h, Lmax)[L]) - np.log(_p_length(theta - h, Lmax)[L])) / (2 * h)
            assert np.isclose(lt.score(L, theta, Lmax), fd, atol=1e-6)


def test_one_update_equals_a_naive_loop():
    """One step of train() against a loop over answers written from the equations."""
    cfg = lt.LengthToyConfig(steps=1, runs=1, n_prompts=3, G=4, lr=1.0, max_len=10, init_len=4.0)
    theta0 = lt.theta_for_length(cfg.init_len, cfg.max_len)
    for algo in ("grpo", "dr_grpo"):
        cfg.algo = cfg.loss_type = algo
        out = lt.train(cfg, seed=5)
        rng = np.random.default_rng(5)                     # replay the same draws
        right = rng.random((1, 3, 4)) < cfg.p_correct
        q = sigmoid(theta0)
        L = np.minimum(rng.geometric(1.0 - np.full((1, 3, 4), q)) - 1, cfg.max_len)
        grad = np.zeros(2)
        N = 12
        for b in range(3):
            R = right[0, b].astype(float)
            A = rl.grpo_advantages(R) if algo == "grpo" else R - R.mean()
            for i in range(4):
                n_tokens = L[0, b, i] + 1
                c = 1 / (N * n_tokens) if algo == "grpo" else 1 / (N * (cfg.max_len + 1))
                s = L[0, b, i] * (1 - q) - (q if L[0, b, i] < cfg.max_len else 0.0)
                grad[0 if right[0, b, i] else 1] -= c * A[i] * s
        theta1 = theta0 - cfg.lr * grad
        np.testing.assert_allclose(out["len_right"][1, 0], lt.expected_length(theta1[0], cfg.max_len))
        np.testing.assert_allclose(out["len_wrong"][1, 0], lt.expected_length(theta1[1], cfg.max_len))


def test_expected_gradient_zero_for_dr_grpo_and_matches_monte_carlo_for_grpo():
    for adv in ("grpo", "dr_grpo"):                      # a constant length weight: no push at all
        cfg = lt.LengthToyConfig(algo=adv, loss_type="dr_grpo")
        np.testing.assert_allclose(lt.expected_length_gradient(cfg), 0.0, atol=1e-15)
    cfg = lt.LengthToyConfig(runs=4000, steps=1, lr=1e-9, n_prompts=1)
    g = lt.expected_length_gradient(cfg)
    assert g[0] > 0 > g[1]                               # right answers shorter, wrong longer
    # Monte Carlo: the θ change of a tiny step, over 4000 runs, estimates the expected gradient
    theta0 = lt.theta_for_length(cfg.init_len, cfg.max_len)
    out = lt.train(cfg, seed=1)
    q = sigmoid(theta0)
    dlen = q * (1 - q) * np.sum(np.arange(1, 33) * q ** np.arange(1, 33)) / q     # dE[L]/dθ
    est = -(out["len_right"][1] - out["len_right"][0]) / (cfg.lr * dlen)
    assert abs(est.mean() - g[0]) < 4 * est.std() / np.sqrt(len(est))


def test_grpo_moves_lengths_apart_and_dr_grpo_does_not():
    g = lt.train(lt.LengthToyConfig(steps=60, runs=6))
    d = lt.train(lt.LengthToyConfig(algo="dr_grpo", loss_type="dr_grpo", steps=60, runs=6))
    assert g["len_right"][-1].max() < 4 < 12 < g["len_wrong"][-1].min()
    assert np.all(np.abs(d["len_right"][-1] - 8) < 1.5) and np.all(np.abs(d["len_wrong"][-1] - 8) < 1.5)


@pytest.mark.parametrize("kwargs, arg", [
    ({"p_correct": 1.0}, "p_correct"), ({"G": 1}, "G"), ({"steps": 0}, "steps"), ({"lr": -1}, "lr"),
    ({"init_len": 40}, "init_len"), ({"algo": "ppo"}, "algo"), ({"loss_type": "dapo"}, "loss_type"), ({"kimi_from": -3}, "kimi_from"),
    ({"runs": 2.5}, "runs"), ({"lr": float("nan")}, "lr"),
])
def test_config_bad_input(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        lt.LengthToyConfig(**kwargs)


# ------------------------------------------------------------------ bad input, one table, per category
import re  # noqa: E402

from bad_inputs import cases, same, tagged, valid_numpy_scalars  # noqa: E402

_CFG = {"p_correct": 0.3, "max_len": 8, "init_len": 3.0, "algo": "grpo", "loss_type": "grpo", "G": 4,
        "n_prompts": 2, "steps": 2, "lr": 1.0, "runs": 2, "kimi_from": -1}
_SMALL = lt.LengthToyConfig(**_CFG)
_VALID = [  # (function, a valid call, the kind of each argument)
    (lt.expected_length, {"theta": 0.3, "max_len": 8}, {"theta": "array", "max_len": "int:1"}),
    (lt.theta_for_length, {"mean_len": 3.0, "max_len": 8}, {"mean_len": "positive", "max_len": "int:1"}),
    (lt.score, {"L": [0, 3, 8], "theta": 0.3, "max_len": 8}, {"L": "int_array", "theta": "array", "max_len": "int:1"}),
    (lt.LengthToyConfig, _CFG, {"p_correct": "real", "max_len": "int:1", "init_len": "positive",
                                "algo": "choice", "loss_type": "choice", "G": "int:2", "n_prompts": "int:1",
                                "steps": "int:1", "lr": "positive", "runs": "int:1", "kimi_from": "int:-1"}),
    (lt.train, {"cfg": _SMALL, "seed": 0}, {"seed": "int:0"}),
    (lt.expected_length_gradient, {"cfg": _SMALL, "theta": [0.1, 0.2]}, {"theta": "array?"}),
]
BAD_INPUTS = [case for fn, valid, spec in _VALID for case in cases(fn, valid, spec)]
BAD_INPUTS += tagged("value", [
    (lt.theta_for_length, (8.0, 8), {}, "mean_len"),
    (lt.score, ([9], 0.0, 8), {}, "L"),
    (lt.score, ([-1], 0.0, 8), {}, "L"),
    (lt.LengthToyConfig, (), {"init_len": 8.0, "max_len": 8}, "init_len"),
    (lt.LengthToyConfig, (), {"p_correct": 0.0}, "p_correct"),
])
BAD_INPUTS += tagged("type", [
    (lt.train, ("cfg",), {}, "cfg"), (lt.train, (0,), {}, "cfg"), (lt.train, ({"steps": 2},), {}, "cfg"),
    (lt.expected_length_gradient, (None,), {}, "cfg"),
])
BAD_INPUTS += tagged("shape", [
    (lt.expected_length_gradient, (_SMALL, [0.1, 0.2, 0.3]), {}, "theta"),
    (lt.expected_length_gradient, (_SMALL, 0.1), {}, "theta"),
    (lt.score, ([1, 2, 3], [0.1, 0.2], 8), {}, "theta"),
])
BAD_INPUTS += tagged("size", [
    (lt.LengthToyConfig, (), {"runs": 10**6, "n_prompts": 16, "G": 8, "max_len": 32}, "runs, n_prompts, G and max_len"),
    (lt.LengthToyConfig, (), {"steps": 10**6, "runs": 100}, "steps, runs, n_prompts, G and max_len"),
    (lt.LengthToyConfig, (), {"max_len": 10**4, "runs": 1, "n_prompts": 1, "G": 2}, "max_len, n_prompts and G"),
    (lt.expected_length, (np.zeros(1000), 10**6), {}, "max_len"),
    (lt.expected_length, (0.0, 10**9), {}, "max_len"),
    (lt.theta_for_length, (3.0, 10**9), {}, "max_len"),
    (lt.theta_for_length, (3.0, 10**7), {}, "max_len"),                         # 100 bisection steps of 1e7
    (lt.LengthToyConfig, (), {"max_len": 2 * 10**6, "runs": 1, "n_prompts": 1, "G": 2}, "max_len"),
    (lt.score, (np.zeros(1000, int), 0.0, 10**6), {}, "L and max_len"),
])


def _changed(**fields):
    cfg = lt.LengthToyConfig(**_CFG)
    for k, v in fields.items():
        setattr(cfg, k, v)                                     # changed after construction
    return cfg


# a field changed after construction is checked where the config is used
BAD_INPUTS += tagged("value", [
    *[(lt.train, (_changed(**{k: v}),), {}, k) for k, v in
      (("lr", -10.0), ("steps", 2.5), ("algo", "reinforce"), ("G", 1), ("runs", np.float64("nan")),
       ("init_len", 100.0), ("kimi_from", "3"))],
    *[(lt.expected_length_gradient, (_changed(**{k: v}),), {}, k) for k, v in
      (("p_correct", 1.5), ("loss_type", "dapo"), ("n_prompts", 0), ("max_len", None))],
])


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


@pytest.mark.parametrize("fn, kwargs, expected", [
    *valid_numpy_scalars(lt.expected_length, {"theta": 0.5, "max_len": 8}, ["theta", "max_len"]),
    *valid_numpy_scalars(lt.theta_for_length, {"mean_len": 3.0, "max_len": 8}, ["mean_len", "max_len"]),
    *valid_numpy_scalars(lambda **kw: lt.train(lt.LengthToyConfig(**kw))["len_right"],
                         {**_CFG, "steps": 2, "lr": 0.5, "init_len": 4.0}, ["steps", "lr", "init_len", "G"])])
def test_numpy_scalars_of_every_width_are_accepted(fn, kwargs, expected):
    assert same(fn(**kwargs), expected)


def test_integral_fields_become_ints():
    cfg = lt.LengthToyConfig(steps=np.int64(3), G=4.0, runs=np.uint8(2))
    assert (cfg.steps, cfg.G, cfg.runs) == (3, 4, 2) and all(type(v) is int for v in (cfg.steps, cfg.G, cfg.runs))
