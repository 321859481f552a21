"""The §4 clipping checkers accept right answers and reject wrong ones (never raise)."""
import numpy as np

from toy import rl
from toy.check import part2 as check


def right_cap(p_old, eps):
    return np.minimum(np.asarray(p_old) * (1 + eps), 1.0)


def test_clip_cap_expects_the_lecture_worked_answer(capsys):
    # lecture exercise 4: 0.02 → 0.024 (ε = 0.2), 0.0256 (ε_high = 0.28); 0.8 → 0.96
    def loop_cap(p_old, eps):                                     # one scalar at a time
        p, e = np.broadcast_arrays(np.asarray(p_old, float), np.asarray(eps, float))
        return np.array([min(pi * (1 + ei), 1.0) for pi, ei in zip(p.ravel(), e.ravel())]).reshape(p.shape)

    check.clip_cap(loop_cap)
    assert capsys.readouterr().out == "✓ all 6 cases pass\n"
    check.clip_cap(lambda p, e: np.minimum(np.asarray(p) * (1 - e), 1.0))     # the lower clip
    assert "case 'p_old = 0.02, ε = 0.2': expected 0.024, got 0.016" in capsys.readouterr().out
    check.clip_cap(lambda p, e: np.minimum(np.asarray(p) * 1.2, 1.0))         # ignores ε
    assert "case 'p_old = 0.02, ε_high = 0.28': expected 0.0256, got 0.024" in capsys.readouterr().out
    check.clip_cap(lambda p, e: np.where(np.asarray(p) > 0.5, 0.8, np.asarray(p) * (1 + e)))
    assert "case 'p_old = 0.8, ε = 0.2': expected 0.96, got 0.8" in capsys.readouterr().out


def test_clip_cap(capsys):
    check.clip_cap(right_cap)
    assert capsys.readouterr().out.startswith("✓")
    check.clip_cap(lambda p, e: np.asarray(p) * (1 + e))          # forgets that π ≤ 1
    out = capsys.readouterr().out
    assert out.startswith("✗") and "1.024" in out and "hint" in out
    check.clip_cap(lambda p, e: min(p * (1 + e), 1))              # scalar-only min
    assert "np.minimum" in capsys.readouterr().out
    check.clip_cap(lambda p, e: None)
    assert "returned None" in capsys.readouterr().out


def fd_grad(ratio, adv, eps, h=1e-6):
    """Central finite differences of toy.rl.clipped_surrogate in ρ (an independent reference)."""
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, float), np.asarray(adv, float))
    return (rl.clipped_surrogate(ratio + h, adv, eps) - rl.clipped_surrogate(ratio - h, adv, eps)) / (2 * h)


def test_clipped_grad_accepts_finite_differences(capsys):
    check.clipped_grad(fd_grad)
    assert capsys.readouterr().out.startswith("✓")


def test_clipped_grad_rejects_symmetric_clipping(capsys):
    # a common slip: zero gradient whenever ρ is outside [1 − ε, 1 + ε], whatever the sign of A
    check.clipped_grad(lambda r, a, e: np.where((r > 1 + e) | (r < 1 - e), 0.0, a * np.ones_like(r)))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check.clipped_grad(lambda r, a, e: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
