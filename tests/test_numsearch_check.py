"""The Number Search exercise checkers accept right answers and reject wrong ones (never raise)."""
import numpy as np

from toy import numsearch as ns
from toy.check import part1_numsearch as check_ns


def right_narrow(lo, hi, guess, feedback):
    if feedback == "higher":
        return max(lo, guess + 1), hi
    if feedback == "lower":
        return lo, min(hi, guess - 1)
    return lo, hi


def test_narrow_interval(capsys):
    check_ns.narrow_interval(right_narrow)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.narrow_interval(lambda lo, hi, g, f: (g + 1, hi) if f == "higher" else right_narrow(lo, hi, g, f))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check_ns.narrow_interval(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def right_logprob(theta, guesses, target):
    pi = ns.policy_probs(theta)
    return sum(np.log(pi[ns.state_index(*ns.state_after(guesses[:t], target)), g - 1])
               for t, g in enumerate(guesses))


def test_trajectory_logprob(capsys):
    check_ns.trajectory_logprob(right_logprob)
    assert capsys.readouterr().out.startswith("✓")
    # a classic slip: the state *after* the guess instead of before it
    wrong = lambda th, gs, x: sum(np.log(ns.policy_probs(th)[ns.state_index(*ns.state_after(gs[:t + 1], x)), g - 1])  # noqa: E731
                                  for t, g in enumerate(gs) if t + 1 < len(gs))
    check_ns.trajectory_logprob(wrong)
    assert capsys.readouterr().out.startswith("✗")


def test_rest_filter(capsys):
    check_ns.rest_filter(lambda r: (np.asarray(r) == 1).astype(float))
    assert capsys.readouterr().out.startswith("✓")
    check_ns.rest_filter(lambda r: None)
    assert "returned None" in capsys.readouterr().out
