"""toy.numsearch.train: the unified loss, SFT, ReST, the policy-gradient trainers (one seed and
vectorised over seeds), the §9–§10 group statistics and the REINFORCE estimate.

References: finite differences, naive loops over games, steps and batches, the one-seed trainers
(for the vectorised ones), exact enumeration (ns.exact_grad, binomial sums), Monte Carlo.
Bad input raises a ValueError naming the argument (BAD_INPUTS, at the end).
"""
import re

import numpy as np
import pytest

from toy import numsearch as ns
from toy.numsearch import many as nm, train as nt
from toy import rl


def J_of(theta):
    return ns.exact_J(ns.policy_probs(theta))


# ------------------------------------------------------------------ the unified loss
def test_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    theta = rng.normal(size=(ns.S, ns.A))
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=50), rng)
    w = rng.normal(size=(50, 4))
    for loss_type in rl.LOSS_TYPES:
        _, grad = nt.weighted_logprob_loss(theta, traj, w, loss_type)
        d = rng.normal(size=theta.shape)
        L = lambda th: nt.weighted_logprob_loss(th, traj, w, loss_type)[0]  # noqa: E731
        fd = (L(theta + 1e-6 * d) - L(theta - 1e-6 * d)) / 2e-6
        assert np.sum(grad * d) == pytest.approx(fd, rel=1e-5)


@pytest.mark.parametrize("loss_type", rl.LOSS_TYPES)
def test_loss_is_the_aggregated_weighted_logprob(loss_type):
    """L = aggregate_loss of the per-guess −w log π (toy.rl's aggregation, pinned in test_rl.py)."""
    rng = np.random.default_rng(6)
    theta = rng.normal(size=(ns.S, ns.A))
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=30), rng)
    w = rng.normal(size=30)
    per_token = -w[:, None] * ns.action_logprobs(theta, traj)
    ref = rl.aggregate_loss(per_token, traj.mask.astype(float), loss_type, max_len=4)
    assert nt.weighted_logprob_loss(theta, traj, w, loss_type)[0] == pytest.approx(ref)


def test_sft_gradient_is_pi_minus_onehot():
    theta = np.zeros((ns.S, ns.A))                      # uniform policy
    traj = ns.replay([[8]], 8)
    _, grad = nt.weighted_logprob_loss(theta, traj, [1.0])
    row = grad[ns.state_index(1, 16, 4)]
    expected = np.full(16, 1 / 16)
    expected[7] -= 1
    assert np.allclose(row, expected)
    assert np.count_nonzero(np.abs(grad).sum(axis=1)) == 1   # only the visited state moves


# -------------------------------------------------------- §6: the REINFORCE estimate
def naive_reinforce(theta, traj):
    """(1/n) Σ_i R_i Σ_t (one-hot(a_it) − π(·|s_it)) with python loops."""
    pi = ns.policy_probs(theta)
    g = np.zeros((ns.S, ns.A))
    for i in range(len(traj)):
        for t in range(ns.T):
            if traj.mask[i, t]:
                s, a = traj.states[i, t], traj.guesses[i, t] - 1
                g[s] += traj.reward[i] * (np.eye(ns.A)[a] - pi[s])
    return g / len(traj)


def test_reinforce_estimate_matches_naive_loop():
    rng = np.random.default_rng(0)
    theta = ns.weak_prior() + rng.normal(size=(ns.S, ns.A))
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=50), rng)
    assert np.allclose(nt.reinforce_estimate(theta, traj), naive_reinforce(theta, traj))


def test_reinforce_estimate_hand_case():
    g = nt.reinforce_estimate(np.zeros((ns.S, ns.A)), ns.replay([[8]], 8))
    row = g[ns.state_index(1, 16, 4)]
    assert np.isclose(row[7], 15 / 16) and np.allclose(np.delete(row, 7), -1 / 16)
    assert np.count_nonzero(g) == 16
    assert not np.any(nt.reinforce_estimate(ns.weak_prior(), ns.replay([[16, 8, 9, 10]], 11)))


