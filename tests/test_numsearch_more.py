"""Additions for Part I §6–§7: the REINFORCE estimate and its exercise checkers.

References: exact enumeration of ∇J (ns.exact_grad), a naive per-step loop, Monte Carlo.
"""
import numpy as np

from toy import numsearch as ns
from toy import numsearch_train as nt
from toy.check import part1_numsearch as check_ns


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


def test_reinforce_estimate_is_unbiased():
    """The mean over many games approaches the exact gradient (in the start state, where it is largest)."""
    rng = np.random.default_rng(1)
    theta = ns.weak_prior()
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=200_000), rng)
    s0 = ns.state_index(1, 16, 4)
    est, exact = nt.reinforce_estimate(theta, traj)[s0], ns.exact_grad(theta)[s0]
    assert np.abs(est - exact).max() < 0.01 < np.abs(exact).max()


def test_reinforce_estimate_weights():
    rng = np.random.default_rng(2)
    theta = ns.weak_prior()
    traj = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=20), rng)
    w = rng.normal(size=20)
    assert np.allclose(nt.reinforce_estimate(theta, traj, w), -nt.weighted_logprob_loss(theta, traj, w)[1])


def right_loss(logp, m, R):
    return -float(np.sum(np.asarray(R)[:, None] * m * logp)) / len(R)


def right_estimate(theta, traj):
    return naive_reinforce(theta, traj)


def test_masked_pg_loss_checker(capsys):
    check_ns.masked_pg_loss(right_loss)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.masked_pg_loss(lambda logp, m, R: -float(np.sum(np.asarray(R)[:, None] * logp)) / len(R))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "mask" in out
    check_ns.masked_pg_loss(lambda logp, m, R: -float(np.sum(np.asarray(R)[:, None] * m * logp)))
    assert "divide the sum by n" in capsys.readouterr().out
    check_ns.masked_pg_loss(lambda *a: None)
    assert "returned None" in capsys.readouterr().out
    check_ns.masked_pg_loss(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_reinforce_estimate_checker(capsys):
    check_ns.reinforce_estimate(right_estimate)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.reinforce_estimate(lambda th, tr: -right_estimate(th, tr))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "one-hot(a) − π" in out
    check_ns.reinforce_estimate(lambda th, tr: len(tr) * right_estimate(th, tr))
    assert "divide the sum by n" in capsys.readouterr().out
    check_ns.reinforce_estimate(lambda th, tr: np.zeros(3))
    assert "shape" in capsys.readouterr().out
