r"""Part II's algorithms on the arithmetic toy model (:mod:`toy.arith`).

One function per family, each taking ``seed=`` and returning a history dict:

- :func:`star`       STaR: sample → keep what the verifier accepts → fine-tune from the
  *original* model → repeat; optional rationalization (a hint while sampling) and a coarse
  verifier.
- :func:`reinforce`  one policy-gradient step per batch, with one of four advantages
  (SFT-on-correct, global baseline, RLOO, GRPO).
- :func:`grpo`       GRPO with PPO clipping, μ updates per batch and the k3 KL term; DAPO's
  clip-higher, dynamic sampling, token-level loss and overlong shaping are switches of
  :class:`GRPOConfig`.

Every gradient is built from the model's ``add_grad`` (one-hot − π per context) and the
equations of :mod:`toy.rl`. Shapes: B groups (problems) × G samples × L steps.
"""
from dataclasses import dataclass, replace

import numpy as np

from . import rl
from ._check_args import as_array, flag, instance, integer, nonempty, one_of, real, seed as check_seed
from .arith import CORRECT, Model, Problems, Samples, pass1_exact, sample, step_entropy, verify

__all__ = ["sft", "star", "ADVANTAGES", "advantages", "reinforce", "GRPOConfig", "dapo_config",
           "token_weights", "mixed_groups", "shaped_reward", "grpo_grad", "grpo"]


def _check_int(x, name, lo):
    return integer(x, name, lo=lo)


def _check_pos(x, name):
    return real(x, name, lo=0, lo_open=True)


def _check_sets(train, test, groups=None):
    instance(train, Problems, "train"), instance(test, Problems, "test")
    if groups is not None and groups > len(train):
        raise ValueError(f"groups must be <= the number of training problems {len(train)}, got {groups}")


# --------------------------------------------------------------------------------------------
# STaR
# --------------------------------------------------------------------------------------------

def sft(base, samples, keep, steps=30, lr=0.2, n_problems=None):
    r"""Fine-tune a copy of ``base`` on the kept solutions: ``steps`` full-batch gradient steps

    .. math:: \Delta \leftarrow \Delta + \frac{\eta}{N}\sum_{\text{kept } i}\sum_t \nabla_\Delta \log\pi(a_{it}\mid c_{it})

    ``keep`` (P, n) is 1 for a kept solution; N = the number of kept solutions (or
    ``n_problems``), so a step follows the *mean* log-likelihood gradient. A fixed budget of
    ``steps`` steps, not a fit to convergence: a context that is rare in the kept data moves
    little, whatever the total amount of data.
    """
    instance(base, Model, "base"), instance(samples, Samples, "samples")  # argcheck
    if n_problems is not None:  # argcheck
        n_problems = _check_pos(n_problems, "n_problems")
    steps = _check_int(steps, "steps", 0)
    lr = _check_pos(lr, "lr")
    keep = np.asarray(keep, dtype=float)
    if keep.shape != samples.answer.shape:
        raise ValueError(f"keep must have shape {samples.answer.shape}, got {keep.shape}")
    N = max(keep.sum(), 1.0) if n_problems is None else n_problems
    model = base.copy()
    onehot, total = model.counts(samples.context, samples.method, keep[:, :, None])  # the data, once
    for _ in range(steps):
        z = model.base_logits + model.delta                           # model.probs(), inlined:
        z = z - z.max(axis=1, keepdims=True)                           # this loop is the hot path
        pi = np.exp(z - np.log(np.exp(z).sum(axis=1, keepdims=True)))  # (C, K)
        model.delta += lr * (onehot - total[:, None] * pi) / N         # = add_grad's step
    return model


