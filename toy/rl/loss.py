r"""The policy loss and its pieces: PPO's clipped surrogate, the loss aggregations (each
``loss_type``'s normaliser), the KL estimators, the variants' pieces (GSPO's sequence ratio,
CISPO's weight, SAPO's gate, the two-sided clip δ, TRL's ``bnpo`` weights, the high-entropy tokens), and
``policy_loss``, which puts them together and returns the loss and d loss / d log π.
Shapes: ``(N, T)`` = sequences × tokens."""
import numpy as np

from ..prob import log_softmax
from .._check_args import (as_array, mask01, broadcast, checked, exponent, finite_result, integer, nonempty, nonneg, one_of, positive,
                           real, same_shape)




# ============================================================================ PPO's clipped surrogate
def _check_eps(eps_low, eps_high):
    eps_low = real(eps_low, "eps_low", 0, 1, hi_open=True)
    return {"eps_low": eps_low, "eps_high": eps_low if eps_high is None else nonneg(eps_high, "eps_high")}


def _check_clipped_surrogate(ratio, adv, eps_low, eps_high):
    ratio, adv = as_array(ratio, "ratio"), as_array(adv, "adv")
    if np.any(ratio < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    try:
        np.broadcast_shapes(ratio.shape, adv.shape)
    except ValueError:
        raise ValueError(f"ratio and adv must broadcast, got shapes {ratio.shape} and {adv.shape}") from None
    finite_result(lambda: np.abs(ratio).max(initial=0) * np.abs(adv).max(initial=0), "ratio and adv", "ratio * adv")
    return {"ratio": ratio, "adv": adv, **_check_eps(eps_low, eps_high)}


@checked(_check_clipped_surrogate)
def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=None):
    r"""PPO's clipped surrogate, elementwise (to be *maximised*):

    .. math:: \min\big(\rho A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A\big)

    ``ratio`` ρ = π_θ/π_old and ``adv`` A broadcast against each other. ``eps_high`` defaults
    to ``eps_low`` (symmetric PPO); DAPO's clip-higher sets it larger (0.28).
    """
    eps_high = eps_low if eps_high is None else eps_high
    return np.minimum(ratio * adv, np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv)


def _unclipped(ratio, adv, eps_low, eps_high):
    """True where the min of the clipped surrogate picks ρA (the token keeps its gradient)."""
    eps_high = eps_low if eps_high is None else eps_high
    return ratio * adv <= np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv


@checked(_check_clipped_surrogate)
def clipped_surrogate_grad(ratio, adv, eps_low=0.2, eps_high=None):
    r"""The derivative of :func:`clipped_surrogate` with respect to the ratio ρ:

    .. math:: \frac{\partial}{\partial\rho}\min\big(\rho A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A\big)
              = \begin{cases} A & \text{where the min is } \rho A \\ 0 & \text{where it is the clipped term} \end{cases}

    The clipped term is the min only when ρ has left the range in the direction A pushes it
    (ρ > 1 + ε_high with A > 0, ρ < 1 − ε_low with A < 0): there the token has no gradient.
    """
    ratio, adv = np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float)
    return np.where(_unclipped(ratio, adv, eps_low, eps_high), adv, 0.0)


def _check_clip_fraction(ratio, adv, mask, eps_low, eps_high):
    m = as_array(mask, "mask")
    if not np.all((m == 0) | (m == 1)) or m.sum() == 0:
        raise ValueError("mask must contain only 0 and 1, and at least one 1")
    broadcast([np.shape(ratio), np.shape(adv), m.shape], ["ratio", "adv", "mask"])
    return {"ratio": as_array(ratio, "ratio"), "adv": as_array(adv, "adv"), "mask": m, **_check_eps(eps_low, eps_high)}


@checked(_check_clip_fraction)
def clip_fraction(ratio, adv, mask, eps_low=0.2, eps_high=None):
    r"""The share of the tokens in ``mask`` whose gradient the clip removes
    (:func:`clipped_surrogate_grad` is 0 while A ≠ 0), as TRL and verl log it (``clip_ratio``):
    the denominator is every token of the mask. ``ratio``, ``adv`` broadcast to ``mask``'s shape."""
    m = np.asarray(mask, dtype=float)
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float), m)[:2]
    clipped = ~_unclipped(ratio, adv, eps_low, eps_high)
    return float((clipped * m).sum() / m.sum())


# ============================================================================ the loss aggregations
LOSS_TYPES = ("grpo", "dapo", "dr_grpo", "sum")

