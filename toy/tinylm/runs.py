r"""The speed path of the tiny model: R independent runs of ``toy.tinylm.model.TinyLM`` at once.

``model.py`` is the textbook: one model, one layer per class, a forward that keeps what its
backward needs. This module calls the *same equations* (``layers.py``: ``linear``,
``layer_norm``, ``attend``, their backwards, ``adam_update``) for R runs together, with rows
laid out as ``StackRows`` says: every parameter
gets a leading run axis (``Stack``: ``params[name]`` is (R, ...)), every activation is
(R, rows, C), and one numpy call (one ``np.matmul`` on the stack, ...) serves every run, so the
per-call cost of numpy is paid once a step, not once a run. (At this model's sizes a step of
one run is mostly arithmetic and memory traffic already: ``make bench`` prints the matmul floor.
Ten runs in one stack cost about nine single runs; ``cache.cached_train_rl_many`` adds the
second core.) Nothing is kept in the layers between a forward and its backward: ``forward``
returns a tape that ``backward`` takes.

What is computed, and how it stays each run's own:

- **Training rows** (``Layout``): each run trains on its own distinct sequences, rows that
  share a prompt consecutive (``many.DistinctRows``). A run's rows go through the model *flat*:
  each prompt once (``P`` positions), then each row's answer positions; runs with fewer rows
  are padded with rows whose gradient is exactly 0. Attention is the only layer that mixes
  positions: an answer attends to its prompt's keys and values, then to its own, and the
  gradients of a prompt's keys and values add up over its answers.
- **Sampling** (``generate``): one KV cache for all runs; each run keeps each *distinct*
  unfinished sequence once (the G answers to a prompt often agree for a while) and draws one
  uniform per row and step from its own generator, exactly as it would alone.
- **One run equals the same run among many, bit for bit.** Row-wise arithmetic does not see
  the other rows, with two exceptions in OpenBLAS's matrix product: the *last* few rows of a
  product go through other kernels, and a row's last bits depend on its offset modulo 12 (the
  kernel's block of rows). So every run is padded with at least ``ROW_PAD`` rows whose results
  are thrown away, alone or not; a run's answer rows start at a multiple of ``ROW_ALIGN`` rows,
  alone or not; and every sum over rows (a weight's gradient) is taken over exactly the run's
  own rows, in one order. ``tests/test_tinylm_runs.py``
  checks a run trained among others against the same run trained alone, bit for bit.

The arithmetic is in the models' dtype (float32 to train; float64 where tests compare with a
plain loop): a Python float keeps a float32 array float32, a numpy float64 scalar would not.
"""
import numpy as np

from .layers import (adam_update, attend, attend_backward, averager, clip_scale, embedding_backward, layer_norm,
                     layer_norm_backward, linear, linear_backward)
from .model import TinyLM, draw_tokens
from .task import EOS, PROMPT_LEN

__all__ = ["ROW_PAD", "ROW_ALIGN", "Stack", "Layout", "forward", "backward", "generate", "sample", "StackAdam"]

ROW_PAD = 16          # rows after a run's last row in every matrix product (OpenBLAS's tail block: < 12 rows)
ROW_ALIGN = 48        # a run's rows start at the same offset modulo this (OpenBLAS's row blocks: 12)


# ----------------------------------------------------------------------------- parameters
class Stack:
    """The parameters of R models with the same config, stacked: ``params[name]`` (R, ...), with
    the names of ``TinyLM.named_params`` (``h.0.attn.qkv.w``, ...); ``grads`` alike after
    ``backward``."""

    def __init__(self, models):
        models = list(models)
        if not models or not all(isinstance(m, TinyLM) for m in models):
            raise ValueError("models must be a non-empty list of TinyLM")
        cfg = models[0].config
        if any(m.config != cfg or m.has_value_head != models[0].has_value_head or m.dtype != models[0].dtype
               for m in models):
            raise ValueError("models must share one config and dtype (and all have a value head or none)")
        self.config, self.R, self.has_value_head = cfg, len(models), models[0].has_value_head
        self.dtype = models[0].dtype
        self.names = [name for name, _, _ in models[0].named_params()]
        self.params = {n: np.stack([m.state_dict()[n] for m in models]) for n in self.names}
        self.grads = {}
        self.buffers = {}                                                      # work arrays kept between calls

    def model(self, r):
        """Run ``r`` as a ``TinyLM`` (parameters copied)."""
        m = TinyLM(self.config, dtype=self.dtype)
        return m.load_state_dict({n: self.params[n][r].copy() for n in self.names})


