"""The Part III checkers accept right answers and reject wrong ones (never raise)."""
import numpy as np

from toy.check import part3 as check


def right(p, G):
    p = np.asarray(p, dtype=float)
    return p ** G + (1 - p) ** G


def test_degenerate_prob_accepts_enumeration_and_rejects_half_of_it(capsys):
    def enumerated(p, G, kinds=("all right", "all wrong")):
        """P(all right) and P(all wrong), answer by answer (elementwise on arrays of p)."""
        right, wrong = np.ones_like(np.asarray(p, float)), np.ones_like(np.asarray(p, float))
        for _ in range(G):
            right, wrong = right * p, wrong * (1 - np.asarray(p, float))
        return ("all right" in kinds) * right + ("all wrong" in kinds) * wrong

    check.degenerate_prob(enumerated)
    assert capsys.readouterr().out == "✓ all 6 cases pass\n"
    check.degenerate_prob(lambda p, G: enumerated(p, G, kinds=("all right",)))
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'p = 0.5, G = 2': expected 0.5, got 0.25") and "two fair coins" in out
    check.degenerate_prob(lambda p, G: enumerated(p, G) if G != 32 else enumerated(p, 31))
    assert "case 'p = 0.3, G = 32': expected 1.104e-05, got 1.578e-05" in capsys.readouterr().out   # 0.7^32, 0.7^31


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
