"""toy.numsearch: the environment, exact J and ∇J, values and openings.

Every check compares against an independent reference: a naive per-episode loop, brute-force
enumeration of histories, closed forms, finite differences, Monte Carlo averages.
"""
import re

import numpy as np
import pytest

from toy import numsearch as ns


# ------------------------------------------------------------------ naive references
def naive_episode(target, guesses):
    """Play one game with python ints; returns (feedback words, states (lo, hi, left), reward)."""
    lo, hi, words, states = 1, 16, [], []
    for t, g in enumerate(guesses[:4]):
        states.append((lo, hi, 4 - t))
        if g == target:
            words.append("correct")
            return words, states, 1.0
        if g < target:
            words.append("higher")
            lo = max(lo, g + 1)
        else:
            words.append("lower")
            hi = min(hi, g - 1)
    return words, states, 0.0


def enumerate_win_prob(pi, target):
    """P(win | target) by recursion over explicit histories (lists of guesses)."""
    def rec(history):
        if len(history) == 4:
            return 0.0
        lo = max([1] + [g + 1 for g in history if g < target])
        hi = min([16] + [g - 1 for g in history if g > target])
        p = pi[ns.state_index(lo, hi, 4 - len(history))]
        total = 0.0
        for a in np.flatnonzero(p):
            g = a + 1
            total += p[a] * (1.0 if g == target else rec(history + [g]))
        return total
    return rec([])


def sparse_random_policy(rng, k=3):
    """Each state puts random mass on k random guesses (so histories can be enumerated)."""
    pi = np.zeros((ns.S, ns.A))
    for s in range(ns.S):
        pi[s, rng.choice(ns.A, size=k, replace=False)] = rng.dirichlet(np.ones(k))
    return pi


def J_of(theta):
    return ns.exact_J(ns.policy_probs(theta))


# ------------------------------------------------------------------------ environment
def test_rollout_matches_naive_loop():
    rng = np.random.default_rng(0)
    targets = rng.integers(1, 17, size=500)
    traj = ns.rollout(ns.uniform_policy(), targets, rng)
    codes = {"higher": ns.HIGHER, "lower": ns.LOWER, "correct": ns.FOUND}
    for i in range(len(targets)):
        words, states, reward = naive_episode(int(targets[i]), list(traj.guesses[i]))
        n = len(words)
        assert traj.reward[i] == reward
        assert list(traj.mask[i]) == [True] * n + [False] * (4 - n)
        assert list(traj.feedback[i, :n]) == [codes[w] for w in words]
        assert np.all(traj.feedback[i, n:] == ns.NONE) and np.all(traj.guesses[i, n:] == 0)
        assert list(traj.states[i, :n]) == [int(ns.state_index(*st)) for st in states]


def test_state_index_round_trip():
    s = np.arange(ns.S)
    assert np.array_equal(ns.state_index(*ns.state_of(s)), s)
    assert ns.state_index(1, 16, 4) == 3 * 256 + 15


def test_lecture_trajectories_for_target_11():
    traj = ns.replay([[8, 12, 10, 11], [4, 8, 12, 11], [16, 8, 9, 10], [1, 2, 3, 4]], 11)
    assert list(traj.reward) == [1, 1, 0, 0]
    assert traj.text(0) == "8 → higher, 12 → lower, 10 → higher, 11 → correct"
    assert traj.text(2) == "16 → lower, 8 → higher, 9 → higher, 10 → higher"
    # tokens g1 f1 g2 f2 ...: guesses written by the policy (m=1), feedback by the env (m=0)
    assert list(traj.tokens[0]) == [7, 16, 11, 17, 9, 16, 10, 18]
    assert list(traj.token_mask[0]) == [1, 0, 1, 0, 1, 0, 1, 0]


def test_short_episode_is_padded():
    traj = ns.replay([[11]], 11)
    assert traj.length[0] == 1 and traj.reward[0] == 1
    assert list(traj.token_mask[0]) == [1, 0, 0, 0, 0, 0, 0, 0]


