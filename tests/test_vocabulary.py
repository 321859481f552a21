"""One vocabulary across the three worlds: the RL configs of Part I (Number Search), Part II (the
arithmetic toy) and Part III (the thinking model) name the same knob the same way, and each
world's ``DEFAULT_LOSS_TYPE`` is keyed by algorithm with the normalisers of ``toy.rl``. A world
that renames a shared field (``G`` → ``group_size``, ``eps_low`` → ``clip``) fails here."""
import dataclasses

import pytest

from toy import rl
from toy.arith import train as part2
from toy.numsearch import train as part1
from toy.tinylm import train as part3

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
    assert fields["loss_type"].default is None                         # None: DEFAULT_LOSS_TYPE[algo]


@pytest.mark.parametrize("world", CLIPPED)
def test_the_clipped_loss_knobs_have_one_name_and_one_default(world):
    fields = _fields(CLIPPED[world])
    assert all(name in fields for name in SHARED_CLIPPED), [n for n in SHARED_CLIPPED if n not in fields]
    assert fields["eps_low"].default == 0.2 and fields["eps_high"].default is None     # μ: each world its own
    assert fields["beta"].default == 0.0


@pytest.mark.parametrize("module", [part1, part2, part3], ids=["Part I", "Part II", "Part III"])
def test_default_loss_type_is_keyed_by_algorithm(module):
    table = module.DEFAULT_LOSS_TYPE
    assert set(table) <= set(rl.ADVANTAGES) | {"ppo"}, set(table) - set(rl.ADVANTAGES)
    assert set(table.values()) <= set(rl.LOSS_TYPES)
    assert table.get("grpo") == "grpo"                                 # GRPO's per-answer mean, in every world