# The normaliser each algorithm comes with, one table for the three worlds (a config's
# ``loss_type=None`` means this): REINFORCE and its baselines sum an answer's tokens and average
# the answers ("sum"; RFT is REINFORCE on 0/1 weights); GRPO averages each answer, then the
# answers; Dr. GRPO divides by a constant; PPO on the language model takes the token mean.
DEFAULT_LOSS_TYPE = {"rft": "sum", "reinforce": "sum", "baseline": "sum", "rloo": "sum", "grpo": "grpo",
                     "dr_grpo": "dr_grpo", "ppo": "dapo"}


def _check_mask_weights(m, loss_type, max_len):
    """The checks :func:`aggregate_loss` and :func:`aggregate_weights` share: a 0/1 ``mask``
    (..., N, T) with a token where ``loss_type`` divides by a count, a known ``loss_type`` and
    ``max_len`` >= every sequence's length."""
    if not np.all((m == 0) | (m == 1)):
        raise ValueError("mask must contain only 0 and 1")
    one_of(loss_type, "loss_type", LOSS_TYPES)
    if max_len is not None:
        max_len = positive(max_len, "max_len")
    if loss_type == "grpo" and np.any(m.sum(axis=-1) == 0):
        raise ValueError("mask has a sequence with no generated tokens; 'grpo' divides by its length")
    if loss_type == "dapo" and np.any(m.sum(axis=(-2, -1)) == 0):
        raise ValueError("mask has no generated tokens")
    if loss_type == "dr_grpo" and m.size and m.sum(axis=-1).max() > (m.shape[-1] if max_len is None else max_len):
        raise ValueError(f"max_len must be >= every sequence's number of generated tokens, "
                         f"got max_len={max_len} and a sequence of {int(m.sum(axis=-1).max())}")
    return {"mask": m, "max_len": max_len}


def _check_aggregate_loss(per_token, mask, loss_type, max_len):
    x = nonempty(as_array(per_token, "per_token", ndim=2), "per_token")   # (N, T)
    m = as_array(mask, "mask", ndim=2)                      # (N, T)
    same_shape(x, m, "per_token", "mask")
    finite_result(lambda: np.abs(x * m).sum(), "per_token", "the sum of the masked losses")
    return {"per_token": x, **_check_mask_weights(m, loss_type, max_len)}


@checked(_check_aggregate_loss)
def aggregate_loss(per_token, mask, loss_type, max_len=None):
    r"""Reduce a per-token loss (N, T) to a scalar, with the aggregations of TRL's ``GRPOTrainer``
    (``loss_type``; for ``"dr_grpo"`` only when ``max_len`` is TRL's ``max_completion_length``,
    and TRL's ``"dapo"`` takes its token mean over the whole generation batch).

    - ``"grpo"``:    :math:`\frac1N\sum_i \frac{\sum_t m_{it}\ell_{it}}{\sum_t m_{it}}` (mean of per-sequence means)
    - ``"dapo"``:    :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{\sum_{i,t} m_{it}}` (token level)
    - ``"dr_grpo"``: :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{N \cdot L_{max}}` (a constant normaliser)
    - ``"sum"``:     :math:`\frac1N\sum_{i,t} m_{it}\ell_{it}` (REINFORCE's: sum over each sequence, mean over sequences)

    ``mask`` is 1 on tokens the policy generated (the loss's :math:`m_t`), 0 elsewhere.
    ``max_len`` defaults to T (the padded width) for ``"dr_grpo"``; no sequence may have more
    generated tokens than ``max_len``.
    """
    x, m = np.asarray(per_token, dtype=float), np.asarray(mask, dtype=float)   # (N, T)
    N, T = x.shape
    if loss_type == "grpo":
        return float(np.mean((x * m).sum(axis=1) / m.sum(axis=1)))
    if loss_type == "dapo":
        return float((x * m).sum() / m.sum())
    if loss_type == "sum":
        return float((x * m).sum() / N)
    L = T if max_len is None else max_len
    return float((x * m).sum() / (N * L))


def _check_aggregate_weights(mask, loss_type, max_len):
    m = nonempty(as_array(mask, "mask", min_ndim=2), "mask")  # (..., N, T)
    return _check_mask_weights(m, loss_type, max_len)


