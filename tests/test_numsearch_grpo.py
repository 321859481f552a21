"""§9–§10 additions: group statistics against closed forms / Monte Carlo, and the two checkers."""
import numpy as np
import pytest

from toy import numsearch as ns, numsearch_train as nt, rl
from toy.check import part1_numsearch as check_ns


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
        mc = np.mean(np.mean(nt.pg_weights(R, method) * g, axis=1))
        assert mc == pytest.approx(float(nt.group_update_size(p, G, method)), rel=0.02)


def test_group_update_rejects_bad_input():
    with pytest.raises(ValueError, match="method"):
        nt.group_update_size(0.5, 8, "rest")
    with pytest.raises(ValueError, match="G"):
        nt.group_update_size(0.5, 1)
    with pytest.raises(ValueError, match="p"):
        nt.degenerate_probability(1.5, 4)


def test_grpo_advantages_checker(capsys):
    check_ns.grpo_advantages(rl.grpo_advantages)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.grpo_advantages(lambda R: (np.asarray(R) - np.mean(R)) / (np.std(R) + 1e-4))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "within each group" in out
    check_ns.grpo_advantages(rl.dr_grpo_advantages)
    assert "Dr. GRPO" in capsys.readouterr().out
    check_ns.grpo_advantages(lambda R: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_dr_grpo_token_weights_checker(capsys):
    def right(R, m):
        G, T = np.shape(m)
        return np.asarray(m) * (R - np.mean(R))[:, None] / (G * T)

    check_ns.dr_grpo_token_weights(right)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.dr_grpo_token_weights(
        lambda R, m: nt.loss_coefficients(m, "grpo") * rl.dr_grpo_advantages(R)[:, None])
    assert "1/|y_j|" in capsys.readouterr().out
    check_ns.dr_grpo_token_weights(lambda R, m: None)
    assert "None" in capsys.readouterr().out
