r"""Trainers for Number Search: SFT, ReST, REINFORCE (± baseline), GRPO, Dr. GRPO.

They all share **one** rollout (:func:`toy.numsearch.rollout`) and **one** loss
(:func:`weighted_logprob_loss`, below), as in the lecture's §11 unified view

.. math:: L(\theta) = -\sum_{i,t} c_{it}\, w_{it} \log \pi_\theta(a_{it} \mid h_{it}),

and differ only in the weight ``w`` of each episode, an advantage of :func:`toy.rl.advantages`
(``algo=``, one of ``toy.rl.ADVANTAGES``), and in the normaliser ``c`` of
:func:`toy.rl.aggregate_weights` (``loss_type=``):

===============  ==========================================  ===============
``algo``         w of an episode with reward R               ``loss_type``
===============  ==========================================  ===============
(SFT)            1 on the demonstrations                     ``"sum"``
``"rft"``        1 if R > 0 else 0 (ReST: keep the wins)     ``"sum"``
``"reinforce"``  R                                           ``"sum"``
``"baseline"``   R − b, b a constant or a running mean of R  ``"sum"``
``"rloo"``       R − mean of the other G − 1 rewards         ``"sum"``
``"grpo"``       (R − mean_G R) / (std_G R + ε)              ``"grpo"``
``"dr_grpo"``    R − mean_G R                                ``"dr_grpo"``
===============  ==========================================  ===============

Every trainer *descends* the loss by plain gradient descent on the logit table θ; the chain
rule from d L / d log π to θ is the tabular softmax's, :func:`toy.prob.log_softmax_table_grad`.
Every trainer takes ``seed=`` and returns ``(theta, history)``; ``history`` is a dict of numpy
arrays.
"""
from dataclasses import dataclass
from math import comb

import numpy as np

from . import exact, game as ns
from .. import rl
from .._check_args import (MAX_LOOP, as_array, checked, flag, instance, int_array, integer, one_of, real,
                           seed as check_seed, size)
from ..prob import log_softmax, log_softmax_table_grad, softmax

__all__ = ["weighted_logprob_loss", "SFTConfig", "ReSTConfig", "PGConfig", "demonstrations",
           "train_sft", "train_rest", "train_pg", "reinforce_estimate", "degenerate_probability", "group_update_size",
           "advantage_gap", "expected_estimate", "estimate_bias", "train_exact",
           "estimate_variance", "batch_cosines"]

ALL_TARGETS = tuple(range(1, ns.N + 1))


# ------------------------------------------------------ the one weighted log-prob loss
def _check_loss(theta, traj, w, loss_type):
    one_of(loss_type, "loss_type", rl.LOSS_TYPES)
    return {"theta": ns.check_theta(theta), "w": per_action(traj, w)}


@checked(_check_loss)
def weighted_logprob_loss(theta, traj, w, loss_type="sum"):
    r"""The §11 unified loss and its exact gradient:

    .. math:: L(\theta) = -\sum_{i,t} c_{it}\, w_{it} \log \pi_\theta(a_{it} \mid h_{it}),
              \qquad \frac{\partial L}{\partial \theta_{s}} = \sum_{i,t:\, s_{it}=s} c_{it} w_{it}\,\big(\pi_\theta(\cdot \mid s) - e_{a_{it}}\big)

    ``w`` is (n,) per episode or (n, T) per action: 1 for SFT, an advantage of
    :func:`toy.rl.advantages` for RL. ``c`` is :func:`toy.rl.aggregate_weights` of the guesses'
    mask (``loss_type``; ``"sum"``: 1/n, REINFORCE's sum over an episode and mean over
    episodes). Returns ``(loss, grad)``, grad of shape (S, A), nonzero only in visited
    states; gradient *descent* on L is ascent on the weighted log-likelihood."""
    if w.ndim == 1:
        w = w[:, None]                                             # one weight per game → per action
    cw = rl.aggregate_weights(traj.mask, loss_type) * w            # (n, T), 0 on padding
    m = traj.mask
    loss, rows, grad_rows = loss_rows(theta, traj.states[m], traj.guesses[m] - 1, cw[m])
    grad = np.zeros((ns.S, ns.A))
    grad[rows] = grad_rows
    return loss, grad


