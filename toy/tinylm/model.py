r"""A ~70k-parameter decoder-only transformer in pure numpy, with a hand-written backward pass.

Why write the backward by hand?  The book is numpy-only (no autograd library), and a
transformer is only six kinds of operation: embedding, layer norm, linear, causal
self-attention, ReLU and softmax cross-entropy. Each one's equations, forward and backward, are
a few lines in ``layers.py`` (``linear`` and ``linear_backward``, ``layer_norm`` and
``layer_norm_backward``, ``attend`` and ``attend_backward``, ...). As in micrograd, each layer
below is a small class whose ``forward`` keeps what its ``backward`` needs, and whose
``backward`` turns dL/d(output) into dL/d(input) and stores dL/d(parameters) in
``self.grads``; its sub-layers are attributes. A reader can check one rule at a time, and
``tests/test_tinylm_model.py`` checks every layer, and the whole loss, against finite
differences in float64.

The architecture is nanoGPT's, shrunk: learned token and position embeddings, ``n_layer``
pre-LayerNorm blocks (causal multi-head attention, then a ReLU MLP), a final LayerNorm and a
linear head to the vocabulary. An optional value head (one linear unit on the final hidden
state, initialised to 0) serves PPO.

Sampling is batched and uses a KV cache: each block's attention appends the new position's
keys and values to a preallocated buffer, so generating one token costs one position's
forward pass instead of the whole sequence's.

This file is the textbook: one model, computed as written. Training goes through the speed
path ``toy.tinylm.runs``, which calls the same equations for many runs at once, each GRPO
prompt once per group and each distinct unfinished answer once (``tests/test_tinylm_runs.py``
checks it against this file). The arithmetic here is float32 throughout (a numpy float64
*scalar* silently upcasts a float32 array: use Python floats), with linear layers as one 2-D
matrix product and row means as matrix products.
"""
from dataclasses import dataclass

import numpy as np

from .._check_args import finite, flag, generator, has_methods, instance, int_array, integer, real
from .._check_args import config_fields
from ..prob import inverse_cdf, log_softmax
from .layers import (adam_update, attend, attend_backward, clip_scale, embedding_backward, layer_norm,
                     layer_norm_backward, linear, linear_backward)
from .task import EOS, MAX_ANSWER_LEN, PROMPT_LEN, VOCAB

__all__ = ["ModelConfig", "TinyLM", "Adam", "attend", "attend_backward", "log_softmax",
           "token_logprobs", "token_logprobs_backward"]


@dataclass
class ModelConfig:
    vocab_size: int = len(VOCAB)                     # 15 symbols: 0-9 = [ ] # $
    block_size: int = PROMPT_LEN + MAX_ANSWER_LEN    # 27: longest sequence (positions learned)
    n_layer: int = 2                                 # transformer blocks
    n_head: int = 4                                  # attention heads per block
    n_embd: int = 64                                 # residual width C
    mlp_hidden: int = 128                            # MLP width (2C keeps the model at ~70k)
    init_std: float = 0.1                            # std of the normal init (0.02 learns far slower here)

    def __post_init__(self):
        config_fields(self)
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mlp_hidden"):
            integer(getattr(self, name), name, lo=1)
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd must be divisible by n_head, got {self.n_embd} and {self.n_head}")
        real(self.init_std, "init_std", lo=0, lo_open=True)


# ----------------------------------------------------------------------------- layers
class Module:
    """A layer: ``params`` and ``grads`` (dicts with the same keys); its sub-layers are its
    attributes (a list of layers counts too: ``TinyLM.h`` holds the blocks)."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def layers(self):
        """(name, sub-layer) in the order they were set; the i-th layer of a list ``h`` is ``h.i``."""
        for name, v in vars(self).items():
            if isinstance(v, Module):
                yield name, v
            elif isinstance(v, list):
                yield from ((f"{name}.{i}", m) for i, m in enumerate(v) if isinstance(m, Module))

    def named_params(self, prefix=""):
        """(name, layer, key) of every parameter, this layer's first: ``h.0.attn.qkv.w``, ..."""
        for k in self.params:
            yield prefix + k, self, k
        for name, layer in self.layers():
            yield from layer.named_params(f"{prefix}{name}.")

    def zero_grad(self):
        """Set every gradient to 0 (what ``backward`` of a zero loss would give)."""
        for _, mod, k in self.named_params():
            mod.grads[k] = np.zeros_like(mod.params[k])


