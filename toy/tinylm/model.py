r"""A ~70k-parameter decoder-only transformer in pure numpy, with a hand-written backward pass.

Why write the backward by hand?  The book is numpy-only (no autograd library), and a
transformer is only six kinds of operation: embedding, layer norm, linear, causal
self-attention, ReLU and softmax cross-entropy. So, as in micrograd, each layer below is a
small class whose ``forward`` (which keeps what it needs) and ``backward`` (which turns
dL/d(output) into dL/d(input) and stores dL/d(parameters) in ``self.grads``) sit side by side,
a few lines each. A reader can check one rule at a time, and ``tests/test_tinylm.py`` checks
every layer, and the whole loss, against finite differences in float64.

The architecture is nanoGPT's, shrunk: learned token and position embeddings, ``n_layer``
pre-LayerNorm blocks (causal multi-head attention, then a ReLU MLP), a final LayerNorm and a
linear head to the vocabulary. An optional value head (one linear unit on the final hidden
state, initialised to 0) serves PPO.

Sampling is batched and uses a KV cache: each block's attention appends the new position's
keys and values to a preallocated buffer, so generating one token costs one position's
forward pass instead of the whole sequence's.

Speed (one GRPO step, 32 prompts × 8 answers, ~70 ms on one core instead of ~260 ms) comes
from not computing the same thing twice, never from changing the arithmetic:

- ``generate`` runs the model once per *distinct* unfinished sequence: the 8 answers to a
  prompt share its prefix, and often their first tokens; ended rows leave the batch;
- training runs each prompt once per group (``forward(..., shared_prefix, group_size)``:
  the answers attend to their prompt's keys and values) and ``train.DistinctRows`` skips
  rows whose gradient is zero (advantage 0) and computes repeated answers once;
- float32 throughout (a numpy float64 *scalar* silently upcasts a float32 array: use Python
  floats), row means as matrix products, and ``_blas`` keeps freed memory for reuse.
"""
import functools
from dataclasses import dataclass

import numpy as np

from .._check_args import finite, flag, generator, has_methods, instance, int_array, integer, real
from .task import EOS, MAX_ANSWER_LEN, PROMPT_LEN, VOCAB

__all__ = ["ModelConfig", "TinyLM", "Adam", "log_softmax", "token_logprobs",
           "token_logprobs_backward"]


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
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mlp_hidden"):
            integer(getattr(self, name), name, lo=1)
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd must be divisible by n_head, got {self.n_embd} and {self.n_head}")
        real(self.init_std, "init_std", lo=0, lo_open=True)


# ----------------------------------------------------------------------------- layers
class Module:
    """A layer: ``params`` and ``grads`` (same keys) plus named child layers."""

    def __init__(self):
        self.params, self.grads, self.children = {}, {}, {}

    def named_params(self, prefix=""):
        for k, v in self.params.items():
            yield prefix + k, self, k
        for name, child in self.children.items():
            yield from child.named_params(prefix + name + ".")


class Linear(Module):
    """y = x W + b."""

    def __init__(self, n_in, n_out, rng, std, bias=True):
        super().__init__()
        self.params["w"] = rng.normal(0.0, std, (n_in, n_out))
        if bias:
            self.params["b"] = np.zeros(n_out)

    def forward(self, x):                            # (..., n_in) -> (..., n_out)
        self.x = x
        y = x.reshape(-1, x.shape[-1]) @ self.params["w"]     # one 2-D matmul (fast BLAS path)
        if "b" in self.params:
            y += self.params["b"]
        return y.reshape(*x.shape[:-1], y.shape[-1])

    def backward(self, dy):                          # (..., n_out) -> (..., n_in)
        x2 = self.x.reshape(-1, self.x.shape[-1])    # (N, n_in)
        dy2 = dy.reshape(-1, dy.shape[-1])           # (N, n_out)
        self.grads["w"] = x2.T @ dy2                 # dL/dW = xᵀ dy
        if "b" in self.params:
            self.grads["b"] = dy2.sum(axis=0)        # dL/db = Σ dy
        return (dy2 @ self.params["w"].T).reshape(self.x.shape)   # dL/dx = dy Wᵀ


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
        onehot = np.eye(w.shape[0], dtype=w.dtype)[self.idx.reshape(-1)]   # (N, n)
        self.grads["w"] = onehot.T @ dy.reshape(-1, w.shape[1])           # rows add up


