"""Checkers for Part I's Number Search exercises (§2–§5)."""
import numpy as np

from .. import numsearch as ns
from ._core import Case, run_cases

__all__ = ["narrow_interval", "trajectory_logprob", "rest_filter"]

_WORDS = {"higher": ns.HIGHER, "lower": ns.LOWER, "correct": ns.CORRECT}


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
    run_cases(fn, cases, "your interval update")


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
    run_cases(fn, cases, "your log-probability")


def rest_filter(fn):
    """Exercise (§5): ``fn(rewards)`` returns the ReST weights: 1 where R = 1, else 0."""
    cases = [Case("τ1..τ4 = [1, 1, 0, 0]", (np.array([1.0, 1, 0, 0]),), [1.0, 1, 0, 0]),
             Case("all failures", (np.zeros(5),), np.zeros(5),
                  hint="no success → an empty dataset: every weight is 0"),
             Case("a batch", (np.array([0.0, 1, 1, 0, 1]),), [0.0, 1, 1, 0, 1])]
    run_cases(fn, cases, "your filter")
