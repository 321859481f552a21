"""Tests for toy.arith_train: STaR, REINFORCE with four advantages, GRPO and DAPO's switches.
(Their speed is measured by ``make bench``, not here.)"""
import re

import numpy as np
import pytest

from toy import arith as A
from toy import arith_train as T
from toy import rl


@pytest.fixture(scope="module")
def data():
    return A.make_dataset()


def _batch(methods, contexts, logp_old):
    """A hand-made Samples object: (B, G, L) arrays."""
    m = np.asarray(methods)
    return A.Samples(m, np.asarray(contexts), np.zeros(m.shape[:2], np.int64), np.asarray(logp_old, float))


# --- STaR ---------------------------------------------------------------------------------

def test_sft_on_nothing_is_the_original_model():
    probs = A.make_problems(4, 0)
    s = A.sample(A.Model(), probs, 1, np.random.default_rng(0))
    m = T.sft(A.Model(), s, np.zeros((4, 1)))
    np.testing.assert_array_equal(m.delta, 0)


def test_sft_step_is_the_mean_log_likelihood_gradient():
    probs = A.make_problems(3, 0)
    s = A.sample(A.Model(), probs, 2, np.random.default_rng(0))
    keep = np.array([[1, 0], [1, 1], [0, 0]])
    m = T.sft(A.Model(), s, keep, steps=1, lr=0.5)
    pi = A.P_START
    g = np.zeros((5, 3))                      # naive loop over kept solutions and steps
    for i, j in zip(*np.nonzero(keep)):
        for t in range(probs.n_steps[i]):
            c, a = s.context[i, j, t], s.method[i, j, t]
            g[c] += np.eye(3)[a] - pi[c]
    np.testing.assert_allclose(m.delta, 0.5 * g / 3)


def test_sft_many_steps_match_repeated_add_grad():
    probs = A.make_problems(20, 1)
    s = A.sample(A.Model(), probs, 3, np.random.default_rng(1))
    keep = (np.random.default_rng(2).random((20, 3)) < 0.5).astype(float)
    ref = A.Model()                           # the step written with the model's own add_grad
    for _ in range(25):
        g = ref.add_grad(np.zeros((5, 3)), s.context, s.method, keep[:, :, None])
        ref.delta += 0.3 * g / keep.sum()
    np.testing.assert_allclose(T.sft(A.Model(), s, keep, steps=25, lr=0.3).delta, ref.delta, atol=1e-12)


def test_star_phenomena(data):
    train, test = data
    plain = T.star(train, test, seed=0)
    hint = T.star(train, test, hint=1.5, seed=0)
    coarse = T.star(train, test, verifier="units", seed=0)
    assert plain["pass1"][3] > 3 * plain["pass1"][0]                 # the flywheel turns
    assert plain["pass1"][-1] - plain["pass1"][3] < 0.1              # ... then stalls
    assert np.all(plain["kept_right"] == plain["kept"])             # exact verifier: all kept are right
    assert hint["kept"][0] > 2 * plain["kept"][0]                    # rationalization: more data
    assert hint["p_correct"][-1][A.MUL2_BIG] > 1.5 * plain["p_correct"][-1][A.MUL2_BIG]
    assert coarse["kept_right"].sum() < 0.5 * coarse["kept"].sum()  # mostly wrong data kept
    assert coarse["pass1"][-1] < plain["pass1"][-1] - 0.1


# --- REINFORCE ----------------------------------------------------------------------------

def test_four_advantages_by_hand():
    r = np.array([[1.0, 0, 0, 0]])
    np.testing.assert_allclose(T.advantages(r, "sft"), r)
    np.testing.assert_allclose(T.advantages(r, "baseline", baseline=0.1), r - 0.1)
    np.testing.assert_allclose(T.advantages(r, "rloo"), [[1, -1 / 3, -1 / 3, -1 / 3]])
    np.testing.assert_allclose(T.advantages(r, "grpo"), [[1.732, -0.577, -0.577, -0.577]], atol=1e-3)


def test_reinforce_learns_reproducibly(data):
    train, test = data
    h = T.reinforce(train, test, "grpo", n_batches=30, seed=1)
    assert h["pass1"].shape == (31,) and h["train_reward"].shape == (30,)
    assert h["pass1"][-1] > h["pass1"][0] + 0.3
    h2 = T.reinforce(train, test, "grpo", n_batches=30, seed=1)
    np.testing.assert_array_equal(h["pass1"], h2["pass1"])
    assert h["samples"][-1] == 30 * 16 * 8


