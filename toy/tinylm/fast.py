r"""The speed paths of ``toy.tinylm.model``: the same model and the same arithmetic on each row,
with nothing computed twice. One GRPO step (32 prompts × 8 answers) takes ~70 ms on one core
instead of ~260 ms.

- **Sampling** (``generate``) runs the model once per *distinct* unfinished sequence: the 8
  answers to a prompt share its prefix, and often their first tokens; ended rows leave the
  batch. Every step still draws one uniform per row, ended or not, so the samples are those
  of the plain loop (``TinyLM.generate(..., plain=True)``).
- **Training** on GRPO groups (``TinyLM.forward(..., shared_prefix=P, group_size=G)``) runs
  each prompt once per group. The rows go through the model *flat* (``flat``): each group's
  P prompt positions once, then every row's answer positions. Every layer but attention
  works row by row, so only attention needs a shared version (``attention_forward``): an
  answer attends to its prompt's keys and values, then to its own; in ``attention_backward``
  the gradients of a prompt's keys and values add up over its group's answers.
  (``train.DistinctRows`` also leaves out rows whose gradient is zero and computes repeated
  answers once; ``toy._blas`` keeps one BLAS thread and freed memory for reuse.)

``tests/test_tinylm_model.py`` checks each path against the plain one.
"""
from dataclasses import dataclass

import numpy as np

from .model import _inverse_cdf, attend, attend_backward
from .task import EOS

__all__ = ["Share", "shared_rows", "flat", "unflat", "forward", "backward", "attention_forward",
           "attention_backward", "generate"]


# ----------------------------------------------------------------------------- shared prompts
@dataclass
class Share:
    """Rows that share a prefix: groups of ``sizes[g]`` consecutive rows start with the same
    ``P`` tokens (``starts``: each group's first row)."""
    P: int
    sizes: np.ndarray                                # (B0,) group sizes, each >= 1, summing to B
    starts: np.ndarray                               # (B0,) = cumsum(sizes) − sizes


def shared_rows(idx, P, G, kv=None):
    """``TinyLM.forward``'s ``shared_prefix=P, group_size=G``, checked → None (no sharing) or
    a ``Share``. ``G``: one group size dividing B, or the sizes of consecutive groups."""
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
    rows = Share(int(P), sizes, np.cumsum(sizes) - sizes)
    if not (idx[:, :P] == np.repeat(idx[rows.starts, :P], sizes, axis=0)).all():
        raise ValueError(f"the rows of each group must share their first {P} tokens")
    return rows


def flat(a, share, grad=False):
    """(B, T, ...) → flat rows (B0·P + B·(T−P), ...): each group's prefix once, then every
    row's continuation. With ``grad`` (a gradient with respect to the unflattened array), the
    copies of a prefix add up instead."""
    P = share.P
    pre = np.add.reduceat(a[:, :P], share.starts, axis=0) if grad else a[share.starts, :P]   # (B0, P, ...)
    return np.concatenate([pre.reshape(-1, *a.shape[2:]), a[:, P:].reshape(-1, *a.shape[2:])])


def unflat(x, share):
    """Inverse of ``flat``: flat rows (B0·P + B·S, ...) → (B, P + S, ...), each prefix
    repeated for the rows of its group."""
    P, B0 = share.P, len(share.sizes)
    pre = np.repeat(x[:B0 * P].reshape(B0, P, *x.shape[1:]), share.sizes, axis=0)   # (B, P, ...)
    return np.concatenate([pre, x[B0 * P:].reshape(len(pre), -1, *x.shape[1:])], axis=1)


def forward(model, idx, value):
    """``TinyLM.forward`` on rows that share prefixes (``model.share``), computed flat."""
    s = model.share
    positions = np.broadcast_to(np.arange(idx.shape[1]), idx.shape)
    x = model.wte.forward(flat(idx, s)) + model.wpe.forward(flat(positions, s))     # (N, C) flat rows
    for block in model.h:                            # Block.forward, with the shared attention
        x = x + attention_forward(block.attn, block.ln1.forward(x), s)
        x = x + block.mlp.forward(block.ln2.forward(x))
    h = model.ln_f.forward(x)
    logits = unflat(model.lm_head.forward(h), s)     # (B, T, V)
    return (logits, unflat(model.value.forward(h), s)[..., 0]) if value else logits


def backward(model, dlogits, dvalues):
    """``TinyLM.backward`` after ``forward``: the gradients of a shared prefix's copies add up."""
    s = model.share
    dh = model.lm_head.backward(flat(dlogits, s, grad=True))
    if dvalues is not None:
        dh = dh + model.value.backward(flat(dvalues[..., None], s, grad=True))
    elif model.has_value_head:
        model.value.zero_grad()
    dx = model.ln_f.backward(dh)
    for block in reversed(model.h):                  # Block.backward, with the shared attention
        dx = dx + block.ln2.backward(block.mlp.backward(dx))
        dx = dx + block.ln1.backward(attention_backward(block.attn, dx, s))
    model.wpe.backward(dx)
    model.wte.backward(dx)