def test_binary_search_wins_15_of_16_and_nothing_wins_more():
    traj = ns.rollout(ns.binary_search_policy(), np.arange(1, 17), np.random.default_rng(0))   # targets 1..16
    assert np.all(traj.length <= 4)
    assert list(np.flatnonzero(traj.reward == 0) + 1) == [16]   # it misses only 16
    assert ns.exact_J(ns.binary_search_policy()) == pytest.approx(15 / 16)
    # k guesses find at most 2^k - 1 numbers: V*(n, k) = min(n, 2^k - 1) / n
    V = ns.optimal_values()
    for k in range(1, 5):
        for lo in range(1, 17):
            for hi in range(lo, 17):
                n = hi - lo + 1
                assert V[k, lo - 1, hi - 1] == pytest.approx(min(n, 2 ** k - 1) / n)


def test_reference_policies_closed_forms():
    assert ns.exact_J(ns.uniform_policy()) == pytest.approx(1 - (15 / 16) ** 4)
    assert ns.exact_J(ns.linear_scan_policy()) == pytest.approx(4 / 16)
    assert 0.3 < ns.exact_J(ns.policy_probs(ns.weak_prior())) < 0.6       # weak, not optimal


def test_exact_J_matches_enumeration_of_histories():
    pi = sparse_random_policy(np.random.default_rng(1))
    per = ns.exact_J(pi, per_target=True)
    for x in (1, 7, 11, 16):
        assert per[x - 1] == pytest.approx(enumerate_win_prob(pi, x), abs=1e-12)


def test_exact_J_matches_monte_carlo():
    rng = np.random.default_rng(2)
    pi = ns.policy_probs(ns.weak_prior())
    R = ns.rollout(pi, rng.integers(1, 17, size=200_000), rng).reward
    assert abs(R.mean() - ns.exact_J(pi)) < 4 * R.std() / np.sqrt(len(R))


def test_exact_grad_matches_finite_differences():
    rng = np.random.default_rng(3)
    theta = ns.weak_prior() + rng.normal(size=(ns.S, ns.A))
    g = ns.exact_grad(theta)
    h = 1e-5
    for lo, hi, left, a in [(1, 16, 4, 7), (1, 16, 4, 0), (9, 16, 3, 11), (9, 11, 2, 9), (1, 7, 3, 3)]:
        e = np.zeros_like(theta)
        e[ns.state_index(lo, hi, left), a] = h
        assert g[ns.state_index(lo, hi, left), a] == pytest.approx(
            (J_of(theta + e) - J_of(theta - e)) / (2 * h), rel=1e-5, abs=1e-10)
    d = rng.normal(size=theta.shape)
    assert np.sum(g * d) == pytest.approx((J_of(theta + h * d) - J_of(theta - h * d)) / (2 * h), rel=1e-5)


def test_per_target_gradients_match_finite_differences_and_average_to_the_gradient():
    rng = np.random.default_rng(4)
    theta = ns.weak_prior() + rng.normal(size=(ns.S, ns.A))
    per = ns.exact_grad(theta, per_target=True)                     # (N, S, A)
    assert per.shape == (ns.N, ns.S, ns.A)
    assert np.allclose(per.mean(axis=0), ns.exact_grad(theta), atol=1e-15)
    d, h = rng.normal(size=theta.shape), 1e-5
    fd = (ns.exact_J(ns.policy_probs(theta + h * d), per_target=True)
          - ns.exact_J(ns.policy_probs(theta - h * d), per_target=True)) / (2 * h)    # (N,)
    assert np.allclose(np.tensordot(per, d, axes=2), fd, rtol=1e-5, atol=1e-10)


