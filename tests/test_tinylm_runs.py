"""Tests of toy/tinylm/runs.py, the stacked speed path: its forward and backward against the
textbook model (``TinyLM.forward``/``backward`` on every row), its sampling against
``TinyLM.generate``, and the promise of ``train_rl_many``: a run trained among others is the same
run, bit for bit, as trained alone (parameters and every history entry)."""
import hashlib

import numpy as np
import pytest

from toy.tinylm import many as MANY, model as M, runs, train as T
from toy.tinylm.task import EOS, PROMPT_LEN, make_prompts

TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


def _rows(rng, n_prompts, per, L=PROMPT_LEN + 6, vocab=15):
    """Sorted distinct sequences: ``per`` random answers to each of ``n_prompts`` prompts."""
    _, p = make_prompts(n_prompts, rng)
    s = np.concatenate([np.repeat(p, per, axis=0), rng.integers(0, vocab, size=(n_prompts * per, L - PROMPT_LEN))], 1)
    return np.unique(s, axis=0)


def _digest(model):
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode() + np.ascontiguousarray(v).tobytes())
    return h.hexdigest()


def test_stacked_forward_backward_equal_the_textbook_model():
    """Logits at the answer positions and every parameter's gradient, for 3 runs of different
    parameters and different rows, against ``TinyLM.forward``/``backward`` of each run on all of
    its rows (float32, so to float32 rounding)."""
    rng = np.random.default_rng(0)
    models = [M.TinyLM(TINY, seed=s) for s in range(3)]
    seqs = [_rows(rng, 3, 4), _rows(rng, 5, 2), _rows(rng, 1, 3)]
    st, lay = runs.Stack(models), runs.Layout(seqs)
    logits, _, tape = runs.forward(st, lay)
    d = rng.normal(size=logits.shape).astype(np.float32)
    for r in range(3):
        d[r, lay.u[r]:] = 0                                          # padding rows: no gradient
    runs.backward(st, lay, tape, d)
    for r, (m, s) in enumerate(zip(models, seqs)):
        full = m.forward(s[:, :-1])                                  # (U, L−1, V)
        np.testing.assert_allclose(logits[r, :len(s)], full[:, PROMPT_LEN - 1:], rtol=1e-4, atol=1e-5)
        dfull = np.zeros_like(full)
        dfull[:, PROMPT_LEN - 1:] = d[r, :len(s)]
        m.backward(dfull)
        for name, g in m.named_grads().items():
            np.testing.assert_allclose(st.grads[name][r], g, rtol=1e-3, atol=2e-5, err_msg=name)


def test_a_run_among_others_computes_what_it_computes_alone_bit_for_bit():
    """The forward and backward of one run's rows, alone (R = 1) and as run 1 of three runs with
    other parameters and more or fewer rows (the default model: OpenBLAS's row blocks matter)."""
    rng = np.random.default_rng(1)
    m = M.TinyLM(seed=3)
    mine = _rows(rng, 10, 8, L=PROMPT_LEN + 16)
    others = [_rows(rng, 20, 6, L=PROMPT_LEN + 16), _rows(rng, 3, 5, L=PROMPT_LEN + 16)]
    alone, among = runs.Stack([m]), runs.Stack([M.TinyLM(seed=1), m, M.TinyLM(seed=2)])
    la, lm = runs.Layout([mine]), runs.Layout([others[0], mine, others[1]])
    oa, _, ta = runs.forward(alone, la)
    om, _, tm = runs.forward(among, lm)
    U = len(mine)
    np.testing.assert_array_equal(oa[0, :U], om[1, :U])
    d = np.random.default_rng(2).normal(size=(U,) + oa.shape[2:]).astype(np.float32)
    da, dm = np.zeros_like(oa), np.zeros_like(om)
    da[0, :U], dm[1, :U] = d, d
    runs.backward(alone, la, ta, da)
    runs.backward(among, lm, tm, dm)
    for name in alone.names:
        np.testing.assert_array_equal(alone.grads[name][0], among.grads[name][1], err_msg=name)


def test_stacked_sampling_equals_generate():
    """``runs.generate`` for 3 runs draws, for each, the tokens ``TinyLM.generate`` draws alone
    with the same generator (and the generators end in the same state)."""
    models = [M.TinyLM(TINY, seed=s) for s in range(3)]
    _, prompts = make_prompts(4, np.random.default_rng(0))
    rngs = [np.random.default_rng(10 + r) for r in range(3)]
    out = runs.generate(runs.Stack(models), np.stack([prompts] * 3), 3, rngs, [1.0, 0.7, 1.0], 16)
    for r, m in enumerate(models):
        rng = np.random.default_rng(10 + r)
        want = m.generate(prompts, 16, rng, [1.0, 0.7, 1.0][r], n_repeat=3)
        np.testing.assert_array_equal(out[r, :, :want.shape[1]], want)
        assert (out[r, :, want.shape[1]:] == EOS).all()
        assert rng.random() == rngs[r].random()


