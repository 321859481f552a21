"""Tests for toy.arith.train: STaR, REINFORCE with an advantage switch, GRPO and DAPO's switches.
(Their speed is measured by ``make bench``, not here.)"""
import re
from dataclasses import replace

import numpy as np
import pytest

from finite_differences import central
from toy import arith as A
from toy.arith import train as T
from toy import rl
from toy.prob import log_softmax_table_grad


@pytest.fixture(scope="module")
def data():
    return A.make_dataset()


def _run(fn, train, test, *args, **kw):
    """A Part II trainer from the base model on the problems (train, test)."""
    return fn(A.Model(), *args, train=train, test=test, **kw)


def _batch(methods, contexts, logp_old):
    """A hand-made Samples object: (B, G, L) arrays."""
    m = np.asarray(methods)
    return A.Samples(m, np.asarray(contexts), np.zeros(m.shape[:2], np.int64), np.asarray(logp_old, float))


# --- STaR ---------------------------------------------------------------------------------


def test_sft_on_nothing_is_the_original_model():
    probs = A.make_problems(4, 0)
    s = A.sample(A.Model(), probs, 1, np.random.default_rng(0))
    m = T.train_sft(A.Model(), s, keep=np.zeros((4, 1)))
    np.testing.assert_array_equal(m.delta, 0)


def test_sft_step_is_the_mean_log_likelihood_gradient():
    probs = A.make_problems(3, 0)
    s = A.sample(A.Model(), probs, 2, np.random.default_rng(0))
    keep = np.array([[1, 0], [1, 1], [0, 0]])
    m = T.train_sft(A.Model(), s, T.SFTConfig(steps=1, lr=0.5), keep)
    pi = A.P_START
    g = np.zeros((5, 3))                      # naive loop over kept solutions and steps
    for i, j in zip(*np.nonzero(keep)):
        for t in range(probs.n_steps[i]):
            c, a = s.context[i, j, t], s.method[i, j, t]
            g[c] += np.eye(3)[a] - pi[c]
    np.testing.assert_allclose(m.delta, 0.5 * g / 3)


def test_sft_many_steps_match_repeated_chain_rule_steps():
    probs = A.make_problems(20, 1)
    s = A.sample(A.Model(), probs, 3, np.random.default_rng(1))
    keep = (np.random.default_rng(2).random((20, 3)) < 0.5).astype(float)
    ref = A.Model()                           # the step written with toy.prob's chain rule
    real = s.context >= 0
    w = np.broadcast_to(keep[:, :, None], s.context.shape)[real]
    for _ in range(25):                       # L = −Σ kept log π / N, descended
        g = log_softmax_table_grad(ref.probs(), s.context[real], s.method[real], -w)
        ref.delta -= 0.3 * g / keep.sum()
    np.testing.assert_allclose(T.train_sft(A.Model(), s, T.SFTConfig(steps=25, lr=0.3), keep).delta, ref.delta, atol=1e-12)


def test_star_phenomena(data):
    train, test = data
    plain = _run(T.train_star, train, test, seed=0)[1]
    hint = _run(T.train_star, train, test, T.STaRConfig(hint=1.5), seed=0)[1]
    coarse = _run(T.train_star, train, test, T.STaRConfig(verifier="units"), seed=0)[1]
    assert plain["pass1"][3] > 3 * plain["pass1"][0]                 # the flywheel turns
    assert plain["pass1"][-1] - plain["pass1"][3] < 0.1              # ... then stalls
    assert np.all(plain["kept_right"] == plain["kept"])             # exact verifier: all kept are right
    assert hint["kept"][0] > 2 * plain["kept"][0]                    # rationalization: more data
    assert hint["p_correct"][-1][A.MUL2_BIG] > 1.5 * plain["p_correct"][-1][A.MUL2_BIG]
    assert coarse["kept_right"].sum() < 0.5 * coarse["kept"].sum()  # mostly wrong data kept
    assert coarse["pass1"][-1] < plain["pass1"][-1] - 0.1


