"""Checkers for Part III's code exercises."""
import numpy as np

from .. import rl
from ..prob import log_softmax_table_grad
from ._core import Case, Result, compare, run_cases

__all__ = ["degenerate_prob", "hard_problem_advantages", "per_token_weights", "kimi_length_reward",
           "score_vectors", "baseline_scale", "clip_objective_grad", "pass_at_k_single",
           "sequence_ratio"]


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


def hard_problem_advantages(grpo, dr_grpo):
    """Exercise (§4, lecture exercise 3): the advantages of the group with rewards
    [1, 0, 0, 0, 0, 0, 0, 0] under GRPO (÷ the population std) and under Dr. GRPO."""
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
    def ref(lengths, adv, loss_type, max_len):                # toy.rl's weights, without the 1/N
        mask = (np.arange(max_len) < np.asarray(lengths)[:, None]).astype(float)
        return rl.aggregate_weights(mask, loss_type, max_len)[:, 0] * len(mask) * np.asarray(adv, float)
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


def score_vectors(fn):
    """Exercise (§2, lecture exercise 1): ``fn(probs)`` returns the (K, K) matrix whose row z is
    ∇_θ log π_θ(z) = e_z − π for a softmax policy π = softmax(θ) over K answers (so that
    π @ S = E[∇ log π] = 0)."""
    def ref(p):                                               # row z: toy.prob's chain rule for log π(z)
        K = len(p)
        return log_softmax_table_grad(np.tile(np.asarray(p, float), (K, 1)), np.arange(K), np.arange(K), np.ones(K))
    hint = "log π(z) = θ_z − log Σ_k exp(θ_k): +1 at z, minus π_k at every k"
    cases = [Case(f"π = {p}", (np.array(p),), ref(p), hint=hint)
             for p in ([0.5, 0.5], [0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.25, 0.15], [1.0, 0.0, 0.0])]
    return run_cases(fn, cases, "your score vectors")


def baseline_scale(fn):
    """Exercise (§2, lecture exercise 1): ``fn(G, method)`` returns the factor c with
    E[(1/G) Σ_i A_i ∇ log π(z_i)] = c · ∇ E[R]: (G − 1)/G for ``method="mean"`` (the group mean,
    the sample included) and 1 for ``method="rloo"`` (the mean of the other G − 1)."""
    def ref(G, method):
        return (G - 1) / G if method == "mean" else 1.0
    own = ("the mean includes r_i / G, and E[r_i ∇ log π(z_i)] is the gradient itself, so a "
           "1/G share of it is subtracted; the other samples are independent and contribute 0")
    cases = [Case("G = 8, group mean", (8, "mean"), ref(8, "mean"), hint=own),
             Case("G = 2, group mean", (2, "mean"), ref(2, "mean"), hint=own),
             Case("G = 32, group mean", (32, "mean"), ref(32, "mean"), hint=own),
             Case("G = 8, leave-one-out", (8, "rloo"), 1.0,
                  hint="RLOO's baseline uses only the other samples, independent of z_i: no shrinking"),
             Case("G = 2, leave-one-out", (2, "rloo"), 1.0,
                  hint="RLOO's baseline uses only the other samples, independent of z_i: no shrinking")]
    return run_cases(fn, cases, "your scale factor")


