"""Checkers return a Result: truthy iff every case passes, with the number of cases that pass.

Each checker is run on a right answer written here from the exercise's definition (naive loops
where toy has a vectorised version) and on a typical wrong answer whose passing cases are counted
by hand from the checker's case list (in the comment)."""
import numpy as np
import pytest

from toy import check, numsearch as ns
from toy.check import _core


def right_narrow(lo, hi, guess, feedback):
    if feedback == "higher":
        return max(lo, guess + 1), hi
    if feedback == "lower":
        return lo, min(hi, guess - 1)
    return lo, hi


narrow = right_narrow


def logprob(theta, guesses, target):                     # Σ_t log softmax(θ_{s_t})[a_t], one step at a time
    total = 0.0
    for t, g in enumerate(guesses):
        z = theta[ns.state_index(*ns.state_after(guesses[:t], target))]
        total += z[g - 1] - np.log(np.sum(np.exp(z)))
    return total


def reinforce(theta, traj):                              # a loop over episodes and steps
    g = np.zeros_like(theta)
    for i in range(len(traj)):
        for t in range(ns.T):
            if traj.mask[i, t]:
                s = traj.states[i, t]
                pi = np.exp(theta[s]) / np.exp(theta[s]).sum()
                g[s] += traj.reward[i] * (np.eye(ns.A)[traj.guesses[i, t] - 1] - pi)
    return g / len(traj)


def softmax(z):
    return np.exp(z) / np.exp(z).sum()


def kimi(L, c):
    L = np.asarray(L, float)
    if L.max() == L.min():
        return np.zeros_like(L)
    lam = 0.5 - (L - L.min()) / (L.max() - L.min())
    return np.where(c, lam, np.minimum(0.0, lam))


def clipped_grad(ratio, adv, eps):
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, float), np.asarray(adv, float))
    flat = ((adv > 0) & (ratio > 1 + eps)) | ((adv < 0) & (ratio < 1 - eps))
    return np.where(flat, 0.0, adv)