@pytest.mark.parametrize("b", [0.0, 0.5])
def test_reinforce_estimate_is_unbiased(b):
    """Mean of −∇L with w = R − b over many episodes → exact ∇J (any constant b)."""
    rng = np.random.default_rng(4)
    theta = ns.weak_prior()
    pi = ns.policy_probs(theta)
    exact = ns.exact_grad(theta)
    rows = [ns.state_index(1, 16, 4), ns.state_index(2, 16, 3)]
    est = []
    for _ in range(20):
        traj = ns.rollout(pi, rng.integers(1, 17, size=20_000), rng)
        _, grad = nt.weighted_logprob_loss(theta, traj, traj.reward - b)
        est.append(-grad[rows])
    est = np.array(est)                                   # (batches, 2, A)
    se = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - exact[rows]) < 5 * se + 1e-4)


def test_reinforce_estimate_is_unbiased_in_the_start_state():
    """The mean over many games approaches the exact gradient (in the start state, where it is largest)."""
    rng = np.random.default_rng(1)
    theta = ns.weak_prior()
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=200_000), rng)
    s0 = ns.state_index(1, 16, 4)
    est, exact = nt.reinforce_estimate(theta, traj)[s0], ns.exact_grad(theta)[s0]
    assert np.abs(est - exact).max() < 0.01 < np.abs(exact).max()


def test_advantage_gap_matches_enumeration_of_every_group():
    """c(p) = E[Â(win) − Â(loss)] by brute force over the 2^G reward vectors of a group."""
    import itertools
    G = 6
    for kind in ("reinforce", "rloo", "grpo", "dr_grpo"):
        for p in (0.0, 0.1, 0.5, 0.83, 1.0):
            num = den_w = den_l = 0.0
            acc_w = acc_l = 0.0
            for r in itertools.product([0.0, 1.0], repeat=G):
                r = np.array(r)
                prob = np.prod(np.where(r == 1, p, 1 - p))
                a = rl.advantages(r, kind)[0]                        # the first sample's advantage
                if r[0] == 1:
                    acc_w += prob * a; den_w += prob
                else:
                    acc_l += prob * a; den_l += prob
            want = (acc_w / den_w if den_w else 0.0) - (acc_l / den_l if den_l else 0.0)
            if 0 < p < 1:
                assert nt.advantage_gap(p, G, kind) == pytest.approx(want, abs=1e-12), (kind, p)
    assert nt.advantage_gap(0.3, 8, "dr_grpo") == pytest.approx(1 - 1 / 8)
    assert nt.advantage_gap(0.3, 8, "reinforce") == pytest.approx(1.0)
    assert nt.advantage_gap(0.3, 8, "rloo") == pytest.approx(1.0)


def test_expected_estimate_is_the_mean_of_sampled_grouped_estimates():
    """E[ĝ] of groups of 8 games on one number, against the mean of 24 independent batches."""
    rng = np.random.default_rng(11)
    theta = ns.weak_prior()
    pi = ns.policy_probs(theta)
    s0 = ns.state_index(1, 16, 4)
    for kind in ("grpo", "dr_grpo"):
        est = []
        for _ in range(24):
            traj = ns.rollout(pi, np.repeat(rng.integers(1, 17, size=2_000), 8), rng)
            w = rl.advantages(traj.reward.reshape(-1, 8), kind).ravel()
            est.append(nt.reinforce_estimate(theta, traj, w)[s0])
        est = np.array(est)                                          # (batches, A)
        se = est.std(axis=0, ddof=1) / np.sqrt(len(est))
        exact = nt.expected_estimate(theta, kind, 8)[s0]
        assert np.all(np.abs(est.mean(axis=0) - exact) < 4 * se + 1e-4), kind
    # the constants: REINFORCE's is ∇J, Dr. GRPO's (1 − 1/G)·∇J, GRPO's is not parallel to ∇J
    g = ns.exact_grad(theta)
    assert np.allclose(nt.expected_estimate(theta, "reinforce", 8), g, atol=1e-15)
    assert np.allclose(nt.expected_estimate(theta, "dr_grpo", 8), 7 / 8 * g, atol=1e-15)
    e = nt.expected_estimate(theta, "grpo", 8)
    assert np.sum(e * g) / np.linalg.norm(e) / np.linalg.norm(g) < 0.9999


def test_reinforce_estimate_weights():
    rng = np.random.default_rng(2)
    theta = ns.weak_prior()
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=20), rng)
    w = rng.normal(size=20)
    assert np.allclose(nt.reinforce_estimate(theta, traj, w), -nt.weighted_logprob_loss(theta, traj, w)[1])


