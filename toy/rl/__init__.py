r"""The course's equations, one small numpy function each, in four modules by idea:

- ``toy.rl.advantages``: from a group's rewards to each answer's advantage (RFT, REINFORCE, a
  baseline, RLOO, GRPO, Dr. GRPO), groups with no signal, the reward-to-go, length rewards;
- ``toy.rl.loss``: the policy loss (``policy_loss``: PPO's clipped surrogate + β·k3, aggregated
  by ``loss_type``, with the variants practitioners use now as branches) and its pieces;
- ``toy.rl.ppo``: PPO's targets (LM-PPO's KL-shaped reward, GAE, normalised advantages) and
  the value loss;
- ``toy.rl.exact``: exact expectations for a softmax policy over K answers.

Every notebook and exercise calls them as ``toy.rl.<name>``; their names are a stable API (the
table in CONTRIBUTING.md). Each public function is its equation alone; its argument checks are
the ``_check_<name>`` function above it (``@checked``: run on every call). Shapes are written as comments:
``(B, G)`` = groups × samples per group, ``(N, T)`` = sequences × tokens.
"""
from .advantages import (ADVANTAGES, advantages, degenerate_fraction, dr_grpo_advantages, grpo_advantages,
                         kimi_length_reward, mixed_groups, overlong_penalty, reward_to_go, rloo_advantages)
from .exact import enumerate_groups, score_function_estimate, softmax_pg_exact
from .loss import (DEFAULT_LOSS_TYPE, LOSS_MODES, LOSS_TYPES, RATIO_LEVELS, aggregate_loss, aggregate_weights,
                   bnpo_weights, cispo_weight, clip_fraction, clipped_surrogate, clipped_surrogate_grad, high_entropy_mask,
                   kl_k1, kl_k2, kl_k3, kl_k3_grad, policy_loss, sapo_gate, sequence_log_ratio, token_entropy,
                   two_sided_surrogate, two_sided_surrogate_grad)
from .ppo import MAX_TOKENS, gae, kl_shaped_rewards, ppo_targets, value_loss

__all__ = [
    "grpo_advantages", "dr_grpo_advantages", "rloo_advantages", "ADVANTAGES", "advantages", "mixed_groups",
    "degenerate_fraction", "reward_to_go", "overlong_penalty", "kimi_length_reward",
    "clipped_surrogate", "clipped_surrogate_grad", "clip_fraction",
    "LOSS_TYPES", "DEFAULT_LOSS_TYPE", "aggregate_loss", "aggregate_weights",
    "kl_k1", "kl_k2", "kl_k3", "kl_k3_grad",
    "RATIO_LEVELS", "LOSS_MODES", "sequence_log_ratio", "cispo_weight", "sapo_gate", "two_sided_surrogate",
    "two_sided_surrogate_grad", "bnpo_weights", "high_entropy_mask", "token_entropy",
    "policy_loss",
    "kl_shaped_rewards", "gae", "ppo_targets", "value_loss", "MAX_TOKENS",
    "softmax_pg_exact", "score_function_estimate", "enumerate_groups",
]