# checker, right answer, wrong answer, cases the wrong answer passes, total cases
CHECKERS = [
    (check.bandit_estimates, lambda p, a, b: (1 - b) * (1 - p) if a == 0 else b * p,
     lambda p, a, b: (1 - b) * (1 - p) if a == 0 else 0.0, 5, 8),     # arm B right only where b = 0
    (check.optimal_baseline, lambda p: 1 - p, lambda p: p, 1, 4),          # b = E[R]: right at p = 0.5
    (check.narrow_interval, narrow,                                         # no max/min: wrong only for
     lambda lo, hi, g, fb: (g + 1, hi) if fb == "higher" else (lo, g - 1) if fb == "lower" else (lo, hi),
     6, 7),                                                                 # the guess 3 below [5, 16]
    (check.trajectory_logprob, logprob,                                     # first guess only: right for
     lambda th, gs, x: logprob(th, gs[:1], x), 1, 5),                       # the one-guess game
    (check.rest_filter, lambda r: (np.asarray(r) == 1).astype(float),
     lambda r: np.zeros_like(r), 1, 3),                                     # right only if all fail
    (check.masked_pg_loss, lambda logp, m, R: -np.sum(R[:, None] * m * logp) / len(R),
     lambda logp, m, R: -np.sum(R[:, None] * logp) / len(R), 1, 4),         # no mask: right when R = 0
    (check.reinforce_estimate, reinforce,
     lambda th, traj: -reinforce(th, traj), 1, 4),                          # sign flip: right when R = 0
    (check.grpo_advantages,
     lambda R: (R - R.mean(1, keepdims=True)) / (R.std(1, keepdims=True) + 1e-4),
     lambda R: (R - R.mean()) / (R.std() + 1e-4), 1, 5),                   # whole batch: right for B = 1
    (check.dr_grpo_token_weights,
     lambda R, m: m * (R - R.mean())[:, None] / m.size,
     lambda R, m: m * (R - R.mean())[:, None] / m.size + 1, 0, 3),
    (check.expected_tries, lambda p, N: float(N) if p == 0 else (1 - (1 - p) ** N) / p,
     lambda p, N: (1 - (1 - p) ** N) / p, 5, 6),                            # raises at p = 0
    (check.softmax_log_grad, lambda z, a: np.eye(len(z))[a] - softmax(z),
     lambda z, a: np.eye(len(z))[a] - 1 / len(z), 1, 4),                    # uniform π: right for z = 0
    (check.clip_cap, lambda p, e: np.minimum(np.asarray(p) * (1 + e), 1.0),
     lambda p, e: np.asarray(p) * (1 + e), 4, 6),                           # > 1 for 0.8·1.28 and 0.9·1.2
    (check.clipped_grad, clipped_grad,                                      # never clipped: right for A = 0
     lambda r, a, e: np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))[1], 2, 5),
    (check.dynamic_sampling_groups,                                         # and the mixed-sign case
     lambda p, G, n: n / (1 - np.mean(np.asarray(p) ** G + (1 - np.asarray(p)) ** G)),
     lambda p, G, n: n / (1 - np.mean(p) ** G - (1 - np.mean(p)) ** G), 3, 5),   # right for scalar p
    (check.degenerate_prob, lambda p, G: np.asarray(p) ** G + (1 - np.asarray(p)) ** G,
     lambda p, G: np.asarray(p) ** G, 1, 6),                                # (1 − p)^G < atol: p = 0.9, G = 8
    (check.per_token_weights,
     lambda L, A, t, m: np.asarray(A, float) / (np.asarray(L, float) if t == "grpo" else m),
     lambda L, A, t, m: np.asarray(A, float) / np.asarray(L, float), 2, 4),    # GRPO's rule: right for GRPO
    (check.kimi_length_reward, kimi,
     lambda L, c: 0.5 - (L - L.min()) / max(L.max() - L.min(), 1), 1, 4),     # no min(0, λ): right when the
    (check.score_vectors, lambda p: np.eye(len(p)) - np.asarray(p),           # wrong answers are the longest
     lambda p: np.eye(len(p)), 0, 4),                                        # forgot −π: never right
    (check.baseline_scale, lambda G, m: (G - 1) / G if m == "mean" else 1.0,
     lambda G, m: (G - 1) / G, 3, 5),                                        # shrinks RLOO too
    (check.clip_objective_grad,
     lambda r, a, e: (np.minimum(r * a, np.clip(r, 1 - e, 1 + e) * a), clipped_grad(r, a, e)),
     lambda r, a, e: (np.minimum(r * a, np.clip(r, 1 - e, 1 + e) * a), np.full(np.shape(r), a)),
     0, 3),                                                                  # never flat: every case clips
    (check.pass_at_k_single, lambda p, k: 1 - (1 - np.asarray(p)) ** k,
     lambda p, k: np.asarray(p) * k, 1, 4),                                  # linear: right only for k = 1
    (check.sequence_ratio, lambda lp, old, m: np.exp(((lp - old) * m).sum(1) / m.sum(1)),
     lambda lp, old, m: np.exp(((lp - old) * m).sum(1)), 1, 4),             # the product: right when it is 1
]                                                                           # wrong answers are the longest

# checkers of values rather than functions: (checker, right values, wrong values, cases right, total)
VALUE_CHECKERS = [
    (check.hard_problem_advantages, ([2.6458] + [-0.378] * 7, [0.875] + [-0.125] * 7),
     ([2.7775] + [-0.3968] * 7, [0.875] + [-0.125] * 7), 1, 2),           # sample std: Dr. GRPO's right
]


def test_every_checker_is_covered():
    from toy.check import part1, part1_numsearch, part2, part3
    exported = part1.__all__ + part1_numsearch.__all__ + part2.__all__ + part3.__all__
    assert sorted(c[0].__name__ for c in CHECKERS + VALUE_CHECKERS) == sorted(exported)


