"""Tests of toy.tinylm.model: every layer's backward and the whole loss's gradient against
finite differences, KV-cache sampling (the textbook loop and the speed path
``toy.tinylm.runs.sample``) against recomputing every step. (The stacked training path is
checked against this model in tests/test_tinylm_runs.py.)"""
import re

import numpy as np
import pytest

from toy import rl
from toy.prob import sample_categorical
from toy.tinylm import runs, task
from toy.tinylm import model as M

# a tiny model (~2k parameters) keeps finite differences fast; init_std 0.5 makes every path matter
TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


# ----------------------------------------------------------------------------- gradients
def _numgrad(f, x, h=1e-6, idx=None):
    """Central finite differences of f() with respect to x (at the entries ``idx``, default all)."""
    g = np.zeros_like(x)
    for i in (np.ndindex(x.shape) if idx is None else idx):
        old = x[i]
        x[i] = old + h
        a = f()
        x[i] = old - h
        b = f()
        x[i] = old
        g[i] = (a - b) / (2 * h)
    return g


def _check_layer(layer, x, fwd=None):
    """Compare a layer's backward (input and parameter gradients) with finite differences of
    L = Σ y ⊙ R for a random R."""
    rng = np.random.default_rng(1)
    fwd = fwd or layer.forward
    R = rng.normal(size=fwd(x).shape)
    loss = lambda: float((fwd(x) * R).sum())  # noqa: E731
    loss()
    dx = layer.backward(R)
    if dx is not None and np.issubdtype(x.dtype, np.floating):
        np.testing.assert_allclose(dx, _numgrad(loss, x), rtol=1e-5, atol=1e-7)
    for name, mod, k in layer.named_params():
        loss()
        layer.backward(R)
        np.testing.assert_allclose(mod.grads[k], _numgrad(loss, mod.params[k]), rtol=1e-5, atol=1e-7,
                                   err_msg=name)


@pytest.mark.parametrize("name", ["linear", "embedding", "layernorm", "relu", "attention", "mlp", "block"])
def test_layer_gradients(name):
    rng = np.random.default_rng(0)
    cfg = TINY
    x = rng.normal(size=(2, 5, cfg.n_embd))
    layer = {
        "linear": lambda: M.Linear(cfg.n_embd, 6, rng, 0.5),
        "embedding": lambda: M.Embedding(15, cfg.n_embd, rng, 0.5),
        "layernorm": lambda: M.LayerNorm(cfg.n_embd),
        "relu": lambda: M.ReLU(),
        "attention": lambda: M.CausalSelfAttention(cfg, rng),
        "mlp": lambda: M.MLP(cfg, rng),
        "block": lambda: M.Block(cfg, rng),
    }[name]()
    for _, mod, k in layer.named_params():                   # random, not 1/0, LN parameters
        mod.params[k] = mod.params[k] + rng.normal(scale=0.3, size=mod.params[k].shape)
    if name == "embedding":
        x = rng.integers(0, 15, size=(2, 5))
    _check_layer(layer, x)


def test_whole_loss_gradient():
    """The RL loss (clipped surrogate + k3 KL, aggregated as GRPO) and a value loss, through
    the whole model, against finite differences in float64."""
    rng = np.random.default_rng(0)
    m = M.TinyLM(TINY, seed=1, dtype=np.float64).add_value_head()
    m.value.params["w"] = rng.normal(size=(TINY.n_embd, 1))
    seqs = rng.integers(0, 15, size=(4, 9))
    mask = (rng.random((4, 8)) < 0.7).astype(float)
    mask[:, -1] = 1
    old = m.logprobs(seqs) + rng.normal(scale=0.1, size=(4, 8))
    ref = m.logprobs(seqs) + rng.normal(scale=0.1, size=(4, 8))
    adv = rng.normal(size=4)
    ret = rng.random((4, 8))

    def loss_and_grads():
        logits, values = m.forward(seqs[:, :-1], value=True)
        lp, probs = M.token_logprobs(logits, seqs[:, 1:])
        loss, dlp = rl.policy_loss(lp, old, adv, mask, "grpo", 0.2, beta=0.1, ref_logp=ref)
        loss += 0.5 * ((values - ret) ** 2 * mask).sum()
        return loss, M.token_logprobs_backward(probs, seqs[:, 1:], dlp), (values - ret) * mask

    _, dlogits, dv = loss_and_grads()
    m.backward(dlogits, dv)
    grads = m.named_grads()
    for name, mod, k in m.named_params():                    # 12 random entries of every parameter
        shape = mod.params[k].shape
        idx = {tuple(rng.integers(0, n) for n in shape) for _ in range(12)}
        num = _numgrad(lambda: loss_and_grads()[0], mod.params[k], idx=idx)
        for i in idx:
            np.testing.assert_allclose(grads[name][i], num[i], rtol=1e-5, atol=1e-8, err_msg=f"{name}{i}")


