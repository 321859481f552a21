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
    out = capsys.readouterr().out                                        # 0.7^32, then 0.7^31
    assert "case 'p = 0.3, G = 32': expected 1.104e-05, got 1.578e-05" in out


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


def test_hard_problem_advantages_lecture_numbers(capsys):
    """Lecture exercise 3's worked answer: GRPO +2.65 / −0.38, Dr. GRPO +0.875 / −0.125."""
    check.hard_problem_advantages([2.65] + [-0.38] * 7, [0.875] + [-0.125] * 7)
    out = capsys.readouterr().out
    assert out.count("✓") == 2 and "✗" not in out
    check.hard_problem_advantages([2.78] + [-0.40] * 7, [0.875] + [-0.125] * 7)   # sample std
    assert "✗ GRPO's advantages" in capsys.readouterr().out


def test_per_token_weights_lecture_numbers(capsys):
    """Lecture exercise 4: GRPO +0.01 / −0.001 per token, Dr. GRPO ±0.001."""
    check.per_token_weights(lambda L, A, t, m: [0.01, -0.001] if (list(L), t) == ([100, 1000], "grpo")
                            else [0.001, -0.001] if list(L) == [100, 1000]
                            else np.asarray(A) / (np.asarray(L) if t == "grpo" else m))
    assert capsys.readouterr().out.startswith("✓ all 4 cases pass")
    check.per_token_weights(lambda L, A, t, m: np.asarray(A) / np.asarray(L))      # GRPO's rule for both
    assert "✗ case 'the same group, Dr. GRPO" in capsys.readouterr().out


def test_kimi_length_reward_lecture_numbers(capsys):
    """Lecture exercise 5: λ = 0.5, 0.25, 0, −0.5 → rewards +0.5, +0.25, 0, −0.5."""
    lecture = {(200, 400, 600, 1000): [0.5, 0.25, 0.0, -0.5]}

    def answer(L, c):
        if tuple(L) in lecture:
            return lecture[tuple(L)]
        if L.max() == L.min():
            return np.zeros(len(L))
        lam = 0.5 - (L - L.min()) / (L.max() - L.min())
        return np.where(c, lam, np.minimum(0, lam))
    check.kimi_length_reward(answer)
    assert capsys.readouterr().out.startswith("✓ all 4 cases pass")
    check.kimi_length_reward(lambda L, c: 0.5 - (L - L.min()) / max(L.max() - L.min(), 1))  # no min(0, λ)
    assert "✗ case 'a short wrong answer'" in capsys.readouterr().out


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