# -------------------------------------------------------------------------- trainers
def test_sft_on_binary_search_demos_learns_binary_search_greedily():
    theta, hist = nt.train_sft(ns.weak_prior(), nt.demonstrations(), nt.SFTConfig(steps=100))
    assert ns.exact_J(ns.greedy_policy(theta)) == pytest.approx(15 / 16)
    assert hist["loss"][-1] < hist["loss"][0]


def test_grpo_improves_and_is_reproducible():
    th0 = ns.weak_prior()
    cfg = nt.PGConfig(algo="grpo", steps=150)
    t1, h1 = nt.train_pg(th0, cfg, seed=0)
    t2, h2 = nt.train_pg(th0, cfg, seed=0)
    assert np.array_equal(t1, t2)
    assert h1["J"][-1] > h1["J"][0] + 0.15
    assert np.all((h1["degenerate"] >= 0) & (h1["degenerate"] <= 1))


def test_rest_cold_start_stalls_on_hard_targets():
    th0 = ns.cold_prior()
    theta, hist = nt.train_rest(th0, nt.ReSTConfig(rounds=5, targets=tuple(range(9, 17))), seed=0)
    assert np.all(hist["kept"] == 0) and np.all(hist["dataset"] == 0)
    assert np.array_equal(theta, th0)


@pytest.mark.parametrize("method", rl.ADVANTAGES)
def test_every_method_runs_and_logs(method):
    th, h = nt.train_pg(ns.weak_prior(), nt.PGConfig(algo=method, steps=20, eval_every=10), seed=1)
    assert th.shape == (ns.S, ns.A) and len(h["reward"]) == 20 and len(h["J"]) == 3
    assert np.all(np.isfinite(th))


def _record_weights(monkeypatch):
    """Record (rewards, w) of every call of the one loss inside ``train_pg``."""
    calls = []
    real = nt.weighted_logprob_loss

    def rec(theta, traj, w, loss_type="sum"):
        calls.append((np.array(traj.reward, dtype=float), np.array(w, dtype=float)))
        return real(theta, traj, w, loss_type)

    monkeypatch.setattr(nt, "weighted_logprob_loss", rec)
    return calls


@pytest.mark.parametrize("decay", [None, 0.8, 0.0])                     # None: the default, 0.9
def test_running_mean_baseline_naive_loop(monkeypatch, decay):
    calls = _record_weights(monkeypatch)
    cfg = nt.PGConfig(algo="baseline", steps=15, n_prompts=4, G=2, b=0.3, eval_every=100,
                      **({} if decay is None else {"baseline_decay": decay}))
    decay = 0.9 if decay is None else decay
    _, h = nt.train_pg(ns.weak_prior(), cfg, seed=2)
    assert len(calls) == 15
    b, used = 0.3, []
    for R, w in calls:
        used.append(b)
        np.testing.assert_allclose(w, R - b, rtol=0, atol=1e-15)          # w = R − b, b from before
        b = decay * b + (1 - decay) * sum(R) / len(R)
    np.testing.assert_allclose(h["b"], used, rtol=1e-12)
    np.testing.assert_allclose(h["reward"], [R.mean() for R, _ in calls], rtol=1e-12)
    assert len(set(np.round(used, 12))) > 3                              # the baseline did move


def test_decay_one_keeps_the_baseline_constant(monkeypatch):
    calls = _record_weights(monkeypatch)
    cfg = nt.PGConfig(algo="baseline", steps=5, n_prompts=2, G=2, b=0.25, baseline_decay=1.0, eval_every=100)
    _, h = nt.train_pg(ns.weak_prior(), cfg, seed=0)
    np.testing.assert_array_equal(h["b"], [0.25] * 5)
    for R, w in calls:
        np.testing.assert_array_equal(w, R - 0.25)


# ------------------------------------------- many seeds at once, the exact reference, statistics
SEEDS = [0, 3, 7]


def _same_runs(batched, singles, keys):
    thetas, hist = batched
    for i, (theta, h) in enumerate(singles):
        assert np.array_equal(thetas[i], theta)
        for k in keys:
            assert np.array_equal(hist[k][i], h[k], equal_nan=True), k
    assert np.array_equal(hist["eval_step"], singles[0][1]["eval_step"])