# ----------------------------------------------------------------------------- sampling
def _recompute_every_step(m, prompts, n, rng=None, temperature=1.0, greedy=False, n_repeat=1):
    """The reference sampler: the whole batch through the model at every step, no cache, one
    uniform per row (toy.prob.sample_categorical). Returns the tokens and their logits."""
    seqs = np.repeat(prompts, n_repeat, axis=0)
    done, toks, logits_seen = np.zeros(len(seqs), bool), [], []
    for _ in range(n):
        logits = m.forward(seqs)[:, -1]
        p = np.exp(((logits - logits.max(axis=-1, keepdims=True)) / temperature).astype(np.float64))
        nxt = logits.argmax(axis=-1) if greedy else sample_categorical(p / p.sum(axis=-1, keepdims=True), rng)
        nxt = np.where(done, task.EOS, nxt)
        logits_seen.append(np.where(done[:, None], 0, logits))
        done |= nxt == task.EOS
        toks.append(nxt)
        seqs = np.concatenate([seqs, nxt[:, None]], axis=1)
        if done.all():
            break
    return np.stack(toks, axis=1), np.stack(logits_seen, axis=1)


@pytest.mark.parametrize("plain", [True, False])
def test_generate_equals_recomputing_every_step(plain):
    """KV-cache sampling, the textbook loop (``generate``) and the speed path (``runs.sample``:
    each distinct unfinished sequence once, ended rows out of the batch) alike, draws the samples
    of the reference that runs the whole batch through the model at every step (the loop: from
    its logits up to float rounding)."""
    m = M.TinyLM(TINY, seed=3)
    _, prompts = task.make_prompts(6, np.random.default_rng(0))
    n = m.config.block_size - prompts.shape[1]
    for kw in ({"temperature": 1.5, "n_repeat": 4}, {"temperature": 0.7}, {"greedy": True, "n_repeat": 2}):
        rng = lambda: None if kw.get("greedy") else np.random.default_rng(2)  # noqa: E731
        ref, ref_logits = _recompute_every_step(m, prompts, n, rng(), **kw)
        if plain:
            out, logits = m.generate(prompts, 16, rng(), return_logits=True, **kw)
            np.testing.assert_allclose(logits, ref_logits, rtol=1e-4, atol=1e-5, err_msg=str(kw))
        else:
            out = runs.sample(m, prompts, 16, rng(), **kw)
        np.testing.assert_array_equal(out, ref, err_msg=str(kw))
        if kw.get("n_repeat") == 4:
            assert len(set((out == task.EOS).argmax(axis=1))) > 1    # rows did end at different steps


def test_sample_equals_generate():
    """``runs.sample`` against the textbook KV-cache loop on a larger batch: the same tokens,
    and the generator left in the same state."""
    m = M.TinyLM(TINY, seed=3)
    _, prompts = task.make_prompts(16, np.random.default_rng(0))
    for kw in ({"n_repeat": 3}, {"temperature": 2.0}):
        r1, r2 = np.random.default_rng(7), np.random.default_rng(7)
        np.testing.assert_array_equal(runs.sample(m, prompts, 16, r1, **kw), m.generate(prompts, 16, r2, **kw))
        assert r1.random() == r2.random()
    np.testing.assert_array_equal(runs.sample(m, prompts, 16, greedy=True), m.generate(prompts, 16, greedy=True))
    with pytest.raises(ValueError, match="rng"):
        runs.sample(m, prompts, 4)


def test_generate_pads_after_eos_and_logprobs_shape():
    m = M.TinyLM(TINY, seed=0)
    _, prompts = task.make_prompts(32, np.random.default_rng(0))
    out = m.generate(prompts, 16, np.random.default_rng(1), temperature=2.0)
    for row in out:
        e = np.flatnonzero(row == task.EOS)
        if len(e):
            assert (row[e[0]:] == task.EOS).all()
    assert m.logprobs(np.concatenate([prompts, out], 1)).shape == (32, prompts.shape[1] + out.shape[1] - 1)
    with pytest.raises(ValueError, match="temperature"):
        m.generate(prompts, 4, np.random.default_rng(0), temperature=0)
    with pytest.raises(ValueError, match="rng"):
        m.generate(prompts, 4)


def _grouped_seqs(rng, B0=3, G=4, P=5, T=9):
    pre = np.repeat(rng.integers(0, 15, size=(B0, P)), G, axis=0)
    return np.concatenate([pre, rng.integers(0, 15, size=(B0 * G, T - P))], axis=1)


def test_float32_stays_float32():
    """No float64 sneaks into the hot path (a numpy float64 scalar would upcast a whole array)."""
    m = M.TinyLM(TINY, seed=0)
    rng = np.random.default_rng(0)
    seqs = _grouped_seqs(rng)
    logits = m.forward(seqs)
    assert logits.dtype == np.float32
    m.backward(rng.normal(size=logits.shape))
    assert all(g.dtype == np.float32 for g in m.named_grads().values())
    for layer in m.h[0].attn.saved[-1]:
        assert layer.dtype == np.float32