@checked(_check_aggregate_weights)
def aggregate_weights(mask, loss_type, max_len=None):
    r"""The weights :math:`c_{it}` of each per-token loss in :func:`aggregate_loss`:
    ``(c * per_token).sum() == aggregate_loss(per_token, mask, loss_type, max_len)``, i.e. the
    gradient of the aggregated loss with respect to each token's loss.

    - ``"grpo"``:    :math:`c_{it} = m_{it} / (N\,|o_i|)` — a token of a short answer weighs more
    - ``"dapo"``:    :math:`c_{it} = m_{it} / \sum_{j,s} m_{js}` — every token weighs the same
    - ``"dr_grpo"``: :math:`c_{it} = m_{it} / (N\,L_{max})` — every token weighs the same
    - ``"sum"``:     :math:`c_{it} = m_{it} / N` — every token weighs the same, a long sequence more in total

    ``mask`` is (N, T), or (..., N, T) for several independent batches (e.g. runs) at once,
    each normalised on its own.
    """
    m = np.asarray(mask, dtype=float)                       # (..., N, T)
    N, T = m.shape[-2:]
    if loss_type == "grpo":
        return m / (N * m.sum(axis=-1, keepdims=True))      # |o_i| = Σ_t m_it
    if loss_type == "dapo":
        return m / m.sum(axis=(-2, -1), keepdims=True)
    if loss_type == "sum":
        return m / N
    L = T if max_len is None else max_len
    return m / (N * L)


# ============================================================================ the KL estimators
def _check_logr(logr):
    return {"logr": as_array(logr, "logr")}


def _check_kl_k2(logr):
    lr = as_array(logr, "logr")
    finite_result(lambda: 0.5 * np.abs(lr).max(initial=0) ** 2, "logr", "(log r)² / 2")
    return {"logr": lr}


def _check_exp_logr(logr):
    return {"logr": exponent(as_array(logr, "logr"), "logr", "r = e^logr")}


@checked(_check_logr)
def kl_k1(logr):
    r"""k1 = −log r with log r = log π_ref − log π on samples from π: unbiased, can be negative."""
    return -logr


@checked(_check_kl_k2)
def kl_k2(logr):
    r"""k2 = (log r)² / 2: always ≥ 0, biased, low variance."""
    return 0.5 * logr ** 2


@checked(_check_exp_logr)
def kl_k3(logr):
    r"""k3 = (r − 1) − log r: unbiased and always ≥ 0 (Schulman's estimator, used by GRPO)."""
    return np.expm1(logr) - logr


@checked(_check_exp_logr)
def kl_k3_grad(logr):
    r"""d k3 / d log r = r − 1 (with log r = log π_ref − log π, so d k3 / d log π = 1 − r)."""
    return np.exp(logr) - 1.0


# ============================================================================ loss variants practitioners use now
# GSPO's sequence-level ratio, CISPO, SAPO's soft gate, TRL's "bnpo" aggregation, TRL's two-sided clip δ (= verl's dual
# clip), the high-entropy-token selection of "Beyond the 80/20 rule", and TRL's importance-weighted
# KL: the pieces policy_loss (below) branches on. Each variant's library formula is cited in
# tests/test_rl_variants.py (file:line of the released wheels) and book/toy_to_real.md.
RATIO_LEVELS = ("token", "sequence")
LOSS_MODES = ("clip", "cispo", "sapo")


def _check_sequence_log_ratio(logp, old_logp, mask):
    lp = as_array(logp, "logp", ndim=2)                     # (N, T)
    old = as_array(old_logp, "old_logp", ndim=2)            # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(old, lp, "old_logp", "logp"), same_shape(m, lp, "mask", "logp")
    if np.any(m.sum(axis=1) == 0):
        raise ValueError("mask has a sequence with no generated tokens; its sequence ratio is undefined")
    return {"logp": lp, "old_logp": old, "mask": m}


@checked(_check_sequence_log_ratio)
def sequence_log_ratio(logp, old_logp, mask):
    r"""GSPO's sequence-level log importance ratio, the mean log-ratio over each answer's tokens:

    .. math:: \log s_i = \frac{1}{|o_i|}\sum_t m_{it}\,(\log\pi_\theta(o_{it}) - \log\pi_{old}(o_{it})),
              \qquad s_i = \Big(\frac{\pi_\theta(o_i)}{\pi_{old}(o_i)}\Big)^{1/|o_i|}

    ``logp``, ``old_logp``, ``mask``: (N, T). Returns (N,). Every answer needs a generated token.
    """
    lp, old, m = (np.asarray(x, dtype=float) for x in (logp, old_logp, mask))   # (N, T)
    return ((lp - old) * m).sum(axis=1) / m.sum(axis=1)    # ÷ |o_i|