def star(train, test, rounds=6, hint=0.0, verifier="exact", sft_steps=30, sft_lr=0.2,
         temperature=1.0, seed=0):
    """STaR for ``rounds`` rounds; each round fine-tunes from the original model.

    Per round: one attempt per training problem with the current model; keep those the
    ``verifier`` accepts. With ``hint`` > 0 (rationalization), every failed problem gets a
    second attempt with +``hint`` on the correct method's logit; accepted ones are kept too,
    *recorded without the hint* (the same methods, trained as if unhinted).

    Returns a dict of arrays indexed by round (0 = the original model): ``pass1`` (test,
    exact), ``p_correct`` (rounds+1, C), ``entropy``; and per round 1.. : ``kept``,
    ``kept_hint`` (from rationalization), ``kept_right`` (kept *and* truly correct);
    plus ``model`` (the last one).
    """
    _check_sets(train, test), real(hint, "hint"), check_seed(seed)  # argcheck
    _check_int(sft_steps, "sft_steps", 0), _check_pos(sft_lr, "sft_lr"), _check_pos(temperature, "temperature")  # argcheck
    rounds = _check_int(rounds, "rounds", 1)
    if hint < 0:
        raise ValueError(f"hint must be >= 0, got {hint}")
    rng = np.random.default_rng(seed)
    base = Model()
    model = base
    h = {k: [] for k in ("pass1", "p_correct", "entropy", "kept", "kept_hint", "kept_right")}

    def log(m):
        h["pass1"].append(pass1_exact(m, test, temperature))
        h["p_correct"].append(m.p_correct(temperature))
        h["entropy"].append(step_entropy(m, test, temperature))

    log(base)
    for _ in range(rounds):
        s = sample(model, train, 1, rng, temperature)                  # (P, 1, L)
        keep = verify(s, train, verifier)                              # (P, 1)
        right = verify(s, train, "exact")
        n_hint = 0
        if hint > 0:
            s2 = sample(model, train, 1, rng, temperature, hint=hint)  # second try, hinted
            keep2 = verify(s2, train, verifier) * (1 - keep)           # only failed problems
            s.method = np.where(keep2[:, :, None] > 0, s2.method, s.method)
            right = np.where(keep2 > 0, verify(s2, train, "exact"), right)
            keep, n_hint = keep + keep2, int(keep2.sum())
        model = sft(base, s, keep, sft_steps, sft_lr)
        h["kept"].append(int(keep.sum()))
        h["kept_hint"].append(n_hint)
        h["kept_right"].append(int((keep * right).sum()))
        log(model)
    out = {k: np.array(v) for k, v in h.items()}
    out["model"] = model
    return out


# --------------------------------------------------------------------------------------------
# REINFORCE with four advantages
# --------------------------------------------------------------------------------------------

ADVANTAGES = ("sft", "baseline", "rloo", "grpo")


def advantages(rewards, kind, baseline=None):
    """(B, G) advantages of one batch.

    - ``"sft"``:      A = r (SFT on the correct samples: wrong ones get 0)
    - ``"baseline"``: A = r − b with a global baseline b (a running mean of past rewards)
    - ``"rloo"``:     A = r − mean of the other G − 1 rewards of the group (toy.rl)
    - ``"grpo"``:     A = (r − group mean) / (group std + 1e-4) (toy.rl)
    """
    one_of(kind, "kind", ADVANTAGES), as_array(rewards, "rewards", min_ndim=1)  # argcheck
    if baseline is not None:  # argcheck
        real(baseline, "baseline")
    r = np.asarray(rewards, dtype=float)
    if kind == "sft":
        return r.copy()
    if kind == "baseline":
        if baseline is None:
            raise ValueError("baseline must be given for kind='baseline'")
        return r - baseline
    if kind == "rloo":
        return rl.rloo_advantages(r)
    if kind == "grpo":
        return rl.grpo_advantages(r)
    raise ValueError(f"kind must be one of {ADVANTAGES}, got {kind!r}")


def _draw(train, groups, rng):
    return train.subset(rng.choice(len(train), size=groups, replace=False))


def _new_history():
    return {k: [] for k in ("pass1", "entropy", "p_correct", "train_reward", "mean_abs_adv",
                            "clip_frac", "degenerate", "samples")}


def _log_eval(h, model, test):
    h["pass1"].append(pass1_exact(model, test))
    h["entropy"].append(step_entropy(model, test))
    h["p_correct"].append(model.p_correct())


def _finish(h, model):
    out = {k: np.array(v) for k, v in h.items()}
    out["model"] = model
    return out