# --- REINFORCE ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
def test_pg_step_descends_the_loss_by_finite_differences(seed):
    rng = np.random.default_rng(seed)
    model = A.Model(delta=rng.normal(size=(5, 3)))
    s = A.sample(model, A.make_problems(4, seed), 3, rng)
    adv = rng.normal(size=(4, 3))

    def loss(delta):                          # L = −1/(BG) Σ_i A_i Σ_t log π, by a loop
        lp = A.Model(delta=delta).log_probs()
        return -sum(adv[i, j] * lp[s.context[i, j, t], s.method[i, j, t]]
                    for i, j, t in np.ndindex(s.context.shape) if s.context[i, j, t] >= 0) / adv.size

    fd = central(loss, model.delta)
    before = model.delta.copy()
    T.pg_step(model, s, adv, lr=0.5)
    np.testing.assert_allclose(model.delta, before - 0.5 * fd, atol=1e-7)


def test_pg_step_one_answer_by_hand():
    m = A.Model()
    s = _batch([[[A.CORRECT]]], [[[A.MUL2]]], [[[0.0]]])
    T.pg_step(m, s, np.array([[1.0]]), lr=1.0)
    np.testing.assert_allclose(m.delta[A.MUL2], np.array([1, 0, 0]) - A.P_START[A.MUL2])
    assert np.all(m.delta[[0, 1, 2, 4]] == 0)


def test_reinforce_learns_reproducibly(data):
    train, test = data
    h = _run(T.train_reinforce, train, test, T.ReinforceConfig("grpo"), seed=1)[1]
    assert h["pass1"].shape == (31,) and h["reward"].shape == (30,)
    assert h["pass1"][-1] > h["pass1"][0] + 0.3 and "clip_frac" not in h
    h2 = _run(T.train_reinforce, train, test, T.ReinforceConfig("grpo"), seed=1)[1]
    np.testing.assert_array_equal(h["pass1"], h2["pass1"])
    assert h["samples"][-1] == 30 * 16 * 8


def _reinforce_loop(train, test, cfg, seed):
    """The textbook loop for one seed: sample, advantages, one pg_step."""
    rng, model, b = np.random.default_rng(seed), A.Model(), None
    pass1 = [A.pass1_exact(model, test)]
    for _ in range(cfg.steps):
        batch = train.subset(rng.choice(len(train), size=cfg.n_prompts, replace=False))
        s = A.sample(model, batch, cfg.G, rng)
        r = A.verify(s, batch)
        b = r.mean() if b is None else b
        adv = rl.advantages(r, cfg.algo, b)
        b = cfg.baseline_decay * b + (1 - cfg.baseline_decay) * r.mean()
        T.pg_step(model, s, adv, cfg.lr)
        pass1.append(A.pass1_exact(model, test))
    return np.array(pass1), model.delta


@pytest.mark.parametrize("advantage", ["rft", "baseline", "rloo", "grpo"])
def test_reinforce_seeds_is_exactly_the_loop_over_seeds(data, advantage):
    train, test = data
    cfg = T.ReinforceConfig(advantage, steps=4, G=4, n_prompts=8)
    models, h = _run(T.train_reinforce_seeds, train, test, cfg, seeds=(3, 0, 7))
    assert h["pass1"].shape == (3, 5) and h["reward"].shape == (3, 4)
    for k, (seed, model) in enumerate(zip((3, 0, 7), models)):
        pass1, delta = _reinforce_loop(train, test, cfg, seed)
        np.testing.assert_array_equal(h["pass1"][k], pass1)
        np.testing.assert_array_equal(model.delta, delta)
        np.testing.assert_array_equal(_run(T.train_reinforce, train, test, cfg, seed=seed)[1]["pass1"], pass1)


def test_matched_advantages_by_hand_and_against_a_loop():
    r = np.array([[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]], float)
    got = T.matched_advantages(r, "dr_grpo", "grpo")
    ref = rl.grpo_advantages(r)
    a = r - r.mean(axis=1, keepdims=True)                            # r − r̄ by hand
    scale = sum(abs(x) for x in ref.ravel()) / sum(abs(x) for x in a.ravel())   # a loop over the samples
    np.testing.assert_allclose(got, a * scale, rtol=1e-12)
    assert np.abs(got).mean() == pytest.approx(np.abs(ref).mean(), rel=1e-12)    # GRPO's mean |A|
    np.testing.assert_allclose(got[0, 0] / got[1, 0], 0.875 / 0.5, rtol=1e-12)  # no per-group division
    assert np.all(got[2] == 0)                                        # an all-equal group stays 0
    np.testing.assert_array_equal(T.matched_advantages(np.ones((2, 4)), "dr_grpo", "grpo"), np.zeros((2, 4)))


