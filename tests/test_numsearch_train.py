"""toy.numsearch_train: bad input raises a ValueError naming the argument (the trainers' values
are pinned in test_numsearch*.py)."""
import re

import numpy as np
import pytest

from toy import numsearch as ns
from toy import numsearch_train as nt

_TH = np.zeros((ns.S, ns.A))
_TRAJ = ns.replay([[8, 12, 10, 11], [8, 4]], [11, 3])
_R = np.array([[1.0, 0.0, 1.0, 0.0]])

# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (nt.loss_coefficients, (np.ones((2, 4)), "mean"), {}, "loss_type"),
    (nt.loss_coefficients, (np.ones(4),), {}, "mask"),
    (nt.loss_coefficients, (np.zeros((0, 4)),), {}, "mask"),
    (nt.loss_coefficients, (2 * np.ones((2, 4)),), {}, "mask"),
    (nt.weighted_logprob_loss, (_TH, _TRAJ, np.ones(3)), {}, "w"),
    (nt.weighted_logprob_loss, (_TH, _TRAJ, [np.nan, 1]), {}, "w"),
    (nt.weighted_logprob_loss, (_TH, _TRAJ, np.ones(2), "mean"), {}, "loss_type"),
    (nt.weighted_logprob_loss, (_TH, "traj", np.ones(2)), {}, "traj"),
    (nt.weighted_logprob_loss, (_TH[:4], _TRAJ, np.ones(2)), {}, "theta"),
    (nt.SFTConfig, (), {"steps": -1}, "steps"),
    (nt.SFTConfig, (), {"steps": 2.5}, "steps"),
    (nt.SFTConfig, (), {"lr": np.nan}, "lr"),
    (nt.SFTConfig, (), {"lr": 0}, "lr"),
    (nt.SFTConfig, (), {"eval_every": 0}, "eval_every"),
    (nt.ReSTConfig, (), {"rounds": -1}, "rounds"),
    (nt.ReSTConfig, (), {"samples": 0}, "samples"),
    (nt.ReSTConfig, (), {"sft_steps": None}, "sft_steps"),
    (nt.ReSTConfig, (), {"lr": "1"}, "lr"),
    (nt.ReSTConfig, (), {"accumulate": "no"}, "accumulate"),
    (nt.ReSTConfig, (), {"targets": (0, 3)}, "targets"),
    (nt.ReSTConfig, (), {"targets": ()}, "targets"),
    (nt.ReSTConfig, (), {"eval_targets": (17,)}, "eval_targets"),
    (nt.PGConfig, (), {"lr": -1, "steps": -5}, "steps"),
    (nt.PGConfig, (), {"lr": -1}, "lr"),
    (nt.PGConfig, (), {"eval_every": 0}, "eval_every"),                 # was a ZeroDivisionError
    (nt.PGConfig, (), {"method": "ppo"}, "method"),
    (nt.PGConfig, (), {"G": 1}, "G"),                                   # a group of 1 for GRPO
    (nt.PGConfig, (), {"method": "reinforce", "G": 0}, "G"),
    (nt.PGConfig, (), {"prompts": 0}, "prompts"),
    (nt.PGConfig, (), {"loss_type": "mean"}, "loss_type"),
    (nt.PGConfig, (), {"baseline": None}, "baseline"),
    (nt.PGConfig, (), {"decay": 1.5}, "decay"),
    (nt.PGConfig, (), {"targets": (3.5,)}, "targets"),
    (nt.pg_weights, (_R, "ppo"), {}, "method"),
    (nt.pg_weights, (1.0, "grpo"), {}, "rewards"),
    (nt.pg_weights, ([[1, np.nan]], "reinforce"), {}, "rewards"),
    (nt.pg_weights, (_R, "baseline"), {"b": "0.5"}, "b"),
    (nt.pg_weights, (_R, "baseline"), {"b": [0.5, 0.5]}, "rewards"),
    (nt.demonstrations, (), {"targets": (0,)}, "targets"),
    (nt.demonstrations, (), {"targets": (2.5,)}, "targets"),
    (nt.train_sft, (_TH[:3], _TRAJ), {}, "theta0"),
    (nt.train_sft, (_TH, "demos"), {}, "demos"),
    (nt.train_sft, (_TH, _TRAJ), {"cfg": {"steps": 3}}, "cfg"),
    (nt.train_sft, (_TH, _TRAJ), {"seed": -1}, "seed"),
    (nt.train_rest, (_TH[:3],), {}, "theta0"),
    (nt.train_rest, (_TH,), {"cfg": nt.PGConfig()}, "cfg"),
    (nt.train_pg, (_TH,), {"seed": None}, "seed"),
    (nt.train_pg, (None,), {}, "theta0"),
    (nt.reinforce_estimate, (_TH, _TRAJ), {"w": np.ones(5)}, "w"),
    (nt.degenerate_probability, ([0.5], None), {}, "G"),
    (nt.degenerate_probability, ([0.5], np.inf), {}, "G"),
    (nt.degenerate_probability, ([0.5], 0), {}, "G"),
    (nt.degenerate_probability, ([1.5], 4), {}, "p"),
    (nt.group_update_size, ([0.5], 1), {}, "G"),
    (nt.group_update_size, ([0.5], "8"), {}, "G"),
    (nt.group_update_size, ([0.5], 8, "rloo"), {}, "method"),
    (nt.group_update_size, ([-0.5], 8), {}, "p"),
    (nt.train_pg_seeds, (_TH,), {"seeds": [0, -1]}, "seeds"),
    (nt.train_pg_seeds, (_TH,), {"seeds": 3}, "seeds"),
    (nt.train_pg_seeds, (_TH,), {"seeds": []}, "seeds"),
    (nt.train_pg_seeds, (_TH,), {"cfg": nt.ReSTConfig()}, "cfg"),
    (nt.train_pg_seeds, (_TH[:5],), {"seeds": [0]}, "theta"),
    (nt.train_rest_seeds, (_TH,), {"seeds": [1.5]}, "seeds"),
    (nt.train_rest_seeds, (_TH,), {"cfg": None}, "cfg"),
    (nt.train_exact, (_TH,), {"steps": -1}, "steps"),
    (nt.train_exact, (_TH,), {"lr": 0}, "lr"),
    (nt.train_exact, (_TH,), {"eval_every": 0}, "eval_every"),
    (nt.train_exact, (_TH[:2],), {}, "theta0"),
    (nt.mean_se, ([1.0],), {}, "x"),
    (nt.mean_se, (np.ones((3, 2)),), {"axis": 2}, "axis"),
    (nt.mean_se, ([1.0, np.nan],), {}, "x"),
    (nt.estimate_variance, (_TH, "traj", np.ones(2)), {}, "traj"),
    (nt.estimate_variance, (_TH, _TRAJ, np.ones(3)), {}, "w"),
    (nt.batch_cosines, (_TH, _TRAJ, np.ones(2), None), {}, "n"),
    (nt.batch_cosines, (_TH, _TRAJ, np.ones(2), 3), {}, "n"),
    (nt.batch_cosines, (_TH, None, np.ones(2), 1), {}, "traj"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
