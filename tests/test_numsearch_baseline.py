"""Pinning test of the running-mean baseline of ``toy.numsearch_train.train_pg`` (§I.8): each
step's weights are R − b with b the running mean b ← decay·b + (1 − decay)·mean R of the
*earlier* batches, replayed here by a naive loop over the batches the trainer drew."""
import numpy as np
import pytest

from toy import numsearch as ns
from toy import numsearch_train as nt


def _record_weights(monkeypatch):
    """Record (rewards, w) of every call of the one loss inside ``train_pg``."""
    calls = []
    real = nt.weighted_logprob_loss

    def rec(theta, traj, w, loss_type="sum"):
        calls.append((np.array(traj.reward, dtype=float), np.array(w, dtype=float)))
        return real(theta, traj, w, loss_type)

    monkeypatch.setattr(nt, "weighted_logprob_loss", rec)
    return calls


@pytest.mark.parametrize("decay", [None, 0.8, 0.0])                     # None: the default, 0.9
def test_running_mean_baseline_naive_loop(monkeypatch, decay):
    calls = _record_weights(monkeypatch)
    cfg = nt.PGConfig(method="baseline", steps=15, prompts=4, G=2, baseline=0.3, eval_every=100,
                      **({} if decay is None else {"decay": decay}))
    decay = 0.9 if decay is None else decay
    _, h = nt.train_pg(ns.weak_prior(), cfg, seed=2)
    assert len(calls) == 15
    b, used = 0.3, []
    for R, w in calls:
        used.append(b)
        np.testing.assert_allclose(w, R - b, rtol=0, atol=1e-15)          # w = R − b, b from before
        b = decay * b + (1 - decay) * sum(R) / len(R)
    np.testing.assert_allclose(h["baseline"], used, rtol=1e-12)
    np.testing.assert_allclose(h["success"], [R.mean() for R, _ in calls], rtol=1e-12)
    assert len(set(np.round(used, 12))) > 3                              # the baseline did move


def test_decay_one_keeps_the_baseline_constant(monkeypatch):
    calls = _record_weights(monkeypatch)
    cfg = nt.PGConfig(method="baseline", steps=5, prompts=2, G=2, baseline=0.25, decay=1.0, eval_every=100)
    _, h = nt.train_pg(ns.weak_prior(), cfg, seed=0)
    np.testing.assert_array_equal(h["baseline"], [0.25] * 5)
    for R, w in calls:
        np.testing.assert_array_equal(w, R - 0.25)