@functools.lru_cache(maxsize=None)
def _averager(C, dtype):
    """The (C, 1) column [1/C, ..., 1/C] (made once per size and dtype; read-only)."""
    col = np.full((C, 1), 1.0 / C, dtype=dtype)
    col.flags.writeable = False
    return col


class LayerNorm(Module):
    """y = g · (x − mean) / sqrt(var + eps) + b over the last axis."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.params["g"], self.params["b"] = np.ones(dim), np.zeros(dim)
        self.eps = eps

    @staticmethod
    def _mean(x):                                    # (..., C) -> (..., 1)
        # x @ [1/C, ..., 1/C]: a row mean as a matrix product, ~5× faster than x.mean(axis=-1)
        # for C = 64 (numpy's reduction over a short last axis has a high per-row cost)
        return x @ _averager(x.shape[-1], x.dtype)

    def forward(self, x):                            # (..., C)
        xc = x - self._mean(x)                       # (..., C) centred
        self.rstd = 1.0 / np.sqrt(self._mean(xc * xc) + self.eps)   # (..., 1)
        self.xhat = xc * self.rstd                   # (..., C)
        return self.xhat * self.params["g"] + self.params["b"]

    def backward(self, dy):                          # (..., C)
        C = dy.shape[-1]
        dy2, xhat2 = dy.reshape(-1, C), self.xhat.reshape(-1, C)
        self.grads["g"] = (dy2 * xhat2).sum(axis=0)
        self.grads["b"] = dy2.sum(axis=0)
        dxhat = dy * self.params["g"]
        # dx = rstd · (dxhat − mean(dxhat) − xhat · mean(dxhat · xhat))
        dx = dxhat - self._mean(dxhat)
        dx -= self.xhat * self._mean(dxhat * self.xhat)
        dx *= self.rstd
        return dx


class ReLU(Module):
    """y = max(x, 0)."""

    def forward(self, x):
        self.on = x > 0
        return np.maximum(x, 0)

    def backward(self, dy):
        return dy * self.on


def attend(q, k, v, mask):
    """Scaled dot-product attention for q (..., T, hs), k and v (..., S, hs) and an additive
    mask (T, S) (0 or −inf): y = softmax(q kᵀ/√hs + mask) v (..., T, hs). Returns y and what
    ``attend_backward`` needs: (q/√hs, k, v, att (..., T, S), y)."""
    q = np.multiply(q, q.shape[-1] ** -0.5, order="C")   # scale q (smaller than att); a C-ordered copy
    att = q @ k.swapaxes(-1, -2)                     # (..., T, S)
    att += mask                                      # causal: no looking ahead
    att -= att.max(axis=-1, keepdims=True)           # softmax over keys, in place
    np.exp(att, out=att)
    att *= 1.0 / att.sum(axis=-1, keepdims=True)
    y = att @ v                                      # (..., T, hs)
    return y, (q, k, v, att, y)


def attend_backward(dy, saved):
    """dq, dk, dv from dy (..., T, hs) through ``attend`` (``saved``: its second output)."""
    q, k, v, att, y = saved                          # q is q/√hs
    dy = np.ascontiguousarray(dy)                    # (a transposed view: copying is cheaper)
    datt = dy @ v.swapaxes(-1, -2)                   # (..., T, S)
    dv = att.swapaxes(-1, -2) @ dy                   # (..., S, hs)
    # softmax backward: ds = a ⊙ (da − Σ_s a_s da_s), and Σ_s a_s da_s = Σ_s a_s (dy · v_s)
    # = dy · y, a dot product over hs rather than a sum over S (FlashAttention's trick)
    ds = datt
    ds -= np.einsum("...d,...d->...", dy, y)[..., None]
    ds *= att                                        # masked entries have a = 0
    dq = ds @ k
    dq *= q.shape[-1] ** -0.5
    return dq, ds.swapaxes(-1, -2) @ q, dv           # dq (..., T, hs), dk, dv (..., S, hs)


class CausalSelfAttention(Module):
    """Multi-head attention where position t sees positions ≤ t.

    ``forward(x, kv, pos)`` with a KV cache ``kv`` (a dict of buffers) writes this call's keys
    and values at positions pos..pos+T−1 and attends over positions 0..pos+T−1; that is how
    sampling avoids recomputing the prefix. ``backward`` is only defined after a call without
    a cache (training).

    ``forward(x, share=Share(...))`` is training on groups of sequences that share their first
    P tokens (GRPO's G answers to one prompt): x holds flat rows (B0·P + B·S, C), first the B0
    shared prefixes (P positions each), then the B continuations (S positions each), the first
    ``sizes[0]`` following prefix 0, the next ``sizes[1]`` prefix 1, and so on. Each prefix is
    computed once; a continuation attends to its prefix's keys and values, then to its own.
    """

    def __init__(self, cfg, rng):
        super().__init__()
        C = cfg.n_embd
        self.n_head = cfg.n_head
        self.children["qkv"] = Linear(C, 3 * C, rng, cfg.init_std)
        self.children["proj"] = Linear(C, C, rng, cfg.init_std / np.sqrt(2 * cfg.n_layer))
        # (Tmax, Tmax) additive mask: 0 where position t may attend to s ≤ t, −inf above
        self.mask = np.triu(np.full((cfg.block_size, cfg.block_size), -np.inf, np.float32), k=1)

    def _heads(self, qkv):                           # (B, T, 3C) -> q, k, v each (B, nh, T, hs)
        B, T, C3 = qkv.shape
        return qkv.reshape(B, T, 3, self.n_head, C3 // (3 * self.n_head)).transpose(2, 0, 3, 1, 4)

    @staticmethod
    def _merge(y):                                   # (B, nh, T, hs) -> (B·T, C)
        B, nh, T, hs = y.shape
        return y.transpose(0, 2, 1, 3).reshape(B * T, nh * hs)

    def forward(self, x, kv=None, pos=0, share=None):    # x: (B, T, C), or flat rows with share
        qkv = self.children["qkv"].forward(x)        # (..., 3C)
        if share is not None:
            return self.children["proj"].forward(self._forward_shared(qkv, share))
        B, T, C = x.shape
        q, k, v = self._heads(qkv)                   # each (B, nh, T, hs)
        if kv is not None:                           # append to the cache, attend to all of it
            kv["k"][:, :, pos:pos + T] = k
            kv["v"][:, :, pos:pos + T] = v
            k, v = kv["k"][:, :, :pos + T], kv["v"][:, :, :pos + T]          # (B, nh, S, hs)
        y, saved = attend(q, k, v, self.mask[pos:pos + T, :k.shape[2]])    # (B, nh, T, hs)
        if kv is None:
            self.saved = [saved]
        return self.children["proj"].forward(self._merge(y).reshape(B, T, C))

    def _forward_shared(self, qkv, share):           # qkv (B0·P + B·S, 3C) -> y (same rows, C)
        P, B0, B = share.P, len(share.sizes), share.sizes.sum()
        qp, kp, vp = self._heads(qkv[:B0 * P].reshape(B0, P, -1))          # (B0, nh, P, hs)
        qs, ks, vs = self._heads(qkv[B0 * P:].reshape(B, -1, qkv.shape[1]))    # (B, nh, S, hs)
        S = qs.shape[2]
        yp, saved_p = attend(qp, kp, vp, self.mask[:P, :P])                # prefixes: causal
        k = np.concatenate([np.repeat(kp, share.sizes, axis=0), ks], axis=2)   # (B, nh, P+S, hs)
        v = np.concatenate([np.repeat(vp, share.sizes, axis=0), vs], axis=2)
        ys, saved_s = attend(qs, k, v, self.mask[P:P + S, :P + S])         # continuations
        self.saved = [saved_p, saved_s]
        self.share = share
        return np.concatenate([self._merge(yp), self._merge(ys)])

    def backward(self, dy):                          # (B, T, C), or flat rows (N, C)
        dy = self.children["proj"].backward(dy)
        C = dy.shape[-1]
        nh, hs = self.n_head, C // self.n_head
        if len(self.saved) == 1:                     # one batch of whole sequences
            B, T, _ = dy.shape
            dq, dk, dv = attend_backward(dy.reshape(B, T, nh, hs).transpose(0, 2, 1, 3), self.saved[0])
        else:                                        # shared prefixes, then continuations
            P, B0, starts = self.share.P, len(self.share.sizes), self.share.starts
            dyp = dy[:B0 * P].reshape(B0, P, nh, hs).transpose(0, 2, 1, 3)   # (B0, nh, P, hs)
            dys = dy[B0 * P:].reshape(self.share.sizes.sum(), -1, nh, hs).transpose(0, 2, 1, 3)
            dqp, dkp, dvp = attend_backward(dyp, self.saved[0])
            dqs, dk, dv = attend_backward(dys, self.saved[1])                 # dk, dv (B, nh, P+S, hs)
            # a prefix's keys and values served its group's continuations: their gradients add up
            dkp += np.add.reduceat(dk[:, :, :P], starts, axis=0)
            dvp += np.add.reduceat(dv[:, :, :P], starts, axis=0)
            dqkv = np.concatenate([self._merge_qkv(dqp, dkp, dvp),                    # prefix rows
                                   self._merge_qkv(dqs, dk[:, :, P:], dv[:, :, P:])])  # continuation rows
            return self.children["qkv"].backward(dqkv)
        return self.children["qkv"].backward(self._merge_qkv(dq, dk, dv).reshape(B, T, 3 * C))

    @staticmethod
    def _merge_qkv(dq, dk, dv):                      # 3 × (B, nh, T, hs) -> (B·T, 3C)
        B, nh, T, hs = dq.shape
        dqkv = np.empty((B, T, 3, nh, hs), dtype=dq.dtype)
        for i, d in enumerate((dq, dk, dv)):
            dqkv[:, :, i] = d.transpose(0, 2, 1, 3)
        return dqkv.reshape(B * T, 3 * nh * hs)


class MLP(Module):
    """x → ReLU(x W1 + b1) W2 + b2."""

    def __init__(self, cfg, rng):
        super().__init__()
        self.children["fc"] = Linear(cfg.n_embd, cfg.mlp_hidden, rng, cfg.init_std)
        self.children["relu"] = ReLU()
        self.children["proj"] = Linear(cfg.mlp_hidden, cfg.n_embd, rng,
                                       cfg.init_std / np.sqrt(2 * cfg.n_layer))

    def forward(self, x):
        for layer in self.children.values():
            x = layer.forward(x)
        return x

    def backward(self, dy):
        for layer in reversed(self.children.values()):
            dy = layer.backward(dy)
        return dy


class Block(Module):
    """Pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, cfg, rng):
        super().__init__()
        self.children.update(ln1=LayerNorm(cfg.n_embd), attn=CausalSelfAttention(cfg, rng),
                             ln2=LayerNorm(cfg.n_embd), mlp=MLP(cfg, rng))

    def forward(self, x, kv=None, pos=0, share=None):    # (B, T, C), or flat rows with share
        c = self.children
        x = x + c["attn"].forward(c["ln1"].forward(x), kv, pos, share)
        return x + c["mlp"].forward(c["ln2"].forward(x))

    def backward(self, dy):                          # the residual adds the branch's gradient
        c = self.children
        dy = dy + c["ln2"].backward(c["mlp"].backward(dy))
        return dy + c["ln1"].backward(c["attn"].backward(dy))


