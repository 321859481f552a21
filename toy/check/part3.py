"""Checkers for Part III's code exercises."""
import numpy as np

from ._core import Case, Result, compare, run_cases

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


__all__ += ["hard_problem_advantages", "per_token_weights", "kimi_length_reward"]


def hard_problem_advantages(grpo, dr_grpo):
    """Exercise (§4, lecture exercise 3): the advantages of the group with rewards
    [1, 0, 0, 0, 0, 0, 0, 0] under GRPO (÷ the population std) and under Dr. GRPO."""
    from .. import rl
    r = np.array([1.0] + [0.0] * 7)
    ok = [compare("GRPO's advantages", grpo, rl.grpo_advantages(r), atol=1e-2,
                  hint="(R − mean) / std with the population std √(0.125·0.875) ≈ 0.331 (ddof = 0)"),
          compare("Dr. GRPO's advantages", dr_grpo, rl.dr_grpo_advantages(r), atol=1e-2,
                  hint="Dr. GRPO only subtracts the group mean 0.125: no division by the std")]
    return Result(sum(ok), len(ok), "both advantages right" if all(ok) else "see the ✗ above")


def per_token_weights(fn):
    """Exercise (§4, lecture exercise 4): ``fn(lengths, adv, loss_type, max_len)`` returns the
    weight of each token of each answer in the loss (one number per answer): A_i/|o_i| for
    ``"grpo"``, A_i/max_len for ``"dr_grpo"``."""
    def ref(lengths, adv, loss_type, max_len):
        lengths, adv = np.asarray(lengths, float), np.asarray(adv, float)
        return adv / (lengths if loss_type == "grpo" else max_len)
    grpo_hint = "GRPO averages each answer over its own tokens: every token of answer i gets A_i / |o_i|"
    dr_hint = "Dr. GRPO divides every answer by the same constant, max_len, whatever its length"
    cases = [
        Case("lecture: right 100 tokens (A = +1), wrong 1000 (A = −1), GRPO",
             ([100, 1000], [1.0, -1.0], "grpo", 1000), ref([100, 1000], [1.0, -1.0], "grpo", 1000), grpo_hint),
        Case("the same group, Dr. GRPO (max_len = 1000)",
             ([100, 1000], [1.0, -1.0], "dr_grpo", 1000), ref([100, 1000], [1.0, -1.0], "dr_grpo", 1000), dr_hint),
        Case("four answers of lengths 10..400, GRPO", ([10, 50, 200, 400], [1.5, -0.5, 0.5, -1.5], "grpo", 400),
             ref([10, 50, 200, 400], [1.5, -0.5, 0.5, -1.5], "grpo", 400), grpo_hint),
        Case("the same four, Dr. GRPO", ([10, 50, 200, 400], [1.5, -0.5, 0.5, -1.5], "dr_grpo", 400),
             ref([10, 50, 200, 400], [1.5, -0.5, 0.5, -1.5], "dr_grpo", 400), dr_hint),
    ]
    return run_cases(fn, cases, "your per-token weights")


def kimi_length_reward(fn):
    """Exercise (§4, lecture exercise 5): ``fn(lengths, correct)`` returns Kimi k1.5's length
    reward of each answer in one group: λ = 0.5 − (len − min)/(max − min); a right answer gets
    λ, a wrong one min(0, λ); all 0 when every length is equal."""
    from .. import rl
    wrong_hint = "a wrong answer gets min(0, λ): never a bonus for being short, a penalty for being long"
    cases = [
        Case("lecture: lengths 200, 400, 600, 1000; the first two right",
             (np.array([200, 400, 600, 1000]), np.array([True, True, False, False])),
             rl.kimi_length_reward([200, 400, 600, 1000], [True, True, False, False]), wrong_hint),
        Case("a short wrong answer", (np.array([100, 300, 500]), np.array([False, True, True])),
             rl.kimi_length_reward([100, 300, 500], [False, True, True]), wrong_hint),
        Case("all the same length", (np.array([50, 50, 50]), np.array([True, False, True])),
             np.zeros(3), "when max_len = min_len every λ is 0 (no division by zero)"),
        Case("lengths in any order", (np.array([900, 100, 500, 300]), np.array([True, False, True, False])),
             rl.kimi_length_reward([900, 100, 500, 300], [True, False, True, False]),
             "λ uses the group's min and max length, not the first and last answer"),
    ]
    return run_cases(fn, cases, "your length reward")