def test_reinforce_with_matched_advantages(data):
    """The control sees the same first batch as GRPO (same seed, same samples) and gives it GRPO's mean |A|;
    its runs are the loop over seeds with matched_advantages in place of rl.advantages."""
    train, test = data
    cfg = T.ReinforceConfig("dr_grpo", steps=3, G=4, n_prompts=8, match_abs="grpo")
    grpo = _run(T.train_reinforce, train, test, T.ReinforceConfig("grpo", steps=1, G=4, n_prompts=8), seed=2)[1]
    models, h = _run(T.train_reinforce_seeds, train, test, cfg, seeds=(2, 5))
    assert h["mean_abs_adv"][0, 0] == pytest.approx(grpo["mean_abs_adv"][0], rel=1e-12)
    for k, seed in enumerate((2, 5)):
        rng, model = np.random.default_rng(seed), A.Model()
        for _ in range(cfg.steps):
            batch = train.subset(rng.choice(len(train), size=cfg.n_prompts, replace=False))
            s = A.sample(model, batch, cfg.G, rng)
            T.pg_step(model, s, T.matched_advantages(A.verify(s, batch), "dr_grpo", "grpo"), cfg.lr)
        np.testing.assert_array_equal(models[k].delta, model.delta)


def test_mean_abs_advantage_order_at_start(data):
    train, test = data
    first = {k: np.mean([_run(T.train_reinforce, train, test, T.ReinforceConfig(k, steps=1), seed=s)[1]["mean_abs_adv"][0]
                         for s in range(5)]) for k in ("rft", "baseline", "rloo", "grpo")}
    assert first["rft"] < first["rloo"] < first["baseline"] < first["grpo"]


# --- GRPO's gradient and DAPO's switches on hand-made batches ----------------------------

def test_grpo_step_loss_types_weight_steps_by_hand():
    # two answers in context "× 2 digits", correct method: 2 steps and 4 steps; on-policy (ρ = 1)
    p = A.Model().probs()[A.MUL2, A.CORRECT]
    s = _batch([[[0, 0, -1, -1], [0, 0, 0, 0]]], [[[A.MUL2, A.MUL2, -1, -1], [A.MUL2] * 4]],
               [[[np.log(p)] * 2 + [0, 0], [np.log(p)] * 4]])
    adv = np.array([[1.0, -1.0]])
    step = np.array([1, 0, 0]) - A.P_START[A.MUL2]                  # ∇ log π(correct | × 2 digits)
    for loss_type, w_short, w_long in (("grpo", 1 / 4, 1 / 8), ("dapo", 1 / 6, 1 / 6)):
        m = A.Model()
        T.grpo_step(m, s, adv, T.GRPOConfig(loss_type=loss_type, lr=1.0))
        # descent on −Σ w ρ A: Δ += Σ_t w_t A_t ∇ log π
        np.testing.assert_allclose(m.delta[A.MUL2], (2 * w_short - 4 * w_long) * step, atol=1e-12)


def test_grpo_step_on_policy_is_reinforce_with_the_per_answer_mean(data):
    train, _ = data
    rng = np.random.default_rng(3)
    model = A.Model(delta=rng.normal(size=(5, 3)) * 0.3)
    s = A.sample(model, train.subset(np.arange(6)), 4, rng)
    adv = rng.normal(size=(6, 4))
    a, b = model.copy(), model.copy()
    T.grpo_step(a, s, adv, T.GRPOConfig(lr=2.0))                     # ρ = 1: nothing clipped
    T.pg_step(b, s, adv / s.mask.sum(axis=2), lr=2.0)                # A_i / |o_i|, summed over steps
    np.testing.assert_allclose(a.delta, b.delta, atol=1e-12)