def per_action(traj, w):
    """Weights (n,) per game or (n, T) per action, checked against ``traj`` and broadcast to (n, T)."""
    instance(traj, ns.Trajectories, "traj")
    w = as_array(w, "w")
    if w.shape == (len(traj),):
        w = np.broadcast_to(w[:, None], traj.mask.shape)
    if w.shape != traj.mask.shape:
        raise ValueError(f"w must have shape ({len(traj)},) or {traj.mask.shape}, got {w.shape}")
    return w


def loss_rows(theta, s, a, cw):
    """−Σ cw·log π(a | s) over actions (K,) and its gradient on the visited rows of the logit
    table ``theta`` (any number of rows): returns ``(loss, rows, grad[rows])``."""
    rows, k = np.unique(s, return_inverse=True)                     # visited states; s = rows[k]
    logp = log_softmax(theta[rows])                                 # (R, A)
    loss = -float(np.sum(cw * logp[k, a]))
    return loss, rows, log_softmax_table_grad(np.exp(logp), k, a, -cw)   # dL/dlog π = −c·w


def demonstrations(policy=None, targets=ALL_TARGETS):
    """One episode of a deterministic ``policy`` (default: binary search) per target."""
    targets = int_array(targets, "targets", 1, ns.N, ndim=1)
    pi = ns.binary_search_policy() if policy is None else ns.check_pi(policy, "policy")
    return ns.rollout(pi, np.asarray(targets), np.random.default_rng(0))


def _evaluate(theta, hist, step, targets=ALL_TARGETS):
    """Record the exact success rate J of the sampled policy, averaged over ``targets``."""
    hist["eval_step"].append(step)
    per_target = exact.exact_J(ns.policy_probs(theta), per_target=True)
    hist["J"].append(float(per_target[np.asarray(targets) - 1].mean()))


def _check_targets(targets, name):
    t = int_array(targets, name, 1, ns.N, ndim=1)
    if len(t) == 0:
        raise ValueError(f"{name} must hold at least one hidden number")


def _check_int_fields(cfg, **lows):
    for name, lo in lows.items():
        integer(getattr(cfg, name), name, lo=lo)


def _as_arrays(hist):
    return {k: np.asarray(v) for k, v in hist.items()}


# ------------------------------------------------------------------------------- SFT
@dataclass
class SFTConfig:
    steps: int = 100        # full-batch gradient steps on the demonstrations
    lr: float = 2.0         # learning rate of gradient descent on the logits
    eval_every: int = 10    # compute the exact success rate J every this many steps

    def __post_init__(self):
        _check_int_fields(self, steps=0, eval_every=1)
        real(self.lr, "lr", lo=0, lo_open=True)


def _check_train_sft(policy, demos, cfg, seed):
    ns.check_theta(policy, "policy"), instance(demos, ns.Trajectories, "demos")
    instance(cfg, SFTConfig, "cfg"), check_seed(seed)


@checked(_check_train_sft)
def train_sft(policy, demos, cfg=SFTConfig(), seed=0):
    r"""SFT: minimise :math:`L = -\frac1n\sum_i\sum_t \log\pi_\theta(a^*_{it} \mid h_{it})` on ``demos``
    (a :class:`~toy.numsearch.Trajectories`), i.e. the unified loss with w = 1 and ``loss_type="sum"``.
    ``seed`` is unused (full batch, deterministic) and accepted for a uniform API."""
    theta = np.array(policy, dtype=float)
    hist = {"loss": [], "eval_step": [], "J": []}
    w = np.ones(len(demos))
    for step in range(cfg.steps):
        if step % cfg.eval_every == 0:
            _evaluate(theta, hist, step)
        loss, grad = weighted_logprob_loss(theta, demos, w)
        theta -= cfg.lr * grad
        hist["loss"].append(loss)
    _evaluate(theta, hist, cfg.steps)
    return theta, _as_arrays(hist)


