r"""Reward terms beyond right/wrong, in the style of DeepSeek-R1 (Part III §6).

R1-Zero's reward is an *accuracy* reward (is the final answer right?) plus a *format* reward
(is the reasoning inside the ``<think>`` tags?); R1 adds a *language-consistency* reward (the
share of the chain of thought written in the target language). The last two look only at the
form of the answer, never at the reference answer. On the §5 task they become:

- ``format_reward``: 1 for a well-formed think-first answer ``[dddddddddd]#d$`` (the reasoning
  is "inside the tags"), else 0;
- ``consistency_reward``: 1 for a think-first answer whose final digit is its own chain's last
  digit (the answer follows from the written reasoning), else 0;
- ``shaped_reward``: accuracy (``task.verify``) + ``w_format`` · format + ``w_consistency`` ·
  consistency, per answer.

All three take a list of answer strings (as in ``Rollouts.answers``) and never raise on a
malformed one. Text after the first ``$`` is padding and is ignored, as in ``task.verify``.
"""
import numpy as np

from .._check_args import checked, real
from .task import parse_answer, verify_batch

__all__ = ["format_reward", "consistency_reward", "shaped_reward"]


def _check_answers(answers):
    if isinstance(answers, str):
        raise ValueError("answers must be a list of answer strings, got a single str; wrap it in a list")
    if isinstance(answers, (bytes, dict)) or not np.iterable(answers):
        raise ValueError(f"answers must be a list of answer strings, got {type(answers).__name__}")
    return {"answers": list(answers)}


def _check_shaped(answers, digits, w_format, w_consistency):
    real(w_format, "w_format"), real(w_consistency, "w_consistency")
    if w_format < 0 or w_consistency < 0:
        raise ValueError(f"w_format and w_consistency must be >= 0, got {w_format} and {w_consistency}")
    return _check_answers(answers)


@checked(_check_answers)
def format_reward(answers):
    """(n,) 1.0 where the answer is a well-formed think-first answer, else 0.0."""
    return np.array([float(parse_answer(a)[0] == "think") for a in answers])


@checked(_check_answers)
def consistency_reward(answers):
    """(n,) 1.0 where a think-first answer's final digit equals its chain's last digit, else 0.0
    (direct and malformed answers have no chain to agree with: 0.0)."""
    out = []
    for a in answers:
        fmt, final, chain = parse_answer(a)
        out.append(float(fmt == "think" and final == int(chain[-1])))
    return np.array(out)


@checked(_check_shaped)
def shaped_reward(answers, digits, w_format=0.0, w_consistency=0.0):
    """(n,) accuracy reward (1 iff well-formed with the right final digit) plus
    ``w_format`` · ``format_reward`` + ``w_consistency`` · ``consistency_reward``.
    ``digits`` is (n, 10), one problem per answer."""
    acc = verify_batch(answers, digits)["reward"]
    return acc + w_format * format_reward(answers) + w_consistency * consistency_reward(answers)
