"""Checkers for Part I's Number Search exercises (§2–§5)."""
import numpy as np

from .. import numsearch as ns
from ._core import Case, run_cases

__all__ = ["narrow_interval", "trajectory_logprob", "rest_filter", "masked_pg_loss",
           "reinforce_estimate", "grpo_advantages", "dr_grpo_token_weights"]

_WORDS = {"higher": ns.HIGHER, "lower": ns.LOWER, "correct": ns.FOUND}


def narrow_interval(fn):
    """Exercise (§2): ``fn(lo, hi, guess, feedback)`` with feedback in {"higher", "lower",
    "correct"} returns the new feasible interval ``(lo, hi)``."""
    cases = []
    for lo, hi, g, word in [(1, 16, 8, "higher"), (9, 16, 12, "lower"), (9, 11, 10, "higher"),
                            (1, 16, 4, "higher"), (5, 16, 3, "higher"), (1, 15, 16, "lower"),
                            (9, 11, 10, "correct")]:
        new = ns.narrow(lo, hi, g, _WORDS[word])
        hint = ("'higher' means the hidden number is above the guess: lo becomes guess + 1 "
                "(but never smaller than before)" if word == "higher" else
                "'lower' means the hidden number is below the guess: hi becomes guess − 1 "
                "(but never larger than before)" if word == "lower" else
                "'correct' ends the game; the interval does not change")
        if g < lo or g > hi:
            hint = "a guess outside [lo, hi] tells nothing new: keep the interval (use max/min)"
        cases.append(Case(f"[{lo}, {hi}], guess {g} → {word}", (lo, hi, g, word),
                          [int(v) for v in new], hint=hint))
    return run_cases(fn, cases, "your interval update")


def trajectory_logprob(fn):
    """Exercise (§4): ``fn(theta, guesses, target)`` returns log p_θ(τ) = Σ_t log π_θ(a_t | h_t)
    (the environment terms are log 1 = 0 once the hidden number is given)."""
    rng = np.random.default_rng(0)
    theta = ns.weak_prior() + 0.5 * rng.normal(size=(ns.S, ns.A))
    cases = []
    for guesses, target in [([8, 12, 10, 11], 11), ([4, 8, 12, 11], 11), ([16, 8, 9, 10], 11),
                            ([1, 2, 3, 4], 11), ([5], 5)]:
        traj = ns.replay([guesses], target)
        cases.append(Case(f"τ = {guesses}, target {target}", (theta, guesses, target),
                          float(ns.action_logprobs(theta, traj).sum()),
                          hint="look up the state (lo, hi, left) *before* each guess with "
                               "ns.state_after(guesses[:t], target), then add log π(guess | state)"))
    return run_cases(fn, cases, "your log-probability")


def rest_filter(fn):
    """Exercise (§5): ``fn(rewards)`` returns the ReST weights: 1 where R = 1, else 0."""
    cases = [Case("τ1..τ4 = [1, 1, 0, 0]", (np.array([1.0, 1, 0, 0]),), [1.0, 1, 0, 0]),
             Case("all failures", (np.zeros(5),), np.zeros(5),
                  hint="no success → an empty dataset: every weight is 0"),
             Case("a batch", (np.array([0.0, 1, 1, 0, 1]),), [0.0, 1, 1, 0, 1])]
    return run_cases(fn, cases, "your filter")


# ----------------------------------------------------------------- §6: the policy gradient


def _first_failure(fn, cases, what):
    """Like ``run_cases``, but each case carries ``variants``: (wrong answer, hint) pairs; a
    result matching a known mistake gets that mistake's hint. Prints ✓ or ✗, never raises;
    returns the :class:`~toy.check._core.Result`."""
    from types import SimpleNamespace
    from ._core import close_enough, fmt_value, tally

    def judge(got, c):
        ok, why = close_enough(got, c.expected, 1e-6, 1e-6)
        if ok:
            return None
        hint = next((h for wrong, h in c.variants if close_enough(got, wrong, 1e-6, 1e-6)[0]), c.hint)
        shown = (f"expected {fmt_value(c.expected)}, got {fmt_value(got)}" if np.ndim(c.expected) < 2 else
                 f"max |got − expected| = {np.max(np.abs(np.asarray(got, float) - c.expected)):.4g}"
                 if why is None else why)
        return f"case '{c.name}': {shown}", hint
    cases = [SimpleNamespace(name=name, args=args, expected=expected, variants=variants, hint=hint)
             for name, args, expected, variants, hint in cases]
    return tally(fn, cases, judge, what)