# ------------------------------------------------------------------------------ ReST
@dataclass
class ReSTConfig:
    rounds: int = 10                  # grow → improve → repeat iterations
    n_prompts: int = 128              # hidden numbers drawn per round, one game each (grow)
    sft_steps: int = 30               # gradient steps on the kept games per round (improve)
    lr: float = 10.0                  # learning rate of the SFT steps
    accumulate: bool = False          # keep the wins of earlier rounds in the dataset
    targets: tuple = ALL_TARGETS      # hidden numbers the instances are drawn from
    eval_targets: tuple = None        # hidden numbers the exact J averages over (None → targets)

    def __post_init__(self):
        _check_int_fields(self, rounds=0, n_prompts=1, sft_steps=0)
        real(self.lr, "lr", lo=0, lo_open=True)
        flag(self.accumulate, "accumulate")
        _check_targets(self.targets, "targets")
        if self.eval_targets is not None:
            _check_targets(self.eval_targets, "eval_targets")


def _check_train_rest(policy, cfg, seed):
    ns.check_theta(policy, "policy"), instance(cfg, ReSTConfig, "cfg"), check_seed(seed)


@checked(_check_train_rest)
def train_rest(policy, cfg=ReSTConfig(), seed=0):
    r"""ReST / expert iteration. Each round: play one game on each of ``cfg.n_prompts`` hidden
    numbers (grow), keep the wins (the ``"rft"`` advantage), SFT on the kept data (improve):
    :math:`L = -\sum_{\tau: R(\tau)=1}\sum_t \log \pi_\theta(a_t \mid h_t)` (mean over kept episodes).

    Starts from the logits ``policy`` (S, A); returns (the final logits, the history). History per
    round: ``reward`` (the mean of the sampled games), ``kept`` (successes this round), ``dataset``
    (size of the SFT set) and the exact ``J`` (over ``cfg.targets``) before each round and
    after the last."""
    rng = np.random.default_rng(seed)
    theta = np.array(policy, dtype=float)
    hist = {"reward": [], "kept": [], "dataset": [], "eval_step": [], "J": []}
    data = []
    for r in range(cfg.rounds):
        _evaluate(theta, hist, r, cfg.eval_targets or cfg.targets)
        targets = rng.choice(cfg.targets, size=cfg.n_prompts)
        traj = ns.rollout(ns.policy_probs(theta), targets, rng)          # grow
        keep = rl.advantages(traj.reward, "rft") > 0                     # filter: the wins, 1[R > 0]
        data = (data + [traj.select(keep)]) if cfg.accumulate else [traj.select(keep)]
        dataset = ns.Trajectories.concat(data)
        if len(dataset):                                                 # improve (SFT on kept)
            for _ in range(cfg.sft_steps):
                _, grad = weighted_logprob_loss(theta, dataset, np.ones(len(dataset)))
                theta -= cfg.lr * grad
        hist["reward"].append(traj.reward.mean())
        hist["kept"].append(int(keep.sum()))
        hist["dataset"].append(len(dataset))
    _evaluate(theta, hist, cfg.rounds, cfg.eval_targets or cfg.targets)
    return theta, _as_arrays(hist)


# ------------------------------------------------------------------- policy gradient
GROUP_ADVANTAGES = ("rloo", "grpo", "dr_grpo")  # relative to the group: need G >= 2


@dataclass
class PGConfig:
    algo: str = "grpo"                # one of toy.rl.ADVANTAGES: the weight w of the unified loss
    steps: int = 200                  # updates (one fresh on-policy batch each)
    n_prompts: int = 8                # hidden numbers per batch
    G: int = 8                        # games per hidden number (the group); batch = n_prompts·G games
    lr: float = 10.0                  # learning rate of gradient descent on the logits
    loss_type: str | None = None      # one of toy.rl.LOSS_TYPES (None → toy.rl.DEFAULT_LOSS_TYPE[algo])
    b: float = 0.0                    # algo "baseline": the initial b of w = R − b
    baseline_decay: float = 0.9       # running mean b ← decay·b + (1 − decay)·mean R (1.0 keeps b constant)
    targets: tuple = ALL_TARGETS      # hidden numbers the instances are drawn from
    eval_every: int = 20              # compute the exact J every this many steps

    def __post_init__(self):
        one_of(self.algo, "algo", rl.ADVANTAGES)
        _check_int_fields(self, steps=0, n_prompts=1, G=2 if self.algo in GROUP_ADVANTAGES else 1,
                          eval_every=1)
        real(self.lr, "lr", lo=0, lo_open=True)
        if self.loss_type is not None:
            one_of(self.loss_type, "loss_type", rl.LOSS_TYPES)
        real(self.b, "b")
        real(self.baseline_decay, "baseline_decay", 0, 1)
        _check_targets(self.targets, "targets")


