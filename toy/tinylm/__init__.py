"""The tiny thinking model of Part III §5: a ~70k-parameter numpy transformer that learns, by
RL on a right/wrong reward alone, to think before it answers.

- ``toy.tinylm.task``      the task (sum 10 digits, say the units digit), tokenizer, teacher, verifier
- ``toy.tinylm.model``     the transformer (hand-written backward per layer), KV-cache sampling, Adam
- ``toy.tinylm.runs``      the speed path: R runs at once (stacked parameters), each GRPO prompt
                           once per group, each distinct answer once
- ``toy.tinylm.train``     SFT warm-up (``train_sft``); RL: GRPO, Dr. GRPO, RFT, PPO in one textbook loop
                           (``train_rl``: one run on one ``TinyLM``)
- ``toy.tinylm.many``      ``train_rl_many``: that loop for many runs at once on the speed path, each
                           equal to ``train_rl``'s run (what every cached and recorded run goes through)
- ``toy.tinylm.evals``     accuracy by format, pass@k, thinking budgets

The record and the cache live in their own package, ``toy.record`` (the book's evidence record:
Part III's runs computed once, committed in ``evidence/`` and read by the notebooks; the local model
cache); the names a notebook calls (``warmup_model()``, ``cached_train_rl_seeds``, ``measured``, ...)
are re-exported here.

Typical use::

    from toy import tinylm
    sft = tinylm.warmup_model()                          # SFT warm-up, cached on disk
    tinylm.evaluate(sft), tinylm.evaluate(sft, greedy=True)
    policy, hist = tinylm.train_rl(sft, tinylm.RLConfig(algo="grpo"), seed=0)
    pd.DataFrame(hist)                                   # one row per RL step
    policy, hist = tinylm.cached_train_rl(tinylm.RLConfig(algo="grpo"), seed=0)  # same, cached
    policies, hist = tinylm.cached_train_rl_seeds(tinylm.RLConfig(), range(10))  # hist[k]: (10, steps)
    tinylm.cached_train_rl_seeds(tinylm.RLConfig(), range(10), warmups=3)  # over 3 SFT warm-ups
    tinylm.pass_at_k_curve(policy), tinylm.thinking_budget(policy)

Sizes: 70,720 parameters (2 layers, C = 64, 4 heads, MLP 128, 27 learned positions).
Speed: ``make bench`` prints the current times (one 200-step GRPO run on one core, ten seeds
through ``cached_train_rl_many``, the matmul floor of a step).
"""
from .evals import evaluate, pass_at_k_curve, thinking_budget
from .model import Adam, ModelConfig, TinyLM
from .task import (TEACHER_CHAIN_ACC, decode, encode, make_prompts, parse_answer,
                   teacher_answers, verify, verify_batch)
from .many import train_rl_many, train_rl_seeds
from .train import CurriculumSampler, PoolSampler, RLConfig, SFTConfig, exact_reward, rollout, train_rl, train_sft

# the record's names a notebook calls, from toy.record (imported when first used: toy.record imports
# this package, not the other way round)
_RECORD = {"cache": ("Run", "cache_dir", "cached_train_rl", "cached_train_rl_many", "cached_train_rl_seeds",
                     "warmup_configs", "warmup_model"),
           "evidence": ("RecordedPolicy", "measured", "use_record"), "models": ("load_model", "save_model")}


def __getattr__(name):
    import importlib
    for module, names in _RECORD.items():
        if name in names:
            return getattr(importlib.import_module(f"toy.record.{module}"), name)
    raise AttributeError(f"module 'toy.tinylm' has no attribute {name!r}")

__all__ = [
    "Run", "RecordedPolicy", "measured", "use_record", "PoolSampler",
    "cache_dir", "cached_train_rl", "cached_train_rl_many", "cached_train_rl_seeds", "load_model", "save_model", "warmup_configs", "warmup_model", "evaluate", "pass_at_k_curve",
    "thinking_budget", "Adam", "ModelConfig", "TinyLM", "TEACHER_CHAIN_ACC", "decode", "encode",
    "make_prompts", "parse_answer", "teacher_answers", "verify", "verify_batch",
    "CurriculumSampler", "RLConfig", "SFTConfig", "exact_reward", "rollout", "train_sft",
    "train_rl", "train_rl_many", "train_rl_seeds",
]