def reinforce(train, test, advantage="grpo", lr=4.0, n_batches=30, groups=16, G=8,
              baseline_decay=0.9, seed=0):
    r"""REINFORCE: per batch of ``groups`` problems × ``G`` samples, one step

    .. math:: \Delta \leftarrow \Delta + \frac{\eta}{BG}\sum_{i} A_i \sum_t \nabla_\Delta \log\pi(a_{it}\mid c_{it})

    with ``advantage`` one of :data:`ADVANTAGES`. The global baseline starts at the first
    batch's mean reward and is then an exponential moving average (``baseline_decay``).

    History (index 0 = before training for ``pass1``/``entropy``/``p_correct``; per batch
    otherwise): ``pass1`` (test, exact), ``entropy``, ``p_correct``, ``train_reward``,
    ``mean_abs_adv``, ``degenerate``, ``samples`` (cumulative), and ``model``.
    """
    _check_sets(train, test, _check_int(groups, "groups", 1)), check_seed(seed)  # argcheck
    real(baseline_decay, "baseline_decay", 0, 1)  # argcheck
    if advantage not in ADVANTAGES:
        raise ValueError(f"advantage must be one of {ADVANTAGES}, got {advantage!r}")
    lr = _check_pos(lr, "lr")
    n_batches = _check_int(n_batches, "n_batches", 1)
    groups = _check_int(groups, "groups", 1)
    G = _check_int(G, "G", 2)
    rng = np.random.default_rng(seed)
    model, h, b = Model(), _new_history(), None
    _log_eval(h, model, test)
    for step in range(n_batches):
        batch = _draw(train, groups, rng)
        s = sample(model, batch, G, rng)                             # (B, G, L)
        r = verify(s, batch)                                         # (B, G)
        b = r.mean() if b is None else b
        A = advantages(r, advantage, baseline=b)                     # (B, G)
        b = baseline_decay * b + (1 - baseline_decay) * r.mean()
        grad = np.zeros_like(model.delta)
        model.add_grad(grad, s.context, s.method, A[:, :, None])     # Σ_i A_i Σ_t (onehot − π)
        model.delta += lr * grad / r.size
        h["train_reward"].append(r.mean())
        h["mean_abs_adv"].append(np.abs(A).mean())
        h["clip_frac"].append(0.0)
        h["degenerate"].append(rl.degenerate_fraction(r))
        h["samples"].append((step + 1) * r.size)
        _log_eval(h, model, test)
    return _finish(h, model)


# --------------------------------------------------------------------------------------------
# GRPO and DAPO's switches
# --------------------------------------------------------------------------------------------

@dataclass
class GRPOConfig:
    """GRPO with PPO clipping; the DAPO techniques are the four switches (defaults: off)."""
    groups: int = 16                 # problems per batch (B)
    G: int = 8                       # samples per problem (group size)
    lr: float = 4.0                  # step size on Δ
    mu: int = 4                      # gradient updates on each sampled batch (μ)
    eps: float = 0.2                 # PPO clip range: ratio kept in [1 − eps, 1 + eps]
    eps_high: float = 0.28           # upper clip range used when clip_higher is on
    beta: float = 0.0                # weight of the k3 KL penalty towards the original model
    clip_higher: bool = False        # DAPO: upper bound 1 + eps_high instead of 1 + eps
    dynamic_sampling: bool = False   # DAPO: redraw until the batch has B mixed (not all-equal) groups
    token_level: bool = False        # DAPO: average over all tokens ("dapo") instead of per sequence ("grpo")
    overlong: bool = False           # DAPO: soft overlong punishment added to the reward
    max_len: int = 12                # overlong shaping: the maximum length (steps)
    overlong_buffer: int = 4         # overlong shaping: penalty ramps over the last this many steps
    max_draws: int = 10              # dynamic sampling: at most this many batches drawn per update
    def __post_init__(self):  # argcheck
        _check_config(self)


def dapo_config(**kw):
    """All four DAPO switches on (plus any overrides)."""
    unknown = sorted(set(kw) - set(GRPOConfig.__dataclass_fields__))
    if unknown:
        raise ValueError(f"dapo_config got unknown GRPOConfig fields: {unknown}")
    return replace(GRPOConfig(clip_higher=True, dynamic_sampling=True, token_level=True,
                              overlong=True), **kw)


def _check_config(cfg):
    if not isinstance(cfg, GRPOConfig):
        raise ValueError(f"config must be a GRPOConfig, got {type(cfg).__name__}")
    _check_int(cfg.groups, "config.groups", 1)
    _check_int(cfg.G, "config.G", 2)
    _check_pos(cfg.lr, "config.lr")
    _check_int(cfg.mu, "config.mu", 1)
    _check_int(cfg.max_draws, "config.max_draws", 1)
    real(cfg.eps, "config.eps", 0, 1, hi_open=True)
    for name in ("eps_high", "beta"):
        real(getattr(cfg, name), f"config.{name}", lo=0)
    for name in ("clip_higher", "dynamic_sampling", "token_level", "overlong"):
        flag(getattr(cfg, name), f"config.{name}")
    _check_int(cfg.overlong_buffer, "config.overlong_buffer", 1)
    if _check_int(cfg.max_len, "config.max_len", 1) < cfg.overlong_buffer:
        raise ValueError(f"config.max_len must be >= overlong_buffer, got {cfg.max_len} and {cfg.overlong_buffer}")