def test_grpo_step_matches_finite_differences():
    rng = np.random.default_rng(0)
    old = A.Model(delta=rng.normal(size=(5, 3)) * 0.3)
    new = A.Model(delta=old.delta + rng.normal(size=(5, 3)) * 0.1)
    s = A.sample(old, A.make_problems(4, 3), 3, rng)
    adv = rng.normal(size=(4, 3))
    cfg = T.GRPOConfig(beta=0.3, eps_low=0.99, lr=1.0)            # a wide clip range: nothing clipped
    loss = lambda delta: T.grpo_step(A.Model(delta=delta), s, adv, cfg)[0]
    fd = central(loss, new.delta)
    before = new.delta.copy()
    _, _, frac = T.grpo_step(new, s, adv, cfg)
    assert frac == 0
    np.testing.assert_allclose(before - new.delta, fd, atol=1e-6)  # one step down the gradient


def test_clip_higher_on_a_hand_made_batch():
    # one step, context "× 2 digits", method correct; π_old(correct) chosen so that ρ = 1.25
    model = A.Model()
    p_new = model.probs()[A.MUL2, A.CORRECT]
    s = _batch([[[A.CORRECT]]], [[[A.MUL2]]], [[[np.log(p_new / 1.25)]]])
    A_pos = np.array([[1.0]])
    step = lambda cfg, adv: (lambda m: (T.grpo_step(m, s, adv, cfg)[2], m.delta))(A.Model())
    f_sym, d_sym = step(T.GRPOConfig(lr=1.0), A_pos)
    f_hi, d_hi = step(T.GRPOConfig(lr=1.0, eps_high=0.28), A_pos)
    assert f_sym == 1 and np.all(d_sym == 0)                # 1.25 > 1.2: clipped, no gradient
    assert f_hi == 0                                        # 1.25 < 1.28: still pushed up
    np.testing.assert_allclose(d_hi[A.MUL2], 1.25 * (np.eye(3)[0] - model.probs()[A.MUL2]))
    # a negative advantage at ρ = 1.25 is never clipped from above (min picks ρA)
    f_neg, d_neg = step(T.GRPOConfig(lr=1.0), -A_pos)
    assert f_neg == 0 and d_neg[A.MUL2, 0] < 0


def test_clip_fraction_counts_every_generated_step():
    # TRL's clip ratio: clipped steps / all generated steps (an A = 0 step counts in the denominator)
    p = A.Model().probs()[A.MUL2, A.CORRECT]
    s = _batch([[[0], [0]]], [[[A.MUL2], [A.MUL2]]], [[[np.log(p / 1.25)], [np.log(p / 1.25)]]])
    _, ratio, frac = T.grpo_step(A.Model(), s, np.array([[1.0, 0.0]]), T.GRPOConfig())
    np.testing.assert_allclose(ratio[..., 0], [[1.25, 1.25]])
    assert frac == 0.5                                      # the old "share of A ≠ 0 steps" was 1


def test_grpo_callback_sees_every_update(data):
    train, test = data
    seen = []
    cfg = T.GRPOConfig(steps=2, mu=3)
    _, h = _run(T.train_grpo, train, test, cfg, seed=0, callback=lambda *a: seen.append(a))
    assert [(step, u) for step, u, *_ in seen] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    step, u, s, adv, ratio = seen[0]
    assert adv.shape == s.method.shape[:2] and ratio.shape == s.method.shape
    np.testing.assert_allclose(ratio[s.mask > 0], 1.0)      # the first update is on-policy
    assert np.any(np.abs(seen[1][4][s.mask > 0] - 1) > 1e-3)
    _, again = _run(T.train_grpo, train, test, cfg, seed=0)               # the callback changes nothing
    np.testing.assert_array_equal(again["pass1"], h["pass1"])


def test_dynamic_sampling_batches_have_no_degenerate_groups(data):
    train, _ = data
    cfg = T.GRPOConfig(dynamic_sampling=True)
    batch, s, correct, drawn, deg = T._grpo_batch(train, cfg, A.Model(), np.random.default_rng(0))
    assert len(correct) == cfg.n_prompts and rl.mixed_groups(correct).all()
    assert drawn > cfg.n_prompts * cfg.G and deg > 0