class Linear(Module):
    """y = x W + b."""

    def __init__(self, n_in, n_out, rng, std, bias=True):
        super().__init__()
        self.params["w"] = rng.normal(0.0, std, (n_in, n_out))
        if bias:
            self.params["b"] = np.zeros(n_out)

    def forward(self, x):                            # (..., n_in) -> (..., n_out)
        self.x = x
        y = linear(x.reshape(-1, x.shape[-1]), self.params["w"], self.params.get("b"))   # one 2-D matmul
        return y.reshape(*x.shape[:-1], y.shape[-1])

    def backward(self, dy):                          # (..., n_out) -> (..., n_in)
        x2 = self.x.reshape(-1, self.x.shape[-1])    # (N, n_in)
        dx, self.grads["w"], db = linear_backward(x2, dy.reshape(-1, dy.shape[-1]), self.params["w"],
                                                  bias="b" in self.params)
        if db is not None:
            self.grads["b"] = db
        return dx.reshape(self.x.shape)


class Embedding(Module):
    """y = W[idx]: a row lookup."""

    def __init__(self, n, dim, rng, std):
        super().__init__()
        self.params["w"] = rng.normal(0.0, std, (n, dim))

    def forward(self, idx):                          # (B, T) ints -> (B, T, C)
        self.idx = idx
        return self.params["w"][idx]

    def backward(self, dy):                          # (B, T, C); returns nothing (ints)
        w = self.params["w"]
        self.grads["w"] = embedding_backward(self.idx.reshape(-1), dy.reshape(-1, w.shape[1]), w.shape[0])