def token_case(theta, traj):
    """Per-token log-probs (n, 2T) of a batch: the policy's log π on guess tokens and, on the
    environment's tokens, some nonzero numbers (what a language model would assign them)."""
    logp = np.zeros(traj.tokens.shape)
    logp[:, 0::2] = ns.action_logprobs(theta, traj)
    logp[:, 1::2] = np.where(traj.mask, np.log(np.where(traj.feedback == ns.FOUND, 0.2, 0.4)), 0.0)
    return logp


def masked_pg_loss(fn):
    r"""Exercise (§6): ``fn(token_logp, token_mask, R)`` with arrays (n, L), (n, L), (n,) returns
    the policy-gradient loss :math:`L = -\frac1n \sum_i R_i \sum_{t:\, m_{it}=1} \log\pi_\theta(u_{it} \mid u_{i,<t})`."""
    rng = np.random.default_rng(6)
    theta = ns.weak_prior() + 0.5 * rng.normal(size=(ns.S, ns.A))
    four = ns.replay([[8, 12, 10, 11], [4, 8, 12, 11], [16, 8, 9, 10], [1, 2, 3, 4]], 11)
    batch = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=12), rng)
    cases = []
    for name, traj, R in [("τ1..τ4, R = [1, 1, 0, 0]", four, four.reward),
                          ("12 sampled games (some end early: padding)", batch, batch.reward),
                          ("rewards that are not 0/1", batch, np.linspace(-1, 2, 12)),
                          ("all games lost", four, np.zeros(4))]:
        logp, m = token_case(theta, traj), traj.token_mask
        n = len(traj)
        exp = -float(np.sum(R[:, None] * m * logp)) / n
        variants = [(-float(np.sum(R[:, None] * logp)) / n,
                     "only the policy's tokens count: multiply by the mask m_t (the feedback tokens "
                     "are written by the environment)"),
                    (-float(np.sum(R[:, None] * m * logp)),
                     "average over the n episodes: divide the sum by n"),
                    (float(np.sum(R[:, None] * m * logp)) / n,
                     "the loss is *minus* the weighted log-likelihood (gradient descent on it raises "
                     "the log-probabilities of rewarded actions)"),
                    (-float(np.sum(m * logp)) / n,
                     "weight each episode's log-probabilities by its reward R_i")]
        cases.append((name, (logp, m, R), exp, variants,
                      "L = −(1/n) Σ_i R_i Σ_t m_it · token_logp_it"))
    return _first_failure(fn, cases, "your loss")


def reinforce_estimate(fn):
    r"""Exercise (§6): ``fn(theta, traj)`` returns the REINFORCE estimate (S, A)
    :math:`\hat g = \frac1n\sum_i R(\tau_i)\sum_{t:\,m_{it}=1}\big(e_{a_{it}} - \pi_\theta(\cdot \mid s_{it})\big)`
    placed in the rows :math:`s_{it}`; compared with :func:`toy.numsearch.train.reinforce_estimate`."""
    from ..numsearch import train as nt
    rng = np.random.default_rng(7)
    theta = ns.weak_prior() + 0.5 * rng.normal(size=(ns.S, ns.A))
    four = ns.replay([[8, 12, 10, 11], [4, 8, 12, 11], [16, 8, 9, 10], [1, 2, 3, 4]], 11)
    one = ns.replay([[8]], 8)
    batch = ns.rollout(ns.policy_probs(theta), rng.integers(1, 17, size=40), rng)
    lost = ns.replay([[16, 8, 9, 10]], 11)
    cases = []
    for name, th, traj in [("one game '8 → correct' from θ = 0 (uniform policy)", np.zeros((ns.S, ns.A)), one),
                           ("τ1..τ4 (two wins, two losses)", theta, four),
                           ("40 sampled games (padding after a hit)", theta, batch),
                           ("a lost game", theta, lost)]:
        exp = nt.reinforce_estimate(th, traj)
        n = len(traj)
        variants = [(-exp, "∇ log π(a|s) = one-hot(a) − π(·|s) (not π − one-hot): ĝ points uphill"),
                    (n * exp, "average over the n episodes: divide the sum by n"),
                    (nt.reinforce_estimate(th, traj, np.ones(n)),
                     "multiply each episode's score Σ_t ∇ log π by its reward R(τ_i)")]
        cases.append((name, (th, traj), exp, variants,
                      "for each step taken (traj.mask), add R_i·(one-hot(a) − π(·|s)) to row s = traj.states[i, t], "
                      "with a = traj.guesses[i, t] − 1; then divide by n"))
    return _first_failure(fn, cases, "your estimate")


# ------------------------------------------------------------- §9–§10: GRPO and Dr. GRPO


