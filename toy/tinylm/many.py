r"""Many RL runs at once: ``train_rl_many`` trains R runs (seeds, or configs that share
``shape_key``) in one loop, each run what ``train.train_rl`` gives alone, to rounding
(``tests/test_tinylm_many.py``), and bit for bit what it gives among any others.

It is the textbook loop of ``train.train_rl`` (the same sampler, advantages, ``rl.policy_loss``,
``rl.value_loss`` and records), computed on the speed path ``toy.tinylm.runs``: the R policies
live in one ``runs.Stack`` and every step is one numpy call for all of them. The update runs the
model only on the rows that matter (``DistinctRows``): with β = 0 a row whose advantage is 0 has
no gradient, a repeated answer is computed once, and each prompt once per group. Every cached and
recorded run of the book goes through here.
"""
from dataclasses import dataclass, fields

import numpy as np

from .. import rl
from ..prob import log_softmax
from .._blas import single_thread_blas
from .._check_args import flag, function, instance, int_array, integer, seed as check_seed
from . import runs
from .model import TinyLM
from .task import PROMPT_LEN
from .records import Records, close_bar, progress_bar
from .train import RLConfig, draw_problems, entropy, minibatches, rollout

__all__ = ["train_rl_many", "train_rl_seeds", "shape_key", "stack_runs", "DistinctRows"]


@single_thread_blas
def train_rl_many(policy, cfgs, seeds, callbacks=None, prompt_samplers=None, reward_fns=None, verbose=False,
                  progress=None):
    """``[train_rl(model, cfg, seed, ...) for cfg, seed in zip(cfgs, seeds)]``, computed together:
    the R runs share every numpy call (``toy.tinylm.runs``), each with its own generator, data,
    advantages and Adam state. ``policy`` is one ``TinyLM`` or a list of R; the configs must share
    ``shape_key``; ``callbacks``, ``prompt_samplers``, ``reward_fns``: None or one per run.
    ``progress``: a ``toy.progress.Progress`` that counts run-steps, None for a bar of its own
    (shown only where a person watches), False for none. Returns a list of R ``(policy, history)``."""
    cfgs, seeds, models, callbacks, samplers, reward_fns = _runs_of(
        policy, cfgs, seeds, callbacks, prompt_samplers, reward_fns, verbose)
    c0, ppo = cfgs[0], cfgs[0].algo == "ppo"
    G, rngs = c0.G, [np.random.default_rng(s) for s in seeds]
    policy = runs.Stack([m.copy().add_value_head() for m in models] if ppo else models)   # PPO: + V(s_t), the critic
    ref = runs.Stack(models) if c0.beta > 0 or c0.kl_coef > 0 else None       # π_ref: the start
    opt = runs.StackAdam([c.lr for c in cfgs], [c.grad_clip for c in cfgs])
    logs = [Records(c, ps, cb, verbose, progress=False) for c, ps, cb in zip(cfgs, samplers, callbacks)]
    bar = progress_bar(progress, c0.steps * len(cfgs), f"{c0.algo}, {len(cfgs)} run{'s' * (len(cfgs) > 1)}", "run-steps")
    for step in range(c0.steps):
        # 1. sample G answers to each of n_prompts problems and score them (the verifier, or reward_fn)
        digits = [draw_problems(c, rng, ps) for c, rng, ps in zip(cfgs, rngs, samplers)]
        ros = rollout(policy, digits, G, rngs, [c.temperature for c in cfgs], reward_fns)
        for log, ro in zip(logs, ros):
            log.sampled(ro)
        # 2. advantages: one per answer from its group's G rewards (RFT keeps the accepted answers) ...
        if not ppo:
            batches = [_answers(ro, rl.advantages(ro.reward.reshape(-1, G), c.algo).ravel(), c)
                       for ro, c in zip(ros, cfgs)]
        else:
            batches = [Batch(ro.seqs, np.ones(len(ro.seqs), bool), ro.mask, None) for ro in ros]
        if ref is not None:                                             # log π_ref (β·KL, LM-PPO's reward)
            for b, (lp, _) in zip(batches, _logprobs_many(ref, batches)):
                b.ref_logp = lp
        if ppo:                                                         # ... or (PPO) one per token, on V(s_t)
            for b, ro, c, log, (lp, V) in zip(batches, ros, cfgs, logs, _logprobs_many(policy, batches, value=True)):
                b.old_logp, r = lp, ro.reward
                if c.kl_coef > 0:                                       # LM-PPO: r_t = −β·KL_t, + the score at the end
                    r = log.shaped(ro.reward, rl.kl_shaped_rewards(lp - b.ref_logp, ro.reward, ro.mask, c.kl_coef,
                                                                   c.kl_clamp))
                b.ret, b.adv = rl.ppo_targets(r, V, ro.mask)
        # 3. update: μ epochs of Adam steps on rl.policy_loss (+ PPO's value loss)
        _update(policy, opt, batches, cfgs, rngs, logs)
        for log in logs:
            log.end_step(step)
        bar.update(len(cfgs))
    close_bar(progress, bar)
    return [(policy.model(r), log.close()) for r, log in enumerate(logs)]


