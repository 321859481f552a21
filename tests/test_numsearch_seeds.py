"""Vectorised-over-seeds trainers against the one-seed trainers (the naive loop), the exact
gradient-ascent reference, opening ceilings and the seed statistics."""
import numpy as np
import pytest

from toy import numsearch as ns
from toy import numsearch_train as nt

SEEDS = [0, 3, 7]


def _same_runs(batched, singles, keys):
    thetas, hist = batched
    for i, (theta, h) in enumerate(singles):
        assert np.array_equal(thetas[i], theta)
        for k in keys:
            assert np.array_equal(hist[k][i], h[k], equal_nan=True), k
    assert np.array_equal(hist["eval_step"], singles[0][1]["eval_step"])


@pytest.mark.parametrize("cfg", [
    nt.PGConfig(method="grpo", steps=25, eval_every=10),
    nt.PGConfig(method="baseline", steps=25, prompts=4, G=1, eval_every=10),
    nt.PGConfig(method="reinforce", steps=20, prompts=3, G=2, eval_every=7),
    nt.PGConfig(method="dr_grpo", steps=20, loss_type="dapo", targets=(2, 9, 15)),
    nt.PGConfig(method="rest", steps=15, G=4, loss_type="grpo"),
])
def test_train_pg_seeds_is_train_pg_for_every_seed(cfg):
    singles = [nt.train_pg(ns.weak_prior(), cfg, seed=s) for s in SEEDS]
    _same_runs(nt.train_pg_seeds(ns.weak_prior(), cfg, seeds=SEEDS), singles,
               ["J", "success", "degenerate", "baseline", "abs_w"])


def test_train_pg_seeds_from_one_table_per_seed():
    cfg = nt.PGConfig(steps=10, eval_every=5)
    starts = np.stack([ns.weak_prior(), ns.weak_prior(in_range=1.0), ns.cold_prior()])
    singles = [nt.train_pg(th, cfg, seed=s) for th, s in zip(starts, SEEDS)]
    _same_runs(nt.train_pg_seeds(starts, cfg, seeds=SEEDS), singles, ["J", "success", "abs_w"])
    with pytest.raises(ValueError, match="theta0"):
        nt.train_pg_seeds(starts, cfg, seeds=[0, 1])


def test_abs_w_is_the_mean_weight_size():
    _, h = nt.train_pg(ns.weak_prior(), nt.PGConfig(method="reinforce", steps=5), seed=2)
    assert np.allclose(h["abs_w"], h["success"])                   # w = R ∈ {0, 1}: mean |w| = mean R


@pytest.mark.parametrize("cfg", [
    nt.ReSTConfig(rounds=3, samples=40, sft_steps=5),
    nt.ReSTConfig(rounds=3, samples=40, sft_steps=5, accumulate=True),
    nt.ReSTConfig(rounds=2, samples=30, sft_steps=4, targets=(9, 12, 16), eval_targets=(1, 16)),
])
def test_train_rest_seeds_is_train_rest_for_every_seed(cfg):
    singles = [nt.train_rest(ns.weak_prior(), cfg, seed=s) for s in SEEDS]
    _same_runs(nt.train_rest_seeds(ns.weak_prior(), cfg, seeds=SEEDS), singles,
               ["J", "success", "kept", "dataset"])


def test_train_rest_seeds_with_a_seed_that_never_wins_leaves_it_unchanged():
    cold = ns.cold_prior()
    thetas, hist = nt.train_rest_seeds(cold, nt.ReSTConfig(rounds=2, targets=(13, 14, 15, 16)), seeds=[0, 1])
    assert hist["kept"].sum() == 0 and np.array_equal(thetas[0], cold) and np.array_equal(thetas[1], cold)


def test_seed_trainers_reject_no_seeds():
    with pytest.raises(ValueError, match="seeds"):
        nt.train_pg_seeds(ns.weak_prior(), nt.PGConfig(steps=1), seeds=[])
    with pytest.raises(ValueError, match="seeds"):
        nt.train_rest_seeds(ns.weak_prior(), nt.ReSTConfig(rounds=1), seeds=[])
    with pytest.raises(ValueError, match="G"):
        nt.train_pg_seeds(ns.weak_prior(), nt.PGConfig(method="grpo", G=1), seeds=[0])


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


def test_opening_ceilings_by_hand_and_by_playing_binary_search_after_each_opening():
    ceil = ns.opening_ceilings()
    assert ceil[7] == ceil[8] == 15 / 16 and ceil[3] == 11 / 16 and ceil[0] == 8 / 16   # 1 + 7 of 15
    assert np.allclose(ceil, ceil[::-1])
    s0 = ns.state_index(1, 16, 4)
    for g in range(1, 17):
        pi = ns.binary_search_policy()
        pi[s0] = np.eye(16)[g - 1]                                  # open with g, then binary search
        assert ns.exact_J(pi) == pytest.approx(ceil[g - 1])


def test_mean_se_by_hand():
    m, se = nt.mean_se(np.array([[1.0, 0.0], [3.0, 0.0], [5.0, 3.0]]))
    assert np.allclose(m, [3.0, 1.0])
    assert np.allclose(se, [2.0 / np.sqrt(3), np.sqrt(3.0) / np.sqrt(3)])
    with pytest.raises(ValueError, match="x"):
        nt.mean_se([0.5])


def test_state_values_match_action_values():
    pi = ns.policy_probs(ns.weak_prior())
    V = ns.state_values(pi)
    for lo, hi, left in [(1, 16, 4), (9, 11, 2), (5, 5, 1), (3, 12, 3), (10, 16, 1)]:
        assert V[ns.state_index(lo, hi, left)] == pytest.approx(ns.action_values(pi, lo, hi, left)[1])
    assert V[ns.state_index(1, 16, 4)] == pytest.approx(ns.exact_J(pi))


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


def test_openings_of_known_policies():
    g, p = ns.openings(ns.weak_prior())
    assert g == 1 and p == pytest.approx(ns.policy_probs(ns.weak_prior())[ns.state_index(1, 16, 4)].max())
    theta = np.zeros((ns.S, ns.A))
    theta[ns.state_index(1, 16, 4), 7] = 50.0                          # opens with 8 almost surely
    g, p = ns.openings(np.stack([theta, ns.weak_prior()]))
    assert list(g) == [8, 1] and p[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="thetas"):
        ns.openings(np.zeros((3, 16)))
