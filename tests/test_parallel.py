"""toy.parallel.starmap against the plain loop it replaces."""
import numpy as np
import pytest

from toy import arith, parallel
from toy.arith import train as arith_train


def _draws(seed, n):
    return np.random.default_rng(seed).normal(size=n).sum()


def test_starmap_equals_the_loop_bit_for_bit():
    args = [(s, 1000 + s) for s in range(5)]
    assert parallel.starmap(_draws, args, processes=2) == [_draws(*a) for a in args]
    assert parallel.starmap(_draws, args, processes=1) == [_draws(*a) for a in args]


def test_starmap_runs_a_trainer_as_in_this_process():
    train, test = arith.make_dataset(seed=0)
    cfg = arith_train.GRPOConfig(steps=3)
    jobs = [(arith.Model(), cfg, s) for s in (0, 1, 2)]
    for (got_model, got), a in zip(parallel.starmap(arith_train.train_grpo, jobs), jobs):
        want_model, want = arith_train.train_grpo(*a)
        assert got.keys() == want.keys()
        np.testing.assert_array_equal(got_model.delta, want_model.delta)
        for k in want:
            np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]), err_msg=k)


@pytest.mark.parametrize("processes", [0, 1.5, "2", None])
def test_bad_processes(processes):
    with pytest.raises(ValueError, match="^processes"):
        parallel.starmap(_draws, [(0, 1)], processes=processes)


def test_bad_fn():
    with pytest.raises(ValueError, match="^fn"):
        parallel.starmap("grpo", [(0, 1)])