def train_rl_seeds(policy, cfg, seeds, reward_fn=None):
    """Several seeds of one config: ``train_rl_many`` with ``cfg`` for each of ``seeds`` →
    ``(policies, history)``, ``history`` a dict of arrays shaped (seeds, steps). ``policy``: one
    TinyLM, or a list of W warm-up models, seed ``s`` starting from ``policy[s % W]`` (as
    ``cache.cached_train_rl_seeds(..., warmups=W)`` does with ``[warmup_model(SFTConfig(seed=w))
    for w in range(W)]``). ``reward_fn``: None, one function, or a list of one per seed."""
    if isinstance(seeds, (str, bytes, dict)) or not np.iterable(seeds) or not len(seeds := list(seeds)):
        raise ValueError(f"seeds must be a non-empty list of seeds (integers >= 0), got {seeds!r}")
    fns = list(reward_fn) if isinstance(reward_fn, (list, tuple)) else [reward_fn] * len(seeds)
    if len(fns) != len(seeds):
        raise ValueError(f"reward_fn must be one function or a list of {len(seeds)} (one per seed), got {len(fns)}")
    models = list(policy) if isinstance(policy, (list, tuple)) else [policy]
    if not models:
        raise ValueError("policy must be a TinyLM or a non-empty list of TinyLM (one per warm-up), got []")
    seeds = [integer(s, "seeds", lo=0) for s in seeds]
    return stack_runs(train_rl_many([models[s % len(models)] for s in seeds], [cfg] * len(seeds), seeds,
                                    reward_fns=fns))


def stack_runs(got):
    """``[(policy, history), ...]`` of R runs → ``(policies, {key: array (R, steps)})``."""
    return [p for p, _ in got], {k: np.array([np.asarray(h[k], dtype=float) for _, h in got]) for k in got[0][1]}



def _runs_of(policy, cfgs, seeds, callbacks, prompt_samplers, reward_fns, verbose):
    """``train_rl_many``'s arguments, checked, as lists of R runs."""
    flag(verbose, "verbose")
    cfgs = list(cfgs) if isinstance(cfgs, (list, tuple)) else cfgs
    if not isinstance(cfgs, list) or not cfgs:
        raise ValueError(f"cfgs must be a non-empty list of RLConfig, got {cfgs!r}")
    R = len(cfgs)
    for name, v in (("seeds", seeds), ("callbacks", callbacks), ("prompt_samplers", prompt_samplers),
                    ("reward_fns", reward_fns)):
        if (v is not None or name == "seeds") and (not isinstance(v, (list, tuple, range)) or len(v) != R):
            raise ValueError(f"{name} must be a list of {R} (one per config), got {v!r}")
    models = list(policy) if isinstance(policy, (list, tuple)) else [policy] * R
    if len(models) != R:
        raise ValueError(f"policy must be one TinyLM or a list of {R}, got {len(models)}")
    for m in models:
        instance(m, TinyLM, "policy")
    for c in cfgs:
        instance(c, RLConfig, "cfgs")
        if shape_key(c) != shape_key(cfgs[0]):
            raise ValueError("cfgs must share steps, n_prompts, G, mu, n_minibatches, PPO or not, "
                             "and whether beta or kl_coef is > 0 (many.shape_key)")
    fns = [list(f or [None] * R) for f in (callbacks, prompt_samplers, reward_fns)]
    for fs, name in zip(fns, ("callbacks", "prompt_samplers", "reward_fns")):
        for f in fs:
            if f is not None:
                function(f, name)
    return (cfgs, [check_seed(s) for s in seeds], models, *fns)