def test_mean_abs_advantage_order_at_start(data):
    train, test = data
    first = {k: np.mean([T.reinforce(train, test, k, n_batches=1, seed=s)["mean_abs_adv"][0]
                         for s in range(5)]) for k in T.ADVANTAGES}
    assert first["sft"] < first["rloo"] < first["baseline"] < first["grpo"]


# --- GRPO's gradient and DAPO's switches on hand-made batches ----------------------------

def test_token_weights_reproduce_aggregate_loss():
    rng = np.random.default_rng(0)
    mask = (np.arange(6)[None, :] < np.array([2, 6, 3, 4])[:, None]).astype(float)
    x = rng.normal(size=mask.shape)
    for lt in ("grpo", "dapo"):
        assert np.isclose((T.token_weights(mask, lt) * x).sum(), rl.aggregate_loss(x, mask, lt))


def test_token_level_switch_weights_by_hand():
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], float)
    np.testing.assert_allclose(T.token_weights(mask, "grpo"), [[.25, .25, 0, 0], [.125] * 4])
    np.testing.assert_allclose(T.token_weights(mask, "dapo"), mask / 6)


def test_grpo_grad_matches_finite_differences():
    rng = np.random.default_rng(0)
    old = A.Model(delta=rng.normal(size=(5, 3)) * 0.3)
    new = A.Model(delta=old.delta + rng.normal(size=(5, 3)) * 0.1)
    s = A.sample(old, A.make_problems(4, 3), 3, rng)
    adv = rng.normal(size=(4, 3))
    w = T.token_weights(s.mask.reshape(12, -1), "grpo").reshape(s.mask.shape)
    cfg = T.GRPOConfig(beta=0.3, eps=0.99)                  # a wide clip range: nothing clipped
    J, grad, frac = T.grpo_grad(new, s, adv, w, cfg)
    assert frac == 0
    fd = np.zeros((5, 3))
    for c, k in np.ndindex(5, 3):
        e = np.zeros((5, 3))
        e[c, k] = 1e-6
        fd[c, k] = (T.grpo_grad(A.Model(delta=new.delta + e), s, adv, w, cfg)[0]
                    - T.grpo_grad(A.Model(delta=new.delta - e), s, adv, w, cfg)[0]) / 2e-6
    np.testing.assert_allclose(grad, fd, atol=1e-6)


def test_clip_higher_switch_on_a_hand_made_batch():
    # one token, context "× 2 digits", method correct; π_old(correct) chosen so that ρ = 1.25
    model = A.Model()
    p_new = model.probs()[A.MUL2, A.CORRECT]
    s = _batch([[[A.CORRECT]]], [[[A.MUL2]]], [[[np.log(p_new / 1.25)]]])
    w = np.ones((1, 1, 1))
    A_pos = np.array([[1.0]])
    _, g_sym, f_sym = T.grpo_grad(model, s, A_pos, w, T.GRPOConfig())
    _, g_hi, f_hi = T.grpo_grad(model, s, A_pos, w, T.GRPOConfig(clip_higher=True))
    assert f_sym == 1 and np.all(g_sym == 0)                # 1.25 > 1.2: clipped, no gradient
    assert f_hi == 0                                        # 1.25 < 1.28: still pushed up
    np.testing.assert_allclose(g_hi[A.MUL2], 1.25 * (np.eye(3)[0] - model.probs()[A.MUL2]))
    # a negative advantage at ρ = 1.25 is never clipped from above (min picks ρA)
    _, g_neg, f_neg = T.grpo_grad(model, s, -A_pos, w, T.GRPOConfig())
    assert f_neg == 0 and g_neg[A.MUL2, 0] < 0


