"""One vocabulary across the three worlds, as a contract (CONTRIBUTING.md, "One vocabulary").

Every RL trainer of Part I (Number Search), Part II (the arithmetic toy) and Part III (the thinking
model) is ``train_<algo>(policy, cfg=None, seed=0, ...) -> (policy, history)``; it trains a copy
and leaves ``policy`` as it was; its history holds ``reward`` per step (the group trainers also
``mean_abs_adv`` and ``degenerate``); ``train_<algo>_seeds(policy, cfg, seeds)`` stacks the single
runs. The RL configs name the shared knobs alike, and ``loss_type=None`` means the one table
``toy.rl.DEFAULT_LOSS_TYPE``. A world that renames a shared field, key or argument fails here.
"""
import copy
import dataclasses
import inspect
from dataclasses import dataclass

import numpy as np
import pytest

from toy import arith, rl
from toy import numsearch as ns
from toy.arith import train as part2, variant
from toy.numsearch import many as part1_many, train as part1
from toy.tinylm import many, model as lm, train as part3

_TINY = lm.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32)


def _parity(ans, digits):
    """A 0/1 reward an untrained tiny model earns half the time (the verifier gives it nothing)."""
    return (ans[:, 0] % 2).astype(float)


@dataclass
class Trainer:
    world: str
    single: object               # train_<algo>(policy, cfg, seed)
    seeds: object                # train_<algo>_seeds(policy, cfg, seeds)
    policy: object               # () -> a starting policy
    cfg: object                  # a small config
    steps: int                   # entries per history key
    group: bool = True           # group advantages: mean_abs_adv and degenerate too
    kw: dict = dataclasses.field(default_factory=dict)   # the world's own keywords

    def __str__(self):
        return f"{self.world}:{self.single.__module__.split('.')[-1]}.{self.single.__name__}"


TRAINERS = [
    Trainer("Part I", part1.train_pg, part1_many.train_pg_seeds, ns.weak_prior, part1.PGConfig(steps=3, eval_every=1), 3),
    Trainer("Part I", part1.train_rest, part1_many.train_rest_seeds, ns.weak_prior,
            part1.ReSTConfig(rounds=2, n_prompts=16, sft_steps=2), 2, group=False),
    Trainer("Part II", part2.train_star, part2.train_star_seeds, arith.Model,
            part2.STaRConfig(rounds=2, sft_steps=3), 2, group=False),
    Trainer("Part II", part2.train_reinforce, part2.train_reinforce_seeds, arith.Model,
            part2.ReinforceConfig(steps=3), 3),
    Trainer("Part II", part2.train_grpo, part2.train_grpo_seeds, arith.Model, part2.GRPOConfig(steps=3, mu=2), 3),
    Trainer("Part II", variant.train_reinforce, variant.train_reinforce_seeds, variant.Model,
            part2.ReinforceConfig(steps=3), 3, group=False),
    Trainer("Part III", part3.train_rl, many.train_rl_seeds, lambda: lm.TinyLM(_TINY, seed=0, dtype=np.float64),
            part3.RLConfig(steps=3, n_prompts=4, G=4, lr=1e-2), 3, kw={"reward_fn": _parity}),
]
IDS = [str(t) for t in TRAINERS]


def _snapshot(policy):
    return copy.deepcopy(policy.state_dict() if hasattr(policy, "state_dict") else vars(policy)
                         if not isinstance(policy, np.ndarray) else policy)


def _equal(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("t", TRAINERS, ids=IDS)
def test_every_trainer_takes_policy_cfg_seed_and_keywords_after(t):
    for fn, third in ((t.single, "seed"), (t.seeds, "seeds")):
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[:3]] == ["policy", "cfg", third], fn.__name__
        assert all(p.default is not p.empty for p in params[3:]), fn.__name__   # world extras: optional
    assert t.seeds.__name__ == t.single.__name__ + "_seeds"


@pytest.mark.parametrize("t", TRAINERS, ids=IDS)
def test_every_trainer_returns_a_trained_copy_and_the_shared_history_keys(t):
    start = t.policy()
    before = _snapshot(start)
    out = t.single(start, t.cfg, 0, **t.kw)
    assert isinstance(out, tuple) and len(out) == 2
    trained, history = out
    assert type(trained) is type(start) and trained is not start
    assert _equal(_snapshot(start), before), "the trainer changed the policy it was given"
    assert not _equal(_snapshot(trained), before), "the trainer returned the policy untrained"
    shared = ["reward"] + ["mean_abs_adv", "degenerate"] * t.group
    for key in shared:
        assert key in history, f"{t} has no history key {key!r}: {sorted(history)}"
        assert len(history[key]) == t.steps, key
        assert np.all(np.isfinite(np.asarray(history[key], dtype=float))), key
    r = np.asarray(history["reward"], dtype=float)
    assert np.all((0 <= r) & (r <= 1))                                       # 0/1 rewards: a mean