class DistinctRows:
    """The distinct rows among ``seqs[needed]`` (N, T), sorted, so that rows with the same prompt
    are consecutive (``runs.Layout`` then computes each prompt once). ``expand`` maps
    per-distinct-row arrays (U, ...) back to every row (N, ...) (0 for rows not needed);
    ``reduce`` sums per-row gradients (N, ...) into (U, ...)."""

    def __init__(self, seqs, needed):
        seqs = int_array(seqs, "seqs", ndim=2)
        if np.shape(needed) != seqs.shape[:1] or np.asarray(needed).dtype != bool:
            raise ValueError(f"needed must be a boolean array of shape {seqs.shape[:1]}, got {np.shape(needed)}")
        rows = np.flatnonzero(needed)
        self.seqs, inv = np.unique(seqs[rows], axis=0, return_inverse=True)     # (U, T)
        self.index = np.full(len(seqs), -1)                                     # row → distinct row
        self.index[rows] = inv.ravel()

    def expand(self, x):                                                        # (U, ...) → (N, ...)
        out = np.zeros((len(self.index),) + x.shape[1:], x.dtype)
        got = self.index >= 0
        out[got] = x[self.index[got]]
        return out

    def reduce(self, x):                                                        # (N, ...) → (U, ...)
        out = np.zeros((len(self.seqs),) + x.shape[1:], x.dtype)
        got = self.index >= 0
        np.add.at(out, self.index[got], x[got])
        return out



@dataclass
class Batch:
    """What the update trains on: the rows of one rollout with their advantages."""
    seqs: np.ndarray            # (N, T + 1) prompt + answer tokens
    needed: np.ndarray          # (N,) the rows with a gradient (``rows`` computes only those)
    mask: np.ndarray            # (N, T) the loss mask
    adv: np.ndarray             # (N,) one advantage per answer, or (N, T) per token (PPO)
    ref_logp: np.ndarray = None  # (N, T) log π_ref (None if neither β nor kl_coef is > 0)
    old_logp: np.ndarray = None  # (N, T) log π_old (PPO's step 2; else set by the update)
    ret: np.ndarray = None      # (N, T) PPO's value targets (None: no value loss)

    def __post_init__(self):
        self.rows = DistinctRows(self.seqs, self.needed)    # the distinct rows the model computes

    def split(self, n, rng):
        """The batch as ``n`` minibatches of random rows (``train.minibatches``; n = 1: itself)."""
        if n == 1:
            return [self]
        arrays = [getattr(self, f.name) for f in fields(self)]
        return [Batch(*(None if x is None else x[i] for x in arrays)) for i in minibatches(len(self.mask), n, rng)]


def _answers(ro, adv, cfg):
    """The ``Batch`` of a rollout's answers with their advantages ``adv`` (N,) (GRPO, Dr. GRPO,
    RFT); RFT keeps only the accepted answers (A = 1). With β = 0 a row whose advantage is 0
    (its group all right, or all wrong) has no loss and no gradient: the model skips it."""
    keep = adv > 0 if cfg.algo == "rft" else np.ones(len(adv), bool)
    every = cfg.beta > 0 or cfg.top_entropy_quantile < 1        # the entropy quantile counts every answer (TRL)
    needed = adv[keep] != 0 if not every else np.ones(keep.sum(), bool)
    return Batch(ro.seqs[keep], needed, ro.mask[keep], adv[keep])


def shape_key(cfg):
    """Runs whose configs share this key train together in one stack (``train_rl_many``): the
    same steps, batch shape, epochs and minibatches, PPO or not, a reference model or not."""
    instance(cfg, RLConfig, "cfg")
    return (cfg.steps, cfg.n_prompts, cfg.G, cfg.mu, cfg.n_minibatches, cfg.algo == "ppo",
            cfg.beta > 0 or cfg.kl_coef > 0)


def _row_logprobs(logits, lay):
    """log π of each row's targets at positions P−1..L−2 (R, U, S+1) and the probabilities."""
    logp = log_softmax(logits)                                                # (float32 stays float32)
    lp = np.take_along_axis(logp, lay.targets[..., None], axis=-1)[..., 0]
    return lp, np.exp(logp)


def _expand(b, lay, r, x):
    """Run r's per-row values at positions P−1..L−2 (U_r, S+1) → every row of batch ``b``
    (N, T), 0 on the prompt's targets and on rows not computed."""
    out = np.zeros((lay.u[r], b.mask.shape[1]), x.dtype)
    out[:, lay.P - 1:] = x[r, :lay.u[r]]
    return b.rows.expand(out)


