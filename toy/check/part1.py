"""Checkers for Part I's code exercises."""
import numpy as np

from .. import bandit
from ._core import Case, run_cases

__all__ = ["bandit_estimates", "optimal_baseline"]


def bandit_estimates(fn):
    """Exercise: ``fn(p, action, b)`` returns the single-sample estimate (R − b)·d/dθ log π(a)
    for the two-armed bandit with P(A) = p (action 0 = A, reward 1; action 1 = B, reward 0)."""
    cases = []
    for p, b in [(0.25, 0.0), (0.25, 0.5), (0.9, 0.5), (0.6, 0.1)]:
        theta = np.log(p / (1 - p))
        for a, name in [(0, "A"), (1, "B")]:
            cases.append(Case(f"p = {p}, b = {b}, action {name}", (p, a, b),
                              float(bandit.estimates(theta, a, b)),
                              hint=("for arm B the reward is 0 and d/dθ log(1 − p) = −p"
                                    if a == 1 else "for arm A the reward is 1 and d/dθ log p = 1 − p")))
    return run_cases(fn, cases, "your estimate")


def optimal_baseline(fn):
    """Exercise: ``fn(p)`` returns the variance-minimising baseline b* = E[R g²] / E[g²]."""
    cases = [Case(f"p = {p}", (p,), float(bandit.optimal_baseline(np.log(p / (1 - p)))),
                  hint="E[g²] sums over both arms: p(1−p)² + (1−p)p²; only arm A has R = 1")
             for p in (0.25, 0.9, 0.5, 0.03)]
    return run_cases(fn, cases, "your baseline")