@pytest.mark.parametrize("cfg", [
    nt.PGConfig(algo="grpo", steps=25, eval_every=10),
    nt.PGConfig(algo="baseline", steps=25, n_prompts=4, G=1, eval_every=10),
    nt.PGConfig(algo="reinforce", steps=20, n_prompts=3, G=2, eval_every=7),
    nt.PGConfig(algo="dr_grpo", steps=20, loss_type="dapo", targets=(2, 9, 15)),
    nt.PGConfig(algo="rft", steps=15, G=4, loss_type="grpo"),
])
def test_train_pg_seeds_is_train_pg_for_every_seed(cfg):
    singles = [nt.train_pg(ns.weak_prior(), cfg, seed=s) for s in SEEDS]
    _same_runs(nm.train_pg_seeds(ns.weak_prior(), cfg, seeds=SEEDS), singles,
               ["J", "reward", "degenerate", "b", "mean_abs_adv"])


def test_train_pg_seeds_from_one_table_per_seed():
    cfg = nt.PGConfig(steps=10, eval_every=5)
    starts = np.stack([ns.weak_prior(), ns.weak_prior(in_range=1.0), ns.cold_prior()])
    singles = [nt.train_pg(th, cfg, seed=s) for th, s in zip(starts, SEEDS)]
    _same_runs(nm.train_pg_seeds(starts, cfg, seeds=SEEDS), singles, ["J", "reward", "mean_abs_adv"])
    with pytest.raises(ValueError, match="policy"):
        nm.train_pg_seeds(starts, cfg, seeds=[0, 1])


def test_streams_choice_is_each_generators_choice():
    """_Streams.choice draws targets[rng.integers(0, len(targets), size)]: the same numbers as
    rng.choice(targets, size) from the same stream, also between calls of random()."""
    for targets in (tuple(range(1, 17)), (9, 12, 16), tuple(range(9, 17)), tuple(range(1, 13))):
        streams = nm._Streams(SEEDS)
        refs = [np.random.default_rng(s) for s in SEEDS]
        for size in (1, 4, 8, 5):
            assert np.array_equal(streams.choice(targets, size), np.stack([r.choice(targets, size=size) for r in refs]))
            assert np.array_equal(streams.random((len(SEEDS) * 3, 1)), np.concatenate([r.random((3, 1)) for r in refs]))


def test_train_pg_seeds_callback_sees_the_policies_before_each_step():
    """The policies the callback sees at step t are those of a t-step run (train_pg with steps=t)."""
    cfg = nt.PGConfig(algo="grpo", steps=6, eval_every=3)
    seen = {}

    def keep(step, thetas):
        assert thetas.shape == (len(SEEDS), ns.S, ns.A) and not thetas.flags.writeable
        seen[step] = thetas.copy()

    final, _ = nm.train_pg_seeds(ns.weak_prior(), cfg, SEEDS, callback=keep)
    assert sorted(seen) == list(range(cfg.steps + 1))
    assert np.array_equal(seen[cfg.steps], final)
    for t in (0, 1, 4):
        short = [nt.train_pg(ns.weak_prior(), nt.PGConfig(algo="grpo", steps=t, eval_every=3), seed=s)[0] if t else
                 ns.weak_prior() for s in SEEDS]
        assert np.array_equal(seen[t], np.stack(short)), t


@pytest.mark.parametrize("algo", ["grpo", "dr_grpo", "reinforce", "rloo"])
def test_estimate_bias_is_the_fit_of_the_exact_mean_against_the_gradient(algo):
    thetas = np.stack([ns.weak_prior(), nt.train_pg(ns.weak_prior(), nt.PGConfig(steps=30), seed=1)[0]])
    c, r, cos = nt.estimate_bias(thetas, algo, G=8)
    for k, th in enumerate(thetas):                                   # the reference: §9's cell, written out
        e, g = nt.expected_estimate(th, algo, G=8), ns.exact_grad(th)
        c_ref = np.sum(e * g) / np.sum(g * g)
        assert c[k] == pytest.approx(c_ref, rel=1e-12)
        assert r[k] == pytest.approx(np.linalg.norm(e - c_ref * g) / np.linalg.norm(c_ref * g), rel=1e-9, abs=1e-13)
        assert cos[k] == pytest.approx(np.sum(e * g) / np.linalg.norm(e) / np.linalg.norm(g), rel=1e-12)
    if algo != "grpo":                                                # unbiased up to a constant step size
        assert np.allclose(c, {"dr_grpo": 7 / 8}.get(algo, 1.0), atol=1e-12) and r.max() < 1e-12
    else:
        assert r.min() > 0.01                                         # ÷σ: a part at right angles
    one = nt.estimate_bias(thetas[1], algo, G=8)                      # one table: three numbers
    assert np.allclose(one, (c[1], r[1], cos[1]), rtol=1e-12, atol=1e-15)