# ----------------------------------------------------------------------------- log-probs
def log_softmax(logits):
    """log softmax along the last axis (keeps the dtype)."""
    logits = finite(logits, "logits")
    if logits.ndim < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must have a non-empty last axis, got shape {logits.shape}")
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


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


@dataclass
class Share:
    """Rows that share a prefix: groups of ``sizes[g]`` consecutive rows start with the same
    ``P`` tokens (``starts``: each group's first row)."""
    P: int
    sizes: np.ndarray                                # (B0,) group sizes, each >= 1, summing to B
    starts: np.ndarray                               # (B0,) = cumsum(sizes) − sizes


def _flat(a, share, grad=False):
    """(B, T, ...) → flat rows (B0·P + B·(T−P), ...): each group's prefix once, then every
    row's continuation. With ``grad`` (a gradient with respect to the unflattened array), the
    copies of a prefix add up instead. ``share=None``: unchanged."""
    if share is None:
        return a
    P = share.P
    pre = np.add.reduceat(a[:, :P], share.starts, axis=0) if grad else a[share.starts, :P]   # (B0, P, ...)
    return np.concatenate([pre.reshape(-1, *a.shape[2:]), a[:, P:].reshape(-1, *a.shape[2:])])


def _unflat(x, share):
    """Inverse of ``_flat``: flat rows (B0·P + B·S, ...) → (B, P + S, ...), each prefix
    repeated for the rows of its group."""
    if share is None:
        return x
    P, B0 = share.P, len(share.sizes)
    pre = np.repeat(x[:B0 * P].reshape(B0, P, *x.shape[1:]), share.sizes, axis=0)   # (B, P, ...)
    return np.concatenate([pre, x[B0 * P:].reshape(len(pre), -1, *x.shape[1:])], axis=1)


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
        self.children["wte"] = Embedding(cfg.vocab_size, cfg.n_embd, rng, cfg.init_std)
        self.children["wpe"] = Embedding(cfg.block_size, cfg.n_embd, rng, cfg.init_std)
        for i in range(cfg.n_layer):
            self.children[f"h{i}"] = Block(cfg, rng)
        self.children["ln_f"] = LayerNorm(cfg.n_embd)
        self.children["lm_head"] = Linear(cfg.n_embd, cfg.vocab_size, rng, cfg.init_std, bias=False)
        self.astype(dtype)

    # --- parameters
    def add_value_head(self):
        """Add PPO's value head V(s_t) = h_t · w + b (zero-initialised: it first predicts 0)."""
        if "value" not in self.children:
            head = Linear(self.config.n_embd, 1, np.random.default_rng(0), 0.0)
            self.children["value"] = head
            self.astype(self.dtype)
        return self

    @property
    def has_value_head(self):
        return "value" in self.children

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

    def zero_grad(self):
        """Set every gradient to 0 (what ``backward`` of a zero loss would give)."""
        for _, mod, k in self.named_params():
            mod.grads[k] = np.zeros_like(mod.params[k])

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
    def forward(self, idx, kv=None, pos=0, value=False, shared_prefix=0, group_size=1):
        """idx (B, T) token ids → logits (B, T, V), or (logits, values (B, T)) if ``value``.

        With a KV cache (from ``new_kv_cache``), ``idx`` holds positions pos..pos+T−1.

        ``shared_prefix=P, group_size=G`` (training on GRPO groups): rows g·G … g·G+G−1 of
        ``idx`` start with the same P tokens (one prompt, G answers), so positions 0..P−1 are
        computed once per group (see ``CausalSelfAttention``). ``group_size`` may also be an
        array of group sizes (consecutive groups of rows). The result is the same as without
        sharing, up to float rounding, for about (P/G + T − P)/T of the work."""
        idx = int_array(idx, "idx", 0, self.config.vocab_size - 1, ndim=2)
        pos, value = integer(pos, "pos", lo=0), flag(value, "value")
        B, T = idx.shape
        if T < 1:
            raise ValueError(f"idx must have at least one position, got shape {idx.shape}")
        if pos + T > self.config.block_size:
            raise ValueError(f"idx is too long: positions up to {pos + T} > block_size {self.config.block_size}")
        share = self.share = self._share(idx, shared_prefix, group_size, kv)   # None or a Share
        c = self.children
        if share is None:
            x = c["wte"].forward(idx) + c["wpe"].forward(np.arange(pos, pos + T)[None])   # (B, T, C)
        else:                                        # flat rows (B0·P + B·(T−P), C)
            positions = np.broadcast_to(np.arange(T), (B, T))
            x = c["wte"].forward(_flat(idx, share)) + c["wpe"].forward(_flat(positions, share))
        for i in range(self.config.n_layer):
            x = c[f"h{i}"].forward(x, None if kv is None else kv[i], pos, share)
        h = c["ln_f"].forward(x)                     # (B, T, C) or flat rows
        logits = _unflat(c["lm_head"].forward(h), share)    # (B, T, V)
        if not value:
            return logits
        if not self.has_value_head:
            raise ValueError("value=True needs a value head: call model.add_value_head() first")
        return logits, _unflat(c["value"].forward(h), share)[..., 0]   # (B, T)

    @staticmethod
    def _share(idx, P, G, kv):
        """Validate ``shared_prefix``/``group_size`` → None (no sharing) or a ``Share``."""
        B, T = idx.shape
        sizes = np.full(B // G, G) if np.ndim(G) == 0 and int(G) == G and G >= 1 and B % G == 0 else np.asarray(G)
        if (int(P) != P or not 0 <= P < T or sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer)
                or np.any(sizes < 1) or sizes.sum() != B):
            raise ValueError(f"need 0 <= shared_prefix < T = {T} and group_size dividing B = {B} (or group "
                             f"sizes >= 1 summing to B), got {P} and {G}")
        if P == 0 or (sizes == 1).all():
            return None
        if kv is not None:
            raise ValueError("shared_prefix is for training: it cannot be used with a KV cache")
        share = Share(int(P), sizes, np.cumsum(sizes) - sizes)
        if not (idx[:, :P] == np.repeat(idx[share.starts, :P], sizes, axis=0)).all():
            raise ValueError(f"the rows of each group must share their first {P} tokens")
        return share

    def backward(self, dlogits, dvalues=None):
        """Backpropagate dL/dlogits (B, T, V) (and dL/dvalues (B, T)) through the last
        training ``forward``; gradients land in ``named_grads()``."""
        if not hasattr(self, "share"):
            raise ValueError("backward needs a training forward first (model.forward(idx))")
        dlogits = finite(dlogits, "dlogits", ndim=3)
        if dvalues is not None:
            dvalues = finite(dvalues, "dvalues", ndim=2)
        c, share = self.children, self.share
        dh = c["lm_head"].backward(_flat(dlogits.astype(self.dtype, copy=False), share, grad=True))
        if dvalues is not None:
            dv = _flat(dvalues.astype(self.dtype, copy=False)[..., None], share, grad=True)
            dh = dh + c["value"].backward(dv)
        elif self.has_value_head:
            c["value"].grads = {k: np.zeros_like(v) for k, v in c["value"].params.items()}
        dx = c["ln_f"].backward(dh)
        for i in reversed(range(self.config.n_layer)):
            dx = c[f"h{i}"].backward(dx)
        if share is None:
            c["wpe"].backward(dx.sum(axis=0, keepdims=True))   # the same positions in every row
        else:
            c["wpe"].backward(dx)
        c["wte"].backward(dx)

    # --- using the model
    def logprobs(self, seqs, shared_prefix=0, group_size=1):
        """Per-token log-probabilities of given sequences (B, T) at temperature 1:
        out[:, t] = log π(seqs[:, t+1] | seqs[:, :t+1]), shape (B, T−1). (``shared_prefix``,
        ``group_size``: see ``forward``.)"""
        seqs = int_array(seqs, "seqs", 0, self.config.vocab_size - 1, ndim=2)
        if seqs.shape[1] < 2:
            raise ValueError(f"seqs must have at least 2 tokens per row, got shape {seqs.shape}")
        logits = self.forward(seqs[:, :-1], shared_prefix=shared_prefix, group_size=group_size)
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
                 use_cache=True, return_logits=False, n_repeat=1):
        """Continue each row of ``prefix`` (B0, T0) by up to ``max_new_tokens`` tokens,
        ``n_repeat`` times per row (rows i·n_repeat … (i+1)·n_repeat − 1 of the output continue
        prefix row i; the prefix is run once and its KV cache copied), so B = B0 · n_repeat.

        Samples from softmax(logits / temperature) with ``rng`` (or takes the argmax if
        ``greedy``); a row stops at ``$`` and is padded with ``$`` after it. Returns the new
        tokens (B, n) with n ≤ max_new_tokens (generation stops once every row has ended), and
        with ``return_logits`` also the logits (B, n, V) each token was drawn from (0 once a
        row has ended). The model runs once per distinct unfinished sequence (rows that have
        drawn the same tokens so far share the work; ended rows leave the batch), and each step
        draws one uniform per row, ended or not, so the samples do not depend on this saving.
        ``use_cache=False`` recomputes the whole prefix at every step (slow; for the tests).
        """
        prefix = int_array(prefix, "prefix", 0, self.config.vocab_size - 1)
        if prefix.ndim != 2 or prefix.shape[1] < 1:
            raise ValueError(f"prefix must have shape (B, T0) with T0 >= 1, got {prefix.shape}")
        greedy, use_cache = flag(greedy, "greedy"), flag(use_cache, "use_cache")
        return_logits = flag(return_logits, "return_logits")
        if not greedy:
            real(temperature, "temperature", lo=0, lo_open=True)     # checked, kept as given (dtype)
            if rng is None:
                raise ValueError("rng is required when sampling (greedy=False)")
            generator(rng)
        n_repeat = integer(n_repeat, "n_repeat", lo=1)
        max_new_tokens = integer(max_new_tokens, "max_new_tokens", lo=1)
        B, T0 = len(prefix) * n_repeat, prefix.shape[1]
        n = min(int(max_new_tokens), self.config.block_size - T0)
        if n < 1:
            raise ValueError(f"max_new_tokens must be >= 1 and fit in block_size, got {max_new_tokens}")
        out = np.full((B, n), EOS, dtype=np.int64)
        V = self.config.vocab_size
        all_logits = np.zeros((B, n, V), self.dtype) if return_logits else None
        # The batch holds each *distinct* unfinished sequence once: rows that continue the same
        # prefix and have drawn the same tokens so far (the G answers to one prompt often agree
        # for a while) share a batch row, and rows that have ended leave the batch.
        # owner[r] is row r's batch row (−1 once it has ended).
        owner = np.repeat(np.arange(len(prefix)), n_repeat)                  # (B,)
        if use_cache:
            kv = self.new_kv_cache(len(prefix))
            logits = self.forward(prefix, kv=kv)[:, -1]                      # (B0, V)
        else:
            seqs = prefix                                                    # the batch's sequences
            logits = self.forward(seqs)[:, -1]
        for t in range(n):
            live = np.flatnonzero(owner >= 0)                                # the rows still writing
            if greedy:
                tok = logits.argmax(axis=-1)[owner[live]]
            else:
                u = rng.random((B, 1))[live]                                 # one uniform per row, ended or not
                tok = _inverse_cdf(logits[owner[live]], temperature, u)
            out[live, t] = tok
            if return_logits:
                all_logits[live, t] = logits[owner[live]]
            owner[live[tok == EOS]] = -1
            if t == n - 1 or (owner < 0).all():
                out = out[:, :t + 1]
                break
            live, tok = live[tok != EOS], tok[tok != EOS]
            # the next batch: one row per distinct (batch row, token) pair
            pairs, owner[live] = np.unique(owner[live] * V + tok, return_inverse=True)
            parent, nxt = pairs // V, pairs % V                              # (U,) each
            if use_cache:
                if len(parent) != len(logits) or (parent != np.arange(len(parent))).any():
                    kv = [{name: buf[parent] for name, buf in c.items()} for c in kv]
                logits = self.forward(nxt[:, None], kv=kv, pos=T0 + t)[:, -1]
            else:
                seqs = np.concatenate([seqs[parent], nxt[:, None]], axis=1)
                logits = self.forward(seqs)[:, -1]
        if return_logits:
            return out, all_logits[:, :out.shape[1]]
        return out