def attention_forward(attn, x, share):
    """``CausalSelfAttention.forward`` on flat rows x (B0·P + B·S, C): first the B0 shared
    prefixes (P positions each), then the B continuations (S positions each), the first
    ``sizes[0]`` following prefix 0, and so on. Each prefix attends to itself (causally); a
    continuation to its prefix's keys and values, then to its own."""
    qkv = attn.qkv.forward(x)                        # (N, 3C)
    P, B0, B = share.P, len(share.sizes), share.sizes.sum()
    qp, kp, vp = attn.heads(qkv[:B0 * P].reshape(B0, P, -1))               # (B0, nh, P, hs)
    qs, ks, vs = attn.heads(qkv[B0 * P:].reshape(B, -1, qkv.shape[1]))     # (B, nh, S, hs)
    S = qs.shape[2]
    yp, saved_p = attend(qp, kp, vp, attn.mask[:P, :P])                    # prefixes: causal
    k = np.concatenate([np.repeat(kp, share.sizes, axis=0), ks], axis=2)   # (B, nh, P+S, hs)
    v = np.concatenate([np.repeat(vp, share.sizes, axis=0), vs], axis=2)
    ys, saved_s = attend(qs, k, v, attn.mask[P:P + S, :P + S])             # continuations
    attn.saved = (saved_p, saved_s)
    return attn.proj.forward(np.concatenate([attn.merge(yp), attn.merge(ys)]))


def attention_backward(attn, dy, share):
    """``CausalSelfAttention.backward`` after ``attention_forward``: dy, dx (N, C) flat rows."""
    dy = attn.proj.backward(dy)
    nh, hs = attn.n_head, dy.shape[-1] // attn.n_head
    P, B0, starts = share.P, len(share.sizes), share.starts
    dyp = dy[:B0 * P].reshape(B0, P, nh, hs).transpose(0, 2, 1, 3)                # (B0, nh, P, hs)
    dys = dy[B0 * P:].reshape(share.sizes.sum(), -1, nh, hs).transpose(0, 2, 1, 3)
    dqp, dkp, dvp = attend_backward(dyp, attn.saved[0])
    dqs, dk, dv = attend_backward(dys, attn.saved[1])                              # dk, dv (B, nh, P+S, hs)
    # a prefix's keys and values served its group's continuations: their gradients add up
    dkp += np.add.reduceat(dk[:, :, :P], starts, axis=0)
    dvp += np.add.reduceat(dv[:, :, :P], starts, axis=0)
    dqkv = np.concatenate([attn.merge_qkv(dqp, dkp, dvp),                          # prefix rows
                           attn.merge_qkv(dqs, dk[:, :, P:], dv[:, :, P:])])        # continuation rows
    return attn.qkv.backward(dqkv)


# ----------------------------------------------------------------------------- sampling
def generate(model, prefix, n, rng, temperature, greedy, return_logits, n_repeat):
    """``TinyLM.generate`` (arguments checked there; ``n`` new tokens at most), running the
    model once per distinct unfinished sequence."""
    B, T0, V = len(prefix) * n_repeat, prefix.shape[1], model.config.vocab_size
    out = np.full((B, n), EOS, dtype=np.int64)
    all_logits = np.zeros((B, n, V), model.dtype) if return_logits else None
    # The batch holds each *distinct* unfinished sequence once: rows that continue the same
    # prefix and have drawn the same tokens so far (the G answers to one prompt often agree
    # for a while) share a batch row, and rows that have ended leave the batch.
    # owner[r] is row r's batch row (−1 once it has ended).
    owner = np.repeat(np.arange(len(prefix)), n_repeat)                      # (B,)
    kv = model.new_kv_cache(len(prefix))
    logits = model.forward(prefix, kv=kv)[:, -1]                             # (B0, V)
    for t in range(n):
        live = np.flatnonzero(owner >= 0)                                    # the rows still writing
        if greedy:
            tok = logits.argmax(axis=-1)[owner[live]]
        else:
            u = rng.random((B, 1))[live]                                     # one uniform per row, ended or not
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
        parent, nxt = pairs // V, pairs % V                                  # (U,) each
        if len(parent) != len(logits) or (parent != np.arange(len(parent))).any():
            kv = [{name: buf[parent] for name, buf in c.items()} for c in kv]
        logits = model.forward(nxt[:, None], kv=kv, pos=T0 + t)[:, -1]
    if return_logits:
        return out, all_logits[:, :out.shape[1]]
    return out