def token_weights(mask, loss_type):
    r"""(N, T) weights w with ``aggregate_loss(x, mask, loss_type) = Σ w·x``: the derivative of
    the aggregation, i.e. how much each token's gradient counts.

    ``"grpo"``: :math:`m_{it} / (N\,|o_i|)`; ``"dapo"``: :math:`m_{it} / \sum_{i,t} m_{it}`.
    """
    m = nonempty(as_array(mask, "mask", ndim=2), "mask")
    one_of(loss_type, "loss_type", ("grpo", "dapo"))
    if not np.all((m == 0) | (m == 1)) or not np.all(m.sum(axis=1) > 0 if loss_type == "grpo" else m.sum() > 0):
        raise ValueError(f"mask must hold 0/1 and at least one token{' per row' if loss_type == 'grpo' else ''}")
    if loss_type == "grpo":
        return m / (m.shape[0] * m.sum(axis=1, keepdims=True))
    if loss_type == "dapo":
        return m / m.sum()
    raise ValueError(f"loss_type must be 'grpo' or 'dapo', got {loss_type!r}")


def _grpo_batch(train, cfg, model, rng):
    """Draw one batch; with dynamic sampling, keep only mixed groups (up to ``max_draws`` draws).

    Returns (batch problems, samples, correctness (B, G), samples drawn, degenerate fraction)."""
    kept, drawn, degenerate = [], 0, []
    for _ in range(cfg.max_draws if cfg.dynamic_sampling else 1):
        batch = _draw(train, cfg.groups, rng)
        s = sample(model, batch, cfg.G, rng)
        r = verify(s, batch)
        drawn += r.size
        degenerate.append(rl.degenerate_fraction(r))
        mixed = mixed_groups(r) if cfg.dynamic_sampling else np.ones(len(r), bool)
        kept.append((batch.subset(mixed), s, r, mixed))
        if sum(k[3].sum() for k in kept) >= cfg.groups:
            break
    batch = _concat([k[0] for k in kept])
    s = _concat_samples([(k[1], k[3]) for k in kept])
    r = np.concatenate([k[2][k[3]] for k in kept])
    n = min(cfg.groups, len(r))
    return batch.subset(np.arange(n)), _take(s, n), r[:n], drawn, float(np.mean(degenerate))


def _concat(probs):
    from .arith import Problems
    return Problems(*(np.concatenate([getattr(p, f) for p in probs])
                      for f in ("start", "is_mul", "operand", "context", "answer")))


def _concat_samples(parts):
    from .arith import Samples
    return Samples(*(np.concatenate([getattr(s, f)[keep] for s, keep in parts])
                     for f in ("method", "context", "answer", "logp")))


def _take(s, n):
    from .arith import Samples
    return Samples(s.method[:n], s.context[:n], s.answer[:n], s.logp[:n])


def mixed_groups(rewards):
    """(B,) True for groups whose rewards are not all equal (DAPO's dynamic-sampling filter)."""
    r = as_array(rewards, "rewards", ndim=2)
    return ~np.all(r == r[:, :1], axis=1)


def shaped_reward(correct, n_steps, cfg):
    """(B, G) reward: 1 for a correct answer, plus DAPO's overlong penalty
    (``toy.rl.overlong_penalty``, by the problem's length in steps) when ``cfg.overlong``."""
    instance(cfg, GRPOConfig, "cfg")
    reward = as_array(correct, "correct", ndim=2).copy()
    if np.shape(n_steps) != reward.shape[:1]:
        raise ValueError(f"n_steps must have shape {reward.shape[:1]} (one per group), got {np.shape(n_steps)}")
    if cfg.overlong:
        reward += rl.overlong_penalty(np.asarray(n_steps), cfg.max_len, cfg.overlong_buffer)[:, None]
    return reward


