r"""The loss-variant race of §III.8 ("Beyond the lectures"): GRPO's run against the loss variants
and advantage estimators practitioners use now, each arm **one** change to that run.

GRPO's run (``RACE_BASE``) is §III.5's (32 prompts × G = 8, lr 1e-4) with μ = 4 updates per batch:
at μ = 1 the ratio is exactly 1 at the only update, and GSPO, CISPO and δ train exactly as GRPO
(``tests/test_tinylm_train.py``). Every arm runs on the same ``N_SEEDS`` RL seeds (``toy.seeds``),
seed ``s`` starting from warm-up ``s % WARMUPS`` (``cached_train_rl_seeds(..., warmups=WARMUPS)``),
so that its differences to GRPO are paired seed by seed. The arms (``RACE``), each with the setting
of its paper or library:

- ``Dr. GRPO``: no ÷σ and a constant normaliser (``algo="dr_grpo"``, its own ``loss_type``);
- ``DAPO token mean``: DAPO's aggregation alone, one token mean over the batch (``loss_type="dapo"``);
- ``GSPO``: the sequence ratio s_i, clipped at 1 − 3e-4 and 1 + 4e-4 (GSPO's paper, §5.1);
- ``CISPO``: the weight sg(min(ρ, 5)) (TRL's recommended cap ``epsilon_high=5.0``; no lower bound);
- ``BNPO``: TRL's ``loss_type="bnpo"``, a token mean per micro-batch of 8 answers, averaged;
- ``δ = 4``: TRL's two-sided clip (INTELLECT-2), the ratio of a token with A < 0 capped at 4;
- ``top 20 % entropy``: the policy loss only on the 20 % of the batch's tokens with the highest
  entropy ("Beyond the 80/20 rule");
- ``RLOO``: the leave-one-out advantage with GRPO's loss. ``RLConfig`` has no ``"rloo"``
  algorithm (and the training code is not changed for the race: it would change every record's
  key), but RLOO's advantage is Dr. GRPO's times G/(G − 1) exactly, so the arm is
  ``algo="dr_grpo"`` on the reward ``rloo_reward`` (the verifier's × 8/7) with ``loss_type="grpo"``.

- ``SAPO``: a soft gate σ(τ(ρ − 1))·4/τ on the ratio instead of a clip (τ = 1.0 where A > 0, else
  1.05: both libraries' defaults), aggregated as GRPO.

The controls (``CONTROLS``) isolate a cause: ``GSPO, clip 0.2`` (GSPO's ratio with GRPO's clip
range: the ratio or the range?), ``no ÷σ`` (Dr. GRPO's advantage with GRPO's loss: RLOO without
its factor 8/7, and Dr. GRPO without its normaliser), ``CISPO, cap 0.2`` (TRL's default cap, a
weight 5 times smaller than the cap 5's where ρ ≈ 1: does Adam divide it out over a whole run?) and
``top 20 % entropy, per micro-batch`` (the threshold per micro-batch of 8 answers, as TRL takes it,
instead of over the batch). ``FAR`` is GRPO and the race's off-policy arms again at four times the
learning rate (``FAR_LR``), on ``N_FAR`` seeds: each of the μ = 4 updates on a batch moves the
policy about four times as far, so that the ratios leave 1 far more than in the race (do the knobs
act then?). ``SETTINGS`` names each arm's TRL 1.16.0 and verl 0.9.1 setting, each with the tags of
``book/toy_to_real.md``'s checked facts (``tests/test_tinylm_variants.py`` checks that every tag and
every setting is on that page).

Use::

    from toy.tinylm import variants
    runs = variants.race()         # {name: (policies, history)}, history[key]: (seeds, steps)
"""
from . import task
from .._check_args import integer
from .train import RLConfig

__all__ = ["RACE", "RACE_BASE", "CONTROLS", "FAR", "FAR_LR", "N_FAR", "REWARDS", "SETTINGS", "N_SEEDS", "WARMUPS",
           "rloo_reward", "race_configs", "race"]

RACE_BASE = dict(algo="grpo", steps=100, n_prompts=32, G=8, lr=1e-4, mu=4)
N_SEEDS, WARMUPS = 30, 3                                   # seeds.seeds(30): ten on each of three warm-ups


