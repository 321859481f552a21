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


def _verdicts(capsys, checker, *fns):
    out = []
    for fn in fns:
        checker(fn)
        out.append(capsys.readouterr().out[:1])
    return out


def test_lecture16_exercise1_checkers(capsys):
    from toy import rl
    from toy.prob import softmax
    z = np.array([0.2, -0.5, 1.0])
    exact_rows = np.stack([rl.score_function_estimate(z, np.array([k]), np.array([1.0])) for k in range(3)])
    np.testing.assert_allclose(exact_rows, np.eye(3) - softmax(z))           # the reference, independently
    assert _verdicts(capsys, check.score_vectors, lambda p: np.eye(len(p)) - p, lambda p: np.eye(len(p)),
                     lambda p: None) == ["✓", "✗", "✗"]
    assert _verdicts(capsys, check.baseline_scale, lambda G, m: (G - 1) / G if m == "mean" else 1.0,
                     lambda G, m: (G - 1) / G, lambda G, m: 1.0) == ["✓", "✗", "✗"]


def test_lecture16_exercise2_checker(capsys):
    def right(r, a, e):
        r, a = np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))
        return np.minimum(r * a, np.clip(r, 1 - e, 1 + e) * a), np.where(((a > 0) & (r > 1 + e)) | ((a < 0) & (r < 1 - e)), 0.0, a)
    obj, grad = right(np.array([0.5, 1.0, 1.1, 1.5]), 2.0, 0.2)              # the lecture's worked answer
    np.testing.assert_allclose(obj, [1.0, 2.0, 2.2, 2.4])
    np.testing.assert_allclose(grad, [2, 2, 2, 0])
    no_clip_in_grad = lambda r, a, e: (right(r, a, e)[0], np.broadcast_to(a, np.shape(r)))
    assert _verdicts(capsys, check.clip_objective_grad, right, no_clip_in_grad, lambda r, a, e: None,
                     lambda r, a, e: 1 / 0) == ["✓", "✗", "✗", "✗"]


def test_lecture16_exercise6_checker(capsys):
    assert abs((1 - 0.9 ** 16) - 0.81) < 0.005                                 # the lecture's 0.81
    assert _verdicts(capsys, check.pass_at_k_single, lambda p, k: 1 - (1 - np.asarray(p, float)) ** k,
                     lambda p, k: np.minimum(np.asarray(p) * k, 1.0), lambda p, k: p) == ["✓", "✗", "✗"]