def test_drop_degenerate_keeps_the_mixed_groups_of_one_draw_and_rescales_the_step(data):
    """The §II.5 control: the same draw as GRPO, the all-equal groups left out of the loss. Their
    advantages are 0, so the update is GRPO's, multiplied by B / (number of mixed groups)."""
    train, _ = data
    plain, drop = T.GRPOConfig(mu=1), T.GRPOConfig(mu=1, drop_degenerate=True)
    b0, s0, r0, drawn0, deg0 = T._grpo_batch(train, plain, A.Model(), np.random.default_rng(3))
    b1, s1, r1, drawn1, deg1 = T._grpo_batch(train, drop, A.Model(), np.random.default_rng(3))
    mixed = rl.mixed_groups(r0)
    assert 0 < mixed.sum() < len(r0)                                   # the case has both kinds
    np.testing.assert_array_equal(r1, r0[mixed])
    np.testing.assert_array_equal(s1.method, s0.method[mixed])
    assert drawn1 == drawn0 == plain.n_prompts * plain.G and deg1 == deg0
    steps = []
    for s, r, cfg in ((s0, r0, plain), (s1, r1, drop)):
        m = A.Model()
        T.grpo_step(m, s, rl.grpo_advantages(r), cfg)
        steps.append(m.delta - A.Model().delta)
    np.testing.assert_allclose(steps[1], steps[0] * len(r0) / mixed.sum(), rtol=1e-10, atol=1e-14)


def test_overlong_switch_on_a_hand_made_batch():
    correct = np.array([[1, 0], [1, 1], [0, 1]])
    n_steps = np.array([8, 10, 12])
    np.testing.assert_array_equal(T.reward_with_overlong(correct, n_steps, T.GRPOConfig()), correct)
    shaped = T.reward_with_overlong(correct, n_steps, T.GRPOConfig(overlong=True))
    np.testing.assert_allclose(shaped, correct + np.array([[0.0], [-0.5], [-1.0]]))
    # one length per group in this toy: the penalty shifts a whole group, GRPO's advantage is unchanged
    np.testing.assert_allclose(rl.grpo_advantages(shaped), rl.grpo_advantages(correct))


def test_grpo_trainer_runs_every_switch(data):
    train, test = data
    for cfg in (T.GRPOConfig(), T.GRPOConfig(beta=0.1), T.dapo_config()):
        _, h = _run(T.train_grpo, train, test, replace(cfg, steps=5), seed=0)
        assert h["pass1"].shape == (6,) and np.all(np.isfinite(h["pass1"]))
        assert np.all(np.diff(h["samples"]) >= cfg.n_prompts * cfg.G)
        assert np.all((0 <= h["clip_frac"]) & (h["clip_frac"] <= 1))
    assert T.dapo_config().eps_high == 0.28 and T.GRPOConfig().eps_high is None
    _, h = _run(T.train_grpo, train, test, T.GRPOConfig(), seed=0)
    assert h["pass1"][-1] > 0.5


# --- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, word", [
    (lambda tr, te: _run(T.train_star, tr, te, T.STaRConfig(rounds=0)), "rounds"),
    (lambda tr, te: _run(T.train_star, tr, te, T.STaRConfig(hint=-1)), "hint"),
    (lambda tr, te: _run(T.train_star, tr, te, T.STaRConfig(verifier="tens")), "verifier"),
    (lambda tr, te: _run(T.train_reinforce, tr, te, T.ReinforceConfig(algo="ppo")), "algo"),
    (lambda tr, te: _run(T.train_reinforce, tr, te, T.ReinforceConfig(lr=0)), "lr"),
    (lambda tr, te: _run(T.train_reinforce, tr, te, T.ReinforceConfig(G=1)), "G"),
    (lambda tr, te: _run(T.train_grpo, tr, te, T.GRPOConfig(G=1)), "G"),
    (lambda tr, te: _run(T.train_grpo, tr, te, T.GRPOConfig(eps_low=-0.1)), "eps_low"),
    (lambda tr, te: _run(T.train_grpo, tr, te, T.GRPOConfig(mu=0)), "mu"),
    (lambda tr, te: _run(T.train_grpo, tr, te, {"lr": 4}), "cfg"),
    (lambda tr, te: _run(T.train_grpo, tr, te, callback=3), "callback"),
    (lambda tr, te: _run(T.train_grpo, tr, te, T.GRPOConfig(loss_type="mean")), "loss_type"),
    (lambda tr, te: _run(T.train_reinforce, tr, te, {"lr": 4}), "cfg"),
])
def test_bad_input_raises_value_error(data, call, word):
    with pytest.raises(ValueError, match=word):
        call(*data)


