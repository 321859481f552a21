r"""The race of the loss variants practitioners use now, one list of runs that the section's
notebook and the Part III ledger both read from the model cache. (The section is parked in
``drafts/part3/`` until its cells are calibrated for claims mode: ``drafts/README.md``.)

Every variant is GRPO's run of §III.5 (the default SFT warm-up, 32 prompts × G = 8, lr 1e-4) with
μ = 4 updates per batch (at μ = 1 the ratio is exactly 1 at the only update and GSPO, CISPO and δ
train exactly as GRPO: ``tests/test_tinylm_train.py``) and **one** change to the loss, each with
the setting its paper or library uses:

- ``GSPO``: the sequence ratio s_i, clipped at 1 − 3e-4 and 1 + 4e-4 (GSPO's paper, §5.1);
- ``CISPO``: the clipped weight sg(min(ρ, 5)) (TRL's recommended ``epsilon_high=5.0``; no lower bound);
- ``δ = 4``: TRL's two-sided clip (INTELLECT-2), the ratio of a token with A < 0 capped at 4
  (TRL recommends δ > 1 + ε);
- ``bnpo``: TRL's ``loss_type="bnpo"``, a token mean per micro-batch of 8 answers (TRL's
  default ``per_device_train_batch_size``), averaged;
- ``top 20 % entropy``: the policy loss only on the 20 % of tokens with the highest entropy
  ("Beyond the 80/20 rule").

Use::

    from toy.tinylm import variants
    hists = variants.race()              # {name: [history of seed 0, ..., seed 9]}
"""
from .cache import cached_train_rl_many
from .train import RLConfig

__all__ = ["RACE", "RACE_BASE", "RACE_SEEDS", "CONTROLS", "race_configs", "race_runs", "race"]

RACE_BASE = dict(algo="grpo", steps=100, n_prompts=32, G=8, lr=1e-4, mu=4)
RACE_SEEDS = tuple(range(10))
RACE = {                                                   # name → the one change to GRPO's loss
    "GRPO": {},
    "GSPO": dict(ratio_level="sequence", eps_low=3e-4, eps_high=4e-4),
    "CISPO": dict(loss_mode="cispo", eps_low=1.0, eps_high=4.0),
    "δ = 4": dict(delta=4.0),
    "bnpo": dict(loss_type="bnpo", micro_batch=8),
    "top 20 % entropy": dict(top_entropy_quantile=0.2),
}


CONTROLS = {                                               # controls that isolate a cause
    "GSPO, clip 0.2": dict(ratio_level="sequence"),        # GSPO's ratio with GRPO's clip range
}


def race_configs(controls=False):
    """{name: RLConfig} of the race (``controls``: of the control runs instead)."""
    if not isinstance(controls, bool):
        raise ValueError(f"controls must be True or False, got {controls!r}")
    return {name: RLConfig(**{**RACE_BASE, **kw}) for name, kw in (CONTROLS if controls else RACE).items()}


def race_runs(controls=False):
    """The race (or its controls) as ``(RLConfig, seed)`` pairs, variant by variant, seeds 0..9 each."""
    return [(cfg, s) for cfg in race_configs(controls).values() for s in RACE_SEEDS]


def race(controls=False):
    """Every run of the race (or of its controls) from the model cache (trained, two processes at
    a time, where not cached): {name: [history of each seed]}."""
    names = list(CONTROLS if controls else RACE)
    got = cached_train_rl_many(race_runs(controls))
    n = len(RACE_SEEDS)
    return {name: [h for _, h in got[i * n:(i + 1) * n]] for i, name in enumerate(names)}