def test_weighted_gradients_are_weighted_means_of_the_per_target_gradients():
    rng = np.random.default_rng(5)
    theta = ns.weak_prior() + rng.normal(size=(ns.S, ns.A))
    per = ns.exact_grad(theta, per_target=True)                     # (N, S, A), the reference
    w = rng.uniform(0.5, 3.0, size=ns.N)
    assert np.allclose(ns.exact_grad(theta, weights=w), np.tensordot(w, per, axes=1) / ns.N, atol=1e-15)
    two = ns.exact_grad(theta, weights=np.stack([np.ones(ns.N), w]))             # (W, S, A) in one call
    assert two.shape == (2, ns.S, ns.A)
    assert np.array_equal(two[0], ns.exact_grad(theta))            # all ones: ∇J itself, bit for bit
    assert np.allclose(two[1], ns.exact_grad(theta, weights=w), atol=1e-15)


def test_start_J_of_a_stack_is_exact_J_of_each_table():
    rng = np.random.default_rng(6)
    pis = np.stack([ns.policy_probs(ns.weak_prior() + rng.normal(size=(ns.S, ns.A))) for _ in range(3)])
    got = ns.exact.win_probs(pis)                                      # (3, N)
    for pi, g in zip(pis, got):
        assert np.array_equal(g, ns.exact_J(pi, per_target=True))


def test_optimal_action_values_by_playing_each_guess_then_binary_search():
    """Q*(s, g) by hand: guess g in s, then binary search (optimal) from wherever it leads."""
    Q, V = ns.optimal_action_values(), ns.optimal_values()
    for lo, hi, left in [(1, 16, 4), (9, 16, 3), (1, 7, 3), (9, 11, 2), (4, 4, 1), (3, 12, 2)]:
        s = ns.state_index(lo, hi, left)
        assert Q[s].max() == pytest.approx(V[left, lo - 1, hi - 1])
        for g in range(1, 17):
            pi = ns.binary_search_policy()
            pi[s] = np.eye(16)[g - 1]
            assert Q[s, g - 1] == pytest.approx(ns.exact_J(pi, start=(lo, hi, left)), abs=1e-12)
    assert np.allclose(Q[ns.state_index(1, 16, 4)], ns.opening_ceilings())


def test_regret_by_guess_sums_to_the_gap_and_lands_where_the_mistake_is():
    pi = ns.policy_probs(ns.weak_prior() + np.random.default_rng(5).normal(size=(ns.S, ns.A)))
    r = ns.regret_by_guess(pi)
    assert r.shape == (ns.T,) and np.all(r >= -1e-15)
    assert r.sum() == pytest.approx(15 / 16 - ns.exact_J(pi), abs=1e-12)
    assert np.allclose(ns.regret_by_guess(ns.binary_search_policy()), 0)
    bad_open = ns.binary_search_policy()
    bad_open[ns.state_index(1, 16, 4)] = np.eye(16)[3]             # open with 4, then optimal
    assert np.allclose(ns.regret_by_guess(bad_open), [15 / 16 - 11 / 16, 0, 0, 0])
    bad_second = ns.binary_search_policy()                          # 8 → higher → 11 instead of 12
    bad_second[ns.state_index(9, 16, 3)] = np.eye(16)[10]
    r2 = ns.regret_by_guess(bad_second)
    assert r2[0] == r2[2] == r2[3] == 0 and r2[1] == pytest.approx(15 / 16 - ns.exact_J(bad_second))
    assert r2[1] > 0


def test_advantage_after_8_higher_12_lower():
    """Uniform on {9,10,11} with 2 guesses left, then (with 1 left) any feasible guess:
    Q(10) = 1, Q(11) = 1/3 + 2/3 · 1/2 = 2/3, V = (1 + 2/3 + 2/3)/3 = 7/9."""
    traj = ns.replay([[8, 12]], 10)                     # a history prefix h
    assert tuple(int(v) for v in ns.state_of(traj.states[0, 1])) == (9, 16, 3)
    assert ns.state_after([8, 12], 10) == (9, 11, 2)
    Q, V, A = ns.action_values(ns.uniform_feasible_policy(), 9, 11, 2)
    assert V == pytest.approx(7 / 9)
    assert A[10 - 1] == pytest.approx(2 / 9) and A[10 - 1] > 0
    assert A[11 - 1] == pytest.approx(-1 / 9) and A[11 - 1] < 0
    assert Q[13 - 1] == pytest.approx(1 / 3)            # 13 is already excluded: a wasted guess