def test_slots_put_each_sequence_over_its_parents_cache_moving_few_rows():
    """``runs._slots``: after the copies src → dst on a batch whose row i holds "i", the row of
    each next sequence holds its parent, the rows 0..n−1 are each used once, and only the rows
    that cannot stay (a second child of a row, or a parent at row ≥ n) are copied."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        rows = int(rng.integers(1, 40))
        parent = np.sort(rng.integers(0, rows, size=int(rng.integers(1, 2 * rows))))
        slot, src, dst = runs._slots(parent)
        batch = np.arange(max(rows, len(parent)))
        assert not np.isin(src, dst).any()                # sources are never overwritten
        batch[dst] = batch[src]
        np.testing.assert_array_equal(np.sort(slot), np.arange(len(parent)))
        np.testing.assert_array_equal(batch[slot], parent)
        can_stay = len(np.unique(parent[parent < len(parent)]))
        assert len(dst) == len(parent) - can_stay


CONFIGS = {
    "grpo": T.RLConfig(steps=4, n_prompts=4, G=4),
    "dr_grpo, lr, temperature": T.RLConfig(algo="dr_grpo", steps=4, n_prompts=4, G=4, lr=3e-3, temperature=1.5),
    "rft": T.RLConfig(algo="rft", steps=4, n_prompts=4, G=4, lr=2e-3),
    "grpo, clip 0": T.RLConfig(steps=4, n_prompts=4, G=4, grad_clip=0.0, lr=2e-3),
}


def test_runs_trained_together_equal_runs_trained_alone():
    """``train_rl_many`` on four configs (GRPO, Dr. GRPO at another learning rate and
    temperature, RFT, no clipping) and seeds: each run's policy and history equal
    ``train_rl`` of that run alone, bit for bit (the default model, so that BLAS blocks matter)."""
    sft = M.TinyLM(seed=0)
    cfgs, seeds = list(CONFIGS.values()), [3, 1, 4, 1]
    together = MANY.train_rl_many(sft, cfgs, seeds)
    for (cfg, seed, name), (policy, hist) in zip(zip(cfgs, seeds, CONFIGS), together):
        (p, h), = MANY.train_rl_many(sft, [cfg], [seed])
        assert _digest(p) == _digest(policy), name
        for k, v in h.items():
            if k != "time":
                np.testing.assert_array_equal(np.asarray(v), np.asarray(hist[k]), err_msg=f"{name}: {k}")


@pytest.mark.parametrize("cfg", [T.RLConfig(steps=3, n_prompts=4, G=4, beta=0.1),
                                 T.RLConfig(steps=3, n_prompts=4, G=4, mu=2, n_minibatches=2)],
                         ids=["beta", "mu2-minibatches2"])
def test_runs_with_beta_or_minibatches_together_equal_alone(cfg):
    """β > 0 (a reference model in the stack) and μ = 2 epochs of 2 minibatches: three seeds
    together, each equal to its run alone."""
    sft = M.TinyLM(TINY, seed=0)
    together = MANY.train_rl_many(sft, [cfg] * 3, [0, 1, 2])
    for seed, (policy, hist) in enumerate(together):
        (p, h), = MANY.train_rl_many(sft, [cfg], [seed])
        assert _digest(p) == _digest(policy)
        for k, v in h.items():
            if k != "time":
                np.testing.assert_array_equal(np.asarray(v), np.asarray(hist[k]), err_msg=k)


def test_reward_fns_and_samplers_are_per_run():
    """Each run gets its own reward function and prompt sampler, as it would alone."""
    sft = M.TinyLM(TINY, seed=0)
    cfg = T.RLConfig(steps=3, n_prompts=4, G=4)
    pool = make_prompts(16, np.random.default_rng(5))[0]
    half = lambda ans, d: 0.5 * T.exact_reward(ans, d)                     # noqa: E731
    together = MANY.train_rl_many(sft, [cfg, cfg], [0, 0], reward_fns=[half, None],
                               prompt_samplers=[T.CurriculumSampler(pool), None])
    alone = [MANY.train_rl_many(sft, [cfg], [0], reward_fns=[half], prompt_samplers=[T.CurriculumSampler(pool)])[0],
             MANY.train_rl_many(sft, [cfg], [0])[0]]
    for (p, h), (q, g) in zip(alone, together):
        assert _digest(p) == _digest(q)
        np.testing.assert_array_equal(h["accuracy"], g["accuracy"])
        np.testing.assert_array_equal(h["reward"], g["reward"])
    np.testing.assert_array_equal(together[0][1]["reward"], 0.5 * np.array(together[0][1]["accuracy"]))   # half's


@pytest.mark.parametrize("call, match", [
    (lambda sft: MANY.train_rl_many(sft, [], []), "cfgs"),
    (lambda sft: MANY.train_rl_many(sft, [T.RLConfig(steps=1)], [0, 1]), "seeds"),
    (lambda sft: MANY.train_rl_many(sft, [T.RLConfig(algo="ppo", steps=1), T.RLConfig(steps=1)], [0, 1]), "cfgs"),
    (lambda sft: MANY.train_rl_many(sft, [T.RLConfig(steps=1), T.RLConfig(steps=2)], [0, 1]), "cfgs"),
    (lambda sft: MANY.train_rl_many([sft], [T.RLConfig(steps=1)] * 2, [0, 1]), "policy"),
    (lambda sft: MANY.train_rl_many(sft, [T.RLConfig(steps=1)], [0], reward_fns=[1]), "reward_fn"),
    (lambda sft: runs.Stack([]), "models"),
    (lambda sft: runs.Stack([sft, M.TinyLM(TINY)]), "models"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(M.TinyLM(seed=0))