@pytest.mark.parametrize("checker, right, wrong, n_wrong, total", VALUE_CHECKERS,
                         ids=[c[0].__name__ for c in VALUE_CHECKERS])
def test_value_checkers_count_cases(checker, right, wrong, n_wrong, total, capsys):
    ok = checker(*right)
    assert ok and (ok.passed, ok.total) == (total, total) and "✗" not in capsys.readouterr().out
    bad = checker(*wrong)
    assert not bad and (bad.passed, bad.total) == (n_wrong, total) and "✗" in capsys.readouterr().out


@pytest.mark.parametrize("checker, right, wrong, n_wrong, total", CHECKERS,
                         ids=[c[0].__name__ for c in CHECKERS])
def test_result_counts_right_and_wrong_answers(checker, right, wrong, n_wrong, total, capsys):
    ok = checker(right)
    printed = capsys.readouterr().out
    assert ok and (ok.passed, ok.total) == (total, total)
    assert printed == ok.message + "\n" and ok.message == f"✓ all {total} cases pass"
    bad = checker(wrong)
    printed = capsys.readouterr().out
    assert not bad and (bad.passed, bad.total) == (n_wrong, total)
    assert printed == bad.message + "\n" and bad.message.startswith("✗ case '")
    none = checker(lambda *args: None)
    assert not none and (none.passed, none.total) == (0, total) and "returned None" in none.message
    capsys.readouterr()


def test_not_a_function_scores_zero(capsys):
    r = check.grpo_advantages(None)
    assert not r and (r.passed, r.total) == (0, 5) and "must be a function" in capsys.readouterr().out


def test_result_displays_nothing_in_jupyter():
    from IPython.core.formatters import DisplayFormatter
    r = _core.Result(3, 3, "✓ all 3 cases pass")
    assert DisplayFormatter().format(r) == ({}, {})
    assert not _core.Result(0, 0, "no cases")


# ==== Part II checkers (toy.check.part2)
from toy import rl  # noqa: E402
from toy.check import part2 as check_part2  # noqa: E402


def right_cap(p_old, eps):
    return np.minimum(np.asarray(p_old) * (1 + eps), 1.0)


def test_clip_cap_expects_the_lecture_worked_answer(capsys):
    # lecture exercise 4: 0.02 → 0.024 (ε = 0.2), 0.0256 (ε_high = 0.28); 0.8 → 0.96
    def loop_cap(p_old, eps):                                     # one scalar at a time
        p, e = np.broadcast_arrays(np.asarray(p_old, float), np.asarray(eps, float))
        return np.array([min(pi * (1 + ei), 1.0) for pi, ei in zip(p.ravel(), e.ravel())]).reshape(p.shape)

    check_part2.clip_cap(loop_cap)
    assert capsys.readouterr().out == "✓ all 6 cases pass\n"
    check_part2.clip_cap(lambda p, e: np.minimum(np.asarray(p) * (1 - e), 1.0))     # the lower clip
    assert "case 'p_old = 0.02, ε = 0.2': expected 0.024, got 0.016" in capsys.readouterr().out
    check_part2.clip_cap(lambda p, e: np.minimum(np.asarray(p) * 1.2, 1.0))         # ignores ε
    assert "case 'p_old = 0.02, ε_high = 0.28': expected 0.0256, got 0.024" in capsys.readouterr().out
    check_part2.clip_cap(lambda p, e: np.where(np.asarray(p) > 0.5, 0.8, np.asarray(p) * (1 + e)))
    assert "case 'p_old = 0.8, ε = 0.2': expected 0.96, got 0.8" in capsys.readouterr().out


def test_clip_cap(capsys):
    check_part2.clip_cap(right_cap)
    assert capsys.readouterr().out.startswith("✓")
    check_part2.clip_cap(lambda p, e: np.asarray(p) * (1 + e))          # forgets that π ≤ 1
    out = capsys.readouterr().out
    assert out.startswith("✗") and "1.024" in out and "hint" in out
    check_part2.clip_cap(lambda p, e: min(p * (1 + e), 1))              # scalar-only min
    assert "np.minimum" in capsys.readouterr().out
    check_part2.clip_cap(lambda p, e: None)
    assert "returned None" in capsys.readouterr().out