def _check_cap(cap, eps_low, name):
    """CISPO's absolute cap (None: 1 + ε_high): > 0, and not below the lower bound 1 − ε_low (checked)."""
    if cap is None:
        return None
    cap = positive(cap, name)
    if eps_low is not None and cap < 1 - eps_low:
        raise ValueError(f"{name} must be >= the lower bound 1 - eps_low = {1 - eps_low:g} "
                         f"(TRL has none: eps_low=None, or 1.0 in a config), got {cap}")
    return cap


def _check_cispo_weight(ratio, eps_low, eps_high, cap):
    r = as_array(ratio, "ratio")
    if np.any(r < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    eps_low = None if eps_low is None else real(eps_low, "eps_low", 0, 1)
    eps_high = None if eps_high is None and cap is not None else nonneg(eps_high, "eps_high")   # the cap replaces it
    return {"ratio": r, "eps_high": eps_high, "eps_low": eps_low, "cap": _check_cap(cap, eps_low, "cap")}


@checked(_check_cispo_weight)
def cispo_weight(ratio, eps_low=None, eps_high=0.28, cap=None):
    r"""CISPO's clipped importance weight, used as a constant (stop-gradient) factor:

    .. math:: \hat r = \mathrm{clip}(\rho,\ 1-\varepsilon_{low},\ 1+\varepsilon_{high}),
              \qquad \ell_t = -\,\mathrm{sg}(\hat r_t)\,A_t\,\log\pi_\theta(o_t)

    so that :math:`\partial\ell_t/\partial\log\pi_\theta(o_t) = -\hat r_t A_t`: every token keeps a
    gradient, only its weight is capped (PPO's clip instead zeroes the gradient of a clipped token).
    ``eps_low=None`` is no lower bound (TRL clamps only from above). ``cap``, when given, is the upper
    bound itself in place of 1 + ε_high: TRL's ``epsilon_high`` for ``loss_type="cispo"``,
    :math:`\hat r = \min(\rho, \varepsilon_{high})`, which with TRL's default ``epsilon_high=None``
    falls back to ``epsilon`` = 0.2: a cap below 1.
    """
    lo = 0.0 if eps_low is None else 1 - eps_low
    return np.clip(np.asarray(ratio, dtype=float), lo, 1 + eps_high if cap is None else cap)


def _check_sapo_gate(ratio, adv, tau_pos, tau_neg):
    ratio, adv = as_array(ratio, "ratio"), as_array(adv, "adv")
    if np.any(ratio < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    broadcast([ratio.shape, adv.shape], ["ratio", "adv"])
    return {"ratio": ratio, "adv": adv, **_check_taus(tau_pos, tau_neg)}


def _check_taus(tau_pos, tau_neg):
    return {"tau_pos": positive(tau_pos, "tau_pos"), "tau_neg": positive(tau_neg, "tau_neg")}


def _sapo(ratio, adv, tau_pos, tau_neg):
    """SAPO's gate f and its slope df/dρ = 4σ(1 − σ) (the 4/τ cancels τ), σ = sigmoid(τ(ρ − 1))."""
    tau = np.where(adv > 0, tau_pos, tau_neg)                # τ_pos if A > 0 else τ_neg
    sig = 0.5 * (1 + np.tanh(0.5 * tau * (ratio - 1)))      # sigmoid, without overflow
    return sig * (4.0 / tau), 4.0 * sig * (1 - sig)


@checked(_check_sapo_gate)
def sapo_gate(ratio, adv, tau_pos=1.0, tau_neg=1.05):
    r"""SAPO's soft gate on the ratio (Soft Adaptive Policy Optimization; verl's ``loss_mode="sapo"``
    and TRL's ``loss_type="sapo"``), in place of PPO's clip; the token's loss is :math:`-f\,A`:

    .. math:: f(\rho) = \sigma\big(\tau(\rho - 1)\big)\,\frac{4}{\tau},
              \qquad \tau = \begin{cases}\tau_{pos} & A > 0\\ \tau_{neg} & A \le 0\end{cases},
              \qquad f'(\rho) = 4\,\sigma(1-\sigma)

    At ρ = 1 the slope is 1 (the on-policy gradient); it fades smoothly as ρ leaves 1, faster for a
    larger τ, where PPO's clip cuts it to 0 at 1 ± ε. ``ratio`` and ``adv`` broadcast; the defaults
    are both libraries' (``tau_pos`` = 1.0, ``tau_neg`` = 1.05).
    """
    return _sapo(np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float), tau_pos, tau_neg)[0]


def _check_delta(delta):
    return None if delta is None else real(delta, "delta", lo=1, lo_open=True)


def _check_two_sided_surrogate(ratio, adv, eps_low, eps_high, delta):
    return {**_check_clipped_surrogate(ratio, adv, eps_low, eps_high), "delta": _check_delta(delta)}


@checked(_check_two_sided_surrogate)
def two_sided_surrogate(ratio, adv, eps_low=0.2, eps_high=None, delta=None):
    r"""PPO's clipped surrogate with the ratio of the unclipped term capped at δ (TRL's ``delta``,
    from INTELLECT-2), to be maximised:

    .. math:: \min\big(\min(\rho, \delta)\,A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high})\,A\big)

    For A < 0 and ρ > δ the surrogate is the constant δA: a token whose ratio ran far off in the
    direction the advantage punishes stops pushing. For δ ≥ 1 + ε_high this equals verl's dual clip
    with ``clip_ratio_c`` = δ, :math:`\max(\delta A, \min(\rho A, \mathrm{clip}(\rho)A))` for A < 0.
    ``delta=None`` is :func:`clipped_surrogate`.
    """
    if delta is None:
        return clipped_surrogate(ratio, adv, eps_low, eps_high)
    eps_high = eps_low if eps_high is None else eps_high
    ratio, adv = np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float)
    return np.minimum(np.minimum(ratio, delta) * adv, np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv)