def _check_train_pg(policy, cfg, seed):
    ns.check_theta(policy, "policy"), instance(cfg, PGConfig, "cfg"), check_seed(seed)


@checked(_check_train_pg)
def train_pg(policy, cfg=PGConfig(), seed=0):
    r"""On-policy training with the unified loss: each step samples ``n_prompts`` hidden numbers
    × G games from π_θ, sets w = :func:`toy.rl.advantages` of their rewards and takes one
    gradient step on :math:`-\sum_{i,t} c_{it} w_i \log\pi_\theta(a_{it} \mid h_{it})`.

    Starts from the logits ``policy`` (S, A); returns (the final logits, the history).
    History per step: ``reward`` (the batch mean), ``degenerate`` (fraction of groups
    whose G rewards are all equal), ``b`` (the baseline used), ``mean_abs_adv`` (mean |w| of the
    batch); ``J`` exact (over ``cfg.targets``) every ``eval_every`` steps."""
    loss_type = cfg.loss_type or rl.DEFAULT_LOSS_TYPE[cfg.algo]
    rng = np.random.default_rng(seed)
    theta = np.array(policy, dtype=float)
    b = cfg.b
    hist = {"reward": [], "degenerate": [], "b": [], "mean_abs_adv": [], "eval_step": [], "J": []}
    for step in range(cfg.steps):
        if step % cfg.eval_every == 0:
            _evaluate(theta, hist, step, cfg.targets)
        targets = np.repeat(rng.choice(cfg.targets, size=cfg.n_prompts), cfg.G)   # (n_prompts·G,)
        traj = ns.rollout(ns.policy_probs(theta), targets, rng)                   # the batch of games
        R = traj.reward.reshape(cfg.n_prompts, cfg.G)                             # (n_prompts, G)
        w = rl.advantages(R, cfg.algo, b)                                    # (n_prompts, G)
        _, grad = weighted_logprob_loss(theta, traj, w.ravel(), loss_type)        # one loss
        theta -= cfg.lr * grad
        hist["reward"].append(R.mean())
        hist["degenerate"].append(rl.degenerate_fraction(R) if cfg.G > 1 else np.nan)
        hist["b"].append(b)
        hist["mean_abs_adv"].append(np.abs(w).mean())
        b = cfg.baseline_decay * b + (1 - cfg.baseline_decay) * R.mean()                            # after use: b ⟂ this batch
    _evaluate(theta, hist, cfg.steps, cfg.targets)
    return theta, _as_arrays(hist)


# -------------------------------------------------------- §6: the REINFORCE estimate
def _check_reinforce_estimate(theta, traj, w):
    instance(traj, ns.Trajectories, "traj")
    return {"theta": ns.check_theta(theta), "w": None if w is None else per_action(traj, w)}


@checked(_check_reinforce_estimate)
def reinforce_estimate(theta, traj, w=None):
    r"""The REINFORCE (score-function) estimate of ∇_θ J from a batch of n sampled episodes:

    .. math:: \hat g = \frac1n \sum_{i=1}^n w_i \sum_{t:\, m_{it}=1} \nabla_\theta \log \pi_\theta(a_{it} \mid h_{it}),
              \qquad w_i = R(\tau_i) \text{ by default}

    — minus the gradient of the unified loss with ``loss_type="sum"``, so gradient *ascent*
    along ĝ is descent on the loss. Unbiased for ∇J when the targets are uniform on 1..16 and
    the episodes are sampled from π_θ. Returns an (S, A) array."""
    w = traj.reward if w is None else w
    _, grad = weighted_logprob_loss(theta, traj, w, "sum")
    return -grad