def clip_objective_grad(fn):
    """Exercise (§2, lecture exercise 2): ``fn(ratio, adv, eps)`` returns ``(objective, grad)``,
    min(ρA, clip(ρ, 1−ε, 1+ε)A) and its derivative in ρ, elementwise. The lecture's case:
    A = +2, ε = 0.2, ρ = 0.5, 1.0, 1.1, 1.5 → objective 1.0, 2.0, 2.2, 2.4 and gradient 2, 2, 2, 0."""
    def ref(ratio, adv, eps):
        return np.stack([rl.clipped_surrogate(ratio, adv, eps), rl.clipped_surrogate_grad(ratio, adv, eps)])
    lecture = (np.array([0.5, 1.0, 1.1, 1.5]), 2.0, 0.2)
    negative = (np.array([0.5, 0.9, 1.0, 1.5]), -2.0, 0.2)
    cases = [Case("the lecture's case: A = +2, ε = 0.2", lecture, ref(*lecture),
                  hint="with A > 0 only ρ > 1 + ε is clipped: ρ = 0.5 gives min(1.0, 0.8 · 2) = 1.0, slope 2; "
                       "ρ = 1.5 gives min(3.0, 1.2 · 2) = 2.4, where the clipped term is flat in ρ, so the slope is 0"),
             Case("A = −2, ε = 0.2", negative, ref(*negative),
                  hint="for A < 0 the clip acts only below 1 − ε: ρ = 0.5 gives min(−1.0, −1.6) = −1.6, slope 0; "
                       "ρ = 1.5 gives min(−3.0, −2.4) = −3.0, slope −2"),
             Case("ε = 0.5, A = +1", (np.array([0.4, 1.6]), 1.0, 0.5), ref(np.array([0.4, 1.6]), 1.0, 0.5),
                  hint="the band is [1 − ε, 1 + ε]; with A > 0 nothing is clipped on the left")]

    def both(*args):
        out = fn(*args)
        return None if out is None else np.stack([np.asarray(o, dtype=float) for o in out])
    return run_cases(both, cases, "your (objective, gradient)")


def pass_at_k_single(fn):
    """Exercise (§1, lecture exercise 6): ``fn(p, k)`` returns pass@k = 1 − (1 − p)^k for a model
    whose answers are right with probability p, independently; elementwise on arrays of p."""
    def ref(p, k):
        return 1 - (1 - np.asarray(p, dtype=float)) ** k
    hint = "pass@k fails only if all k tries fail, each with probability 1 − p"
    cases = [Case("p = 0.1, k = 16", (0.1, 16), ref(0.1, 16), hint=hint),
             Case("p = 0.9, k = 16", (0.9, 16), ref(0.9, 16), hint=hint, atol=1e-15, rtol=1e-15),
             Case("k = 1 is the accuracy", (0.3, 1), 0.3, hint="with one try, pass@1 = p"),
             Case("an array of p, k = 4", (np.array([0.0, 0.25, 1.0]), 4), ref(np.array([0.0, 0.25, 1.0]), 4),
                  hint="use numpy operations so that an array of p works elementwise")]
    return run_cases(fn, cases, "your pass@k")


def sequence_ratio(fn):
    """Exercise (§8): ``fn(logp, old_logp, mask)`` returns GSPO's sequence ratio of each answer,
    s_i = exp(Σ_t m_it (log π_θ − log π_old) / Σ_t m_it): the geometric mean of the answer's token
    ratios, padding (mask 0) left out. ``logp``, ``old_logp``, ``mask``: (N, T); returns (N,)."""
    def ref(logp, old_logp, mask):
        return np.exp(rl.sequence_log_ratio(logp, old_logp, mask))
    def case(ratios, mask):                                   # token ratios → (logp, old_logp, mask)
        r, m = np.asarray(ratios, dtype=float), np.asarray(mask, dtype=float)
        old = np.log(np.full(r.shape, 0.4))
        return old + np.log(r), old, m
    geo = "s_i is the geometric mean of the token ratios: exp of the mean of log π_θ − log π_old"
    cases = []
    for name, ratios, mask, hint in [
        ("ratios 2 and 0.5", [[2.0, 0.5]], [[1, 1]],
         "the geometric mean of 2 and 0.5 is 1: average the log-ratios, not the ratios"),
        ("ten tokens, each ratio 1.02", [[1.02] * 10], [[1] * 10],
         "not the product of the ratios (that is π_θ(o)/π_old(o), which grows with the length): "
         "take its |o_i|-th root, i.e. divide the summed log-ratio by the answer's length"),
        ("one answer, ratios 1.2 and 0.9", [[1.2, 0.9]], [[1, 1]], geo),
        ("answers of 3 and 1 tokens, padded with other values", [[1.1, 0.8, 1.3, 5.0], [0.7, 3.0, 3.0, 3.0]],
         [[1, 1, 1, 0], [1, 0, 0, 0]],
         "only the answer's own tokens count: multiply by the mask and divide by each answer's number of "
         "tokens (mask.sum(axis=1)), not by the padded width"),
    ]:
        args = case(ratios, mask)
        cases.append(Case(name, args, ref(*args), hint=hint, atol=1e-9))
    return run_cases(fn, cases, "your sequence ratio")