def grpo_advantages(fn):
    r"""Exercise (§9): ``fn(rewards)`` with rewards (B, G) — B instances × G samples — returns
    the GRPO advantages :math:`(R_{ij} - \bar R_i)/(\sigma_i + \varepsilon)` per group
    (population std, ε = 1e-4), compared with :func:`toy.rl.grpo_advantages`."""
    from .. import rl
    rng = np.random.default_rng(9)
    lecture = np.array([[1.0, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]])
    groups = [("the lecture's x1 = [1, 1, 0, 0]", lecture[:1]),
              ("x1, x2, x3 (three instances)", lecture),
              ("a degenerate group [1, 1, 1, 1] next to [0, 1, 0, 0]", np.array([[1.0, 1, 1, 1], [0, 1, 0, 0]])),
              ("8 instances × G = 8, sampled", (rng.random((8, 8)) < 0.4).astype(float)),
              ("rewards that are not 0/1", rng.normal(size=(3, 5)))]
    cases = []
    for name, R in groups:
        exp = rl.grpo_advantages(R)
        m, s = R.mean(axis=1, keepdims=True), R.std(axis=1, keepdims=True)
        variants = [((R - R.mean()) / (R.std() + 1e-4),
                     "normalise within each group (row), never across the whole batch: "
                     "use axis=1 and keepdims=True"),
                    (R - m, "that is Dr. GRPO's advantage: GRPO also divides by the group's std"),
                    ((R - m) / (R.std(axis=1, ddof=1, keepdims=True) + 1e-4),
                     "use the population std (np.std's default ddof=0), as the lecture's "
                     "[1, 0, 0, 0] → [1.73, −0.58, −0.58, −0.58] does")]
        if np.all(s > 0):
            variants.append(((R - m) / s, "add ε = 1e-4 to the std (it keeps degenerate groups finite)"))
        cases.append((name, (R,), exp, variants,
                      "Â_ij = (R_ij − mean_j R_ij) / (std_j R_ij + 1e-4), each row on its own"))
    return _first_failure(fn, cases, "your advantages")


def dr_grpo_token_weights(fn):
    r"""Exercise (§10): ``fn(rewards, mask)`` with the rewards (G,) of one group and the mask
    (G, T) of the actions each episode took returns the Dr. GRPO weight of every action in the
    loss, :math:`c_{jt}\,\hat A_j = m_{jt}\,(R_j - \bar R)/(G \cdot T)` — the number that multiplies
    :math:`-\log\pi(a_{jt} \mid h_{jt})` (compared with :func:`toy.rl.aggregate_weights`
    with ``"dr_grpo"`` times :func:`toy.rl.dr_grpo_advantages`)."""
    from .. import rl
    rng = np.random.default_rng(10)
    four = ns.replay([[8, 12, 10, 11], [4, 8, 12, 11], [16, 8, 9, 10], [1, 2, 3, 4]], 11)
    short = ns.replay([[8], [4, 8], [1, 2, 3, 4], [16, 12, 10, 9]], 8)     # lengths 1, 2, 4, 4
    sampled = ns.rollout(ns.policy_probs(ns.weak_prior()), np.repeat(rng.integers(1, 17), 8), rng)
    cases = []
    for name, traj in [("τ1..τ4 for the hidden number 11", four),
                       ("wins after 1 and 2 guesses, losses after 4", short),
                       ("a sampled group of 8 (different lengths)", sampled)]:
        R, m = traj.reward, traj.mask.astype(float)
        G, T = m.shape
        adv = rl.dr_grpo_advantages(R)
        exp = rl.aggregate_weights(m, "dr_grpo") * adv[:, None]
        lengths = np.maximum(m.sum(axis=1, keepdims=True), 1)
        grpo_adv = rl.grpo_advantages(R) if np.ptp(R) > 0 else adv
        variants = [(m * adv[:, None] / (G * lengths),
                     "that is GRPO's 1/|y_j| length normalisation: Dr. GRPO divides every episode by "
                     "the same constant G·T, whatever its length"),
                    (m * grpo_adv[:, None] / (G * T),
                     "Dr. GRPO does not divide the advantage by the group's std: Â_j = R_j − mean R"),
                    (adv[:, None] / (G * T) * np.ones_like(m),
                     "multiply by the mask: padding after a hit is not an action and gets weight 0"),
                    (m * adv[:, None],
                     "divide by the constant normaliser G·T (T = 4 guesses at most)")]
        cases.append((name, (R, m), exp, variants,
                      "weight_jt = m_jt · (R_j − mean R) / (G · T)"))
    return _first_failure(fn, cases, "your weights")
