"""The Part III checkers accept right answers and reject wrong ones (never raise)."""
import math

import numpy as np

from toy.check import part3 as check


def right(p, G):
    p = np.asarray(p, dtype=float)
    return p ** G + (1 - p) ** G


def test_degenerate_prob_reference_by_enumeration():
    # enumerate all 2^G outcomes of a group for small G and count the all-equal ones
    for p in (0.0, 0.2, 0.5, 0.9):
        for G in (2, 3, 5):
            prob = sum(math.prod(p if o >> i & 1 else 1 - p for i in range(G))
                       for o in range(2 ** G) if o in (0, 2 ** G - 1))
            assert abs(right(p, G) - prob) < 1e-12


def test_degenerate_prob(capsys):
    check.degenerate_prob(right)
    assert capsys.readouterr().out.startswith("✓")
    check.degenerate_prob(lambda p, G: np.asarray(p) ** G)                 # forgets all-wrong groups
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check.degenerate_prob(lambda p, G: p ** G + (1 - p) ** G if np.isscalar(p) else 1 / 0)
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    check.degenerate_prob(lambda p, G: None)
    assert "returned None" in capsys.readouterr().out