def _inverse_cdf(logits, temperature, u):
    """One draw per row from softmax(logits / temperature) given uniforms u (B, 1): the inverse
    CDF of ``toy.prob.sample_categorical`` (same arithmetic, so the same draws)."""
    z = (logits - logits.max(axis=-1, keepdims=True)) / temperature
    p = np.exp(z.astype(np.float64))
    p = p / p.sum(axis=-1, keepdims=True)
    cdf = np.cumsum(p, axis=-1)
    return np.minimum((u * cdf[..., -1:] > cdf).sum(axis=-1), p.shape[-1] - 1)


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
        scale = 1.0
        if self.grad_clip:
            norm = np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in grads.values()))
            scale = min(1.0, self.grad_clip / (norm + 1e-12))
        for name, mod, k in model.named_params():
            g = grads[name] * scale
            if name not in self.m:
                self.m[name], self.v[name] = np.zeros_like(g), np.zeros_like(g)
            self.m[name] = b1 * self.m[name] + (1 - b1) * g                  # 1st moment
            self.v[name] = b2 * self.v[name] + (1 - b2) * g * g              # 2nd moment
            mhat = self.m[name] / (1 - b1 ** self.t)
            vhat = self.v[name] / (1 - b2 ** self.t)
            mod.params[k] = (mod.params[k] - lr * mhat / (np.sqrt(vhat) + self.eps)).astype(model.dtype)