# ------------------------------------------------ §9–§10: what a group of G samples gives
def _probabilities(p):
    p = as_array(p, "p")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p must be probabilities in [0, 1], got min {p.min()}, max {p.max()}")
    return p


def _check_degenerate_probability(p, G):
    return {"p": _probabilities(p), "G": integer(G, "G", lo=1)}


@checked(_check_degenerate_probability)
def degenerate_probability(p, G):
    r"""Probability that a group of G 0/1 rewards, each a success with probability ``p``, is
    degenerate (all equal, so every group-relative advantage is 0):

    .. math:: P(\text{degenerate}) = p^G + (1 - p)^G

    ``p`` may be an array (e.g. the exact per-target success rates); returns the same shape."""
    return p ** G + (1 - p) ** G


def _check_group_update_size(p, G, algo):
    one_of(algo, "algo", ("grpo", "dr_grpo"))
    return {"p": _probabilities(p), "G": _group_size(G)}


def _group_size(G):
    """G >= 2, small enough for the loop over its G + 1 groups of G answers (G² steps)."""
    size(integer(G, "G", lo=2) ** 2, "G", MAX_LOOP, "steps of the loop over groups")
    return int(G)


@checked(_check_group_update_size)
def group_update_size(p, G, algo="grpo"):
    r"""Expected size of one group's update on an instance with success rate ``p``, exactly.

    Model the instance as the two-armed bandit of §8 (one logit θ, success with p = σ(θ),
    score g = 1 − p on a success, −p on a failure). A group with k successes gets the update
    :math:`\frac1G\sum_j \hat A_j g_j`, where Â is :func:`toy.rl.advantages` of its rewards; this
    averages that over k ~ Binomial(G, p). With q = k/G the update is q(1 − q) for ``"dr_grpo"``
    and q(1 − q)/σ_q = √(q(1 − q)) for ``"grpo"`` (σ_q the group std): so the expected step is
    ≈ p(1 − p)·(1 − 1/G) without the division and ≈ √(p(1 − p)) with it.
    ``p``: scalar or array; returns the same shape."""
    out = np.zeros_like(p)
    for k in range(G + 1):
        R = np.r_[np.ones(k), np.zeros(G - k)]                       # (G,) k successes
        adv = rl.advantages(R, algo)                                 # (G,) Â
        succ = np.mean(adv * R)                                      # Σ_j Â_j·[R_j = 1] / G
        fail = np.mean(adv * (1 - R))                                # Σ_j Â_j·[R_j = 0] / G
        update = succ * (1 - p) - fail * p                           # (1/G) Σ_j Â_j g_j
        out = out + comb(G, k) * p ** k * (1 - p) ** (G - k) * update
    return out


def _check_advantage_gap(p, G, algo):
    one_of(algo, "algo", ("reinforce", "rloo", "grpo", "dr_grpo"))
    return {"p": _probabilities(p), "G": _group_size(G)}


@checked(_check_advantage_gap)
def advantage_gap(p, G, algo="grpo"):
    r"""How much more weight a win gets than a loss in a group of G, on average over the group:

    .. math:: c(p) = \mathbb E_{K}\big[\hat A(1; K) - \hat A(0; K)\big], \qquad K \sim \text{Binomial}(G - 1, p),

    where Â(r; k) is the advantage (:func:`toy.rl.advantages`) of a sample with reward r whose
    G − 1 group mates won k times. For ``"reinforce"`` c = 1, for ``"dr_grpo"`` c = 1 − 1/G and for
    ``"rloo"`` c = 1 (constants); for ``"grpo"`` it depends on p (the division by σ_R).
    ``p``: scalar or array; returns the same shape."""
    out = np.zeros_like(p)
    for k in range(G):                                               # wins among the G − 1 others
        others = np.r_[np.ones(k), np.zeros(G - 1 - k)]
        a_win = rl.advantages(np.r_[1.0, others], algo)[0]           # Â of a win, k other wins
        a_loss = rl.advantages(np.r_[0.0, others], algo)[0]          # Â of a loss, k other wins
        out = out + comb(G - 1, k) * p ** k * (1 - p) ** (G - 1 - k) * (a_win - a_loss)
    return out