def fd_grad(ratio, adv, eps, h=1e-6):
    """Central finite differences of toy.rl.clipped_surrogate in ρ (an independent reference)."""
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, float), np.asarray(adv, float))
    return (rl.clipped_surrogate(ratio + h, adv, eps) - rl.clipped_surrogate(ratio - h, adv, eps)) / (2 * h)


def test_clipped_grad_accepts_finite_differences(capsys):
    check_part2.clipped_grad(fd_grad)
    assert capsys.readouterr().out.startswith("✓")


def test_clipped_grad_rejects_symmetric_clipping(capsys):
    # a common slip: zero gradient whenever ρ is outside [1 − ε, 1 + ε], whatever the sign of A
    check_part2.clipped_grad(lambda r, a, e: np.where((r > 1 + e) | (r < 1 - e), 0.0, a * np.ones_like(r)))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check_part2.clipped_grad(lambda r, a, e: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_dynamic_sampling_checker(capsys):
    """The §5 exercise checker (toy.check_part2.dynamic_sampling_groups) accepts the closed form and
    explains the usual mistakes."""
    def right(p, G, n):
        p = np.asarray(p, dtype=float)
        return n / (1 - np.mean(p ** G + (1 - p) ** G))

    check_part2.dynamic_sampling_groups(right)
    assert capsys.readouterr().out.startswith("✓")
    check_part2.dynamic_sampling_groups(lambda p, G, n: n / (1 - np.mean(np.asarray(p, float)) ** G))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check_part2.dynamic_sampling_groups(lambda p, G, n: None)
    assert "None" in capsys.readouterr().out
    check_part2.dynamic_sampling_groups(lambda p, G, n: right(p, G, n) if G == 2 else 0.0)
    out = capsys.readouterr().out                                        # the lecture's exercise 5: ≈ 28
    assert "lecture (b): p = 0.9, G = 8, 16 groups': expected 28.09" in out


# ==== the Number Search checkers (toy.check.part1_numsearch): right answers pass, typical
# mistakes get their hint, nothing raises
from toy.check import part1_numsearch as check_ns  # noqa: E402


def test_narrow_interval(capsys):
    check_ns.narrow_interval(right_narrow)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.narrow_interval(lambda lo, hi, g, f: (g + 1, hi) if f == "higher" else right_narrow(lo, hi, g, f))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check_ns.narrow_interval(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_trajectory_logprob(capsys):
    check_ns.trajectory_logprob(logprob)
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


def right_loss(logp, m, R):
    return -float(np.sum(np.asarray(R)[:, None] * m * logp)) / len(R)


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
    check_ns.reinforce_estimate(reinforce)
    assert capsys.readouterr().out.startswith("✓")
    check_ns.reinforce_estimate(lambda th, tr: -reinforce(th, tr))
    out = capsys.readouterr().out
    assert out.startswith("✗") and "one-hot(a) − π" in out
    check_ns.reinforce_estimate(lambda th, tr: len(tr) * reinforce(th, tr))
    assert "divide the sum by n" in capsys.readouterr().out
    check_ns.reinforce_estimate(lambda th, tr: np.zeros(3))
    assert "shape" in capsys.readouterr().out


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
        lambda R, m: rl.aggregate_weights(m, "grpo") * rl.dr_grpo_advantages(R)[:, None])
    assert "1/|y_j|" in capsys.readouterr().out
    check_ns.dr_grpo_token_weights(lambda R, m: None)
    assert "None" in capsys.readouterr().out


# ==== the Part III checkers (toy.check.part3): right answers pass, wrong ones get their hint, nothing raises
from toy.check import part3 as check_part3  # noqa: E402


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

    check_part3.degenerate_prob(enumerated)
    assert capsys.readouterr().out == "✓ all 6 cases pass\n"
    check_part3.degenerate_prob(lambda p, G: enumerated(p, G, kinds=("all right",)))
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'p = 0.5, G = 2': expected 0.5, got 0.25") and "two fair coins" in out
    check_part3.degenerate_prob(lambda p, G: enumerated(p, G) if G != 32 else enumerated(p, 31))
    out = capsys.readouterr().out                                        # 0.7^32, then 0.7^31
    assert "case 'p = 0.3, G = 32': expected 1.104e-05, got 1.578e-05" in out


def test_degenerate_prob(capsys):
    check_part3.degenerate_prob(right)
    assert capsys.readouterr().out.startswith("✓")
    check_part3.degenerate_prob(lambda p, G: np.asarray(p) ** G)                 # forgets all-wrong groups
    out = capsys.readouterr().out
    assert out.startswith("✗") and "hint" in out
    check_part3.degenerate_prob(lambda p, G: p ** G + (1 - p) ** G if np.isscalar(p) else 1 / 0)
    assert "raised ZeroDivisionError" in capsys.readouterr().out
    check_part3.degenerate_prob(lambda p, G: None)
    assert "returned None" in capsys.readouterr().out


def test_hard_problem_advantages_lecture_numbers(capsys):
    """Lecture exercise 3's worked answer: GRPO +2.65 / −0.38, Dr. GRPO +0.875 / −0.125."""
    check_part3.hard_problem_advantages([2.65] + [-0.38] * 7, [0.875] + [-0.125] * 7)
    out = capsys.readouterr().out
    assert out.count("✓") == 2 and "✗" not in out
    check_part3.hard_problem_advantages([2.78] + [-0.40] * 7, [0.875] + [-0.125] * 7)   # sample std
    assert "✗ GRPO's advantages" in capsys.readouterr().out


def test_per_token_weights_lecture_numbers(capsys):
    """Lecture exercise 4: GRPO +0.01 / −0.001 per token, Dr. GRPO ±0.001."""
    check_part3.per_token_weights(lambda L, A, t, m: [0.01, -0.001] if (list(L), t) == ([100, 1000], "grpo")
                            else [0.001, -0.001] if list(L) == [100, 1000]
                            else np.asarray(A) / (np.asarray(L) if t == "grpo" else m))
    assert capsys.readouterr().out.startswith("✓ all 4 cases pass")
    check_part3.per_token_weights(lambda L, A, t, m: np.asarray(A) / np.asarray(L))      # GRPO's rule for both
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
    check_part3.kimi_length_reward(answer)
    assert capsys.readouterr().out.startswith("✓ all 4 cases pass")
    check_part3.kimi_length_reward(lambda L, c: 0.5 - (L - L.min()) / max(L.max() - L.min(), 1))  # no min(0, λ)
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
    assert _verdicts(capsys, check_part3.score_vectors, lambda p: np.eye(len(p)) - p, lambda p: np.eye(len(p)),
                     lambda p: None) == ["✓", "✗", "✗"]
    assert _verdicts(capsys, check_part3.baseline_scale, lambda G, m: (G - 1) / G if m == "mean" else 1.0,
                     lambda G, m: (G - 1) / G, lambda G, m: 1.0) == ["✓", "✗", "✗"]


def test_lecture16_exercise2_checker(capsys):
    def right(r, a, e):
        r, a = np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))
        return np.minimum(r * a, np.clip(r, 1 - e, 1 + e) * a), np.where(((a > 0) & (r > 1 + e)) | ((a < 0) & (r < 1 - e)), 0.0, a)
    obj, grad = right(np.array([0.5, 1.0, 1.1, 1.5]), 2.0, 0.2)              # the lecture's worked answer
    np.testing.assert_allclose(obj, [1.0, 2.0, 2.2, 2.4])
    np.testing.assert_allclose(grad, [2, 2, 2, 0])
    no_clip_in_grad = lambda r, a, e: (right(r, a, e)[0], np.broadcast_to(a, np.shape(r)))
    assert _verdicts(capsys, check_part3.clip_objective_grad, right, no_clip_in_grad, lambda r, a, e: None,
                     lambda r, a, e: 1 / 0) == ["✓", "✗", "✗", "✗"]