@pytest.mark.parametrize("t", TRAINERS, ids=IDS)
def test_several_seeds_stack_the_single_runs(t):
    seeds = [3, 1]
    policies, history = t.seeds(t.policy(), t.cfg, seeds, **t.kw)
    assert len(policies) == len(seeds)
    for i, s in enumerate(seeds):
        _, one = t.single(t.policy(), t.cfg, s, **t.kw)
        for key in ("reward",) + ("mean_abs_adv", "degenerate") * t.group:
            assert np.shape(history[key])[:2] == (len(seeds), t.steps)
            np.testing.assert_allclose(np.asarray(history[key][i], dtype=float),
                                       np.asarray(one[key], dtype=float), rtol=1e-9, err_msg=key)


# ------------------------------------------------------------------------------ the configs
RL_CONFIGS = {"Part I": part1.PGConfig, "Part II": part2.GRPOConfig, "Part III": part3.RLConfig}
SHARED = ("steps", "n_prompts", "G", "lr", "loss_type")               # every RL trainer's batch and step
CLIPPED = {"Part II": part2.GRPOConfig, "Part III": part3.RLConfig}   # the clipped, KL-penalised loss
SHARED_CLIPPED = ("mu", "eps_low", "eps_high", "beta")


def _fields(cfg):
    return {f.name: f for f in dataclasses.fields(cfg)}


@pytest.mark.parametrize("world", RL_CONFIGS)
def test_every_rl_config_names_the_shared_knobs_alike(world):
    fields = _fields(RL_CONFIGS[world])
    missing = [name for name in SHARED if name not in fields]
    assert not missing, f"{world}'s {RL_CONFIGS[world].__name__} lacks {missing}"
    assert isinstance(fields["G"].default, int) and fields["G"].default >= 2
    assert fields["loss_type"].default is None                         # None: rl.DEFAULT_LOSS_TYPE[algo]


@pytest.mark.parametrize("world", CLIPPED)
def test_the_clipped_loss_knobs_have_one_name_and_one_default(world):
    fields = _fields(CLIPPED[world])
    assert all(name in fields for name in SHARED_CLIPPED), [n for n in SHARED_CLIPPED if n not in fields]
    assert fields["eps_low"].default == 0.2 and fields["eps_high"].default is None     # μ: each world its own
    assert fields["beta"].default == 0.0


# ---------------------------------------------------------------------- one DEFAULT_LOSS_TYPE
def test_one_default_loss_type_table_for_every_world():
    for module in (part1, part2, part3):
        assert not hasattr(module, "DEFAULT_LOSS_TYPE"), f"{module.__name__} keeps its own table"
    table = rl.DEFAULT_LOSS_TYPE
    assert set(rl.ADVANTAGES) | set(part3.ALGOS) <= set(table)          # every world's algorithms
    assert set(table.values()) <= set(rl.LOSS_TYPES)
    assert table["grpo"] == "grpo" and table["dr_grpo"] == "dr_grpo" and table["rft"] == table["reinforce"] == "sum"


@pytest.mark.parametrize("algo", rl.ADVANTAGES)
def test_part1_loss_type_none_is_the_table_entry(algo):
    cfg = part1.PGConfig(algo=algo, steps=2, eval_every=1)
    a, _ = part1.train_pg(ns.weak_prior(), cfg, seed=0)
    b, _ = part1.train_pg(ns.weak_prior(), dataclasses.replace(cfg, loss_type=rl.DEFAULT_LOSS_TYPE[algo]), seed=0)
    other = next(t for t in rl.LOSS_TYPES if t != rl.DEFAULT_LOSS_TYPE[algo])
    c, _ = part1.train_pg(ns.weak_prior(), dataclasses.replace(cfg, loss_type=other), seed=0)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("algo", part3.ALGOS)
def test_part3_loss_type_none_is_the_table_entry(algo):
    assert part3.RLConfig(algo=algo).loss_args()["loss_type"] == rl.DEFAULT_LOSS_TYPE[algo]
    assert part3.RLConfig(algo=algo, loss_type="dapo").loss_args()["loss_type"] == "dapo"


@pytest.mark.parametrize("algo", part3.ALGOS)
def test_part3_sapo_is_aggregated_as_grpo(algo):
    # verl 0.9.1 and TRL 1.16.0 both aggregate SAPO as the mean of per-answer token means, whatever the algorithm
    assert part3.RLConfig(algo=algo, loss_mode="sapo").loss_args()["loss_type"] == "grpo"
    assert part3.RLConfig(algo=algo, loss_mode="sapo", loss_type="grpo").loss_args()["loss_type"] == "grpo"