def test_dynamic_sampling_filter_on_a_hand_made_batch():
    r = np.array([[1, 1, 1], [0, 1, 0], [0, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(T.mixed_groups(r), [False, True, False, True])
    assert rl.degenerate_fraction(r) == 0.5


def test_dynamic_sampling_batches_have_no_degenerate_groups(data):
    train, _ = data
    cfg = T.GRPOConfig(dynamic_sampling=True)
    batch, s, correct, drawn, deg = T._grpo_batch(train, cfg, A.Model(), np.random.default_rng(0))
    assert len(correct) == cfg.groups and T.mixed_groups(correct).all()
    assert drawn > cfg.groups * cfg.G and deg > 0


def test_overlong_switch_on_a_hand_made_batch():
    correct = np.array([[1, 0], [1, 1], [0, 1]])
    n_steps = np.array([8, 10, 12])
    np.testing.assert_array_equal(T.shaped_reward(correct, n_steps, T.GRPOConfig()), correct)
    shaped = T.shaped_reward(correct, n_steps, T.GRPOConfig(overlong=True))
    np.testing.assert_allclose(shaped, correct + np.array([[0.0], [-0.5], [-1.0]]))
    # one length per group in this toy: the penalty shifts a whole group, GRPO's advantage is unchanged
    np.testing.assert_allclose(rl.grpo_advantages(shaped), rl.grpo_advantages(correct))


def test_grpo_trainer_runs_every_switch(data):
    train, test = data
    for cfg in (T.GRPOConfig(), T.GRPOConfig(beta=0.1), T.dapo_config()):
        h = T.grpo(train, test, cfg, n_batches=5, seed=0)
        assert h["pass1"].shape == (6,) and np.all(np.isfinite(h["pass1"]))
        assert np.all(np.diff(h["samples"]) >= cfg.groups * cfg.G)
        assert np.all((0 <= h["clip_frac"]) & (h["clip_frac"] <= 1))
    h = T.grpo(train, test, T.GRPOConfig(), n_batches=30, seed=0)
    assert h["pass1"][-1] > 0.5


# --- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, word", [
    (lambda tr, te: T.star(tr, te, rounds=0), "rounds"),
    (lambda tr, te: T.star(tr, te, hint=-1), "hint"),
    (lambda tr, te: T.star(tr, te, verifier="tens"), "verifier"),
    (lambda tr, te: T.reinforce(tr, te, advantage="ppo"), "advantage"),
    (lambda tr, te: T.reinforce(tr, te, lr=0), "lr"),
    (lambda tr, te: T.reinforce(tr, te, G=1), "G"),
    (lambda tr, te: T.grpo(tr, te, T.GRPOConfig(G=1)), "config.G"),
    (lambda tr, te: T.grpo(tr, te, T.GRPOConfig(eps=-0.1)), "config.eps"),
    (lambda tr, te: T.grpo(tr, te, T.GRPOConfig(mu=0)), "config.mu"),
    (lambda tr, te: T.grpo(tr, te, {"lr": 4}), "config"),
    (lambda tr, te: T.token_weights(np.ones(3), "grpo"), "mask"),
    (lambda tr, te: T.token_weights(np.ones((2, 3)), "mean"), "loss_type"),
    (lambda tr, te: T.advantages(np.ones((2, 3)), "baseline"), "baseline"),
])
def test_bad_input_raises_value_error(data, call, word):
    with pytest.raises(ValueError, match=word):
        call(*data)


def test_star_accepts_a_verifier_function(data):
    train, test = data
    always = T.star(train, test, rounds=1, verifier=lambda got, want: np.ones(got.shape, bool))
    assert always["kept"][0] == len(train)                          # everything kept
    assert always["kept_right"][0] < 0.2 * len(train)               # ... mostly wrong
    with pytest.raises(ValueError, match="verifier"):
        T.star(train, test, rounds=1, verifier=lambda got, want: np.ones(3, bool))


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_TR, _TE = A.make_problems(20, seed=1), A.make_problems(5, seed=2)
_M = A.Model()
_S = A.sample(_M, _TR.subset(np.arange(4)), 3, np.random.default_rng(0))
_KEEP = np.ones((4, 3))
_W = np.ones(_S.method.shape)
BAD_INPUTS = [
    (T.sft, (_M, _S, _KEEP), {"steps": -1}, "steps"),
    (T.sft, (_M, _S, _KEEP), {"steps": None}, "steps"),
    (T.sft, (_M, _S, _KEEP), {"lr": "0.2"}, "lr"),
    (T.sft, (_M, _S, np.ones((4, 2))), {}, "keep"),
    (T.sft, (_M, _S, _KEEP), {"n_problems": 0}, "n_problems"),
    (T.sft, (None, _S, _KEEP), {}, "base"),
    (T.sft, (_M, None, _KEEP), {}, "samples"),
    (T.star, (_TR, _TE), {"rounds": 0}, "rounds"),
    (T.star, (_TR, _TE), {"hint": -1}, "hint"),
    (T.star, (_TR, _TE), {"hint": None}, "hint"),
    (T.star, (_TR, _TE), {"verifier": "tens"}, "verifier"),
    (T.star, (_TR, _TE), {"sft_steps": -1}, "sft_steps"),
    (T.star, (_TR, _TE), {"sft_lr": 0}, "sft_lr"),
    (T.star, (_TR, _TE), {"temperature": "1"}, "temperature"),
    (T.star, (_TR, _TE), {"seed": -3}, "seed"),
    (T.star, (None, _TE), {}, "train"),
    (T.advantages, (np.ones((2, 3)), "ppo"), {}, "kind"),
    (T.advantages, (np.ones((2, 3)), "baseline"), {}, "baseline"),
    (T.advantages, (np.ones((2, 3)), "baseline"), {"baseline": "0.5"}, "baseline"),
    (T.advantages, (1.0, "sft"), {}, "rewards"),
    (T.advantages, ([[1, np.nan]], "sft"), {}, "rewards"),
    (T.reinforce, (_TR, _TE), {"advantage": "ppo"}, "advantage"),
    (T.reinforce, (_TR, _TE), {"lr": 0}, "lr"),
    (T.reinforce, (_TR, _TE), {"G": 1}, "G"),
    (T.reinforce, (_TR, _TE), {"n_batches": 0}, "n_batches"),
    (T.reinforce, (_TR, _TE), {"groups": 21}, "groups"),                 # more than the train set
    (T.reinforce, (_TR, _TE), {"baseline_decay": 2}, "baseline_decay"),
    (T.reinforce, (_TR, "test"), {}, "test"),
    (T.GRPOConfig, (), {"G": 1}, "config.G"),
    (T.GRPOConfig, (), {"groups": 0}, "config.groups"),
    (T.GRPOConfig, (), {"eps": -0.1}, "config.eps"),
    (T.GRPOConfig, (), {"eps": 1.5}, "config.eps"),
    (T.GRPOConfig, (), {"eps": "0.2"}, "config.eps"),
    (T.GRPOConfig, (), {"eps_high": None}, "config.eps_high"),
    (T.GRPOConfig, (), {"beta": np.nan}, "config.beta"),
    (T.GRPOConfig, (), {"mu": 0}, "config.mu"),
    (T.GRPOConfig, (), {"lr": -4}, "config.lr"),
    (T.GRPOConfig, (), {"max_draws": 0}, "config.max_draws"),
    (T.GRPOConfig, (), {"clip_higher": "yes"}, "config.clip_higher"),
    (T.GRPOConfig, (), {"max_len": 3}, "config.max_len"),
    (T.GRPOConfig, (), {"overlong_buffer": 0}, "config.overlong_buffer"),
    (T.dapo_config, (), {"epsilon": 0.3}, "dapo_config"),
    (T.dapo_config, (), {"eps": 2.0}, "config.eps"),
    (T.token_weights, (np.ones(3), "grpo"), {}, "mask"),
    (T.token_weights, (np.ones((2, 3)), "mean"), {}, "loss_type"),
    (T.token_weights, (np.zeros((2, 3)), "grpo"), {}, "mask"),
    (T.token_weights, (np.zeros((0, 3)), "dapo"), {}, "mask"),
    (T.mixed_groups, (np.ones(3),), {}, "rewards"),
    (T.shaped_reward, (np.ones((2, 3)), [4, 5], {}), {}, "cfg"),
    (T.shaped_reward, (np.ones((2, 3)), [4, 5, 6], T.GRPOConfig()), {}, "n_steps"),
    (T.shaped_reward, (np.ones(3), [4], T.GRPOConfig()), {}, "correct"),
    (T.grpo_grad, (_M, _S, np.ones((4, 2)), _W, T.GRPOConfig()), {}, "A"),
    (T.grpo_grad, (_M, _S, np.ones((4, 3)), _W[..., :1], T.GRPOConfig()), {}, "A"),
    (T.grpo_grad, (_M, _S, np.ones((4, 3)), _W, None), {}, "cfg"),
    (T.grpo_grad, (_M, _S, np.ones((4, 3)), _W, T.GRPOConfig()), {"ref": "ref"}, "ref"),
    (T.grpo, (_TR, _TE, {"lr": 4}), {}, "config"),
    (T.grpo, (_TR, _TE), {"n_batches": 0}, "n_batches"),
    (T.grpo, (_TR, _TE, T.GRPOConfig(groups=21)), {}, "groups"),
    (T.grpo, (_TR, _TE), {"seed": 1.5}, "seed"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument_table(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
