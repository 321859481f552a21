r"""PPO's targets: language-model PPO's KL-shaped per-token reward, generalised advantage
estimation, the normalised advantages and returns a critic is trained on (``ppo_targets``),
and the value loss. Shapes: ``(N, T)`` = sequences × tokens."""
import numpy as np

from .._check_args import as_array, checked, finite_result, flag, mask01, nonneg, same_shape, size
from .loss import aggregate_weights


# ============================================================================ LM-PPO: shaped rewards, GAE
MAX_TOKENS = 10**5          # gae's backward loop runs once per token position, in Python




def _check_kl_shaped_rewards(kl, score, mask, beta, clamp):
    k = as_array(kl, "kl", ndim=2)                          # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(k, m, "kl", "mask")
    s = as_array(score, "score", ndim=1)                    # (N,)
    if len(s) != len(m):
        raise ValueError(f"score must have one entry per row of mask, got {len(s)} and {len(m)}")
    beta = nonneg(beta, "beta")
    clamp = flag(clamp, "clamp")
    finite_result(lambda: beta * np.abs(k).max(initial=0) + np.abs(s).max(initial=0), "beta, kl and score",
                  "-beta * KL + score")
    if np.any(m.sum(axis=1) == 0):
        raise ValueError("mask has a row with no real token: its score has nowhere to go")
    return {"kl": k, "score": s, "mask": m, "beta": beta, "clamp": clamp}


@checked(_check_kl_shaped_rewards)
def kl_shaped_rewards(kl, score, mask, beta, clamp=True):
    r"""The per-token reward of language-model PPO (AlpacaFarm style):

    .. math:: r_t = -\beta\,\max(\mathrm{KL}_t, 0) + [t = \text{last real token}]\;\text{score}

    ``kl`` (N, T) is the per-token KL estimate :math:`\log\pi_{old}(a_t) - \log\pi_{ref}(a_t)`
    on the sampled tokens, ``score`` (N,) the reward model's (or verifier's) score of each
    answer, ``mask`` (N, T) 1 on the answer's tokens. ``clamp=False`` keeps negative KL_t, which
    a policy can farm by making tokens *less* likely than the reference does. Returns (N, T),
    0 outside the mask.
    """
    k, s, m = (np.asarray(x, dtype=float) for x in (kl, score, mask))   # (N, T), (N,), (N, T)
    r = (0.0 - beta * (np.maximum(k, 0.0) if clamp else k)) * m   # (N, T); 0.0 − keeps +0, not −0
    last = m.shape[1] - 1 - np.argmax(m[:, ::-1], axis=1)   # (N,) index of the last real token
    r[np.arange(len(m)), last] += s
    return r


def _check_gae(rewards, values, mask, gamma, lam):
    r = as_array(rewards, "rewards", ndim=2)                # (N, T)
    v = as_array(values, "values", ndim=2)                  # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(r, m, "rewards", "mask")
    same_shape(v, m, "values", "mask")
    new = {"rewards": r, "values": v, "mask": m}
    for x, name in ((gamma, "gamma"), (lam, "lam")):
        new[name] = nonneg(x, name)
        if not new[name] <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {x}")
    finite_result(lambda: np.abs(r * m).sum(axis=1) + 3 * np.abs(v).sum(axis=1), "rewards and values",
                  "the sum of the rewards and values of a row")
    size(r.shape[1], "rewards", MAX_TOKENS, "tokens (gae loops over them in Python)")
    return new