class LayerNorm(Module):
    """y = g · (x − mean) / sqrt(var + eps) + b over the last axis."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.params["g"], self.params["b"] = np.ones(dim), np.zeros(dim)
        self.eps = eps

    def forward(self, x):                            # (..., C)
        y, self.saved = layer_norm(x, self.params["g"], self.params["b"], self.eps)
        return y

    def backward(self, dy):                          # (..., C)
        dx, self.grads["g"], self.grads["b"] = layer_norm_backward(dy, self.saved, self.params["g"])
        return dx


class ReLU(Module):
    """y = max(x, 0)."""

    def forward(self, x):
        self.on = x > 0
        return np.maximum(x, 0)

    def backward(self, dy):
        return dy * self.on


class CausalSelfAttention(Module):
    """Multi-head attention where position t sees positions ≤ t.

    ``forward(x, kv, pos)`` with a KV cache ``kv`` (a dict of buffers) writes this call's keys
    and values at positions pos..pos+T−1 and attends over positions 0..pos+T−1; that is how
    sampling avoids recomputing the prefix. ``backward`` is only defined after a call without
    a cache (training).
    """

    def __init__(self, cfg, rng):
        super().__init__()
        C = cfg.n_embd
        self.n_head = cfg.n_head
        self.qkv = Linear(C, 3 * C, rng, cfg.init_std)
        self.proj = Linear(C, C, rng, cfg.init_std / np.sqrt(2 * cfg.n_layer))
        # (Tmax, Tmax) additive mask: 0 where position t may attend to s ≤ t, −inf above
        self.mask = np.triu(np.full((cfg.block_size, cfg.block_size), -np.inf, np.float32), k=1)

    def forward(self, x, kv=None, pos=0):            # (B, T, C) -> (B, T, C)
        B, T, C = x.shape
        q, k, v = self.heads(self.qkv.forward(x))    # each (B, nh, T, hs)
        if kv is not None:                           # append to the cache, attend to all of it
            kv["k"][:, :, pos:pos + T] = k
            kv["v"][:, :, pos:pos + T] = v
            k, v = kv["k"][:, :, :pos + T], kv["v"][:, :, :pos + T]          # (B, nh, S, hs)
        y, self.saved = attend(q, k, v, self.mask[pos:pos + T, :k.shape[2]])    # (B, nh, T, hs)
        return self.proj.forward(self.merge(y).reshape(B, T, C))

    def backward(self, dy):                          # (B, T, C) -> (B, T, C)
        B, T, C = dy.shape
        dy = self.proj.backward(dy)
        dq, dk, dv = attend_backward(dy.reshape(B, T, self.n_head, -1).transpose(0, 2, 1, 3), self.saved)
        return self.qkv.backward(self.merge_qkv(dq, dk, dv).reshape(B, T, 3 * C))

    def heads(self, qkv):                            # (B, T, 3C) -> q, k, v each (B, nh, T, hs)
        B, T, C3 = qkv.shape
        return qkv.reshape(B, T, 3, self.n_head, C3 // (3 * self.n_head)).transpose(2, 0, 3, 1, 4)

    @staticmethod
    def merge(y):                                    # (B, nh, T, hs) -> (B·T, C)
        B, nh, T, hs = y.shape
        return y.transpose(0, 2, 1, 3).reshape(B * T, nh * hs)

    @staticmethod
    def merge_qkv(dq, dk, dv):                       # 3 × (B, nh, T, hs) -> (B·T, 3C)
        B, nh, T, hs = dq.shape
        dqkv = np.empty((B, T, 3, nh, hs), dtype=dq.dtype)
        for i, d in enumerate((dq, dk, dv)):
            dqkv[:, :, i] = d.transpose(0, 2, 1, 3)
        return dqkv.reshape(B * T, 3 * nh * hs)


class MLP(Module):
    """x → ReLU(x W1 + b1) W2 + b2."""

    def __init__(self, cfg, rng):
        super().__init__()
        self.fc = Linear(cfg.n_embd, cfg.mlp_hidden, rng, cfg.init_std)
        self.relu = ReLU()
        self.proj = Linear(cfg.mlp_hidden, cfg.n_embd, rng, cfg.init_std / np.sqrt(2 * cfg.n_layer))

    def forward(self, x):
        return self.proj.forward(self.relu.forward(self.fc.forward(x)))

    def backward(self, dy):
        return self.fc.backward(self.relu.backward(self.proj.backward(dy)))


class Block(Module):
    """Pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, cfg, rng):
        super().__init__()
        self.ln1, self.attn = LayerNorm(cfg.n_embd), CausalSelfAttention(cfg, rng)
        self.ln2, self.mlp = LayerNorm(cfg.n_embd), MLP(cfg, rng)

    def forward(self, x, kv=None, pos=0):            # (B, T, C)
        x = x + self.attn.forward(self.ln1.forward(x), kv, pos)
        return x + self.mlp.forward(self.ln2.forward(x))

    def backward(self, dy):                          # the residual adds the branch's gradient
        dy = dy + self.ln2.backward(self.mlp.backward(dy))
        return dy + self.ln1.backward(self.attn.backward(dy))


# ----------------------------------------------------------------------------- log-probs
def token_logprobs(logits, targets):
    """log π(target) for each position: logits (B, T, V), targets (B, T) → (B, T), plus the
    probabilities (B, T, V) that ``token_logprobs_backward`` needs."""
    logits = finite(logits, "logits", ndim=3)
    targets = int_array(targets, "targets", 0, logits.shape[-1] - 1, ndim=2)
    if targets.shape != logits.shape[:2]:
        raise ValueError(f"targets must have shape {logits.shape[:2]}, got {targets.shape}")
    logp = log_softmax(logits)                                               # (B, T, V)
    lp = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]       # (B, T)
    return lp, np.exp(logp)


def token_logprobs_backward(probs, targets, dlp):
    """dL/dlogits from dL/d(log π(target)): d log π_y / dz = onehot(y) − π."""
    probs = finite(probs, "probs", ndim=3)
    targets = int_array(targets, "targets", 0, probs.shape[-1] - 1, ndim=2)
    dlp = finite(dlp, "dlp", ndim=2)
    if targets.shape != probs.shape[:2] or dlp.shape != probs.shape[:2]:
        raise ValueError(f"targets and dlp must have shape {probs.shape[:2]}, got {targets.shape} and {dlp.shape}")
    dlogits = -probs * dlp[..., None]                                        # (B, T, V)
    np.put_along_axis(dlogits, targets[..., None],
                      np.take_along_axis(dlogits, targets[..., None], axis=-1) + dlp[..., None],
                      axis=-1)
    return dlogits


