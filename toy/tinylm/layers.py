r"""The equations of the tiny model's layers, each written once, as a function of arrays: linear,
embedding, layer norm, attention (forward and backward) and Adam's update.

``model.py`` (the textbook: one model, one class per layer) calls them for one model's rows
(..., C); ``runs.py`` (the speed path) calls them for R models stacked, rows (R, N, C) and
parameters (R, ...). What differs between the two is only how the rows are laid out, that is
how they are summed and averaged: ``Rows`` here, ``runs.StackRows`` there.
``tests/test_tinylm_model.py`` checks every one against finite differences in float64.
"""
import functools

import numpy as np

__all__ = ["Rows", "averager", "linear", "linear_backward", "embedding_backward", "layer_norm",
           "layer_norm_backward", "attend", "attend_backward", "clip_scale", "adam_update"]


@functools.lru_cache(maxsize=None)
def averager(C, dtype):
    """The (C, 1) column [1/C, ..., 1/C] (made once per size and dtype; read-only)."""
    col = np.full((C, 1), 1.0 / C, dtype=dtype)
    col.flags.writeable = False
    return col


class Rows:
    """The textbook's rows: every leading axis of an activation indexes rows (answers × positions)."""

    @staticmethod
    def mean(x):                                     # (..., C) -> (..., 1): each row's mean
        # x @ [1/C, ..., 1/C]: a row mean as a matrix product, ~5× faster than x.mean(axis=-1)
        # for C = 64 (numpy's reduction over a short last axis has a high per-row cost)
        return x @ averager(x.shape[-1], x.dtype)

    @staticmethod
    def total(x):                                    # (..., C) -> (C,): the sum over the rows
        return x.reshape(-1, x.shape[-1]).sum(axis=0)

    @staticmethod
    def xty(x, dy):                                  # (N, n_in), (N, n_out) -> Σ_rows xᵀ dy
        return x.T @ dy


def linear(x, w, b=None):
    """y = x W + b."""
    y = x @ w
    if b is not None:
        y += b
    return y


def linear_backward(x, dy, w, rows=Rows, bias=True):
    """Gradients of y = x W + b from dL/dy: (dL/dx, dL/dW, dL/db) (dL/db None without a bias)."""
    dx = dy @ w.swapaxes(-1, -2)                     # dL/dx = dy Wᵀ
    dw = rows.xty(x, dy)                             # dL/dW = xᵀ dy: a sum over the rows
    db = rows.total(dy) if bias else None            # dL/db = Σ_rows dy
    return dx, dw, db


def embedding_backward(idx, dy, n, rows=Rows):
    """dL/dW of the lookup y = W[idx] (W has n rows): each row of W gets the sum of dy over the
    rows that looked it up, Σ_rows onehot(idx)ᵀ dy."""
    return rows.xty(np.eye(n, dtype=dy.dtype)[idx], dy)


def layer_norm(x, g, b, eps=1e-5, rows=Rows):
    """y = g · x̂ + b with x̂ = (x − mean(x)) / sqrt(var(x) + eps) over each row. Returns y and
    what ``layer_norm_backward`` needs, (x̂, 1/sqrt(var + eps))."""
    xc = x - rows.mean(x)                            # centred
    rstd = 1.0 / np.sqrt(rows.mean(xc * xc) + eps)   # (..., 1)
    xc *= rstd                                       # x̂, in place
    y = xc * g
    y += b
    return y, (xc, rstd)


def layer_norm_backward(dy, saved, g, rows=Rows):
    """Gradients of ``layer_norm``: dL/dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)) with
    dx̂ = dy · g; dL/dg = Σ_rows dy · x̂; dL/db = Σ_rows dy."""
    xhat, rstd = saved
    dxhat = dy * g                                   # dL/dx̂
    m2 = rows.mean(dxhat * xhat)
    dxhat -= rows.mean(dxhat)                        # dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), in place
    dxhat -= xhat * m2
    dxhat *= rstd
    return dxhat, rows.total(dy * xhat), rows.total(dy)   # dL/dx, dL/dg, dL/db


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


def clip_scale(norm, grad_clip):
    """The factor min(1, grad_clip / ‖g‖) that clips the global gradient norm ‖g‖ (1 if grad_clip is 0 or None)."""
    return min(1.0, grad_clip / (norm + 1e-12)) if grad_clip else 1.0


def adam_update(p, g, m, v, lr, c1, c2, betas, eps):
    """One Adam step on a parameter p with gradient g → (p, m, v): m ← β1·m + (1 − β1)·g,
    v ← β2·v + (1 − β2)·g², p ← p − lr · m̂ / (√v̂ + eps), m̂ = m / c1, v̂ = v / c2 (c = 1 − βᵗ:
    the bias corrections after t steps)."""
    b1, b2 = betas
    m = b1 * m + (1 - b1) * g                        # 1st moment
    v = b2 * v + (1 - b2) * g * g                    # 2nd moment
    mhat = m / c1
    vhat = v / c2
    return p - lr * mhat / (np.sqrt(vhat) + eps), m, v