class StackRows:
    """The stack's rows, for ``model.py``'s layer equations: activations are (R, N, C), each run's
    N rows its own. A row mean is one matrix product over every run's rows at once (flat); a sum
    over rows is taken per run, and a weight's gradient Σ_rows xᵀ dy over exactly the run's own
    rows ``own[r]`` (slices), in order: what keeps a run among others equal to the run alone."""

    def __init__(self, own=None):
        self.own = own

    @staticmethod
    def mean(x):                                                  # (..., C) → (..., 1)
        C = x.shape[-1]
        return (x.reshape(-1, C) @ averager(C, x.dtype)).reshape(x.shape[:-1] + (1,))

    @staticmethod
    def total(x):                                                 # (R, N, C) → (R, C); pad rows are 0
        return x.sum(axis=1)

    def xty(self, x, dy):                                         # (R, N, n_in), (R, N, n_out) → (R, n_in, n_out)
        out = np.zeros((len(self.own), x.shape[-1], dy.shape[-1]), dy.dtype)
        for r, rows in enumerate(self.own):
            for i, sl in enumerate(rows):
                if i:
                    out[r] += x[r, sl].T @ dy[r, sl]
                else:
                    np.matmul(x[r, sl].T, dy[r, sl], out=out[r])
        return out


def _lin(x, st, name, bias=True):
    """``model.linear`` for every run: x (R, N, n_in) → (R, N, n_out)."""
    return linear(x, st.params[name + ".w"], st.params[name + ".b"][:, None, :] if bias else None)


def _lin_grads(st, name, x, dy, rows, bias=True):
    """``model.linear_backward`` for every run: dL/dW, dL/db into ``st.grads``; returns dL/dx."""
    dx, st.grads[name + ".w"], db = linear_backward(x, dy, st.params[name + ".w"], rows, bias)
    if bias:
        st.grads[name + ".b"] = db
    return dx


def _ln(x, st, name):
    """``model.layer_norm`` for every run: returns y and what ``_ln_backward`` needs."""
    return layer_norm(x, st.params[name + ".g"][:, None, :], st.params[name + ".b"][:, None, :], rows=StackRows)


def _ln_backward(st, name, dy, saved):
    """``model.layer_norm_backward`` for every run: dL/dg, dL/db into ``st.grads``; returns dL/dx."""
    dx, st.grads[name + ".g"], st.grads[name + ".b"] = layer_norm_backward(
        dy, saved, st.params[name + ".g"][:, None, :], rows=StackRows)
    return dx