def test_mean_abs_adv_is_the_mean_weight_size():
    _, h = nt.train_pg(ns.weak_prior(), nt.PGConfig(algo="reinforce", steps=5), seed=2)
    assert np.allclose(h["mean_abs_adv"], h["reward"])                   # w = R ∈ {0, 1}: mean |w| = mean R


@pytest.mark.parametrize("cfg", [
    nt.ReSTConfig(rounds=3, n_prompts=40, sft_steps=5),
    nt.ReSTConfig(rounds=3, n_prompts=40, sft_steps=5, accumulate=True),
    nt.ReSTConfig(rounds=2, n_prompts=30, sft_steps=4, targets=(9, 12, 16), eval_targets=(1, 16)),
])
def test_train_rest_seeds_is_train_rest_for_every_seed(cfg):
    singles = [nt.train_rest(ns.weak_prior(), cfg, seed=s) for s in SEEDS]
    _same_runs(nm.train_rest_seeds(ns.weak_prior(), cfg, seeds=SEEDS), singles,
               ["J", "reward", "kept", "dataset"])


def test_train_rest_seeds_with_a_seed_that_never_wins_leaves_it_unchanged():
    cold = ns.cold_prior()
    thetas, hist = nm.train_rest_seeds(cold, nt.ReSTConfig(rounds=2, targets=(13, 14, 15, 16)), seeds=[0, 1])
    assert hist["kept"].sum() == 0 and np.array_equal(thetas[0], cold) and np.array_equal(thetas[1], cold)


def test_seed_trainers_reject_no_seeds():
    with pytest.raises(ValueError, match="seeds"):
        nm.train_pg_seeds(ns.weak_prior(), nt.PGConfig(steps=1), seeds=[])
    with pytest.raises(ValueError, match="seeds"):
        nm.train_rest_seeds(ns.weak_prior(), nt.ReSTConfig(rounds=1), seeds=[])
    with pytest.raises(ValueError, match="G"):
        nm.train_pg_seeds(ns.weak_prior(), nt.PGConfig(algo="grpo", G=1), seeds=[0])


def test_train_exact_takes_the_exact_gradient_step():
    theta0 = ns.weak_prior()
    theta1, h = nt.train_exact(theta0, steps=1, lr=0.5, eval_every=1)
    assert np.allclose(theta1, theta0 + 0.5 * ns.exact_grad(theta0))
    # first-order Taylor: J(θ + ε∇J) ≈ J(θ) + ε‖∇J‖², checked against a tiny step
    eps = 1e-3
    th_small, h_small = nt.train_exact(theta0, steps=1, lr=eps, eval_every=1)
    g = ns.exact_grad(theta0)
    assert h_small["J"][1] - h_small["J"][0] == pytest.approx(eps * np.sum(g * g), rel=1e-2)
    assert list(h["eval_step"]) == [0, 1]