def test_star_accepts_a_verifier_function(data):
    train, test = data
    _, always = _run(T.train_star, train, test, T.STaRConfig(rounds=1, verifier=lambda got, want: np.ones(got.shape, bool)))
    assert always["kept"][0] == len(train)                          # everything kept
    assert always["kept_right"][0] < 0.2 * len(train)               # ... mostly wrong
    with pytest.raises(ValueError, match="verifier"):
        _run(T.train_star, train, test, T.STaRConfig(rounds=1, verifier=lambda got, want: np.ones(3, bool)))


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_TR, _TE = A.make_problems(20, seed=1), A.make_problems(5, seed=2)
_M = A.Model()
_S = A.sample(_M, _TR.subset(np.arange(4)), 3, np.random.default_rng(0))
_KEEP = np.ones((4, 3))
_W = np.ones(_S.method.shape)
BAD_INPUTS = [
    (T.ReinforceConfig, (), {"match_abs": "ppo"}, "match_abs"),
    (T.ReinforceConfig, (), {"match_abs": "grpo", "algo": "baseline"}, "match_abs"),
    (T.matched_advantages, (np.ones((2, 4)), "ppo", "grpo"), {}, "algo"),
    (T.matched_advantages, (np.ones((2, 4)), "rloo", "baseline"), {}, "match_abs"),
    (T.matched_advantages, (np.ones(4), "rloo", "grpo"), {}, "r"),
    (T.matched_advantages, (np.ones((2, 1)), "rloo", "grpo"), {}, "r"),
    (T.matched_advantages, ([[1.0, np.nan]], "rloo", "grpo"), {}, "r"),
    (T.SFTConfig, (), {"steps": -1}, "steps"),
    (T.SFTConfig, (), {"steps": None}, "steps"),
    (T.SFTConfig, (), {"lr": "0.2"}, "lr"),
    (T.SFTConfig, (), {"n_problems": 0}, "n_problems"),
    (T.train_sft, (_M, _S), {"keep": np.ones((4, 2))}, "keep"),
    (T.train_sft, (_M, _S), {"keep": [[np.nan] * 3] * 4}, "keep"),
    (T.train_sft, (None, _S), {"keep": _KEEP}, "base"),
    (T.train_sft, (_M, None), {"keep": _KEEP}, "samples"),
    (T.train_sft, (_M, _S, {"steps": 3}), {}, "cfg"),
    (T.train_star_seeds, (_M,), {"train": _TR, "test": _TE, "seeds": []}, "seeds"),
    (T.train_star_seeds, (_M, "cfg"), {"train": _TR, "test": _TE}, "cfg"),
    (T.STaRConfig, (), {"rounds": 0}, "rounds"),
    (T.STaRConfig, (), {"hint": -1}, "hint"),
    (T.STaRConfig, (), {"hint": None}, "hint"),
    (T.STaRConfig, (), {"verifier": "tens"}, "verifier"),
    (T.STaRConfig, (), {"sft_steps": -1}, "sft_steps"),
    (T.STaRConfig, (), {"sft_lr": 0}, "sft_lr"),
    (T.STaRConfig, (), {"temperature": "1"}, "temperature"),
    (T.train_star, (_M,), {"train": _TR, "test": _TE, "seed": -3}, "seed"),
    (T.train_star, (_M,), {"train": "problems", "test": _TE}, "train"),
    (T.train_star, (_M, {"rounds": 2}), {"train": _TR, "test": _TE}, "cfg"),
    (T.ReinforceConfig, (), {"algo": "ppo"}, "algo"),
    (T.ReinforceConfig, (), {"algo": "sft"}, "algo"),
    (T.ReinforceConfig, (), {"lr": 0}, "lr"),
    (T.ReinforceConfig, (), {"lr": "4"}, "lr"),
    (T.ReinforceConfig, (), {"G": 1}, "G"),
    (T.ReinforceConfig, (), {"steps": 0}, "steps"),
    (T.ReinforceConfig, (), {"n_prompts": 0}, "n_prompts"),
    (T.train_reinforce, (_M, T.ReinforceConfig(n_prompts=21)), {"train": _TR, "test": _TE}, "n_prompts"),   # more than the train set
    (T.ReinforceConfig, (), {"baseline_decay": 2}, "baseline_decay"),
    (T.train_reinforce, (_M,), {"train": _TR, "test": "test"}, "test"),
    (T.train_reinforce, (_M,), {"train": _TR, "test": _TE, "seed": None}, "seed"),
    (T.train_reinforce_seeds, (_M,), {"train": _TR, "test": _TE, "seeds": []}, "seeds"),
    (T.train_reinforce_seeds, (_M,), {"train": _TR, "test": _TE, "seeds": [0, -1]}, "seeds"),
    (T.train_reinforce_seeds, (_M, "cfg"), {"train": _TR, "test": _TE}, "cfg"),
    (T.GRPOConfig, (), {"G": 1}, "G"),
    (T.GRPOConfig, (), {"n_prompts": 0}, "n_prompts"),
    (T.GRPOConfig, (), {"steps": 0}, "steps"),
    (T.GRPOConfig, (), {"eps_low": -0.1}, "eps_low"),
    (T.GRPOConfig, (), {"eps_low": 1.5}, "eps_low"),
    (T.GRPOConfig, (), {"eps_low": "0.2"}, "eps_low"),
    (T.GRPOConfig, (), {"eps_high": -0.1}, "eps_high"),
    (T.GRPOConfig, (), {"beta": np.nan}, "beta"),
    (T.GRPOConfig, (), {"mu": 0}, "mu"),
    (T.GRPOConfig, (), {"lr": -4}, "lr"),
    (T.GRPOConfig, (), {"max_draws": 0}, "max_draws"),
    (T.GRPOConfig, (), {"dynamic_sampling": "yes"}, "dynamic_sampling"),
    (T.GRPOConfig, (), {"drop_degenerate": 1}, "drop_degenerate"),
    (T.GRPOConfig, (), {"loss_type": "token"}, "loss_type"),
    (T.GRPOConfig, (), {"max_len": 3}, "max_len"),
    (T.GRPOConfig, (), {"overlong_buffer": 0}, "overlong_buffer"),
    (T.dapo_config, (), {"epsilon": 0.3}, "dapo_config"),
    (T.dapo_config, (), {"eps_low": 2.0}, "eps_low"),
    (T.pg_step, (_M, _S, np.ones((4, 2)), 1.0), {}, "adv"),
    (T.pg_step, (_M, None, np.ones((4, 3)), 1.0), {}, "s"),
    (T.pg_step, (_M, _S, np.ones((4, 3)), 0.0), {}, "lr"),
    (T.pg_step, (None, _S, np.ones((4, 3)), 1.0), {}, "model"),
    (T.reward_with_overlong, (np.ones((2, 3)), [4, 5], {}), {}, "cfg"),
    (T.reward_with_overlong, (np.ones((2, 3)), [4, 5, 6], T.GRPOConfig()), {}, "n_steps"),
    (T.reward_with_overlong, (np.ones(3), [4], T.GRPOConfig()), {}, "correct"),
    (T.grpo_step, (_M, _S, np.ones((4, 2)), T.GRPOConfig()), {}, "adv"),
    (T.grpo_step, (_M, None, np.ones((4, 3)), T.GRPOConfig()), {}, "s"),
    (T.grpo_step, (_M, _S, np.ones((4, 3)), None), {}, "cfg"),
    (T.grpo_step, (None, _S, np.ones((4, 3)), T.GRPOConfig()), {}, "model"),
    (T.grpo_step, (_M, _S, np.ones((4, 3)), T.GRPOConfig(beta=0.1)), {"ref": "ref"}, "ref"),
    (T.train_grpo, (_M, {"lr": 4}), {"train": _TR, "test": _TE}, "cfg"),
    (T.train_grpo, (_M,), {"train": _TR, "test": _TE, "callback": "print"}, "callback"),
    (T.train_grpo, (_M, T.GRPOConfig(n_prompts=21)), {"train": _TR, "test": _TE}, "n_prompts"),
    (T.train_grpo, (_M,), {"train": _TR, "test": _TE, "seed": 1.5}, "seed"),
    (T.train_grpo_seeds, (_M,), {"train": _TR, "test": _TE, "seeds": [0, -1]}, "seeds"),
    (T.train_grpo_seeds, (_M,), {"train": _TR, "test": _TE, "processes": 0}, "processes"),
    (T.train_grpo_seeds, (_M, {"lr": 4}), {"train": _TR, "test": _TE}, "cfg"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument_table(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


# ------------------------------------------------------------------ one vocabulary, checks apart
def test_train_sft_keeps_everything_by_default():
    probs = A.make_problems(5, 0)
    s = A.sample(A.Model(), probs, 2, np.random.default_rng(0))
    cfg = T.SFTConfig(steps=3, lr=0.4)
    np.testing.assert_array_equal(T.train_sft(A.Model(), s, cfg).delta,
                                  T.train_sft(A.Model(), s, cfg, keep=np.ones((5, 2))).delta)


def test_sft_config_normaliser_divides_the_gradient():
    probs = A.make_problems(3, 0)
    s = A.sample(A.Model(), probs, 2, np.random.default_rng(0))
    keep = np.array([[1, 0], [1, 1], [0, 0]])
    own = T.train_sft(A.Model(), s, T.SFTConfig(steps=1, lr=0.5), keep).delta            # N = 3 kept
    fixed = T.train_sft(A.Model(), s, T.SFTConfig(steps=1, lr=0.5, n_problems=6), keep).delta
    np.testing.assert_allclose(fixed, own * 3 / 6)


def test_loss_type_none_is_the_default_table_entry():
    assert T.GRPOConfig().loss_type is None and rl.DEFAULT_LOSS_TYPE["grpo"] == "grpo" and T.REINFORCE_LOSS == "sum"
    probs = A.make_problems(6, 0)
    s = A.sample(A.Model(), probs, 4, np.random.default_rng(0))
    adv = rl.grpo_advantages(A.verify(s, probs))
    m0, m1 = A.Model(), A.Model()
    T.grpo_step(m0, s, adv, T.GRPOConfig(lr=1.0))
    T.grpo_step(m1, s, adv, T.GRPOConfig(lr=1.0, loss_type="grpo"))
    np.testing.assert_array_equal(m0.delta, m1.delta)


def test_star_seeds_and_grpo_seeds_stack_the_single_runs(data):
    train, test = data
    models, h = _run(T.train_star_seeds, train, test, T.STaRConfig(rounds=2), seeds=(4, 1))
    assert h["pass1"].shape == (2, 3) and h["p_correct"].shape == (2, 3, 5) and len(models) == 2
    for k, seed in enumerate((4, 1)):
        model, one = _run(T.train_star, train, test, T.STaRConfig(rounds=2), seed=seed)
        np.testing.assert_array_equal(h["kept"][k], one["kept"])
        np.testing.assert_array_equal(models[k].delta, model.delta)
    cfg = T.GRPOConfig(steps=2)
    models, h = _run(T.train_grpo_seeds, train, test, cfg, seeds=(2, 5), processes=1)
    assert h["clip_frac"].shape == (2, 2)
    for k, seed in enumerate((2, 5)):
        model, one = _run(T.train_grpo, train, test, cfg, seed=seed)
        np.testing.assert_array_equal(h["pass1"][k], one["pass1"])
        np.testing.assert_array_equal(models[k].delta, model.delta)


@pytest.mark.parametrize("fn", [T.train_sft, T.train_star, T.pg_step, T.train_reinforce, T.train_reinforce_seeds,
                                T.grpo_step, T.reward_with_overlong, T.train_grpo, T.train_star_seeds,
                                T.train_grpo_seeds])
def test_shown_functions_are_the_equation_alone(fn):
    import toy
    src = repr(toy.show(fn))
    assert hasattr(fn, "check") and "argcheck" not in src
    assert not re.search(r"\b(instance|integer|positive|as_array|check_seed|_check_\w+)\(|raise ValueError", src)