def _layout(batches):
    """The ``runs.Layout`` of every batch's distinct rows (None or an empty batch: no rows)."""
    L = next((b.seqs.shape[1] for b in batches if b is not None), PROMPT_LEN + 2)
    return runs.Layout([b.rows.seqs if b is not None else np.zeros((0, L), np.int64) for b in batches])


def _logprobs_many(st, batches, value=False, keep=False):
    """One forward of every run on its batch's distinct rows (None: a run without a batch):
    for each run ``(log π (N, T), V(s_t) (N, T) or None)`` (0 on rows not computed), and with
    ``keep`` also the layout, tape and probabilities the backward needs."""
    lay = _layout(batches)
    logits, values, tape = runs.forward(st, lay)
    lp, probs = _row_logprobs(logits, lay)
    out = [(None, None) if b is None else
           (_expand(b, lay, r, lp), _expand(b, lay, r, values) if value else None)
           for r, b in enumerate(batches)]
    return (out, lay, tape, probs) if keep else out


def _update(st, opt, batches, cfgs, rngs, logs):
    """Step 3 for every run at once: μ epochs on its batch, each one Adam step descending
    ``rl.policy_loss`` (+ PPO's ``rl.value_loss``) on each of ``n_minibatches`` random minibatches
    (drawn with the run's generator), backpropagated from the rows computed. π_old is the policy
    that sampled: PPO's step 2 computed its log-probabilities, the others take the first step's
    (or, with minibatches, a pass before it). A run with nothing to train on (RFT: no answer
    accepted) takes no step. Each update goes into the run's ``Records``."""
    c0 = cfgs[0]
    if c0.n_minibatches > 1:
        need = [b if len(b.mask) and b.old_logp is None else None for b in batches]
        if any(b is not None for b in need):
            for b, (lp, _) in zip(need, _logprobs_many(st, need)):
                if b is not None:
                    b.old_logp = lp
    for _ in range(c0.mu):
        mbs = [b.split(c0.n_minibatches, rng) if len(b.mask) else [] for b, rng in zip(batches, rngs)]
        for j in range(max(len(m) for m in mbs)):
            cur = [m[j] if j < len(m) else None for m in mbs]
            got, lay, tape, probs = _logprobs_many(st, cur, value=st.has_value_head, keep=True)
            ent = entropy(probs) if any(c.top_entropy_quantile < 1 for c in cfgs) else None   # (R, U, S+1)
            dlp = np.zeros(lay.targets.shape, st.dtype)                           # (R, U, S+1)
            dval = np.zeros(lay.targets.shape, st.dtype) if st.has_value_head else None
            for r, (mb, (logp, values)) in enumerate(zip(cur, got)):
                if mb is None:
                    continue
                c = cfgs[r]
                mb.old_logp = logp.copy() if mb.old_logp is None else mb.old_logp
                pg_mask = (rl.high_entropy_mask(_expand(mb, lay, r, ent), mb.mask, c.top_entropy_quantile, c.entropy_micro_batches)
                           if c.top_entropy_quantile < 1 else None)
                loss, dlogp = rl.policy_loss(logp, mb.old_logp, mb.adv, mb.mask, ref_logp=mb.ref_logp,
                                             pg_mask=pg_mask, **c.loss_args())
                vloss, dvalues = rl.value_loss(values, mb.ret, mb.mask, c.vf_coef) if mb.ret is not None else (None, None)
                if len(mb.rows.seqs):
                    dlp[r, :lay.u[r]] = mb.rows.reduce(dlogp)[:, lay.P - 1:]
                    if dvalues is not None:
                        dval[r, :lay.u[r]] = mb.rows.reduce(dvalues)[:, lay.P - 1:]
                logs[r].updated(loss, vloss, logp, mb.old_logp, mb.adv, mb.mask, mb.ref_logp)
            dz = -probs * dlp[..., None]                                          # d log π_y / dz = onehot(y) − π
            np.put_along_axis(dz, lay.targets[..., None],
                              np.take_along_axis(dz, lay.targets[..., None], axis=-1) + dlp[..., None], axis=-1)
            runs.backward(st, lay, tape, dz, dval)
            opt.step(st, [r for r, mb in enumerate(cur) if mb is not None])