def _games(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return ns.rollout(ns.policy_probs(ns.weak_prior()), rng.integers(1, 17, size=n), rng)


def test_estimate_variance_matches_a_loop_over_games():
    theta, games = ns.weak_prior(), _games()
    for w in [games.reward, games.reward - 0.4, np.where(games.mask, games.reward[:, None] - 0.3 * np.arange(4), 0)]:
        per_game = np.stack([nt.reinforce_estimate(theta, games.select([i]), w[i:i + 1]).ravel()
                             for i in range(len(games))])                      # (n, S·A)
        naive = np.sum(per_game.var(axis=0))
        assert nt.estimate_variance(theta, games, w) == pytest.approx(naive, rel=1e-9)


def test_batch_cosines_match_a_loop_over_batches():
    theta, games = ns.weak_prior(), _games(48, seed=3)
    g = ns.exact_grad(theta)
    for w in [games.reward, games.reward + 10.0]:
        got = nt.batch_cosines(theta, games, w, 16)
        want = []
        for b in range(3):
            est = nt.reinforce_estimate(theta, games.select(np.arange(16 * b, 16 * b + 16)), w[16 * b:16 * b + 16])
            want.append(np.sum(est * g) / np.linalg.norm(est) / np.linalg.norm(g))
        assert np.allclose(got, want)
    with pytest.raises(ValueError, match="n must"):
        nt.batch_cosines(theta, games, games.reward, 5)


# ------------------------------------------------ §9–§10: what a group of G samples gives
def test_degenerate_probability_matches_enumeration():
    p, G = 0.3, 5
    # enumerate all 2^G outcomes: degenerate iff all equal
    outcomes = np.array(np.meshgrid(*[[0, 1]] * G)).reshape(G, -1).T
    probs = np.prod(np.where(outcomes == 1, p, 1 - p), axis=1)
    exact = probs[(outcomes.min(axis=1) == outcomes.max(axis=1))].sum()
    assert nt.degenerate_probability(p, G) == pytest.approx(exact)
    assert np.allclose(nt.degenerate_probability(np.array([0.0, 1.0]), 4), 1.0)


def test_degenerate_probability_matches_sampling():
    rng = np.random.default_rng(0)
    p = np.array([0.1, 0.5, 0.9])
    R = (rng.random((3, 20000, 4)) < p[:, None, None]).astype(float)
    mc = [rl.degenerate_fraction(R[i]) for i in range(3)]
    assert np.allclose(mc, nt.degenerate_probability(p, 4), atol=0.01)


def test_group_update_closed_forms():
    p = np.linspace(0.01, 0.99, 25)
    for G in (2, 4, 8, 32):
        assert np.allclose(nt.group_update_size(p, G, "dr_grpo"), p * (1 - p) * (1 - 1 / G))
    # GRPO: E[sqrt(q(1-q))], q = k/G, k ~ Binomial(G, p) (eps = 1e-4 makes it slightly smaller)
    from math import comb
    G = 8
    q = np.arange(G + 1) / G
    pmf = np.array([[comb(G, k) * pp ** k * (1 - pp) ** (G - k) for k in range(G + 1)] for pp in p])
    ref = pmf @ np.sqrt(q * (1 - q))
    assert np.allclose(nt.group_update_size(p, G, "grpo"), ref, rtol=1e-3)


def test_group_update_matches_monte_carlo_bandit():
    """Sample groups from the bandit and average (1/G) Σ Â_j g_j directly."""
    rng = np.random.default_rng(1)
    p, G, n = 0.2, 8, 200_000
    R = (rng.random((n, G)) < p).astype(float)
    g = np.where(R == 1, 1 - p, -p)
    for method in ("grpo", "dr_grpo"):
        mc = np.mean(np.mean(rl.advantages(R, method) * g, axis=1))
        assert mc == pytest.approx(float(nt.group_update_size(p, G, method)), rel=0.02)


def test_group_update_rejects_bad_input():
    with pytest.raises(ValueError, match="algo"):
        nt.group_update_size(0.5, 8, "rft")
    with pytest.raises(ValueError, match="G"):
        nt.group_update_size(0.5, 1)
    with pytest.raises(ValueError, match="p"):
        nt.degenerate_probability(1.5, 4)


# ------------------------------------------------------------------ bad input, one table
def test_trainers_reject_bad_input():
    traj = ns.replay([[8, 12, 10, 11]], 11)
    with pytest.raises(ValueError, match="w"):
        nt.weighted_logprob_loss(np.zeros((ns.S, ns.A)), traj, np.ones(3))
    with pytest.raises(ValueError, match="loss_type"):
        nt.weighted_logprob_loss(np.zeros((ns.S, ns.A)), traj, np.ones(1), "mean")
    with pytest.raises(ValueError, match="algo"):
        nt.train_pg(ns.weak_prior(), nt.PGConfig(algo="ppo"))
    with pytest.raises(ValueError, match="G"):
        nt.train_pg(ns.weak_prior(), nt.PGConfig(algo="grpo", G=1))
    cfg = nt.PGConfig(algo="grpo")
    cfg.G = 1                                                   # a config changed after it was checked
    with pytest.raises(ValueError, match="G"):
        nm.train_pg_seeds(ns.weak_prior(), cfg, seeds=[0])


_TH = np.zeros((ns.S, ns.A))
_TRAJ = ns.replay([[8, 12, 10, 11], [8, 4]], [11, 3])

# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (nt.weighted_logprob_loss, (_TH, _TRAJ, np.ones(3)), {}, "w"),
    (nt.weighted_logprob_loss, (_TH, _TRAJ, [np.nan, 1]), {}, "w"),
    (nt.weighted_logprob_loss, (_TH, _TRAJ, np.ones(2), "mean"), {}, "loss_type"),
    (nt.weighted_logprob_loss, (_TH, "traj", np.ones(2)), {}, "traj"),
    (nt.weighted_logprob_loss, (_TH[:4], _TRAJ, np.ones(2)), {}, "theta"),
    (nt.SFTConfig, (), {"steps": -1}, "steps"),
    (nt.SFTConfig, (), {"steps": 2.5}, "steps"),
    (nt.SFTConfig, (), {"lr": np.nan}, "lr"),
    (nt.SFTConfig, (), {"lr": 0}, "lr"),
    (nt.SFTConfig, (), {"eval_every": 0}, "eval_every"),
    (nt.ReSTConfig, (), {"rounds": -1}, "rounds"),
    (nt.ReSTConfig, (), {"n_prompts": 0}, "n_prompts"),
    (nt.ReSTConfig, (), {"sft_steps": None}, "sft_steps"),
    (nt.ReSTConfig, (), {"lr": "1"}, "lr"),
    (nt.ReSTConfig, (), {"accumulate": "no"}, "accumulate"),
    (nt.ReSTConfig, (), {"targets": (0, 3)}, "targets"),
    (nt.ReSTConfig, (), {"targets": ()}, "targets"),
    (nt.ReSTConfig, (), {"eval_targets": (17,)}, "eval_targets"),
    (nt.PGConfig, (), {"lr": -1, "steps": -5}, "steps"),
    (nt.PGConfig, (), {"lr": -1}, "lr"),
    (nt.PGConfig, (), {"eval_every": 0}, "eval_every"),                 # was a ZeroDivisionError
    (nt.PGConfig, (), {"algo": "ppo"}, "algo"),
    (nt.PGConfig, (), {"G": 1}, "G"),                                   # a group of 1 for GRPO
    (nt.PGConfig, (), {"algo": "reinforce", "G": 0}, "G"),
    (nt.PGConfig, (), {"algo": "rloo", "G": 1}, "G"),
    (nt.PGConfig, (), {"n_prompts": 0}, "n_prompts"),
    (nt.PGConfig, (), {"loss_type": "mean"}, "loss_type"),
    (nt.PGConfig, (), {"b": None}, "b"),
    (nt.PGConfig, (), {"baseline_decay": 1.5}, "baseline_decay"),
    (nt.PGConfig, (), {"targets": (3.5,)}, "targets"),
    (nt.demonstrations, (), {"targets": (0,)}, "targets"),
    (nt.demonstrations, (), {"targets": (2.5,)}, "targets"),
    (nt.train_sft, (_TH[:3], _TRAJ), {}, "policy"),
    (nt.train_sft, (_TH, "demos"), {}, "demos"),
    (nt.train_sft, (_TH, _TRAJ), {"cfg": {"steps": 3}}, "cfg"),
    (nt.train_sft, (_TH, _TRAJ), {"seed": -1}, "seed"),
    (nt.train_rest, (_TH[:3],), {}, "policy"),
    (nt.train_rest, (_TH,), {"cfg": nt.PGConfig()}, "cfg"),
    (nt.train_pg, (_TH,), {"seed": None}, "seed"),
    (nt.train_pg, (None,), {}, "policy"),
    (nt.reinforce_estimate, (_TH, _TRAJ), {"w": np.ones(5)}, "w"),
    (nt.degenerate_probability, ([0.5], None), {}, "G"),
    (nt.degenerate_probability, ([0.5], np.inf), {}, "G"),
    (nt.degenerate_probability, ([0.5], 0), {}, "G"),
    (nt.degenerate_probability, ([1.5], 4), {}, "p"),
    (nt.group_update_size, ([0.5], 1), {}, "G"),
    (nt.advantage_gap, (0.5, 1), {}, "G"),
    (nt.advantage_gap, (0.5, 8, "rft"), {}, "algo"),
    (nt.advantage_gap, (1.5, 8), {}, "p"),
    (nt.expected_estimate, (ns.weak_prior(), "baseline"), {}, "algo"),
    (nt.expected_estimate, (ns.weak_prior()[:3], "grpo"), {}, "theta"),
    (nt.group_update_size, ([0.5], "8"), {}, "G"),
    (nt.group_update_size, ([0.5], 8, "rloo"), {}, "algo"),
    (nt.group_update_size, ([-0.5], 8), {}, "p"),
    (nm.train_pg_seeds, (_TH,), {"seeds": [0, -1]}, "seeds"),
    (nm.train_pg_seeds, (_TH,), {"seeds": 3}, "seeds"),
    (nm.train_pg_seeds, (_TH,), {"seeds": []}, "seeds"),
    (nm.train_pg_seeds, (_TH,), {"cfg": nt.ReSTConfig()}, "cfg"),
    (nm.train_pg_seeds, (_TH[:5],), {"seeds": [0]}, "policy"),
    (nm.train_pg_seeds, (_TH,), {"seeds": [0], "callback": 3}, "callback"),
    (nt.estimate_bias, (_TH[:3],), {}, "thetas"),
    (nt.estimate_bias, (np.zeros((2, 2, ns.S, ns.A)),), {}, "thetas"),
    (nt.estimate_bias, ([[np.nan] * ns.A] * ns.S,), {}, "thetas"),
    (nt.estimate_bias, (_TH, "baseline"), {}, "algo"),
    (nt.estimate_bias, (_TH, "grpo", 1), {}, "G"),
    (nm.train_rest_seeds, (_TH,), {"seeds": [1.5]}, "seeds"),
    (nm.train_rest_seeds, (_TH,), {"cfg": None}, "cfg"),
    (nt.train_exact, (_TH,), {"steps": -1}, "steps"),
    (nt.train_exact, (_TH,), {"lr": 0}, "lr"),
    (nt.train_exact, (_TH,), {"eval_every": 0}, "eval_every"),
    (nt.train_exact, (_TH[:2],), {}, "policy"),
    (nt.estimate_variance, (_TH, "traj", np.ones(2)), {}, "traj"),
    (nt.estimate_variance, (_TH, _TRAJ, np.ones(3)), {}, "w"),
    (nt.batch_cosines, (_TH, _TRAJ, np.ones(2), None), {}, "n"),
    (nt.batch_cosines, (_TH, _TRAJ, np.ones(2), 3), {}, "n"),
    (nt.batch_cosines, (_TH, None, np.ones(2), 1), {}, "traj"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


# ------------------------------------------------------- the shown functions are the equation alone
def _shown_in_part1():
    """(module alias, name) of every Number Search function a Part I notebook shows with toy.show."""
    import json
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    found = set()
    for nb in sorted((root / "notebooks" / "part1").glob("s*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            found |= set(re.findall(r"toy\.show\((n[st])\.(\w+)\)", "".join(cell["source"])))
    return sorted(found)


SHOWN = _shown_in_part1()
CHECK_CALL = re.compile(r"\b(as_array|int_array|integer|real|broadcast|instance|one_of|flag|generator|check_seed|"
                        r"check_theta|check_pi|per_action|_check_\w+|nonneg|positive|probabilities)\(|raise ValueError|# argcheck")


def test_part1_notebooks_show_functions():
    assert len(SHOWN) >= 14 and ("ns", "exact_values") in SHOWN and ("nt", "weighted_logprob_loss") in SHOWN


@pytest.mark.parametrize("alias, name", SHOWN)
def test_a_shown_function_is_its_equation_without_argument_checks(alias, name):
    import ast
    import inspect
    import toy
    fn = getattr({"ns": ns, "nt": nt}[alias], name)
    assert not name.startswith("_"), f"{alias}.{name}: a notebook shows a private function"
    tree = ast.parse(repr(toy.show(fn)))
    body = tree.body[0].body[1:] if ast.get_docstring(tree.body[0]) else tree.body[0].body
    code = "\n".join(ast.unparse(st) for st in body)
    assert not CHECK_CALL.search(code), f"{alias}.{name} shows an argument check: {CHECK_CALL.search(code).group(0)}"
    if inspect.signature(fn).parameters:                          # its arguments are checked apart, at the boundary
        assert callable(getattr(fn, "check", None)), f"{alias}.{name} takes arguments but is not @checked"