# ----------------------------------------------------------------------------- the model
class TinyLM(Module):
    """The decoder-only transformer. ``forward(idx)`` → logits (B, T, V); ``backward(dlogits)``
    fills ``grads`` of every layer (read them with ``named_grads()``)."""

    def __init__(self, config=None, seed=0, dtype=np.float32):
        super().__init__()
        self.config = cfg = instance(config or ModelConfig(), ModelConfig, "config")
        integer(seed, "seed", lo=0)
        if cfg.n_embd % cfg.n_head:
            raise ValueError(f"config.n_embd must be divisible by n_head, got {cfg.n_embd} and {cfg.n_head}")
        rng = np.random.default_rng(seed)
        self.wte = Embedding(cfg.vocab_size, cfg.n_embd, rng, cfg.init_std)   # token embeddings
        self.wpe = Embedding(cfg.block_size, cfg.n_embd, rng, cfg.init_std)   # position embeddings
        self.h = [Block(cfg, rng) for _ in range(cfg.n_layer)]
        self.ln_f = LayerNorm(cfg.n_embd)
        self.lm_head = Linear(cfg.n_embd, cfg.vocab_size, rng, cfg.init_std, bias=False)
        self.astype(dtype)

    # --- parameters
    def add_value_head(self):
        """Add PPO's value head V(s_t) = h_t · w + b (zero-initialised: it first predicts 0)."""
        if not self.has_value_head:
            self.value = Linear(self.config.n_embd, 1, np.random.default_rng(0), 0.0)
            self.astype(self.dtype)
        return self

    @property
    def has_value_head(self):
        return "value" in vars(self)

    def state_dict(self):
        """{name: array} of every parameter (copies)."""
        return {name: mod.params[k].copy() for name, mod, k in self.named_params()}

    def load_state_dict(self, state):
        """Copy parameters in from ``state`` (a value head is added if ``state`` has one)."""
        instance(state, dict, "state")
        if any(k.startswith("value.") for k in state):
            self.add_value_head()
        names = {name: (mod, k) for name, mod, k in self.named_params()}
        missing = set(names) - set(state)
        if missing:
            raise ValueError(f"state is missing parameters: {sorted(missing)}")
        for name, (mod, k) in names.items():
            if np.shape(state[name]) != mod.params[k].shape:
                raise ValueError(f"state[{name!r}] has shape {np.shape(state[name])}, expected {mod.params[k].shape}")
            finite(state[name], f"state[{name!r}]")
            mod.params[k] = np.array(state[name], dtype=self.dtype)
        return self

    def named_grads(self):
        """{name: dL/dparam} after ``backward``."""
        return {name: mod.grads[k] for name, mod, k in self.named_params()}

    def n_params(self):
        return sum(mod.params[k].size for _, mod, k in self.named_params())

    def astype(self, dtype):
        """Convert every parameter to ``dtype`` (float32 to train fast, float64 to grad-check)."""
        if np.dtype(dtype) not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}")
        self.dtype = np.dtype(dtype)
        for _, mod, k in self.named_params():
            mod.params[k] = mod.params[k].astype(self.dtype)
        return self

    def copy(self):
        """An independent copy (same config, dtype and parameters)."""
        other = TinyLM(self.config, dtype=self.dtype)
        return other.load_state_dict(self.state_dict())

    # --- forward / backward
    def forward(self, idx, kv=None, pos=0, value=False):
        """idx (B, T) token ids → logits (B, T, V), or (logits, values (B, T)) if ``value``.

        With a KV cache (from ``new_kv_cache``), ``idx`` holds positions pos..pos+T−1."""
        idx = self._check_idx(idx, pos, value)
        T = idx.shape[1]
        x = self.wte.forward(idx) + self.wpe.forward(np.arange(pos, pos + T)[None])   # (B, T, C)
        for block, cache in zip(self.h, kv or [None] * len(self.h)):
            x = block.forward(x, cache, pos)
        h = self.ln_f.forward(x)
        logits = self.lm_head.forward(h)             # (B, T, V)
        return (logits, self.value.forward(h)[..., 0]) if value else logits

    def _check_idx(self, idx, pos, value):
        idx = int_array(idx, "idx", 0, self.config.vocab_size - 1, ndim=2)
        pos, value = integer(pos, "pos", lo=0), flag(value, "value")
        if idx.shape[1] < 1:
            raise ValueError(f"idx must have at least one position, got shape {idx.shape}")
        if pos + idx.shape[1] > self.config.block_size:
            raise ValueError(f"idx is too long: positions up to {pos + idx.shape[1]} > block_size {self.config.block_size}")
        if value and not self.has_value_head:
            raise ValueError("value=True needs a value head: call model.add_value_head() first")
        return idx

    def backward(self, dlogits, dvalues=None):
        """Backpropagate dL/dlogits (B, T, V) (and dL/dvalues (B, T)) through the last
        training ``forward``; gradients land in ``named_grads()``."""
        if not hasattr(self.lm_head, "x"):
            raise ValueError("backward needs a training forward first (model.forward(idx))")
        dlogits = finite(dlogits, "dlogits", ndim=3).astype(self.dtype, copy=False)
        if dvalues is not None:
            dvalues = finite(dvalues, "dvalues", ndim=2).astype(self.dtype, copy=False)
        dh = self.lm_head.backward(dlogits)
        if dvalues is not None:
            dh = dh + self.value.backward(dvalues[..., None])
        elif self.has_value_head:
            self.value.zero_grad()
        dx = self.ln_f.backward(dh)
        for block in reversed(self.h):
            dx = block.backward(dx)
        self.wpe.backward(dx.sum(axis=0, keepdims=True))   # the same positions in every row
        self.wte.backward(dx)

    # --- using the model
    def logprobs(self, seqs):
        """Per-token log-probabilities of given sequences (B, T) at temperature 1:
        out[:, t] = log π(seqs[:, t+1] | seqs[:, :t+1]), shape (B, T−1)."""
        seqs = int_array(seqs, "seqs", 0, self.config.vocab_size - 1, ndim=2)
        if seqs.shape[1] < 2:
            raise ValueError(f"seqs must have at least 2 tokens per row, got shape {seqs.shape}")
        logits = self.forward(seqs[:, :-1])
        lp, _ = token_logprobs(logits, seqs[:, 1:])
        return lp

    def new_kv_cache(self, B):
        """Empty key/value buffers, one dict per block: k, v of shape (B, nh, block_size, hs)."""
        B = integer(B, "B", lo=1)
        cfg = self.config
        shape = (B, cfg.n_head, cfg.block_size, cfg.n_embd // cfg.n_head)
        return [{"k": np.zeros(shape, self.dtype), "v": np.zeros(shape, self.dtype)}
                for _ in range(cfg.n_layer)]

    def generate(self, prefix, max_new_tokens, rng=None, temperature=1.0, greedy=False,
                 return_logits=False, n_repeat=1):
        """Continue each row of ``prefix`` (B0, T0) by up to ``max_new_tokens`` tokens,
        ``n_repeat`` times per row (rows i·n_repeat … (i+1)·n_repeat − 1 of the output continue
        prefix row i; the prefix is run once and its KV cache copied), so B = B0 · n_repeat.

        Samples from softmax(logits / temperature) with ``rng``, one uniform per row and step
        (or takes the argmax if ``greedy``); a row stops at ``$`` and is padded with ``$`` after
        it. Returns the new tokens (B, n) with n ≤ max_new_tokens (generation stops once every
        row has ended), and with ``return_logits`` also the logits (B, n, V) each token was
        drawn from (0 once a row has ended). Every row runs at every step here;
        ``toy.tinylm.runs.sample`` draws the same samples running each distinct unfinished
        sequence once.
        """
        prefix, n = self._check_generate(prefix, max_new_tokens, rng, temperature, greedy, return_logits,
                                         n_repeat)
        B, T0 = len(prefix) * n_repeat, prefix.shape[1]
        kv = self.new_kv_cache(len(prefix))
        logits = np.repeat(self.forward(prefix, kv=kv)[:, -1], n_repeat, axis=0)     # (B, V)
        kv = [{name: np.repeat(buf, n_repeat, axis=0) for name, buf in c.items()} for c in kv]
        out, done = np.full((B, n), EOS, dtype=np.int64), np.zeros(B, bool)
        all_logits = np.zeros((B, n, self.config.vocab_size), self.dtype)
        for t in range(n):
            if t:                                    # the last token in, at position T0 + t − 1
                logits = self.forward(out[:, t - 1:t], kv=kv, pos=T0 + t - 1)[:, -1]
            tok = logits.argmax(axis=-1) if greedy else draw_tokens(logits, temperature, rng.random((B, 1)))
            out[~done, t], all_logits[~done, t] = tok[~done], logits[~done]
            done |= out[:, t] == EOS
            if done.all():
                out = out[:, :t + 1]
                break
        return (out, all_logits[:, :out.shape[1]]) if return_logits else out

    def _check_generate(self, prefix, max_new_tokens, rng, temperature, greedy, return_logits, n_repeat):
        """``generate``'s arguments, checked → (prefix (B0, T0), n: the most new tokens that fit)."""
        prefix = int_array(prefix, "prefix", 0, self.config.vocab_size - 1)
        if prefix.ndim != 2 or prefix.shape[1] < 1:
            raise ValueError(f"prefix must have shape (B, T0) with T0 >= 1, got {prefix.shape}")
        flag(return_logits, "return_logits")
        integer(n_repeat, "n_repeat", lo=1)
        if not flag(greedy, "greedy"):
            real(temperature, "temperature", lo=0, lo_open=True)     # checked, kept as given (dtype)
            if float(temperature) < np.finfo(self.dtype).tiny:      # 0 in the model's dtype: 0/0 = NaN
                raise ValueError(f"temperature must be >= {np.finfo(self.dtype).tiny:.3g} (the smallest normal "
                                 f"{np.dtype(self.dtype).name}), got {temperature!r}; use greedy=True for T -> 0")
            if rng is None:
                raise ValueError("rng is required when sampling (greedy=False)")
            generator(rng)
        n = min(integer(max_new_tokens, "max_new_tokens", lo=1), self.config.block_size - prefix.shape[1])
        if n < 1:
            raise ValueError(f"max_new_tokens must be >= 1 and fit in block_size, got {max_new_tokens}")
        return prefix, n


def draw_tokens(logits, temperature, u):
    """One draw per row from softmax(logits / temperature) given uniforms u (B, 1): the inverse
    CDF of ``toy.prob.sample_categorical`` (same arithmetic, so the same draws)."""
    z = (logits - logits.max(axis=-1, keepdims=True)) / temperature
    p = np.exp(z.astype(np.float64))
    return inverse_cdf(p / p.sum(axis=-1, keepdims=True), u)


# ----------------------------------------------------------------------------- optimiser
class Adam:
    """Adam (Kingma & Ba) with optional global-norm gradient clipping.

    ``step(model)`` reads ``model.named_grads()`` and updates the parameters in place."""

    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8, grad_clip=1.0):
        real(lr, "lr", lo=0, lo_open=True)
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        for b in betas:
            real(b, "betas", 0, 1, hi_open=True)
        real(eps, "eps", lo=0, lo_open=True)
        if grad_clip is not None:
            real(grad_clip, "grad_clip", lo=0)
        self.lr, self.betas, self.eps, self.grad_clip = lr, betas, eps, grad_clip
        self.m, self.v, self.t = {}, {}, 0

    def step(self, model, lr=None):
        has_methods(model, "model", "named_params", "named_grads")
        if lr is not None:
            real(lr, "lr", lo=0, lo_open=True)
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        self.t += 1
        grads = model.named_grads()
        norm = np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads.values()))
        scale = clip_scale(norm, self.grad_clip)
        for name, mod, k in model.named_params():
            g = grads[name] * scale
            if name not in self.m:
                self.m[name], self.v[name] = np.zeros_like(g), np.zeros_like(g)
            p, self.m[name], self.v[name] = adam_update(mod.params[k], g, self.m[name], self.v[name], lr,
                                                        1 - b1 ** self.t, 1 - b2 ** self.t, self.betas, self.eps)
            mod.params[k] = p.astype(model.dtype)
