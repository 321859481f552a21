"""Checkers for Part II's code exercises."""
import numpy as np

from ..prob import softmax
from ._core import Case, run_cases

__all__ = ["expected_tries", "softmax_log_grad", "clip_cap", "clipped_grad", "dynamic_sampling_groups"]


def expected_tries(fn):
    """Exercise (§1): ``fn(p, N)`` returns the expected number of samples drawn when a query
    is sampled until the verifier accepts, at most N times, with pass@1 = p:
    E = Σ_{k=0}^{N−1} (1 − p)^k = (1 − (1 − p)^N) / p  (and N when p = 0)."""
    def ref(p, N):
        return float(N) if p == 0 else (1 - (1 - p) ** N) / p
    table = [  # (name, (p, N), hint)
        ("N = 1: always one sample", (0.3, 1), "the first sample is always drawn, whatever p is"),
        ("p = 1: the first sample passes", (1.0, 16), "with p = 1 you stop after the first sample"),
        ("p = 0.5, N = 2", (0.5, 2), "the second sample is drawn only if the first fails: 1 + (1 − p)"),
        ("p = 0.1, N = 16", (0.1, 16), "sample k+1 is drawn iff the first k all failed: sum (1 − p)^k for k = 0..N−1"),
        ("p = 0.1, N = 10 000 (≈ 1/p)", (0.1, 10_000), "without a budget the count is geometric with mean 1/p"),
        ("p = 0: every sample fails", (0.0, 8), "the closed form divides by p; handle p = 0 separately (N samples)"),
    ]
    cases = [Case(name, args, ref(*args), hint=hint) for name, args, hint in table]
    return run_cases(fn, cases, "your expected number of samples")


def softmax_log_grad(fn):
    """Exercise (§3): ``fn(logits, a)`` returns ∇_z log softmax(z)_a = onehot(a) − softmax(z)."""
    cases = []
    for z, a in [([0.0, 0.0, 0.0], 0), ([0.0, 1.0, -1.0], 1), ([2.0, 0.5, 0.1], 2),
                 ([-1.0, 3.0], 0)]:
        z = np.array(z)
        cases.append(Case(f"logits {z.tolist()}, method {a}", (z.copy(), a),
                          np.eye(len(z))[a] - softmax(z),
                          hint="differentiate z_a − log Σ_j exp(z_j): +1 at a, minus π_j everywhere"))
    return run_cases(fn, cases, "your gradient")


def clip_cap(fn):
    """Exercise (§4, lecture exercise 4): ``fn(p_old, eps)`` returns the probability at which
    PPO's clipped objective stops pushing a token with advantage A > 0 up within one batch:
    the ratio stops at 1 + eps, so π = p_old · (1 + eps), and a probability cannot exceed 1:
    min(p_old · (1 + eps), 1). It must work elementwise on arrays too."""
    def ref(p, eps):
        return np.minimum(np.asarray(p, dtype=float) * (1 + eps), 1.0)
    ratio_hint = ("the gradient stops when ρ = π_θ/π_old reaches 1 + ε, i.e. when π_θ = π_old·(1 + ε)")
    cases = [
        Case("p_old = 0.02, ε = 0.2", (0.02, 0.2), ref(0.02, 0.2), hint=ratio_hint),
        Case("p_old = 0.02, ε_high = 0.28", (0.02, 0.28), ref(0.02, 0.28), hint=ratio_hint),
        Case("p_old = 0.8, ε = 0.2", (0.8, 0.2), ref(0.8, 0.2), hint=ratio_hint),
        Case("p_old = 0.5, ε = 0 (no room at all)", (0.5, 0.0), ref(0.5, 0.0),
             hint="with ε = 0 the ratio is clipped at 1: the probability cannot move"),
        Case("p_old = 0.8, ε_high = 0.28", (0.8, 0.28), ref(0.8, 0.28),
             hint="0.8 × 1.28 = 1.024 is not a probability: the cap is never reached, "
                  "the probability is limited by 1"),
        Case("arrays: p_old = [0.02, 0.3, 0.9], ε = 0.2", (np.array([0.02, 0.3, 0.9]), 0.2),
             ref(np.array([0.02, 0.3, 0.9]), 0.2),
             hint="use np.minimum (elementwise), not min, so that arrays work"),
    ]
    return run_cases(fn, cases, "your cap")


