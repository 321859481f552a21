"""toy: the numpy package behind *RL for Reasoning, by Hand*.

Where is GRPO? In ``toy.rl``: every equation of the course and its derivative lives there
once, and each world below only applies its own chain rule from d loss / d log π to its
parameters. Every trainer descends a loss, and configs share one vocabulary: ``G`` (samples per
prompt), ``n_prompts``, ``lr``, ``eps_low``/``eps_high``, ``beta``, ``mu`` (μ: epochs, passes over each batch),
``loss_type``, ``steps``.

The equations (``toy.rl``, ``toy.metrics``, ``toy.prob``):

- advantages: ``rl.advantages(rewards, algo)`` (``rft``, ``reinforce``, ``baseline``, ``rloo``,
  ``grpo``, ``dr_grpo``), with ``grpo_advantages``, ``dr_grpo_advantages``, ``rloo_advantages``;
  ``reward_to_go``, ``gae``, ``kl_shaped_rewards`` (PPO);
- the loss: ``rl.policy_loss`` (clipped surrogate + β·k3, aggregated) → (loss, d loss / d log π),
  built from ``clipped_surrogate`` / ``clipped_surrogate_grad``, ``kl_k3`` / ``kl_k3_grad``,
  ``aggregate_loss`` / ``aggregate_weights`` (``grpo``, ``dapo``, ``dr_grpo``, ``sum``);
- groups and rewards: ``mixed_groups``, ``degenerate_fraction``, ``overlong_penalty``,
  ``kimi_length_reward``; exact expectations: ``softmax_pg_exact``, ``score_function_estimate``,
  ``enumerate_groups``;
- ``metrics``: pass@k (``pass_at_k`` from samples, ``pass_at_k_exact`` from p), maj@k, entropy;
- ``prob``: softmax, sampling, and ``log_softmax_table_grad`` (the chain rule of a tabular policy).

The three worlds (each: an environment or model, and its trainers):

- Part I, Number Search: ``toy.numsearch`` — ``game`` (the game, a tabular policy, exact J and ∇J),
  ``train`` (SFT, ReST, REINFORCE / baseline / RLOO / GRPO / Dr. GRPO through one
  ``weighted_logprob_loss``, vectorised over seeds), ``figures``; ``toy.bandit`` (§I.8).
- Part II, the arithmetic toy LLM, the package ``toy.arith``: ``model`` (problems, methods,
  sampling; re-exported as ``toy.arith``), ``train`` (STaR, REINFORCE, GRPO/DAPO through
  ``rl.policy_loss``), ``variant`` (the rare-method world of §II.6), ``figures``.
- Part III, the thinking model: ``toy.tinylm`` (task, a textbook transformer in ``model`` and its
  speed path in ``runs``, many runs at once, SFT and GRPO / Dr. GRPO / RFT / PPO in ``train``,
  evals, rewards); ``toy.length_toy`` (§III.4's length bias).
- The record of the heavier runs, apart from the worlds: ``toy.record`` (keys, the evidence record,
  the disk cache, the proof by re-training; ``toy.tinylm`` re-exports what a notebook calls).

The book's tools: ``toy.plots`` (style and figure helpers), ``toy.widgets`` (sliders, live and
static), ``toy.check`` (exercise checkers), ``toy.ledger`` (the reproduction ledgers),
``toy.show`` (a function's source in a notebook), ``toy.glue`` (numbers for the prose, rounded
to what the prose shows), ``toy.numerics()`` (which arithmetic this process computes with: the
book's reference, or not and why; ``toy.machine``), ``toy.parallel`` (independent seeded
runs on both cores through joblib, the same numbers as one after another), ``toy.progress`` (a progress bar
only a person running the notebook sees).
"""
from ._blas import one_blas_thread
from .machine import numerics, warn_once as _warn_off_reference

one_blas_thread()           # outputs identical at any number of BLAS threads (see toy._blas)
_warn_off_reference()       # one plain warning when off the book's reference arithmetic (toy._reference)

from . import metrics, parallel, prob, rl  # noqa: E402,F401
from .prose import glue  # noqa: E402,F401
from .source import show  # noqa: E402,F401

__version__ = "0.1.0"