@checked(_check_two_sided_surrogate)
def two_sided_surrogate_grad(ratio, adv, eps_low=0.2, eps_high=None, delta=None):
    r"""d :func:`two_sided_surrogate` / dρ: A where the min is the term min(ρ, δ)A with ρ < δ, or the
    clipped term with ρ inside the clip range; 0 elsewhere."""
    if delta is None:
        return clipped_surrogate_grad(ratio, adv, eps_low, eps_high)
    eps_high = eps_low if eps_high is None else eps_high
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float))
    capped = np.minimum(ratio, delta) * adv <= np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv
    inside = (ratio > 1 - eps_low) & (ratio < 1 + eps_high)
    return np.where(np.where(capped, ratio < delta, inside), adv, 0.0)


def _check_bnpo_weights(mask, micro_batch):
    m = mask01(mask)                                       # (N, T)
    N = len(m)
    if N == 0:
        raise ValueError("mask must hold at least one answer, got shape (0, T)")
    b = N if micro_batch is None else int(real(micro_batch, "micro_batch", 1, N))
    if micro_batch is not None and (b != micro_batch or N % b):
        raise ValueError(f"micro_batch must be an integer that divides the number of answers N = {N}, "
                         f"got {micro_batch!r}")
    if np.any(m.reshape(N // b, b * m.shape[1]).sum(axis=1) == 0):
        raise ValueError("mask has a micro-batch with no generated tokens")
    return {"mask": m, "micro_batch": None if micro_batch is None else b}


@checked(_check_bnpo_weights)
def bnpo_weights(mask, micro_batch=None):
    r"""The weights :math:`c_{it}` of TRL's ``loss_type="bnpo"``: the N answers are split into
    consecutive micro-batches of ``micro_batch`` answers (TRL's ``per_device_train_batch_size``),
    each micro-batch's loss is its own token mean, and the K micro-batches are averaged (TRL divides
    each by the gradient-accumulation steps):

    .. math:: L = \frac1K\sum_k \frac{\sum_{i\in k,t} m_{it}\ell_{it}}{\sum_{i\in k,t} m_{it}},
              \qquad c_{it} = \frac{m_{it}}{K\sum_{j\in k(i),s} m_{js}}

    ``micro_batch=None`` (= N) is one token mean over the batch, the toy's ``"dapo"``; ``micro_batch=1``
    is a mean of per-answer means, ``"grpo"``. ``mask``: (N, T); N must be a multiple of ``micro_batch``.
    """
    m = np.asarray(mask, dtype=float)                       # (N, T)
    N = len(m)
    b = N if micro_batch is None else micro_batch
    tokens = m.reshape(N // b, b * m.shape[1]).sum(axis=1)  # (K,) tokens per micro-batch
    return m / (N // b * np.repeat(tokens, b)[:, None])


def _check_token_entropy(logits):
    return {"logits": as_array(logits, "logits", min_ndim=1)}


@checked(_check_token_entropy)
def token_entropy(logits):
    r"""The entropy of the next-token distribution at each position, :math:`H = -\sum_v \pi_v \log\pi_v`,
    from logits (..., V) (TRL computes it from the training logits). Returns (...)."""
    logp = log_softmax(np.asarray(logits, dtype=float))
    return -(np.exp(logp) * logp).sum(axis=-1)


def _check_high_entropy_mask(entropy, mask, top_quantile, micro_batches):
    h = as_array(entropy, "entropy", ndim=2)                # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(h, m, "entropy", "mask")
    q = real(top_quantile, "top_quantile", 0, 1)
    if m.sum() == 0:
        raise ValueError("mask has no generated tokens")
    k = integer(micro_batches, "micro_batches", 1, max(len(m), 1))
    if len(m) % k:
        raise ValueError(f"micro_batches must divide the number of answers N = {len(m)} (TRL splits the batch "
                         f"into equal micro-batches), got {k}")
    return {"entropy": h, "mask": m, "top_quantile": q, "micro_batches": k}


@checked(_check_high_entropy_mask)
def high_entropy_mask(entropy, mask, top_quantile=0.2, micro_batches=1):
    r"""The tokens whose entropy is in the top ``top_quantile`` of the generated tokens' entropies
    ("Beyond the 80/20 rule": the forking tokens; TRL's ``top_entropy_quantile``, 0.2 in the paper):

    .. math:: k_{it} = m_{it}\,\mathbb 1\big[H_{it} \ge Q_{1-\rho}(\{H_{js} : m_{js}=1\})\big]

    with :math:`Q` the linearly interpolated quantile (``torch.quantile``'s and ``np.quantile``'s
    default). ``top_quantile=1`` keeps every token; 0 keeps only the highest; ties with the threshold
    are kept. ``micro_batches=k`` takes the threshold in each of k consecutive, equal micro-batches
    of rows instead, as TRL does (its ``get_high_entropy_mask`` runs on each gradient-accumulation
    micro-batch, the generation batch cut by ``split_tensor_dict``); a micro-batch with no generated
    token keeps none. ``entropy``, ``mask``: (N, T). Returns a 0/1 float array (N, T), to pass to
    :func:`policy_loss` as ``pg_mask``.
    """
    h, m = np.asarray(entropy, dtype=float), np.asarray(mask, dtype=float)   # (N, T)
    keep = np.zeros(h.shape, bool)
    for rows in np.split(np.arange(len(h)), micro_batches):                  # k consecutive micro-batches
        hk, mk = h[rows], m[rows]
        if mk.any():
            keep[rows] = (hk >= np.quantile(hk[mk == 1], 1 - top_quantile)) & (mk == 1)
    return keep.astype(float)


# ============================================================================ the policy loss
def _check_policy_loss(logp, old_logp, adv, mask, loss_type, eps_low, eps_high, beta, ref_logp, max_len,
                       ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction, tau_pos, tau_neg,
                       cispo_cap):
    lp = as_array(logp, "logp", ndim=2)                     # (N, T)
    old = as_array(old_logp, "old_logp", ndim=2)            # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(old, lp, "old_logp", "logp"), same_shape(m, lp, "mask", "logp")
    a = as_array(adv, "adv")
    if a.shape not in (lp.shape, lp.shape[:1]):
        raise ValueError(f"adv must have shape {lp.shape[:1]} or {lp.shape}, got {a.shape}")
    one_of(ratio_level, "ratio_level", RATIO_LEVELS), one_of(loss_mode, "loss_mode", LOSS_MODES)
    one_of(loss_type, "loss_type", LOSS_TYPES + ("bnpo",))
    if micro_batch is not None and loss_type != "bnpo":
        raise ValueError(f"micro_batch is only used by loss_type='bnpo', got loss_type={loss_type!r}")
    new = {"logp": lp, "old_logp": old, "mask": m, "adv": a, "delta": _check_delta(delta),
           **_check_taus(tau_pos, tau_neg)}
    if loss_mode != "clip" and delta is not None:
        raise ValueError(f"delta caps the clipped surrogate; loss_mode={loss_mode!r} has none (give delta=None)")
    if cispo_cap is not None and (loss_mode != "cispo" or eps_high is not None):
        raise ValueError(f"cispo_cap is CISPO's cap in place of 1 + eps_high: only with loss_mode='cispo' and "
                         f"eps_high=None, got loss_mode={loss_mode!r}, eps_high={eps_high!r}")
    if loss_mode == "sapo" and loss_type != "grpo":
        raise ValueError(f"loss_type must be 'grpo' with loss_mode='sapo' (verl and TRL aggregate SAPO as the "
                         f"mean of per-answer token means), got {loss_type!r}")
    if loss_mode == "cispo":
        if eps_low is None and eps_high is None and cispo_cap is None:
            raise ValueError("eps_high must be given when eps_low is None (CISPO's weight needs a cap)")
        lo = None if eps_low is None else real(eps_low, "eps_low", 0, 1)
        new["cispo_cap"] = _check_cap(cispo_cap, lo, "cispo_cap")
        _check_cispo_weight(1.0, eps_low, eps_low if eps_high is None else eps_high, new["cispo_cap"])
    else:
        new.update(_check_eps(eps_low, eps_high))
    new["beta"] = beta = nonneg(beta, "beta")
    if beta > 0 and (ref_logp is None or np.shape(ref_logp) != lp.shape):
        raise ValueError(f"ref_logp must be given with shape {lp.shape} when beta > 0")
    if pg_mask is not None:
        new["pg_mask"] = mask01(pg_mask, "pg_mask")
        same_shape(new["pg_mask"], m, "pg_mask", "mask")
    if kl_bias_correction not in (True, False):
        raise ValueError(f"kl_bias_correction must be True or False, got {kl_bias_correction!r}")
    if loss_type == "bnpo":
        new["micro_batch"] = _check_bnpo_weights(m, micro_batch)["micro_batch"]
    else:
        new["max_len"] = _check_aggregate_loss(np.zeros_like(lp), m, loss_type, max_len)["max_len"]
    _policy_loss_finite(lp, old, a, m, beta, ref_logp)
    return new


def _policy_loss_finite(lp, old, a, m, beta, ref_logp):
    """Refuse, naming the argument, inputs whose ratio, surrogate, KL or sums overflow."""
    with np.errstate(all="ignore"):
        exponent(lp - old, "logp - old_logp", "the ratio e^(logp - old_logp)")
        top = np.exp(np.max(lp - old, initial=0)) * np.abs(a).max(initial=0)      # the largest |ρA|
        if beta > 0:
            logr = exponent(as_array(ref_logp, "ref_logp") - lp, "ref_logp - logp", "e^(ref_logp - logp)")
            k3 = np.expm1(logr) - logr
            finite_result(lambda: k3, "ref_logp - logp", "k3")
            top = top + beta * k3.max(initial=0)
        finite_result(lambda: top * max(m.sum(), 1), "adv" if beta == 0 else "adv and beta",
                      "the sum over the tokens of ratio * adv (+ beta * k3)")


@checked(_check_policy_loss)
def policy_loss(logp, old_logp, adv, mask, loss_type="grpo", eps_low=0.2, eps_high=None,
                beta=0.0, ref_logp=None, max_len=None, *, ratio_level="token", loss_mode="clip",
                delta=None, micro_batch=None, pg_mask=None, kl_bias_correction=False, tau_pos=1.0, tau_neg=1.05,
                cispo_cap=None):
    r"""The policy loss of PPO, GRPO, Dr. GRPO and DAPO, with the variants as branches, and its
    gradient with respect to ``logp``. Per token (:math:`\rho_t = e^{\log\pi_\theta - \log\pi_{old}}`):

    .. math:: \ell_t = -\min\big(\rho_t A_t,\ \mathrm{clip}(\rho_t, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A_t\big)
              + \beta\, k_3(\log\pi_{ref} - \log\pi_\theta),
              \qquad L = \sum_{i,t} c_{it}\,\ell_{it},

    with :math:`c_{it}` from :func:`aggregate_weights` (``loss_type``, ``max_len``). By the chain rule,
    :math:`\partial L/\partial\log\pi_\theta(t) = c_t\big(\rho_t\,\partial\ell_t/\partial\rho_t
    + \partial\ell_t/\partial\log\pi_\theta(t)\big)`. The variants change one piece each:

    - the ratio, ``ratio_level="sequence"`` (GSPO): :math:`\rho_{it} = s_i` (:func:`sequence_log_ratio`),
      whose derivative spreads over the answer's tokens, :math:`s_i\,m_{iu}/|o_i|`;
    - the surrogate: ``delta`` caps ρ in the unclipped term (:func:`two_sided_surrogate`);
      ``loss_mode="cispo"`` is :math:`\ell_t = -\mathrm{sg}(\hat r_t) A_t \log\pi_\theta(o_t)`
      (:func:`cispo_weight`): every token keeps a gradient; ``cispo_cap`` (with ``eps_high=None``) caps
      the weight at that value itself, TRL's ``epsilon_high`` (below 1 with TRL's default);
      ``loss_mode="sapo"`` is :math:`\ell_t = -f(\rho_t) A_t` with SAPO's soft gate f
      (:func:`sapo_gate`, ``tau_pos``, ``tau_neg``), aggregated as ``loss_type="grpo"`` (verl and TRL);
    - the tokens: ``pg_mask`` (:func:`high_entropy_mask`) keeps the policy term on some tokens only,
      and leaves the normaliser alone (as TRL);
    - the KL: ``kl_bias_correction`` (TRL's ``use_bias_correction_kl``) weighs :math:`k_3` by ρ;
    - the normaliser: ``loss_type="bnpo"``, TRL's token mean per micro-batch (:func:`bnpo_weights`).

    ``logp``, ``old_logp``, ``mask``: (N, T); ``adv``: (N,) (one advantage per sequence) or (N, T)
    (per token); ``ref_logp`` (N, T) is needed when β > 0. Returns ``(loss, dlogp)``, ``dlogp``
    (N, T), 0 outside the mask. A world then applies its own chain rule from ``dlogp`` to its
    parameters and *descends* the loss.
    """
    lp, old, m = (np.asarray(x, dtype=float) for x in (logp, old_logp, mask))   # (N, T)
    a = np.asarray(adv, dtype=float)
    a = np.broadcast_to(a[:, None] if a.ndim == 1 else a, lp.shape)   # (N, T)
    if ratio_level == "token":
        ratio = np.exp(lp - old)                                       # ρ_t
    else:
        ratio = np.broadcast_to(np.exp(sequence_log_ratio(lp, old, m))[:, None], lp.shape)   # GSPO: s_i
    if loss_mode == "clip":                                            # ℓ = −surr(ρ, A): through ρ
        per_token = -two_sided_surrogate(ratio, a, eps_low, eps_high, delta)
        dl_dratio, dl_dlogp = -two_sided_surrogate_grad(ratio, a, eps_low, eps_high, delta), 0.0
    elif loss_mode == "sapo":                                          # SAPO: ℓ = −f(ρ)·A, f the soft gate
        gate, slope = _sapo(ratio, a, tau_pos, tau_neg)
        per_token, dl_dratio, dl_dlogp = -gate * a, -slope * a, 0.0
    else:                                                              # CISPO: ℓ = −sg(r̂)·A·log π
        w = cispo_weight(ratio, eps_low, eps_low if eps_high is None else eps_high, cispo_cap)
        per_token, dl_dratio, dl_dlogp = -w * a * lp, 0.0, -w * a
    if pg_mask is not None:                                            # the policy term on some tokens
        per_token, dl_dratio, dl_dlogp = pg_mask * per_token, pg_mask * dl_dratio, pg_mask * dl_dlogp
    if beta > 0:                                                       # + β·k3, (× ρ: bias-corrected)
        logr = np.asarray(ref_logp, dtype=float) - lp                  # log π_ref/π, d/d log π = −1
        w = ratio if kl_bias_correction else 1.0
        per_token = per_token + beta * w * kl_k3(logr)
        dl_dlogp = dl_dlogp - beta * w * kl_k3_grad(logr)
        dl_dratio = dl_dratio + beta * kl_k3(logr) if kl_bias_correction else dl_dratio
    c = bnpo_weights(m, micro_batch) if loss_type == "bnpo" else aggregate_weights(m, loss_type, max_len)
    if ratio_level == "token":                                         # dρ_t/d log π_t = ρ_t
        dlogp = c * (dl_dlogp + dl_dratio * ratio)
    else:                                                              # ds_i/d log π_iu = s_i m_iu/|o_i|
        through = (c * dl_dratio).sum(axis=1, keepdims=True) * ratio[:, :1] / m.sum(axis=1, keepdims=True)
        dlogp = c * dl_dlogp + through * m
    loss = (float((c * per_token).sum()) if loss_type == "bnpo"
            else aggregate_loss(per_token, m, loss_type, max_len))
    return loss, dlogp * m
