r"""Part I's trainers for many seeds at once (races with standard errors): ``train_pg_seeds`` and
``train_rest_seeds`` stack the K seeds' logit tables into one (K·S, A) table, so that each step is
one batch of K·B·G games and one gradient, through the same loss (``train.loss_rows``), advantages
(``toy.rl.advantages``) and normaliser (``toy.rl.aggregate_weights``) as the one-seed trainers; seed
s gives the run ``train.train_pg(policy, cfg, seed=s)`` (``train_rest``) makes, each seed with its
own random stream (``tests/test_numsearch_train.py`` checks them run by run). Notebooks import
them as ``from toy.numsearch import many as nm`` (``nm.train_pg_seeds``).
"""
import numpy as np

from . import exact, game as ns
from .. import rl
from .._check_args import as_array, function, instance, seed as check_seed
from ..prob import inverse_cdf, log_softmax
from .train import PGConfig, ReSTConfig, loss_rows

__all__ = ["train_pg_seeds", "train_rest_seeds"]


class _Streams:
    """K random generators drawn as one: ``random((K·n, 1))`` stacks each seed's own
    ``random((n, 1))``, so a batch of K seeds sees exactly the numbers K separate runs would."""

    def __init__(self, seeds):
        self.rngs = [np.random.default_rng(int(s)) for s in seeds]

    def random(self, shape):
        n = shape[0] // len(self.rngs)
        out = np.empty((len(self.rngs), n) + tuple(shape[1:]))
        for r, o in zip(self.rngs, out):
            r.random(out=o)                                             # seed k's own random((n, ...))
        return out.reshape(shape)

    def choice(self, targets, size):
        """Each seed's ``rng.choice(targets, size=size)``: for a 1-D population drawn with
        replacement that is ``targets[rng.integers(0, len(targets), size)]``, the same numbers
        from the same stream (``tests/test_numsearch_train.py`` pins it), at half the cost."""
        t = np.asarray(targets)
        return np.stack([t[r.integers(0, len(t), size=size)] for r in self.rngs])     # (K, size)


def _probs(logits):
    """``softmax(logits)`` (``ns.policy_probs``) without the argument checks, for the stacked tables
    of the seeds (finite logits, checked at the door): the same arithmetic, exp(log_softmax)."""
    return np.exp(log_softmax.equation(logits, 1.0))


def _row_probs(theta, rows):
    """``softmax(theta[rows])``, computed once per distinct row (most games of a batch share a state)."""
    distinct, k = np.unique(rows, return_inverse=True)
    return _probs(theta[distinct])[k]


def _rollout_seeds(theta, targets, streams):
    """One game per entry of ``targets`` (K, n) for K policies stacked in ``theta`` (K·S, A);
    the returned states are rows of that stacked table (seed k's states are offset by k·S)."""
    K, n = targets.shape
    offset = np.repeat(np.arange(K) * ns.S, n)                              # (K·n,)
    choose = lambda t, s: inverse_cdf.equation(_row_probs(theta, s + offset), streams.random((len(s), 1))) + 1
    traj = ns.play(choose, targets.ravel())
    traj.states = np.where(traj.mask, traj.states + offset[:, None], -1)
    return traj


def _check_seeds(seeds):
    if isinstance(seeds, str) or not np.iterable(seeds):
        raise ValueError(f"seeds must be a list of seeds (integers >= 0), got {seeds!r}")
    for s in seeds:
        check_seed(s, "seeds")


def _stack(policy, K):
    """K copies of the logits ``policy`` (S, A), or the K given ones (K, S, A), as one (K·S, A) table."""
    policy = as_array(policy, "policy")
    if policy.ndim == 3:
        if len(policy) != K:
            raise ValueError(f"policy of shape {policy.shape} must hold one table per seed ({K})")
        return np.concatenate([ns.check_theta(th, "policy") for th in policy])
    return np.tile(ns.check_theta(policy, "policy"), (K, 1))


def _evaluate_seeds(theta, hist, step, targets):
    """Exact J of each of the K stacked policies (K·S, A), averaged over ``targets``: one dynamic
    programme over the stack (``exact.exact_values`` takes leading batch axes), seed by seed the
    numbers ``exact.exact_J(.., per_target=True)`` gives (``exact.win_probs``)."""
    hist["eval_step"].append(step)
    idx = np.asarray(targets) - 1
    tables = theta.reshape(-1, ns.S, ns.A)
    per_target = np.concatenate([exact.win_probs(_probs(tables[k:k + 32]))       # (K, N) P(win | x), 32 seeds
                                 for k in range(0, len(tables), 32)])         # at a time (in cache)
    hist["J"].append([float(p[idx].mean()) for p in per_target])


def _seed_history(hist):
    """Lists over steps of per-seed values → arrays (K, steps); ``eval_step`` stays (evals,)."""
    return {k: (np.asarray(v) if k == "eval_step" else np.asarray(v).T) for k, v in hist.items()}