def _check_expected_estimate(theta, algo, G):
    one_of(algo, "algo", ("reinforce", "rloo", "grpo", "dr_grpo"))
    return {"theta": ns.check_theta(theta), "G": _group_size(G)}


@checked(_check_expected_estimate)
def expected_estimate(theta, algo="grpo", G=8):
    r"""The expectation of :func:`reinforce_estimate` with the weights of ``algo`` computed
    in groups of G games on one hidden number (x uniform on 1..16), exactly:

    .. math:: \mathbb E[\hat g] = \frac1N \sum_x c(p_x)\, \nabla_\theta p_x

    with p_x = P(win | x) and c the :func:`advantage_gap`. (A game's other G − 1 rewards are
    independent of it, and E[∇log π(τ)·1[R = 1]] = ∇p_x = −E[∇log π(τ)·1[R = 0]].) It is
    parallel to ∇J = (1/N) Σ_x ∇p_x exactly when c is the same for every x: an estimator whose
    expectation is c·∇J is unbiased up to a step size; one whose c varies with p_x points
    elsewhere. Returns an (S, A) array.
    """
    p = exact.exact_J(ns.policy_probs(theta), per_target=True)         # (N,) P(win | x)
    c = advantage_gap(p, G, algo)                                    # (N,)
    return exact.exact_grad(theta, weights=c)                           # (1/N) Σ_x c(p_x) ∇p_x


def _check_estimate_bias(thetas, algo, G):
    one_of(algo, "algo", ("reinforce", "rloo", "grpo", "dr_grpo"))
    t = as_array(thetas, "thetas")
    if t.ndim not in (2, 3) or t.shape[-2:] != (ns.S, ns.A):
        raise ValueError(f"thetas must have shape ({ns.S}, {ns.A}) or (K, {ns.S}, {ns.A}), got {t.shape}")
    return {"thetas": t, "G": _group_size(G)}


@checked(_check_estimate_bias)
def estimate_bias(thetas, algo="grpo", G=8):
    r"""Bias or scale? For each policy (logits (S, A), or a stack (K, S, A)) the exact mean of the
    grouped estimate, E[ĝ] (:func:`expected_estimate`), against the exact ∇J: the best scalar c of
    E[ĝ] ≈ c ∇J, the residual at right angles ‖E[ĝ] − c∇J‖ / ‖c∇J‖ and the cosine of E[ĝ] and ∇J.

    .. math:: c = \frac{\langle \mathbb E[\hat g], \nabla J\rangle}{\lVert\nabla J\rVert^2}

    An estimator unbiased up to a step size has residual 0 and cosine 1 (``"reinforce"``: c = 1,
    ``"dr_grpo"``: c = 1 − 1/G). Returns ``(c, residual, cosine)``, floats or arrays (K,)."""
    stack = thetas.reshape(-1, ns.S, ns.A)
    p = exact.win_probs(softmax(stack))                                          # (K, N) P(win | x)
    gap = advantage_gap(p, G, algo)                                          # (K, N) c(p_x)
    out = []
    for th, gap_x in zip(stack, gap):
        g, e = exact.exact_grad(th, weights=np.stack([np.ones(ns.N), gap_x]))    # ∇J, E[ĝ] (expected_estimate)
        c = np.sum(e * g) / np.sum(g * g)                                    # E[ĝ] ≈ c ∇J
        out.append((c, np.linalg.norm(e - c * g) / np.linalg.norm(c * g),
                    np.sum(e * g) / np.linalg.norm(e) / np.linalg.norm(g)))
    out = np.array(out)                                                      # (K, 3)
    return tuple(out[0] if thetas.ndim == 2 else out.T)


