r"""What an RL run records, step by step: ``Records``, the trainers' writer (as CleanRL's loop writes
to TensorBoard), so that ``train.train_rl`` shows the algorithm and one line per record.

A step's record is what it sampled (``sampled``: reward, the verifier's accuracy, the answers'
format and length, the groups with no signal, mean |A|), LM-PPO's shaped reward where it applies
(``shaped``), and how its updates went (``updated``, once per Adam step: loss, clip fraction,
KL, value loss, the ratios' spread), averaged at ``end_step``, which appends it to ``history``,
calls the callback, prints it if ``verbose`` and moves the progress bar. ``many.train_rl_many``
keeps one ``Records`` per run: the histories are the same whichever trainer made them
(``tests/test_tinylm_many.py``).
"""
import time

import numpy as np

from .. import rl
from ..progress import Progress
from .task import TEACHER_CHAIN_ACC

__all__ = ["Records", "progress_bar", "close_bar"]


class Records:
    """The history of one RL run with config ``cfg`` (``history``: a list per record key).
    ``prompt_sampler``: a curriculum learns its success rates from each step's rewards;
    ``callback(step, record)``; ``verbose``: print each step; ``progress``: a
    ``toy.progress.Progress`` to count the steps, None for a bar of its own (shown only where a
    person watches), False for none (``train_rl_many`` keeps one bar for all its runs)."""

    def __init__(self, cfg, prompt_sampler=None, callback=None, verbose=False, progress=None):
        self.cfg, self.prompt_sampler, self.callback, self.verbose = cfg, prompt_sampler, callback, verbose
        self.progress, self.bar = progress, progress_bar(progress, cfg.steps, cfg.algo, "steps")
        self.history, self.rec, self.stats, self.t0 = {}, {}, [], time.time()

    def sampled(self, ro):
        """Record what the step sampled (``sample_record``)."""
        self.rec, self.stats = sample_record(ro, self.cfg.algo, self.prompt_sampler), []

    def shaped(self, reward, tok_r):
        """Record LM-PPO's per-token reward ``tok_r`` (N, T) (``rl.kl_shaped_rewards`` of the
        scores ``reward``): ``score``, ``total_reward`` and ``kl_reward`` (the mean over answers of
        Σ_t −β·KL_t). Returns ``tok_r``."""
        total = tok_r.sum(axis=1)                                                  # (N,)
        self.rec.update(score=float(reward.mean()), total_reward=float(total.mean()),
                        kl_reward=float((total - reward).mean()))
        return tok_r

    def updated(self, loss, vloss, logp, old_logp, adv, mask, ref_logp):
        """Record one update (``update_stats``)."""
        self.stats.append(update_stats(loss, vloss, logp, old_logp, adv, mask, ref_logp, self.cfg))

    def end_step(self, step):
        """Average the step's updates into its record (``mean_stats``), stamp the time, append the
        record to ``history``, call the callback, print it if ``verbose``; move the bar."""
        rec = self.rec
        rec.update(mean_stats(self.stats, self.cfg, self.cfg.algo == "ppo"), time=time.time() - self.t0)
        for k, v in rec.items():
            self.history.setdefault(k, []).append(v)
        if self.callback:
            self.callback(step, rec)
        if self.verbose:
            print(f"step {step:3d}  acc {rec['accuracy']:.3f}  think {rec['think_share']:.3f}  "
                  f"chain {rec['chain_acc']:.3f}  len {rec['mean_length']:.1f}  "
                  f"all-right {rec['all_right']:.2f}  all-wrong {rec['all_wrong']:.2f}  "
                  f"{rec['time']:.1f}s", flush=True)
        self.bar.update()

    def close(self):
        """Close the bar this run made; returns ``history``."""
        close_bar(self.progress, self.bar)
        return self.history


def progress_bar(progress, total, what, unit):
    """The bar to count with: ``progress`` itself, a new ``Progress`` (None), or a silent one (False)."""
    if progress is None:
        return Progress(total, what, unit)
    return progress if progress is not False else Progress(total, what, unit, after=float("inf"))


def close_bar(progress, bar):
    if progress is None:
        bar.close()