def train_pg_seeds(policy, cfg=PGConfig(), seeds=range(10), callback=None):
    r""":func:`train_pg` for many seeds at once, vectorised over seeds: for every s in ``seeds`` the
    run is the one ``train_pg(policy, cfg, seed=s)`` makes (each seed keeps its own random
    stream), but the K policies are stacked in one (K·S, A) table and each step is one batch of
    K·B·G games and one gradient. ``policy``: one table (S, A) for all seeds, or one per seed
    (K, S, A) (then seed k starts from ``policy[k]``).

    ``callback(step, thetas)``, if given, is called before each step's update and once after the
    last (step = 0, 1, …, ``cfg.steps``) with the K policies as a read-only (K, S, A) array (copy
    what you keep): to follow the runs along the way, e.g. when each one commits to its opening.

    Returns ``thetas`` (K, S, A) and the history of :func:`train_pg` with a leading seed axis:
    ``reward``, ``degenerate``, ``b``, ``mean_abs_adv`` (K, steps); ``J`` (K, evals); ``eval_step`` (evals,).
    """
    instance(cfg, PGConfig, "cfg"), _check_seeds(seeds)
    if callback is not None:
        function(callback, "callback")
    cfg.__post_init__()
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    loss_type = cfg.loss_type or rl.DEFAULT_LOSS_TYPE[cfg.algo]
    K, B, G = len(seeds), cfg.n_prompts, cfg.G
    streams = _Streams(seeds)
    theta = _stack(policy, K)                                               # (K·S, A)
    b = np.full(K, float(cfg.b))                                            # (K,) one baseline per seed
    hist = {"reward": [], "degenerate": [], "b": [], "mean_abs_adv": [], "eval_step": [], "J": []}
    view = theta.reshape(K, ns.S, ns.A).view()
    view.flags.writeable = False                                            # what a callback sees
    for step in range(cfg.steps):
        if step % cfg.eval_every == 0:
            _evaluate_seeds(theta, hist, step, cfg.targets)
        if callback is not None:
            callback(step, view)
        targets = np.repeat(streams.choice(cfg.targets, B), G, axis=1)      # (K, B·G)
        traj = _rollout_seeds(theta, targets, streams)
        R = traj.reward.reshape(K, B, G)
        w = rl.advantages(R.reshape(K * B, G), cfg.algo, np.repeat(b, B)[:, None]).reshape(K, B * G)
        c = rl.aggregate_weights(traj.mask.reshape(K, B * G, ns.T), loss_type)   # each seed its own batch
        cw = (c * w[..., None]).reshape(K * B * G, ns.T)
        m = traj.mask
        _, rows, grad_rows = loss_rows(theta, traj.states[m], traj.guesses[m] - 1, cw[m])
        theta[rows] -= cfg.lr * grad_rows
        if not np.isfinite(theta[rows]).all():                             # _probs takes finite logits
            raise ValueError(f"lr must be small enough that the logits stay finite, got {cfg.lr} (step {step})")
        hist["reward"].append(R.reshape(K, -1).mean(axis=1))
        hist["degenerate"].append((~rl.mixed_groups(R.reshape(K * B, G))).reshape(K, B).mean(axis=1)
                                  if G > 1 else np.full(K, np.nan))                # rl.degenerate_fraction per seed
        hist["b"].append(b.copy())
        hist["mean_abs_adv"].append(np.abs(w).mean(axis=1))
        b = cfg.baseline_decay * b + (1 - cfg.baseline_decay) * R.reshape(K, -1).mean(axis=1)
    _evaluate_seeds(theta, hist, cfg.steps, cfg.targets)
    if callback is not None:
        callback(cfg.steps, view)
    return theta.reshape(K, ns.S, ns.A), _seed_history(hist)


def train_rest_seeds(policy, cfg=ReSTConfig(), seeds=range(10)):
    r""":func:`train_rest` for many seeds at once, vectorised over seeds like :func:`train_pg_seeds`:
    seed s gives the run ``train_rest(policy, cfg, seed=s)`` makes. Returns ``thetas`` (K, S, A) and
    the history with a leading seed axis (``reward``, ``kept``, ``dataset`` (K, rounds); ``J``)."""
    instance(cfg, ReSTConfig, "cfg"), _check_seeds(seeds)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    K = len(seeds)
    streams = _Streams(seeds)
    theta = _stack(policy, K)                                               # (K·S, A)
    hist = {"reward": [], "kept": [], "dataset": [], "eval_step": [], "J": []}
    data, owners = [], []                                                   # kept games and their seed
    for r in range(cfg.rounds):
        _evaluate_seeds(theta, hist, r, cfg.eval_targets or cfg.targets)
        traj = _rollout_seeds(theta, streams.choice(cfg.targets, cfg.n_prompts), streams)  # grow
        keep = rl.advantages(traj.reward, "rft") > 0                                     # filter
        owner = np.repeat(np.arange(K), cfg.n_prompts)[keep]
        data, owners = ((data + [traj.select(keep)], owners + [owner]) if cfg.accumulate
                        else ([traj.select(keep)], [owner]))
        dataset, owner = ns.Trajectories.concat(data), np.concatenate(owners)
        size = np.bincount(owner, minlength=K)                                          # (K,) per seed
        if len(dataset):                                                                 # improve
            cw = np.zeros(dataset.mask.shape)                                # the "sum" normaliser, per seed
            for k in np.unique(owner):
                cw[owner == k] = rl.aggregate_weights(dataset.mask[owner == k], "sum")
            m = dataset.mask
            s, a = dataset.states[m], dataset.guesses[m] - 1
            for _ in range(cfg.sft_steps):
                _, rows, grad_rows = loss_rows(theta, s, a, cw[m])
                theta[rows] -= cfg.lr * grad_rows
        hist["reward"].append(traj.reward.reshape(K, -1).mean(axis=1))
        hist["kept"].append(keep.reshape(K, -1).sum(axis=1))
        hist["dataset"].append(size)
    _evaluate_seeds(theta, hist, cfg.rounds, cfg.eval_targets or cfg.targets)
    return theta.reshape(K, ns.S, ns.A), _seed_history(hist)
