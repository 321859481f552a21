"""Checkers for Part III's code exercises."""
import numpy as np

from ._core import Case, run_cases

__all__ = ["degenerate_prob"]


def degenerate_prob(fn):
    """Exercise (§3, lecture exercise 7(c)): ``fn(p, G)`` returns the probability that a group
    of G independent answers, each right with probability p, is all right or all wrong:
    p^G + (1 − p)^G. It must work elementwise on arrays of p."""
    def ref(p, G):
        p = np.asarray(p, dtype=float)
        return p ** G + (1 - p) ** G
    indep = "the G answers are independent: P(all right) = p^G and P(all wrong) = (1 − p)^G"
    cases = [
        Case("p = 0.5, G = 2", (0.5, 2), ref(0.5, 2),
             hint="two fair coins: both heads or both tails half of the time"),
        Case("p = 0.125, G = 8", (0.125, 8), ref(0.125, 8), hint=indep),
        Case("p = 0.9, G = 8", (0.9, 8), ref(0.9, 8),
             hint="count both kinds of degenerate group, all right *and* all wrong"),
        Case("p = 0 (every answer wrong)", (0.0, 8), ref(0.0, 8),
             hint="if no answer is ever right, every group is all wrong"),
        Case("p = 0.3, G = 32", (0.3, 32), ref(0.3, 32), hint=indep, atol=1e-12),
        Case("an array of p, G = 4", (np.array([0.0, 0.25, 0.5, 1.0]), 4),
             ref(np.array([0.0, 0.25, 0.5, 1.0]), 4),
             hint="use numpy operations (p ** G) so that an array of p works elementwise"),
    ]
    return run_cases(fn, cases, "your degenerate-group probability")