def test_select_concat_and_mid_game_start():
    traj = ns.replay([[8, 12, 10, 11], [1, 2, 3, 4], [11]], 11)
    kept = traj.select(traj.reward == 1)
    assert len(kept) == 2 and list(kept.length) == [4, 1]
    both = ns.Trajectories.concat([kept, traj.select([1])])
    assert list(both.reward) == [1, 1, 0]
    # a game started at "9..11 with 2 guesses left": binary search guesses 10, then wins
    mid = ns.rollout(ns.binary_search_policy(), [9, 10, 11], np.random.default_rng(0), start=(9, 11, 2))
    assert list(mid.reward) == [1, 1, 1] and list(mid.guesses[:, 0]) == [10, 10, 10]
    assert ns.exact_J(ns.binary_search_policy(), start=(9, 11, 2)) == pytest.approx(1.0)


def test_opening_ceilings_by_hand_and_by_playing_binary_search_after_each_opening():
    ceil = ns.opening_ceilings()
    assert ceil[7] == ceil[8] == 15 / 16 and ceil[3] == 11 / 16 and ceil[0] == 8 / 16   # 1 + 7 of 15
    assert np.allclose(ceil, ceil[::-1])
    s0 = ns.state_index(1, 16, 4)
    for g in range(1, 17):
        pi = ns.binary_search_policy()
        pi[s0] = np.eye(16)[g - 1]                                  # open with g, then binary search
        assert ns.exact_J(pi) == pytest.approx(ceil[g - 1])


def test_state_values_match_action_values():
    pi = ns.policy_probs(ns.weak_prior())
    V = ns.state_values(pi)
    for lo, hi, left in [(1, 16, 4), (9, 11, 2), (5, 5, 1), (3, 12, 3), (10, 16, 1)]:
        assert V[ns.state_index(lo, hi, left)] == pytest.approx(ns.action_values(pi, lo, hi, left)[1])
    assert V[ns.state_index(1, 16, 4)] == pytest.approx(ns.exact_J(pi))


def test_openings_of_known_policies():
    g, p = ns.openings(ns.weak_prior())
    assert g == 1 and p == pytest.approx(ns.policy_probs(ns.weak_prior())[ns.state_index(1, 16, 4)].max())
    theta = np.zeros((ns.S, ns.A))
    theta[ns.state_index(1, 16, 4), 7] = 50.0                          # opens with 8 almost surely
    g, p = ns.openings(np.stack([theta, ns.weak_prior()]))
    assert list(g) == [8, 1] and p[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="thetas"):
        ns.openings(np.zeros((3, 16)))


def test_bad_inputs_raise_value_error():
    rng = np.random.default_rng(0)
    pi = ns.uniform_policy()
    with pytest.raises(ValueError, match="target"):
        ns.rollout(pi, [0, 5], rng)
    with pytest.raises(ValueError, match="target"):
        ns.rollout(pi, [17], rng)
    with pytest.raises(ValueError, match="pi"):
        ns.rollout(pi[:10], [3], rng)
    with pytest.raises(ValueError, match="pi"):
        ns.exact_J(2 * pi)
    with pytest.raises(ValueError, match="theta"):
        ns.policy_probs(np.zeros((16, 16)))
    with pytest.raises(ValueError, match="temperature"):
        ns.policy_probs(np.zeros((ns.S, ns.A)), temperature=0)
    traj = ns.replay([[8, 12, 10, 11]], 11)
    with pytest.raises(ValueError, match="guess_seqs"):
        ns.replay([[1, 2, 3, 4, 5]], 11)
    with pytest.raises(ValueError, match="guess_seqs"):
        ns.replay([[8, 0]], 11)                        # not a number 1..16
    with pytest.raises(ValueError, match="guess_seqs"):
        ns.replay([[11, 3]], 11)                       # a guess after the hit
    with pytest.raises(ValueError, match="start"):
        ns.rollout(pi, [3], rng, start=(5, 16, 4))