def grpo_grad(model, s, A, w, cfg, ref=None):
    r"""Objective and gradient of one GRPO update on samples ``s`` (drawn from π_old).

    Per token: :math:`J_{it} = \min(\rho A, \mathrm{clip}(\rho, 1-\varepsilon, 1+\varepsilon_{hi}) A) - \beta k_3`,
    :math:`J = \sum w_{it} J_{it}`. Where the clipped branch is the min, the token has no
    gradient; otherwise :math:`\partial(\rho A)/\partial\log\pi_\theta = \rho A`, and
    :math:`\partial k_3/\partial\log\pi_\theta = 1 - \pi_{ref}/\pi_\theta`.

    ``A`` (B, G) advantages, ``w`` (B, G, L) aggregation weights (:func:`token_weights`).
    Returns (J, grad (C, K), fraction of tokens with A ≠ 0 that are clipped).
    """
    instance(model, Model, "model"), instance(s, Samples, "s"), instance(cfg, GRPOConfig, "cfg")  # argcheck
    if as_array(A, "A").shape != s.method.shape[:2] or as_array(w, "w").shape != s.method.shape:  # argcheck
        raise ValueError(f"A must have shape {s.method.shape[:2]} and w {s.method.shape}")
    if ref is not None:  # argcheck
        instance(ref, Model, "ref")
    eps_high = cfg.eps_high if cfg.clip_higher else cfg.eps
    real = s.mask > 0
    ctx, a = np.where(real, s.context, 0), np.where(real, s.method, 0)
    adv = np.broadcast_to(np.asarray(A, dtype=float)[:, :, None], s.method.shape)  # (B, G, L)
    logp = model.log_probs()[ctx, a]                                 # (B, G, L) log π_θ
    ratio = np.exp(logp - s.logp)                                    # ρ = π_θ / π_old
    surr = rl.clipped_surrogate(ratio, adv, cfg.eps, eps_high)
    active = ratio * adv <= surr + 1e-12                             # unclipped branch is the min
    live = real & (adv != 0)
    frac = float((live & ~active).sum() / max(live.sum(), 1))
    per_token, coef = surr, np.where(active, ratio * adv, 0.0)
    if cfg.beta > 0:
        logr = (ref or Model()).log_probs()[ctx, a] - logp           # log π_ref − log π_θ
        per_token = per_token - cfg.beta * rl.kl_k3(logr)
        coef = coef - cfg.beta * (1 - np.exp(logr))                  # −β ∂k3/∂log π_θ
    grad = np.zeros_like(model.delta)
    model.add_grad(grad, s.context, s.method, w * coef)
    return float((w * per_token)[real].sum()), grad, frac


def grpo(train, test, config=None, n_batches=30, seed=0):
    r"""GRPO / DAPO on the arithmetic model. For each sampled batch, ``config.mu`` updates of

    .. math:: J = \mathrm{agg}_{i,t}\Big[\min\big(\rho_{it}A_i,\ \mathrm{clip}(\rho_{it}, 1-\varepsilon, 1+\varepsilon_{hi})A_i\big)
              - \beta\, k_3(\log\pi_{ref} - \log\pi_\theta)\Big],\quad \rho_{it} = \frac{\pi_\theta(a_{it}\mid c_{it})}{\pi_{old}(a_{it}\mid c_{it})}

    with :math:`A_i` = GRPO advantage of the reward (correct = 1, plus the overlong penalty if
    on) and agg = per-sequence mean ("grpo") or token mean ("dapo"). Its gradient on Δ is
    :math:`\sum_{it} w_{it}\,[\mathbb 1_{\text{unclipped}}\,\rho_{it}A_i - \beta(1 - \pi_{ref}/\pi_\theta)]\,(\text{onehot} - \pi)`.

    History as :func:`reinforce`, plus ``clip_frac`` (fraction of tokens with A ≠ 0 whose
    clipped branch is active, over the μ updates) and ``samples`` (cumulative samples drawn).
    """
    cfg = GRPOConfig() if config is None else config
    _check_config(cfg)
    n_batches = _check_int(n_batches, "n_batches", 1)
    _check_sets(train, test, cfg.groups), check_seed(seed)
    rng = np.random.default_rng(seed)
    ref = Model()
    model, h, total = Model(), _new_history(), 0
    loss_type = "dapo" if cfg.token_level else "grpo"
    _log_eval(h, model, test)
    for _ in range(n_batches):
        batch, s, correct, drawn, degenerate = _grpo_batch(train, cfg, model, rng)
        total += drawn
        reward = shaped_reward(correct, batch.n_steps, cfg)           # (B, G)
        A = rl.grpo_advantages(reward) if len(reward) else reward    # (B, G)
        B, G, L = s.method.shape
        mask = s.mask.reshape(B * G, L)
        w = token_weights(mask, loss_type).reshape(B, G, L) if B else s.mask
        clipped = []
        for _ in range(cfg.mu):
            _, grad, frac = grpo_grad(model, s, A, w, cfg, ref)
            model.delta += cfg.lr * grad
            clipped.append(frac)
        h["train_reward"].append(correct.mean() if correct.size else np.nan)
        h["mean_abs_adv"].append(np.abs(A).mean() if A.size else 0.0)
        h["clip_frac"].append(float(np.mean(clipped)))
        h["degenerate"].append(degenerate)
        h["samples"].append(total)
        _log_eval(h, model, test)
    return _finish(h, model)