# ----------------------------------------------------------------------------- training rows
class Layout:
    """Where each run's training rows sit in the stacked, flat arrays.

    ``seqs[r]`` (U_r, L): run r's sequences, rows that share their first ``P`` tokens
    consecutive (U_r may be 0). The model reads positions 0..L−2. Flat rows (R, N, ...):
    ``B0`` prompt blocks of P positions, unused rows up to ``c0`` (a multiple of ``ROW_ALIGN``),
    then ``U`` answer blocks of S = L−1−P positions; run r uses the first ``b0[r]`` prompt blocks
    and the first ``u[r]`` answer blocks, the rest is padding (at least ``ROW_PAD`` rows after
    the last row it uses)."""

    def __init__(self, seqs, P=PROMPT_LEN):
        self.R, self.P = len(seqs), P
        L = seqs[0].shape[1]
        if any(s.ndim != 2 or s.shape[1] != L for s in seqs) or L < P + 2:
            raise ValueError(f"seqs must be (U, L) arrays with one L > P + 1 = {P + 1}")
        self.L, self.S = L, L - 1 - P
        self.seqs = [np.asarray(s) for s in seqs]
        self.u = np.array([len(s) for s in seqs])
        self.gidx, self.b0 = [], []
        for s in self.seqs:
            new = np.ones(len(s), bool)
            new[1:] = (s[1:, :P] != s[:-1, :P]).any(axis=1)
            self.gidx.append(np.cumsum(new) - 1)              # each row's prompt block
            self.b0.append(int(new.sum()))
        self.b0 = np.array(self.b0)
        S = self.S
        self.B0 = max(1, int(self.b0.max()))                    # (one block of padding if no run has rows)
        self.U = int(self.u.max()) + -(-ROW_PAD // S)            # ≥ ROW_PAD answer rows of padding
        R, B0, U = self.R, self.B0, self.U
        self.n_pre = B0 * P
        self.c0 = c0 = -(-self.n_pre // ROW_ALIGN) * ROW_ALIGN
        self.N = c0 + U * S
        toks = np.full((R, self.N), EOS, dtype=np.int64)
        self.group = np.zeros((R, U), dtype=np.int64)            # answer block → its prompt block
        self.targets = np.full((R, U, S + 1), EOS, dtype=np.int64)   # tokens at positions P..L−1
        for r, s in enumerate(self.seqs):
            if not len(s):
                continue
            first = np.flatnonzero(np.r_[True, self.gidx[r][1:] != self.gidx[r][:-1]])
            toks[r, :self.b0[r] * P] = s[first, :P].ravel()
            toks[r, c0:c0 + len(s) * S] = s[:, P:L - 1].ravel()
            self.group[r, :len(s)] = self.gidx[r]
            self.targets[r, :len(s)] = s[:, P:]
        self.tokens = toks
        self.positions = np.concatenate([np.tile(np.arange(P), B0), np.zeros(c0 - self.n_pre, np.int64),
                                         np.tile(np.arange(P, L - 1), U)])
        # each run's own flat rows, as slices, the same whatever the other runs (sums over rows use these)
        self.own = [[sl for sl in (slice(0, self.b0[r] * P), slice(c0, c0 + self.u[r] * S)) if sl.stop > sl.start]
                    for r in range(R)]
        self.starts = [np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else g for g in self.gidx]
        self.run = np.arange(R)[:, None]


def forward(st, lay):
    """The training forward of every run on its rows ``lay``: logits at positions P−1..L−2 of
    every answer row (R, U, S+1, V), the values V(s_t) there (R, U, S+1) (None without a value
    head), and the tape that ``backward`` reads (nothing is kept in ``st``)."""
    cfg = st.config
    R, P, S, B0, U = lay.R, lay.P, lay.S, lay.B0, lay.U
    nh, C = cfg.n_head, cfg.n_embd
    hs = C // nh
    x = st.params["wte.w"][lay.run, lay.tokens] + st.params["wpe.w"][:, lay.positions]   # (R, N, C)
    tape = {"blocks": []}
    mask_p, mask_s = _mask(cfg, 0, P, P), _mask(cfg, P, S, P + S)
    for i in range(cfg.n_layer):
        b = f"h.{i}."
        t = {}
        a, t["ln1"] = _ln(x, st, b + "ln1")
        t["a"] = a
        qkv = _lin(a, st, b + "attn.qkv")                                       # (R, N, 3C)
        qp, kp, vp = qkv[:, :lay.n_pre].reshape(R, B0, P, 3, nh, hs).transpose(3, 0, 1, 4, 2, 5)
        qs, ks, vs = qkv[:, lay.c0:].reshape(R, U, S, 3, nh, hs).transpose(3, 0, 1, 4, 2, 5)
        yp, t["sp"] = attend(qp, kp, vp, mask_p)                                # prompts: causal
        k = np.concatenate([kp[lay.run, lay.group], ks], axis=3)                # (R, U, nh, P+S, hs)
        v = np.concatenate([vp[lay.run, lay.group], vs], axis=3)
        ys, t["ss"] = attend(qs, k, v, mask_s)                                  # answers
        y = np.zeros((R, lay.N, C), st.dtype)
        y[:, :lay.n_pre] = yp.transpose(0, 1, 3, 2, 4).reshape(R, B0 * P, C)
        y[:, lay.c0:] = ys.transpose(0, 1, 3, 2, 4).reshape(R, U * S, C)
        t["y"] = y
        x += _lin(y, st, b + "attn.proj")
        m, t["ln2"] = _ln(x, st, b + "ln2")
        t["m"] = m
        hid = _lin(m, st, b + "mlp.fc")
        t["on"] = hid > 0
        np.maximum(hid, 0, out=hid)
        t["hid"] = hid
        x += _lin(hid, st, b + "mlp.proj")
        tape["blocks"].append(t)
    h, tape["ln_f"] = _ln(x, st, "ln_f")
    tape["h"] = h
    logits = _lin(h, st, "lm_head", bias=False)                                 # (R, N, V)
    last = logits[:, P - 1:lay.n_pre:P]                                         # (R, B0, V) position P−1
    rows = np.concatenate([last[lay.run, lay.group][:, :, None],
                           logits[:, lay.c0:].reshape(R, U, S, -1)], axis=2)     # (R, U, S+1, V)
    values = None
    if st.has_value_head:
        val = _lin(h, st, "value")[..., 0]                                      # (R, N)
        values = np.concatenate([val[:, P - 1:lay.n_pre:P][lay.run, lay.group][:, :, None],
                                 val[:, lay.c0:].reshape(R, U, S)], axis=2)     # (R, U, S+1)
    return rows, values, tape


def backward(st, lay, tape, drows, dvalues=None):
    """Gradients of every run's parameters (in ``st.grads``) from dL/d(logits) ``drows``
    (R, U, S+1, V) and dL/d(values) (R, U, S+1) (None: 0), the rows ``forward`` returned (0 on
    padding rows)."""
    cfg = st.config
    R, P, S, B0, U = lay.R, lay.P, lay.S, lay.B0, lay.U
    nh, C = cfg.n_head, cfg.n_embd
    hs = C // nh
    V = drows.shape[-1]
    dlogits = np.zeros((R, lay.N, V), st.dtype)
    dlogits[:, P - 1:lay.n_pre:P] = _group_sum(lay, drows[:, :, 0], np.zeros((R, B0, V), st.dtype))
    dlogits[:, lay.c0:] = drows[:, :, 1:].reshape(R, U * S, V)
    own = StackRows(lay.own)
    dh = _lin_grads(st, "lm_head", tape["h"], dlogits, own, bias=False)
    if st.has_value_head:
        dval = np.zeros((R, lay.N, 1), st.dtype)
        if dvalues is not None:
            dval[:, P - 1:lay.n_pre:P, 0] = _group_sum(lay, dvalues[:, :, 0], np.zeros((R, B0), st.dtype))
            dval[:, lay.c0:, 0] = dvalues[:, :, 1:].reshape(R, U * S)
        dh = dh + _lin_grads(st, "value", tape["h"], dval, own)
    dx = _ln_backward(st, "ln_f", dh, tape["ln_f"])
    for i in reversed(range(cfg.n_layer)):
        b, t = f"h.{i}.", tape["blocks"][i]
        dhid = _lin_grads(st, b + "mlp.proj", t["hid"], dx, own)
        dhid *= t["on"]
        dm = _lin_grads(st, b + "mlp.fc", t["m"], dhid, own)
        dx += _ln_backward(st, b + "ln2", dm, t["ln2"])
        dy = _lin_grads(st, b + "attn.proj", t["y"], dx, own)
        dyp = dy[:, :lay.n_pre].reshape(R, B0, P, nh, hs).transpose(0, 1, 3, 2, 4)
        dys = dy[:, lay.c0:].reshape(R, U, S, nh, hs).transpose(0, 1, 3, 2, 4)
        dqp, dkp, dvp = attend_backward(dyp, t["sp"])
        dqs, dk, dv = attend_backward(dys, t["ss"])                              # (R, U, nh, P+S, hs)
        # a prompt's keys and values served its answers: their gradients add up
        _group_sum(lay, dk[..., :P, :], dkp)
        _group_sum(lay, dv[..., :P, :], dvp)
        dqkv = np.zeros((R, lay.N, 3 * C), st.dtype)
        _merge_qkv(dqp, dkp, dvp, dqkv[:, :lay.n_pre])
        _merge_qkv(dqs, dk[..., P:, :], dv[..., P:, :], dqkv[:, lay.c0:])
        da = _lin_grads(st, b + "attn.qkv", t["a"], dqkv, own)
        dx += _ln_backward(st, b + "ln1", da, t["ln1"])
    gpos = np.zeros_like(st.params["wpe.w"])
    gpos[:, :P] = dx[:, :lay.n_pre].reshape(R, B0, P, C).sum(axis=1)
    gpos[:, P:P + S] = dx[:, lay.c0:].reshape(R, U, S, C).sum(axis=1)
    st.grads["wpe.w"] = gpos
    st.grads["wte.w"] = embedding_backward(lay.tokens, dx, st.params["wte.w"].shape[1], own)


def _group_sum(lay, a, out):
    """out[r, g] += the sum of a[r, u] over run r's answer rows u of prompt block g (in order)."""
    for r in range(lay.R):
        if lay.u[r]:
            out[r, :lay.b0[r]] += np.add.reduceat(a[r, :lay.u[r]], lay.starts[r], axis=0)
    return out


def _merge_qkv(dq, dk, dv, out):                              # 3 × (R, B, nh, T, hs) → out (R, B·T, 3C)
    R, B, nh, T, hs = dq.shape
    view = out.reshape(R, B, T, 3, nh, hs)                        # (a view: out's rows are contiguous)
    for i, d in enumerate((dq, dk, dv)):
        view[:, :, :, i] = d.transpose(0, 1, 3, 2, 4)


def _mask(cfg, pos, T, S):
    """Additive causal mask (T, S) for queries at positions pos..pos+T−1 over keys 0..S−1."""
    q = np.arange(pos, pos + T)[:, None]
    return np.where(np.arange(S)[None, :] <= q, np.float32(0), np.float32(-np.inf)).astype(np.float32)


# ----------------------------------------------------------------------------- sampling
def _decode(st, tokens, positions, kv, pos):
    """Forward of new positions pos..pos+T−1 for every run with a KV cache: tokens (R, B, T) →
    logits at the last position (R, B, V). ``kv``: per layer, k and v (R, B, nh, Tmax, hs)."""
    cfg = st.config
    R, B, T = tokens.shape
    nh, C = cfg.n_head, cfg.n_embd
    hs = C // nh
    run = np.arange(R)[:, None, None]
    x = (st.params["wte.w"][run, tokens] + st.params["wpe.w"][:, positions][:, None]).reshape(R, B * T, C)
    mask = _mask(cfg, pos, T, pos + T)
    for i, cache in enumerate(kv):
        b = f"h.{i}."
        a, _ = _ln(x, st, b + "ln1")
        q, k, v = _lin(a, st, b + "attn.qkv").reshape(R, B, T, 3, nh, hs).transpose(3, 0, 1, 4, 2, 5)
        cache["k"][:, :, :, pos:pos + T] = k
        cache["v"][:, :, :, pos:pos + T] = v
        y, _ = attend(q, cache["k"][:, :, :, :pos + T], cache["v"][:, :, :, :pos + T], mask)
        x += _lin(y.transpose(0, 1, 3, 2, 4).reshape(R, B * T, C), st, b + "attn.proj")
        m, _ = _ln(x, st, b + "ln2")
        x += _lin(np.maximum(_lin(m, st, b + "mlp.fc"), 0), st, b + "mlp.proj")
    h, _ = _ln(x, st, "ln_f")                    # every row: see ROW_PAD
    return _lin(h, st, "lm_head", bias=False).reshape(R, B, T, -1)[:, :, -1]   # (R, B, V)


def generate(st, prompts, n_repeat, rngs, temperatures, max_new_tokens, active=None, greedy=False):
    """Sample ``n_repeat`` answers to each prompt for every run: prompts (R, B0, T0) → answer
    tokens (R, B0·n_repeat, max_new_tokens), padded with ``$`` after each ``$``.

    Run r draws from ``rngs[r]`` one uniform per row and step (``(B, 1)`` at a time) until all
    its rows have ended, as ``TinyLM.generate`` would alone (``active[r]`` False: run r does not
    sample, its rows stay ``$``). Each run's batch holds each distinct unfinished sequence once."""
    cfg = st.config
    R, B0, T0 = prompts.shape
    G, V = n_repeat, cfg.vocab_size
    B, n = B0 * G, max_new_tokens
    nh, hs = cfg.n_head, cfg.n_embd // cfg.n_head
    active = np.ones(R, bool) if active is None else np.asarray(active, bool).copy()
    out = np.full((R, B, n), EOS, dtype=np.int64)
    pad_p = -(-ROW_PAD // T0)
    Bp = B0 + pad_p
    toks = np.full((R, Bp, T0), EOS, dtype=np.int64)
    toks[:, :B0] = prompts
    cap = max(Bp, B + ROW_PAD)                                                 # rows the caches can hold
    shape = (R, cap, nh, cfg.block_size, hs)
    bufs = st.buffers.get("kv")                                                # kept from the last call: no
    if bufs is None or bufs[0]["k"].shape != shape:                            # fresh pages to fault in (a row
        bufs = [{"k": np.zeros(shape, st.dtype), "v": np.zeros(shape, st.dtype)}   # is written before it is read;
                for _ in range(cfg.n_layer)]                                   # stale rows are padding)
        st.buffers["kv"] = bufs
    logits = _decode(st, toks, np.arange(T0), [{k: b[:, :Bp] for k, b in c.items()} for c in bufs], 0)  # (R, Bp, V)
    owner = np.tile(np.repeat(np.arange(B0), G), (R, 1))                       # (R, B) batch row, −1: ended
    owner[~active] = -1
    for t in range(n):
        parents = []                                                           # (run, parent rows, next tokens)
        for r in np.flatnonzero(active):
            live = np.flatnonzero(owner[r] >= 0)
            lg = logits[r, owner[r, live]]
            if greedy:
                tok = lg.argmax(axis=-1)
            else:
                u = rngs[r].random((B, 1))[live]                               # one uniform per row, ended or not
                tok = draw_tokens(lg, temperatures[r], u)                     # TinyLM.generate's draw
            out[r, live, t] = tok
            owner[r, live[tok == EOS]] = -1
            if t == n - 1 or (owner[r] < 0).all():
                active[r] = False
                continue
            live, tok = live[tok != EOS], tok[tok != EOS]
            pairs, inv = np.unique(owner[r, live] * V + tok, return_inverse=True)
            slot, src, dst = _slots(pairs // V)
            owner[r, live] = slot[inv]
            parents.append((r, slot, pairs % V, src, dst))
        if not active.any():
            break
        Ub = max(len(s) for _, s, _, _, _ in parents) + ROW_PAD
        nxt = np.full((R, Ub), EOS, dtype=np.int64)
        end = T0 + t                                                           # positions written so far
        for r, slot, x, src, dst in parents:
            nxt[r, slot] = x
            if len(dst):                                                       # run r's new rows: their caches
                for c in bufs:                                                 # are their parents'
                    for buf in c.values():
                        buf[r, dst, :, :end] = buf[r, src, :, :end]            # (the rows after them: stale padding)
        kv = [{k: b[:, :Ub] for k, b in c.items()} for c in bufs]
        logits = _decode(st, nxt[:, :, None], np.array([T0 + t]), kv, T0 + t)
    return out


def _slots(parent):
    """Where the distinct sequences of the next step sit in a run's batch: ``parent`` (n,), the
    sorted rows they extend → their rows ``slot`` (a permutation of 0..n−1) and the cache rows
    to copy, ``src`` → ``dst``. A sequence stays in its parent's row when it is the first to
    extend it and that row is < n; the others fill the rows left free (so few rows move)."""
    n = len(parent)
    first = np.r_[True, parent[1:] != parent[:-1]]
    stay = first & (parent < n)
    slot = np.where(stay, parent, -1)
    free = np.ones(n, bool)
    free[parent[stay]] = False
    slot[~stay] = np.flatnonzero(free)                                       # (as many free rows as sequences to place)
    return slot, parent[~stay], slot[~stay]


# ----------------------------------------------------------------------------- optimiser
class StackAdam:
    """``model.Adam`` for every run of a ``Stack`` at once: the same arithmetic on each run's
    parameters (its own learning rate, clipping and step count)."""

    def __init__(self, lrs, grad_clips, betas=(0.9, 0.999), eps=1e-8):
        self.lr, self.grad_clip = list(lrs), list(grad_clips)
        self.betas, self.eps = betas, eps
        self.m, self.v = {}, {}
        self.t = np.zeros(len(self.lr), dtype=np.int64)

    def step(self, st, runs):
        """One Adam step of the runs ``runs`` (indices); the other runs are left as they are."""
        runs = np.asarray(runs, dtype=np.int64)
        if not len(runs):
            return
        b1, b2 = self.betas
        self.t[runs] += 1
        norm2 = np.zeros(len(runs))
        for name in st.names:                                                  # Adam's order: parameter by parameter
            g = st.grads[name][runs].astype(np.float64)
            norm2 = norm2 + (g * g).reshape(len(runs), -1).sum(axis=1)
        scale, lr, c1, c2 = [], [], [], []
        for j, r in enumerate(runs):
            t = int(self.t[r])
            scale.append(clip_scale(float(np.sqrt(norm2[j])), self.grad_clip[r]))
            lr.append(self.lr[r]), c1.append(1 - b1 ** t), c2.append(1 - b2 ** t)
        scale, lr, c1, c2 = (np.array(a, st.dtype) for a in (scale, lr, c1, c2))
        for name in st.names:
            p = st.params[name]
            sh = (len(runs),) + (1,) * (p.ndim - 1)
            if name not in self.m:
                self.m[name], self.v[name] = np.zeros_like(p), np.zeros_like(p)
            p[runs], self.m[name][runs], self.v[name][runs] = adam_update(
                p[runs], st.grads[name][runs] * scale.reshape(sh), self.m[name][runs], self.v[name][runs],
                lr.reshape(sh), c1.reshape(sh), c2.reshape(sh), self.betas, self.eps)


# ----------------------------------------------------------------------------- one model
def sample(model, prefix, max_new_tokens, rng=None, temperature=1.0, greedy=False, n_repeat=1):
    """``model.generate(prefix, max_new_tokens, rng, temperature, greedy, n_repeat=n_repeat)``
    (the same checks, the same draws, the same (B, n) result), running each distinct unfinished
    sequence once: what the rollouts and the evaluations use."""
    prefix, n = model._check_generate(prefix, max_new_tokens, rng, temperature, greedy, False, n_repeat)
    out = generate(Stack([model]), prefix[None], n_repeat, [rng], [temperature], n, greedy=greedy)[0]
    ended = out == EOS
    last = np.where(ended.any(axis=1), ended.argmax(axis=1), n - 1).max()      # generation stops when all rows end
    return out[:, :last + 1]