def clipped_grad(fn):
    """Exercise (§4): ``fn(ratio, adv, eps)`` returns d/dρ of min(ρA, clip(ρ, 1 − ε, 1 + ε)A),
    elementwise: A where the unclipped term ρA is the minimum, 0 where the clipped (flat) term
    is. Cases avoid the kinks ρ = 1 ± ε, where the derivative is not defined."""
    def ref(ratio, adv, eps):
        ratio, adv = np.broadcast_arrays(np.asarray(ratio, float), np.asarray(adv, float))
        clipped = ((adv > 0) & (ratio > 1 + eps)) | ((adv < 0) & (ratio < 1 - eps))
        return np.where(clipped, 0.0, adv)
    rho = np.array([0.5, 0.9, 1.1, 1.5])
    cases = [
        Case("A = +1, ε = 0.2, ρ = [0.5, 0.9, 1.1, 1.5]", (rho, 1.0, 0.2), ref(rho, 1.0, 0.2),
             hint="for A > 0 only ρ > 1 + ε is clipped; below 1 − ε the min is still ρA, slope A"),
        Case("A = −1, ε = 0.2, ρ = [0.5, 0.9, 1.1, 1.5]", (rho, -1.0, 0.2), ref(rho, -1.0, 0.2),
             hint="for A < 0 only ρ < 1 − ε is clipped; above 1 + ε the min is ρA, slope A (< 0)"),
        Case("A = +2.5, ε = 0.05", (rho, 2.5, 0.05), ref(rho, 2.5, 0.05),
             hint="where the unclipped term is active the slope is A itself, not 1 or sign(A)"),
        Case("A = [+1, −1, +1, −1], ε = 0.3", (rho, np.array([1.0, -1.0, 1.0, -1.0]), 0.3),
             ref(rho, np.array([1.0, -1.0, 1.0, -1.0]), 0.3),
             hint="ratio and adv broadcast elementwise; decide per element which term is the min"),
        Case("A = 0", (rho, 0.0, 0.2), ref(rho, 0.0, 0.2),
             hint="with A = 0 the objective is 0 everywhere: slope 0"),
    ]
    return run_cases(fn, cases, "your gradient")


def dynamic_sampling_groups(fn):
    """Exercise (§5, lecture exercise 5): ``fn(p, G, n_mixed)`` returns the expected number of
    groups dynamic sampling draws to collect ``n_mixed`` mixed groups (not all right, not all
    wrong). ``p`` is one success probability or an array of per-problem probabilities (each
    group's problem drawn uniformly); samples are independent:
    E = n_mixed / (1 − mean(p^G + (1 − p)^G))."""
    def ref(p, G, n):
        p = np.asarray(p, dtype=float)
        return float(n / (1 - np.mean(p ** G + (1 - p) ** G)))
    hint_all = "a group is all right with probability p^G and all wrong with (1 − p)^G"
    cases = [
        Case("p = 0.5, G = 2, one mixed group", (0.5, 2, 1), ref(0.5, 2, 1),
             hint="half of the groups of 2 are mixed, so you expect to draw 2"),
        Case("lecture (b): p = 0.9, G = 8, 16 groups", (0.9, 8, 16), ref(0.9, 8, 16), hint=hint_all),
        Case("all-wrong groups count too: p = 0.1, G = 8", (0.1, 8, 16), ref(0.1, 8, 16),
             hint="(1 − p)^G is not negligible when p is small"),
        Case("lecture (c): half the problems 0.99, half 0.81", (np.array([0.99, 0.81]), 8, 16),
             ref([0.99, 0.81], 8, 16),
             hint="average P(all equal) over problems, not p over problems: mean(p^G) ≠ mean(p)^G"),
        Case("an array of problems: [0, 0.5, 1], G = 4", (np.array([0.0, 0.5, 1.0]), 4, 10),
             ref([0.0, 0.5, 1.0], 4, 10),
             hint="a problem with p = 0 or 1 never gives a mixed group; " + hint_all),
    ]
    return run_cases(fn, cases, "your expected number of groups")