def test_clip_checker_hint_names_the_ratio_that_is_wrong(capsys):
    """A clip applied on both sides of the band, whatever the sign of A, is wrong at ρ = 0.5 in the
    lecture's case (A = +2: slope 2, not 0) and at ρ = 1.5 for A = −2 (slope −2, not 0); the hint
    of the failing case must speak of that ratio (it used to speak of ρ = 1.5 for the first)."""
    def both_sides(r, a, e):                                   # the sign error: clipped whatever A's sign
        r, a = np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))
        return np.minimum(r * a, np.clip(r, 1 - e, 1 + e) * a), np.where((r < 1 - e) | (r > 1 + e), 0.0, a)

    def right_for_positive_only(r, a, e):                      # right for A > 0, both sides for A < 0
        r, a = np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))
        obj, grad = both_sides(r, a, e)
        return obj, np.where((a > 0) & (r > 1 + e), 0.0, np.where(a > 0, a, grad))

    assert not check_part3.clip_objective_grad(both_sides)
    out = capsys.readouterr().out
    assert "case 'the lecture's case" in out and "hint:" in out
    assert "ρ = 0.5 gives min(1.0, 0.8 · 2) = 1.0, slope 2" in out.split("hint:")[1]
    assert not check_part3.clip_objective_grad(right_for_positive_only)
    out = capsys.readouterr().out
    assert "case 'A = −2, ε = 0.2'" in out
    assert "ρ = 1.5 gives min(−3.0, −2.4) = −3.0, slope −2" in out.split("hint:")[1]