def test_off_path_against_a_loop_over_games():
    demos = ns.rollout(ns.binary_search_policy(), np.arange(1, 17), np.random.default_rng(0))
    path = np.unique(demos.states[demos.mask])
    theta = ns.weak_prior()
    share, on_win, off_win = ns.off_path(theta, path, n=500, seed=3)
    rng = np.random.default_rng(3)                                    # the same games, replayed
    games = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=500), rng)
    left = [any(games.mask[i, t] and games.states[i, t] not in set(path) for t in range(4)) for i in range(500)]
    assert share == pytest.approx(sum(left) / 500)
    assert on_win == pytest.approx(np.mean([games.reward[i] for i in range(500) if not left[i]]))
    assert off_win == pytest.approx(np.mean([games.reward[i] for i in range(500) if left[i]]))
    share, on_win, off_win = ns.off_path(np.zeros((ns.S, ns.A)), np.arange(ns.S), n=50)   # nothing is off the path
    assert share == 0 and 0 <= on_win <= 1 and np.isnan(off_win)


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_RNG = np.random.default_rng(0)
_PI = ns.uniform_policy()
_TH = np.zeros((ns.S, ns.A))
_TRAJ = ns.replay([[8, 12, 10, 11], [8, 4]], [11, 3])
BAD_INPUTS = [
    (ns.state_index, (0, 16, 4), {}, "lo"),
    (ns.state_index, (1, 17, 4), {}, "hi"),
    (ns.state_index, (1, 16, 5), {}, "left"),
    (ns.state_index, (1.5, 16, 4), {}, "lo"),
    (ns.state_index, ([1, 2], [16, 16, 16], 4), {}, "lo"),
    (ns.state_of, (ns.S,), {}, "s"),
    (ns.state_of, (-1,), {}, "s"),
    (ns.state_of, ("3",), {}, "s"),
    (ns.feedback_for, (8, 0), {}, "target"),
    (ns.feedback_for, (8.5, 3), {}, "guess"),
    (ns.feedback_for, ([1, 2], [3, 4, 5]), {}, "guess"),
    (ns.narrow, (1, 16, 8, 7), {}, "fb"),
    (ns.narrow, (1, 16, None, ns.HIGHER), {}, "guess"),
    (ns.rollout, (_PI, [3.7], _RNG), {}, "target"),                        # not played as 3
    (ns.rollout, (_PI, [0, 5], _RNG), {}, "target"),
    (ns.rollout, (_PI, 5, _RNG), {}, "target"),
    (ns.rollout, (_PI, [5], None), {}, "rng"),
    (ns.rollout, (_PI[:10], [3], _RNG), {}, "pi"),
    (ns.rollout, (_PI, [3], _RNG), {"start": (0, 16, 4)}, "start lo"),
    (ns.rollout, (_PI, [3], _RNG), {"start": (1, 16, 0)}, "start left"),
    (ns.rollout, (_PI, [3], _RNG), {"start": (5, 16, 4)}, "start"),
    (ns.rollout, (_PI, [3], _RNG), {"start": (1, 16)}, "start"),
    (ns.replay, ([[1, 2, 3, 4, 5]], 11), {}, "guess_seqs"),
    (ns.replay, ([[8, 0]], 11), {}, "guess_seqs"),
    (ns.replay, ([[8.5]], 11), {}, "guess_seqs"),
    (ns.replay, ([[11, 3]], 11), {}, "guess_seqs"),
    (ns.replay, ("8", 11), {}, "guess_seqs"),
    (ns.replay, ([[8]], 11.5), {}, "target"),
    (ns.replay, ([[8], [4]], [1, 2, 3]), {}, "target"),
    (ns.state_after, ([8, 17], 3), {}, "guesses"),
    (ns.state_after, ([8, 4], 0), {}, "target"),
    (ns.state_after, ([1, 2, 3, 4, 5], 9), {}, "guesses"),
    (ns.policy_probs, (np.zeros((16, 16)),), {}, "theta"),
    (ns.policy_probs, (_TH,), {"temperature": 0}, "temperature"),
    (ns.policy_probs, (_TH,), {"temperature": "1"}, "temperature"),
    (ns.greedy_policy, (np.full((ns.S, ns.A), np.nan),), {}, "theta"),
    (ns.weak_prior, (), {"in_range": None}, "in_range"),
    (ns.weak_prior, (), {"scan": np.inf}, "scan"),
    (ns.action_logprobs, (_TH, "traj"), {}, "traj"),
    (ns.action_logprobs, (_TH[:5], _TRAJ), {}, "theta"),
    (ns.exact_values, (2 * _PI,), {}, "pi"),
    (ns.exact_J, (_PI,), {"start": (0, 16, 4)}, "lo"),                      # was a wrapped index
    (ns.exact_J, (_PI,), {"start": (1, 17, 4)}, "hi"),
    (ns.exact_J, (_PI,), {"start": (1, 16, 5)}, "left"),
    (ns.exact_J, (_PI,), {"start": (9, 3, 4)}, "start"),
    (ns.exact_J, (_PI,), {"start": (1, 16.5, 4)}, "hi"),
    (ns.exact_J, (_PI,), {"per_target": "yes"}, "per_target"),
    (ns.exact_grad, (_TH[:3],), {}, "theta"),
    (ns.exact_grad, (_TH,), {"per_target": 1}, "per_target"),
    (ns.exact_grad, (_TH,), {"weights": np.ones(3)}, "weights"),
    (ns.exact_grad, (_TH,), {"weights": [np.nan] * 16}, "weights"),
    (ns.exact_grad, (_TH,), {"weights": np.ones((2, 2, 16))}, "weights"),
    (ns.exact_grad, (_TH,), {"weights": np.ones(16), "per_target": True}, "weights"),
    (ns.regret_by_guess, (_PI[:3],), {}, "pi"),
    (ns.state_visits, (-_PI,), {}, "pi"),
    (ns.action_values, (_PI, 1, 16, 0), {}, "left"),
    (ns.action_values, (_PI, 0, 16, 4), {}, "lo"),
    (ns.action_values, (_PI, 5, 4, 4), {}, "(lo, hi, left)"),
    (_TRAJ.select, ([True],), {}, "keep"),
    (_TRAJ.select, ([5],), {}, "keep"),
    (_TRAJ.text, (2,), {}, "i"),
    (ns.Trajectories.concat, ([],), {}, "trajs"),
    (ns.openings, (np.zeros((3, 4)),), {}, "thetas"),
    (ns.openings, ("theta",), {}, "thetas"),
    (ns.state_values, (_PI[:3],), {}, "pi"),
    (ns.off_path, (_TH, [ns.S]), {}, "path_states"),
    (ns.off_path, (_TH, [1.5]), {}, "path_states"),
    (ns.off_path, (_TH, [0]), {"n": 0}, "n"),
    (ns.off_path, (_TH, [0]), {"seed": -1}, "seed"),
    (ns.off_path, (_TH[:3], [0]), {}, "theta"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_the_package_re_exports_the_game_and_its_exact_answers():
    from toy.numsearch import exact, game
    assert ns.rollout is game.rollout and ns.exact_J is exact.exact_J and ns.N == game.N == 16
    assert all(not n.startswith("_") and getattr(ns, n) is getattr(game, n) for n in game.__all__)
    assert all(not n.startswith("_") and getattr(ns, n) is getattr(exact, n) for n in exact.__all__)