def rloo_reward(ans, digits):
    """The verifier's 0/1 reward times G/(G − 1) = 8/7 (G = 8): Dr. GRPO's advantage of it,
    8/7·(r_i − mean r), is RLOO's r_i − (mean of the other 7), exactly."""
    return 8 / 7 * task.verify_tokens(ans, digits)["reward"]


RACE = {                                                   # name → the one change to GRPO's run
    "GRPO": {},
    "Dr. GRPO": dict(algo="dr_grpo"),
    "DAPO token mean": dict(loss_type="dapo"),
    "GSPO": dict(ratio_level="sequence", eps_low=3e-4, eps_high=4e-4),
    "CISPO": dict(loss_mode="cispo", eps_low=1.0, eps_high=4.0),
    "BNPO": dict(loss_type="bnpo", micro_batch=8),
    "δ = 4": dict(delta=4.0),
    "top 20 % entropy": dict(top_entropy_quantile=0.2),
    "RLOO": dict(algo="dr_grpo", loss_type="grpo"),
    "SAPO": dict(loss_mode="sapo"),                        # the libraries' τ: 1.0 where A > 0, else 1.05
}
CONTROLS = {                                               # runs that isolate a cause
    "GSPO, clip 0.2": dict(ratio_level="sequence"),        # GSPO's ratio with GRPO's clip range
    "no ÷σ": dict(algo="dr_grpo", loss_type="grpo"),       # Dr. GRPO's advantage, GRPO's loss
    "CISPO, cap 0.2": dict(loss_mode="cispo", eps_low=1.0, cispo_cap=0.2),   # TRL's default cap: does its size matter?
    "top 20 % entropy, per micro-batch": dict(top_entropy_quantile=0.2, entropy_micro_batches=32),   # TRL's threshold
}
FAR_LR, N_FAR = 4e-4, 12                                   # four times the race's lr; four seeds on each warm-up
FAR = {name: {**RACE[name], "lr": FAR_LR} for name in ("GRPO", "CISPO", "SAPO", "δ = 4")}   # ratios run far
REWARDS = {"RLOO": rloo_reward}                            # an arm's reward, if not the verifier's

