"""``many.train_rl_many``, the loop every cached and recorded run goes through, is the textbook
``train.train_rl`` run by run: the same samples, records and parameters, to float64 rounding, for
every algorithm and every loss variant (a run's sampled answers would differ at the first token
whose probability moved by a rounding: the histories are equal, not close)."""
import ast
import inspect
import textwrap

import numpy as np
import pytest

from toy.record import cache
from toy.tinylm import many as MANY, train as T

BASE = dict(steps=3, n_prompts=4, G=4, lr=3e-2)
CASES = {
    "grpo": {}, "dr_grpo": dict(algo="dr_grpo"), "rft": dict(algo="rft"), "ppo": dict(algo="ppo", mu=2),
    "lm-ppo, minibatches": dict(algo="ppo", kl_coef=0.1, mu=2, n_minibatches=2),
    "grpo, beta": dict(beta=0.1, mu=2), "dapo, minibatches": dict(mu=3, n_minibatches=2, eps_high=0.28, loss_type="dapo"),
    "gspo": dict(mu=3, ratio_level="sequence"), "cispo": dict(mu=3, loss_mode="cispo", eps_low=1.0, eps_high=4.0),
    "delta": dict(mu=3, delta=1.5), "top entropy": dict(mu=2, top_entropy_quantile=0.5),
    "bnpo": dict(mu=2, loss_type="bnpo", micro_batch=4), "kl bias correction": dict(beta=0.1, kl_bias_correction=True, mu=2),
    "sapo": dict(mu=3, loss_mode="sapo"), "cispo cap": dict(mu=3, loss_mode="cispo", eps_low=1.0, cispo_cap=0.2),
    "top entropy, micro-batches": dict(mu=2, top_entropy_quantile=0.5, n_minibatches=2, entropy_micro_batches=2),
}


@pytest.fixture(scope="module")
def sft64():
    """The book's SFT warm-up in float64 (an untrained model gets every answer wrong: no gradient)."""
    return cache.warmup_model(verbose=False).copy().astype(np.float64)


@pytest.mark.parametrize("name", CASES)
def test_train_rl_many_is_train_rl_run_by_run(sft64, name):
    cfg = T.RLConfig(**BASE, **CASES[name])
    p1, h1 = T.train_rl(sft64, cfg, seed=1, progress=False)
    (p2, h2), _ = MANY.train_rl_many(sft64, [cfg, cfg], [1, 2], progress=False)      # among another run
    assert h1.keys() == h2.keys()
    for k in h1:
        if k != "time":
            np.testing.assert_allclose(h1[k], h2[k], rtol=1e-8, atol=1e-10, err_msg=k)
    for k, v in p1.state_dict().items():
        np.testing.assert_allclose(p2.state_dict()[k], v, rtol=1e-7, atol=1e-9, err_msg=k)
    moved = max(np.abs(p1.state_dict()[k] - v).max() for k, v in sft64.state_dict().items())
    assert moved > 1e-3                                       # the runs trained: the test can fail


def test_train_rl_is_the_textbook_loop():
    """§III.5 prints ``train_rl``: at most 60 lines, and the only functions it calls are the
    equations (``rl``, the log-probabilities and their gradient, the entropy), the model (its
    forward and backward), the sampler (problems, rollouts, minibatches), Adam and the run's
    ``Records`` (its writer): no bookkeeping helper, no speed path."""
    src = textwrap.dedent(inspect.getsource(T.train_rl))
    assert len(src.splitlines()) <= 60
    calls = set()
    fn = ast.parse(src).body[0]
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):           # the body (not the door's decorator)
        if isinstance(node, ast.Call):
            f = node.func
            calls.add(f.id if isinstance(f, ast.Name) else f"{ast.unparse(f.value)}.{f.attr}")
    equations = {c for c in calls if c.startswith("rl.")} | {"token_logprobs", "token_logprobs_backward", "entropy"}
    model = {"policy.copy", "policy.add_value_head", "policy.forward", "policy.backward", "ref.forward"}
    sampler = {"draw_problems", "rollout", "minibatches", "np.random.default_rng"}
    adam = {"Adam", "opt.step"}
    records = {"Records", "log.sampled", "log.shaped", "log.updated", "log.end_step", "log.close"}
    plain = {"range", "len", "slice", "ro.reward.reshape", "logp.copy", "cfg.loss_args",
             "rl.advantages(ro.reward.reshape(-1, cfg.G), cfg.algo).ravel"}
    assert calls - equations - model - sampler - adam - records - plain == set()
    for name in ("rollout", "rl.advantages", "rl.policy_loss", "rl.ppo_targets", "rl.value_loss",
                 "token_logprobs", "policy.backward", "opt.step", "log.updated"):
        assert name in calls, name