def update_stats(loss, vloss, logp, old_logp, adv, mask, ref_logp, cfg):
    """What one update records: ``loss`` (+ ``vf_coef`` × ``value_loss``), ``clip_frac`` (the share
    of the tokens whose gradient the surrogate changes from the unclipped ρA: clipped to 0, or,
    CISPO, capped; GSPO: by its sequence ratio), ``kl`` (β > 0: the token mean of k3), and, when a
    batch is used more than once (μ > 1 or minibatches), ``ratio_dev`` (the mean of |ρ − 1|) and
    ``ratio_max`` over the tokens with A ≠ 0 (those the surrogate moves; 0 and 1 if none)."""
    m = np.asarray(mask, dtype=float)
    a = np.broadcast_to(adv[:, None] if adv.ndim == 1 else adv, logp.shape)
    ratio = np.exp(logp - old_logp)                                            # (N, T)
    if cfg.ratio_level == "sequence":
        ratio = np.broadcast_to(np.exp(rl.sequence_log_ratio(logp, old_logp, m))[:, None], logp.shape)
    if cfg.loss_mode == "cispo":
        touched = (rl.cispo_weight(ratio, cfg.eps_low, cfg.eps_high if cfg.eps_high is not None else cfg.eps_low,
                                   cfg.cispo_cap) != ratio) & (a != 0)
    elif cfg.loss_mode == "sapo":
        touched = np.zeros(ratio.shape, bool)                   # no clip (verl logs pg_clipfrac = 0)
    else:
        touched = (rl.two_sided_surrogate_grad(ratio, a, cfg.eps_low, cfg.eps_high, cfg.delta) == 0) & (a != 0)
    out = {"loss": loss + (cfg.vf_coef * vloss if vloss is not None else 0), "clip_frac": float((touched * m).sum() / m.sum())}
    if cfg.beta > 0:
        out["kl"] = float((rl.kl_k3.equation(ref_logp - logp) * mask).sum() / mask.sum())   # in the model's dtype
    if vloss is not None:
        out["value_loss"] = vloss
    if cfg.mu > 1 or cfg.n_minibatches > 1:
        used = m * (a != 0)
        out.update(ratio_dev=float((np.abs(ratio - 1) * used).sum() / max(used.sum(), 1)),
                   ratio_max=float(np.max(np.where(used > 0, ratio, 1))))
    return out


def mean_stats(stats, cfg, ppo):
    """A step's record of its updates: the mean of each of ``update_stats``'s values (``ratio_max``:
    the largest); NaN if the step took no update (RFT with no answer accepted)."""
    keys = (["loss", "clip_frac"] + ["kl"] * (cfg.beta > 0) + ["value_loss"] * ppo
            + ["ratio_dev", "ratio_max"] * (cfg.mu > 1 or cfg.n_minibatches > 1))
    return {k: float((np.max if k == "ratio_max" else np.mean)([s[k] for s in stats])) if stats else float("nan")
            for k in keys}


def sample_record(ro, algo, prompt_sampler=None):
    """What step 1 sampled: the mean ``reward`` (the verifier's, or ``reward_fn``'s), the
    verifier's ``accuracy``, the answers' format and length, the share of groups with no signal
    (``degenerate``: their G rewards all equal, ``toy.rl.mixed_groups``; ``all_right``/``all_wrong``
    split it) and, for the group algorithms, ``mean_abs_adv`` (the mean |A| of the answers).
    A curriculum (a ``prompt_sampler`` with ``update``) learns the success rates from the rewards."""
    R = ro.reward.reshape(-1, ro.G)                                           # (B, G)
    if hasattr(prompt_sampler, "update"):
        prompt_sampler.update(R)
    flat = ~rl.mixed_groups(R)                                                # (B,) all equal
    n_think = ro.think.sum()
    rec = {
        "reward": float(ro.reward.mean()),
        "accuracy": float(ro.correct.mean()),
        "think_share": float(ro.think.mean()),
        "mean_length": float(ro.length.mean()),
        "chain_acc": float(ro.chain_ok.sum() / n_think) if n_think else float("nan"),
        "teacher_chain_acc": TEACHER_CHAIN_ACC,
        "degenerate": float(np.mean(flat)),
        "all_right": float(np.mean(flat & (R[:, 0] == 1))),
        "all_wrong": float(np.mean(flat & (R[:, 0] == 0))),
    }
    if algo != "ppo":                                                         # PPO's A is per token (step 2)
        rec["mean_abs_adv"] = float(np.abs(rl.advantages(R, algo)).mean())
    return rec