# Each arm's setting in TRL 1.16.0 (GRPOConfig) and verl 0.9.1, from book/toy_to_real.md (tags: its
# checked facts). μ = 4 is TRL's num_iterations=4 [T5], verl's ppo_epochs=4 [V5], for every arm.
SETTINGS = {
    "GRPO": ('`loss_type="grpo"` [T26] (the default is `"dapo"` [T25]), `epsilon=0.2` [T18]',
             "`adv_estimator=grpo` [V8], `loss_agg_mode=seq-mean-token-mean` [V28], "
             "`clip_ratio_low` = `clip_ratio_high` = 0.2 [V13], [V14]"),
    "Dr. GRPO": ('`scale_rewards="none"` [T7], `loss_type="dr_grpo"` [T28]',
                 "`norm_adv_by_std_in_grpo=False` [V11], `loss_agg_mode=seq-mean-token-sum-norm` with "
                 "`loss_scale_factor` = `max_response_length` [V29], [V31]"),
    "DAPO token mean": ('`loss_type="dapo"` [T25], [T29]', "`loss_agg_mode=token-mean` [V24], [V25]"),
    "GSPO": ('`importance_sampling_level="sequence"` [T42], [T43], `epsilon=3e-4`, `epsilon_high=4e-4`, '
             '`loss_type="grpo"` [T105]',
             "`policy_loss.loss_mode=gspo` [V45], [V46], `clip_ratio_low=3e-4`, `clip_ratio_high=4e-4`, "
             "`loss_agg_mode=seq-mean-token-mean` [V102]"),
    "GSPO, clip 0.2": ('`importance_sampling_level="sequence"` [T42], `epsilon=0.2` [T18], `loss_type="grpo"` [T105]',
                       "`policy_loss.loss_mode=gspo` [V45], `clip_ratio_low` = `clip_ratio_high` = 0.2 [V13], [V14], "
                       "`loss_agg_mode=seq-mean-token-mean` [V102]"),
    "CISPO": ('`loss_type="cispo"` [T44], `epsilon_high=5.0` (the cap itself [T56]); TRL\'s `"cispo"` also takes '
              'the token mean [T73], which this arm leaves out',
              "`policy_loss.loss_mode=cispo` [V47], `clip_ratio_high=4.0` (cap 1 + 4.0 [V48]), `clip_ratio_low=1.0` "
              "(no lower bound [V48]), `loss_agg_mode=seq-mean-token-mean` [V28]"),
    "BNPO": ('`loss_type="bnpo"` [T27], `per_device_train_batch_size=8`', "none"),
    "δ = 4": ("`delta=4` [T45], [T46]", "`clip_ratio_c=4.0` [V15], [V16] (on by default, at 3.0)"),
    "top 20 % entropy": ("`top_entropy_quantile=0.2` [T47], [T48], [T49] (its threshold per micro-batch [T58], "
                         "[T59]: the toy's per batch)", "none"),
    "RLOO": ("none in `GRPOTrainer`; `RLOOTrainer` [T11]–[T16] changes more than the advantage",
             "`adv_estimator=rloo` [V12], `loss_agg_mode=seq-mean-token-mean` [V28]"),
    "no ÷σ": ('`scale_rewards="none"` [T7], `loss_type="grpo"` [T26]',
              "`norm_adv_by_std_in_grpo=False` [V11], `loss_agg_mode=seq-mean-token-mean` [V28]"),
    "SAPO": ('`loss_type="sapo"` [T54], `sapo_temperature_pos=1.0` [T61], `sapo_temperature_neg=1.05` [T62], '
             'aggregated as `loss_type="grpo"` [T63]',
             "`policy_loss.loss_mode=sapo` [V56], [V57], `tau_pos=1.0` [V58], `tau_neg=1.05` [V59], always "
             "`seq-mean-token-mean` [V75]"),
    "CISPO, cap 0.2": ('`loss_type="cispo"` [T44] with the default `epsilon_high=None` [T19]: the cap is then '
                       '`epsilon` = 0.2 [T55], [T18]',
                       "none (verl's cap is 1 + `clip_ratio_high` [V48], at least 1)"),
    "top 20 % entropy, per micro-batch": ('`top_entropy_quantile=0.2` [T47], its threshold per micro-batch [T58], '
                                          '[T59] of `per_device_train_batch_size=8` answers (TRL shuffles the batch '
                                          'first; the toy\'s 32 micro-batches of 8 consecutive answers are its groups)',
                                          "none"),
}


def race_configs(controls=False, far=False):
    """{name: RLConfig} of the race (``controls``: of the control runs instead; ``far``: of ``FAR``)."""
    for arg, value in (("controls", controls), ("far", far)):
        if not isinstance(value, bool):
            raise ValueError(f"{arg} must be True or False, got {value!r}")
    if controls and far:
        raise ValueError("far must be False when controls is True (FAR is its own group of runs)")
    group = FAR if far else CONTROLS if controls else RACE
    return {name: RLConfig(**{**RACE_BASE, **kw}) for name, kw in group.items()}


def race(controls=False, names=None, n_seeds=None, far=False):
    """Every run of the race (or of its controls, or of ``FAR`` with ``far=True``; ``names``: only
    these arms), ``n_seeds`` RL seeds (``toy.seeds.seeds``; ``N_SEEDS``, for ``FAR`` ``N_FAR``) over
    ``WARMUPS`` warm-ups each, read from the evidence record (trained, two processes at a time,
    where it does not hold them): {name: (policies, history)}, ``history[key]`` an array (seeds, steps)."""
    from .. import seeds
    from ..record.cache import cached_train_rl_seeds
    cfgs = race_configs(controls, far)
    if names is not None:
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n in cfgs for n in names):
            group = "FAR" if far else "CONTROLS" if controls else "RACE"
            raise ValueError(f"names must be a list of arms of {group} ({', '.join(cfgs)}), got {names!r}")
        cfgs = {n: cfgs[n] for n in names}
    n_seeds = integer((N_FAR if far else N_SEEDS) if n_seeds is None else n_seeds, "n_seeds", lo=WARMUPS)
    return {name: cached_train_rl_seeds(cfg, seeds.seeds(n_seeds), warmups=WARMUPS, reward_fn=REWARDS.get(name))
            for name, cfg in cfgs.items()}