def test_parameters_are_named_after_the_layers():
    """Sub-layers are attributes: the parameter names follow them, in the order of the
    forward pass (Adam and the disk cache rely on names and order)."""
    m = M.TinyLM()
    names = [name for name, _, _ in m.named_params()]
    block = ["ln1.g", "ln1.b", "attn.qkv.w", "attn.qkv.b", "attn.proj.w", "attn.proj.b",
             "ln2.g", "ln2.b", "mlp.fc.w", "mlp.fc.b", "mlp.proj.w", "mlp.proj.b"]
    assert names == (["wte.w", "wpe.w"] + [f"h.{i}.{n}" for i in range(2) for n in block]
                     + ["ln_f.g", "ln_f.b", "lm_head.w"])
    # by hand: embeddings 15·64 + 27·64; per block 2·128 (LN) + 64·192 + 192 + 64·64 + 64
    # + 64·128 + 128 + 128·64 + 64; final LN 128; head 64·15
    assert m.n_params() == 960 + 1728 + 2 * (256 + 12480 + 4160 + 8320 + 8256) + 128 + 960 == 70_720
    state = m.add_value_head().state_dict()
    assert list(state)[-2:] == ["value.w", "value.b"]
    for k, v in M.TinyLM().load_state_dict(state).state_dict().items():
        np.testing.assert_array_equal(v, state[k], err_msg=k)

# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_LM = M.TinyLM(TINY, seed=0)
_RNG = np.random.default_rng(0)
_L3 = np.zeros((1, 2, len(task.VOCAB)))
BAD_INPUTS = [
    (M.ModelConfig, (), {"n_head": 3}, "n_embd"),
    (M.ModelConfig, (), {"n_layer": 0}, "n_layer"),
    (M.ModelConfig, (), {"block_size": "27"}, "block_size"),
    (M.ModelConfig, (), {"init_std": -0.1}, "init_std"),
    (M.TinyLM, ({"n_layer": 2},), {}, "config"),
    (M.TinyLM, (TINY,), {"seed": -1}, "seed"),
    (_LM.astype, (np.int32,), {}, "dtype"),
    (_LM.forward, ([[-1]],), {}, "idx"),                             # was the '$' embedding
    (_LM.forward, ([[99]],), {}, "idx"),                             # was an IndexError
    (_LM.forward, ([[1.5]],), {}, "idx"),
    (_LM.forward, ([1, 2],), {}, "idx"),
    (_LM.forward, ([[1] * 40],), {}, "idx"),
    (_LM.forward, ([[1]],), {"pos": -1}, "pos"),
    (_LM.forward, ([[1]],), {"value": True}, "value"),
    (_LM.logprobs, ([[1]],), {}, "seqs"),
    (_LM.logprobs, ([[1, 20]],), {}, "seqs"),
    (_LM.new_kv_cache, (0,), {}, "B"),
    (_LM.load_state_dict, ([1, 2],), {}, "state"),
    (_LM.load_state_dict, ({},), {}, "state"),
    (_LM.generate, ([[1, 2]], 3, _RNG), {"temperature": "1"}, "temperature"),
    (_LM.generate, ([[1, 2]], 3, _RNG), {"temperature": None}, "temperature"),
    (_LM.generate, ([[1, 2]], 3, _RNG), {"temperature": 0}, "temperature"),
    (_LM.generate, ([[1, 2]], 3, None), {}, "rng"),
    (_LM.generate, ([[1, 2]], 3, 0), {}, "rng"),
    (_LM.generate, ([[1, 2]], None, _RNG), {}, "max_new_tokens"),
    (_LM.generate, ([[1, 2]], 0, _RNG), {}, "max_new_tokens"),
    (_LM.generate, ([[1, 2]], 3, _RNG), {"n_repeat": 0}, "n_repeat"),
    (_LM.generate, ([[1, 2]], 3, _RNG), {"greedy": "no"}, "greedy"),
    (_LM.generate, ([[1, 99]], 3, _RNG), {}, "prefix"),
    (_LM.generate, ([1, 2], 3, _RNG), {}, "prefix"),
    (M.Adam, (-1,), {}, "lr"),
    (M.Adam, ("1e-3",), {}, "lr"),
    (M.Adam, (1e-3,), {"betas": (0.9, 1.0)}, "betas"),
    (M.Adam, (1e-3,), {"betas": 0.9}, "betas"),
    (M.Adam, (1e-3,), {"eps": 0}, "eps"),
    (M.Adam, (1e-3,), {"grad_clip": -1}, "grad_clip"),
    (M.Adam(1e-3).step, ("model",), {}, "model"),
    (M.Adam(1e-3).step, (_LM,), {"lr": np.nan}, "lr"),
    (M.log_softmax, ([np.nan, 1.0],), {}, "logits"),
    (M.token_logprobs, (_L3, [[0, 15]]), {}, "targets"),
    (M.token_logprobs, (_L3, [[0]]), {}, "targets"),
    (M.token_logprobs, (_L3[0], [[0, 1]]), {}, "logits"),
    (M.token_logprobs_backward, (_L3, [[0, 1]], np.zeros((1, 3))), {}, "targets"),
    (M.token_logprobs_backward, (_L3, [[0, -1]], np.zeros((1, 2))), {}, "targets"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