def test_lecture16_exercise6_checker(capsys):
    assert abs((1 - 0.9 ** 16) - 0.81) < 0.005                                 # the lecture's 0.81
    assert _verdicts(capsys, check_part3.pass_at_k_single, lambda p, k: 1 - (1 - np.asarray(p, float)) ** k,
                     lambda p, k: np.minimum(np.asarray(p) * k, 1.0), lambda p, k: p) == ["✓", "✗", "✗"]


def test_sequence_ratio_checker(capsys):
    """§III.8's exercise: GSPO's s_i, against a naive loop over each answer's own tokens; each usual
    mistake (the product of the ratios, the mean of the ratios, the padding averaged in) fails with
    its own hint."""
    rng = np.random.default_rng(0)
    logp, old = np.log(rng.uniform(0.05, 1, (4, 6))), np.log(rng.uniform(0.05, 1, (4, 6)))
    mask = (np.arange(6) < np.array([[6], [3], [1], [4]])).astype(float)
    loop = []
    for i in range(4):
        r = [np.exp(logp[i, t] - old[i, t]) for t in range(6) if mask[i, t]]
        loop.append(np.prod(r) ** (1 / len(r)))                              # the |o_i|-th root of π_θ(o)/π_old(o)
    mine = lambda lp, o, m: np.exp(((lp - o) * m).sum(1) / m.sum(1))       # noqa: E731
    np.testing.assert_allclose(mine(logp, old, mask), loop, rtol=1e-12)
    assert _verdicts(capsys, check_part3.sequence_ratio, mine) == ["✓"]
    for wrong, words in [(lambda lp, o, m: np.exp(((lp - o) * m).sum(1)), "not the product"),
                         (lambda lp, o, m: (np.exp(lp - o) * m).sum(1) / m.sum(1), "average the log-ratios"),
                         (lambda lp, o, m: np.exp((lp - o).mean(1)), "only the answer's own tokens")]:
        assert not check_part3.sequence_ratio(wrong)
        assert words in capsys.readouterr().out.split("hint:")[1]