def train_exact(policy, steps=200, lr=10.0, eval_every=20):
    r"""Exact gradient ascent on J, the zero-variance reference for every sampled method: like
    every trainer here it descends a loss, L = −J, so
    :math:`\theta \leftarrow \theta - \text{lr}\cdot\nabla_\theta L = \theta + \text{lr}\cdot\nabla_\theta J(\theta)`
    with ∇J from :func:`toy.numsearch.exact_grad` (no sampling, no groups). REINFORCE with the ``sum``
    normaliser (``algo="reinforce"``) takes this step *in expectation*. Returns ``(theta,
    history)`` with ``eval_step`` and exact ``J``."""
    integer(steps, "steps", lo=0), real(lr, "lr", lo=0, lo_open=True), integer(eval_every, "eval_every", lo=1)
    size(steps, "steps", MAX_LOOP // 100, "exact-gradient steps (about a millisecond each)")
    theta = np.array(ns.check_theta(policy, "policy"), dtype=float)
    hist = {"eval_step": [], "J": []}
    for step in range(steps):
        if step % eval_every == 0:
            _evaluate(theta, hist, step)
        theta -= lr * -exact.exact_grad(theta)                         # ∇L = −∇J
    _evaluate(theta, hist, steps)
    return theta, _as_arrays(hist)


def estimate_variance(theta, traj, w):
    r"""Total variance (trace of the covariance) of the one-game estimate
    :math:`\hat g_i = \sum_t w_{it} \nabla_\theta \log\pi_\theta(a_{it} \mid h_{it})` over the games
    in ``traj``: :math:`\frac1n\sum_i \lVert \hat g_i\rVert^2 - \lVert \bar g\rVert^2`. A batch of
    n games has 1/n of it. ``w``: (n,) per game or (n, T) per action (a per-state baseline,
    reward-to-go). The guesses of one game are made in distinct states, so
    :math:`\lVert \hat g_i\rVert^2 = \sum_t w_{it}^2 \lVert e_{a_{it}} - \pi(\cdot \mid s_{it})\rVert^2`."""
    theta = ns.check_theta(theta)
    w = per_action(traj, w)
    pi, m = ns.policy_probs(theta), traj.mask
    s, a, ww = traj.states[m], traj.guesses[m] - 1, w[m]
    sq = ww ** 2 * (1 - 2 * pi[s, a] + np.sum(pi[s] ** 2, axis=1))
    mean = -weighted_logprob_loss(theta, traj, w, "sum")[1]                 # ḡ
    return float(sq.sum() / len(traj) - np.sum(mean ** 2))


def _check_batch_cosines(theta, traj, w, n):
    instance(traj, ns.Trajectories, "traj"), integer(n, "n", lo=1)
    if len(traj) % n:
        raise ValueError(f"n must be a positive integer dividing the {len(traj)} games, got {n}")
    return {"theta": ns.check_theta(theta), "w": per_action(traj, w), "n": int(n)}


@checked(_check_batch_cosines)
def batch_cosines(theta, traj, w, n):
    r"""Cosine between the REINFORCE estimate of each batch of ``n`` consecutive games in ``traj``
    (weights ``w``, ``sum`` normaliser) and the exact ∇J: how well one update's direction
    points uphill. Returns an array (len(traj) // n,)."""
    g, pi = exact.exact_grad(theta), ns.policy_probs(theta)
    m, nb = traj.mask, len(traj) // n
    batch = np.broadcast_to(np.repeat(np.arange(nb), n)[:, None], m.shape)
    key, a, cw = (batch * ns.S + traj.states)[m], traj.guesses[m] - 1, (w / n)[m]
    rows, k = np.unique(key, return_inverse=True)                           # (batch, state) rows
    s = rows % ns.S
    est = log_softmax_table_grad(pi[s], k, a, cw)                           # rows of ĝ_b: Σ w (e_a − π)
    dots = np.bincount(rows // ns.S, weights=np.sum(est * g[s], axis=1), minlength=nb)
    norms = np.sqrt(np.bincount(rows // ns.S, weights=np.sum(est ** 2, axis=1), minlength=nb))
    return dots / np.maximum(norms, 1e-300) / np.linalg.norm(g)