@checked(_check_gae)
def gae(rewards, values, mask, gamma=1.0, lam=1.0):
    r"""Generalised advantage estimation, per row, backwards over the real tokens:

    .. math:: \delta_t = r_t + \gamma V(s_{t+1}) - V(s_t),\qquad
              \hat A_t = \delta_t + \gamma\lambda \hat A_{t+1},\qquad \hat R_t = \hat A_t + V(s_t)

    A position with mask 0 counts as :math:`V = 0,\ \hat A = 0`, so the values after the last real
    token count as 0. With :math:`\gamma = \lambda = 1`, :math:`\hat A_t = \sum_{t' \ge t} r_{t'}
    - V(s_t)`: the return to the end minus the value. ``rewards``, ``values``, ``mask``: (N, T);
    rewards outside the mask are ignored. Returns ``(advantages, returns)``, (N, T), 0 outside
    the mask.
    """
    r, v, m = (np.asarray(x, dtype=float) for x in (rewards, values, mask))   # (N, T)
    adv = np.zeros_like(r)
    next_v, next_a = np.zeros(len(r)), np.zeros(len(r))     # (N,) V and A at t + 1 (0 past the end)
    for t in range(r.shape[1] - 1, -1, -1):
        delta = r[:, t] * m[:, t] + gamma * next_v - v[:, t]
        adv[:, t] = (delta + gamma * lam * next_a) * m[:, t]
        next_v, next_a = v[:, t] * m[:, t], adv[:, t]
    return adv, (adv + v) * m




# ============================================================================ PPO's targets and value loss
def _check_ppo_targets(rewards, values, mask):
    v = as_array(values, "values", ndim=2)                  # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(v, m, "values", "mask")
    r = as_array(rewards, "rewards")
    if r.shape not in (m.shape, m.shape[:1]):
        raise ValueError(f"rewards must have shape {m.shape[:1]} (one per answer) or {m.shape} (per token), got {r.shape}")
    if m.sum() == 0:
        raise ValueError("mask has no generated tokens: there is nothing to normalise over")
    return {"rewards": r, "values": v, "mask": m} if r.ndim == 1 else _check_gae(r, v, m, 1.0, 1.0)


@checked(_check_ppo_targets)
def ppo_targets(rewards, values, mask):
    r"""PPO's value targets and advantages per token, with :math:`\gamma = \lambda = 1`:

    - ``rewards`` (N,), each answer's final reward R: every token's return is R and
      :math:`A_t = R - V(s_t)`;
    - ``rewards`` (N, T), a reward per token (LM-PPO's :func:`kl_shaped_rewards`): :func:`gae`.

    The advantages are then normalised over the tokens of ``mask`` (as CleanRL):
    :math:`\hat A_t = (A_t - \mu)/(\sigma + 10^{-8})`. ``values``, ``mask``: (N, T).
    Returns ``(returns, advantages)``, both (N, T).
    """
    r, v, m = np.asarray(rewards, dtype=float), np.asarray(values), np.asarray(mask)
    if r.ndim == 1:
        ret = np.broadcast_to(r[:, None], v.shape)                          # return = final reward
        adv = ret - v                                                       # A_t = R − V(s_t)
    else:
        adv, ret = gae(r, v, m)
    mu = (adv * m).sum() / m.sum()
    sd = np.sqrt((((adv - mu) * m) ** 2).sum() / m.sum())
    return ret, (adv - mu) / (sd + 1e-8)


def _check_value_loss(values, returns, mask, vf_coef):
    v = as_array(values, "values", ndim=2)                  # (N, T)
    m = mask01(mask)                                       # (N, T)
    same_shape(v, m, "values", "mask")
    r = as_array(returns, "returns", ndim=2)
    same_shape(r, m, "returns", "mask")
    if m.sum() == 0:
        raise ValueError("mask has no generated tokens")
    return {"values": v, "returns": r, "mask": m, "vf_coef": nonneg(vf_coef, "vf_coef")}


@checked(_check_value_loss)
def value_loss(values, returns, mask, vf_coef=1.0):
    r"""PPO's value loss, half the token mean of the squared error, and the gradient of
    ``vf_coef`` times it with respect to the values:

    .. math:: L_V = \tfrac12 \sum_{i,t} c_{it}\,(V(s_{it}) - \hat R_{it})^2,\qquad
              c_{it} = \frac{m_{it}}{\sum_{j,s} m_{js}}

    ``values``, ``returns``, ``mask``: (N, T). Returns ``(L_V, dvalues)``, ``dvalues`` (N, T).
    """
    c = aggregate_weights(mask, "dapo")                                     # the token mean
    err = values - returns
    return float(0.5 * (c * err ** 2).sum()), vf_coef * c * err
