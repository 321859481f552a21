"""Bad input at the door, found by a generated audit (every public function's harvested valid call,
each argument replaced in turn by None, a string, a dict, a list of strings, NaN/inf/-1/10**12, an
extra axis or an empty array): each case below was a TypeError, an IndexError, a MemoryError, a hang
or an unnamed ValueError before; now a ValueError naming the argument, raised before any work."""
import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from toy import arith, ledger, plots, prose                                    # noqa: E402
from toy.arith import train as at, variant as av                               # noqa: E402
from toy import numsearch as ns  # noqa: E402
from toy.numsearch import figures as nf, many as nm, train as nt               # noqa: E402
from toy.tinylm import figures as tf, variants                                  # noqa: E402

_TR, _TE = arith.make_dataset(20, 10, seed=0)
_AX = plots.figure()[1]
CASES = [
    (lambda: arith.make_problems(10**12, 0), "n and max_steps"),              # was: MemoryError
    (lambda: arith.make_dataset(10**12), "n_train"),
    (lambda: arith.sample(arith.Model(), _TR, 10**12, np.random.default_rng(0)), "n"),
    (lambda: av.sample(av.Model(), _TR, 10**12, np.random.default_rng(0)), "n"),
    (lambda: at.train_grpo_seeds(arith.Model(), at.GRPOConfig(steps=1), seeds=None), "seeds"),   # was: TypeError
    (lambda: at.train_reinforce_seeds(arith.Model(), seeds="x"), "seeds"),              # was: "seed must ..."
    (lambda: av.train_reinforce_seeds(av.Model(), seeds={"a": 1}), "seeds"),
    (lambda: ns.off_path(ns.weak_prior(), [0], n=10**12), "n"),               # was: MemoryError
    (lambda: ns.replay([[8]], np.array([[8]])), "target"),                   # was: numpy's message
    (lambda: nt.group_update_size(0.5, 10**12), "G"),                        # was: MemoryError
    (lambda: nt.advantage_gap(0.5, 10**6), "G"),
    (lambda: nt.train_exact(ns.weak_prior(), steps=10**12), "steps"),         # was: a hang
    (lambda: nt.demonstrations("x"), "policy"),                              # was: "pi must ..."
    (lambda: nm.train_pg_seeds(np.zeros((0, 16)), nt.PGConfig(steps=1), seeds=[0]), "policy"),
    (lambda: plots.figure(10**6, 10**6), "ncols and nrows"),                 # was: MemoryError
    (lambda: plots.curves(_AX, None, {"a": [1, 2]}), "x"),                  # was: IndexError
    (lambda: plots.curves(_AX, [0, 1], {"a": [1, 2]}, styles="x"), "styles"),  # was: AttributeError
    (lambda: plots.advantage_table(pd.DataFrame({"a": [1.0]}), None), "columns"),   # was: TypeError
    (lambda: plots.prob_bars(_AX, [0.5, 0.5], None), "labels"),
    (lambda: plots.stacked_barh(_AX, pd.DataFrame({"a": [1.0]}), (0, 1), fmt=None), "fmt"),
    (lambda: plots.stacked_barh(_AX, pd.DataFrame({"a": [1.0]}), ["a", "b"]), "xlim"),
    (lambda: nf.best_possible(_AX, J="x"), "J"),                             # was: TypeError
    (lambda: nf.degenerate_groups(None, {}), "deg_by_G"),
    (lambda: tf.estimator_bars(None, {8: [1.0]}, {8: [1.0]}), "names"),
    (lambda: tf.length_curves(_AX, [0, 1], {"a": 1}, "t"), "runs"),
    (lambda: ledger.verdict("yes"), "ok"),                                   # was: "reproduced"
    (lambda: prose.pm(0.5, 0.1, signed="yes"), "signed"),
    (lambda: variants.race_configs("yes"), "controls"),
    (lambda: variants.race_configs(far=1), "far"),
    (lambda: variants.race(names="GRPO"), "names"),                         # a string, not a list of arms
    (lambda: tf.paired_differences(_AX, ["a", "b"], [(0.1, 0.01, 0.02)]), "pairs"),
    (lambda: tf.paired_differences(_AX, "ab", [(0.1, 0.01, 0.02)] * 2), "names"),
]


@pytest.mark.parametrize("call, name", CASES, ids=[n + str(i) for i, (_, n) in enumerate(CASES)])
def test_bad_input_is_refused_at_the_door_naming_it(call, name):
    with pytest.raises(ValueError, match=name.split()[0]):
        call()
