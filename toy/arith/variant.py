r"""A variant of Part II's world with **two correct methods** per step (§6, beyond the seed).

The lecture's toy has one correct method per step, so RL can only move probability *towards*
the one right way, and the RL model's pass@k beats the original model's at every k. Real
problems often have several correct routes, and a route the model rarely takes may be the only
one that works on some problems. This module adds exactly that to :mod:`toy.arith.model`:

- methods ``usual`` (the common correct method), ``rare`` (a second correct method the
  pretrained model seldom uses), ``bug`` and ``slip`` (as in :mod:`toy.arith.model`);
- outside the two "× 2 digits" contexts both are right. In a "× 2 digits" step they split by
  the multiplier m: ``usual`` (the column method) is right for m < ``TRICKY_FROM`` = 80 and makes
  the carry error for m ≥ 80; ``rare`` (round up and subtract, v·m = 100·v − (100 − m)·v) is
  right only for m ≥ 80 and makes the carry error otherwise. A problem with a step m ≥ 80 is
  *tricky*: only the rare method solves it.

The model is the same softmax over shared per-context offsets Δ (5 contexts × 4 methods), and
:func:`train` is REINFORCE with GRPO's advantage, one update per batch (as ``arith.train.reinforce``);
:func:`train_seeds` runs several seeds.
Shapes: P problems, n samples, L steps, C = 5 contexts, K = 4 methods.
"""
import numpy as np

from .. import rl
from .._check_args import checked, generator, instance, integer, seed as check_seed, size
from ..prob import sample_categorical
from . import model as arith
from .model import MUL2, MUL2_BIG
from .train import ReinforceConfig, pg_step, stacked

__all__ = ["METHODS", "USUAL", "RARE", "BUG", "SLIP", "TRICKY_FROM", "P_START", "Model",
           "tricky_steps", "is_tricky", "sample", "verify", "steps_right", "p_solve", "pass1_exact", "train_reinforce",
           "train_reinforce_seeds"]

METHODS = ("usual", "rare", "bug", "slip")
USUAL, RARE, BUG, SLIP = range(4)
TRICKY_FROM = 80   # × 2 digits: usual is right for m < 80, rare for m ≥ 80

# The pretrained model: P(correct) split into a usual and a rare method.
P_START = np.array([
    [0.760, 0.060, 0.090, 0.090],   # add, no carry
    [0.740, 0.060, 0.130, 0.070],   # add, carry
    [0.500, 0.060, 0.260, 0.180],   # × 1 digit
    [0.380, 0.080, 0.350, 0.190],   # × 2 digits
    [0.300, 0.080, 0.400, 0.220],   # × 2 digits, multiplicand ≥ 100
])
BASE_LOGITS = np.log(P_START) - np.log(P_START[:, :1])


class Model(arith.Model):
    r"""π(· | c) = softmax((base_logits[c] + delta[c]) / T) over the four methods."""

    def __init__(self, base_logits=BASE_LOGITS, delta=None):
        super().__init__(base_logits, delta)

    def copy(self):
        return Model(self.base_logits, self.delta)

    def p_correct(self, temperature=1.0):
        """(C,) probability of *a* correct method (usual + rare) in each context."""
        p = self.probs(temperature)
        return p[:, USUAL] + p[:, RARE]


def _two_digit(problems):
    instance(problems, arith.Problems, "problems")
    return (problems.context == MUL2) | (problems.context == MUL2_BIG)


def tricky_steps(problems):
    """(P, L) True for the steps where only the rare method is right (× 2 digits, multiplier ≥ 80)."""
    return _two_digit(problems) & (problems.operand >= TRICKY_FROM)


def is_tricky(problems):
    """(P,) True for problems that only the rare method can solve."""
    return tricky_steps(problems).any(axis=1)


def sample(model, problems, n, rng, temperature=1.0):
    """``n`` solutions per problem, like :func:`toy.arith.sample` with four methods."""
    instance(model, Model, "model"), instance(problems, arith.Problems, "problems")
    n = integer(n, "n", lo=1)
    size(n * problems.context.size * model.base_logits.shape[-1], "n", what="method probabilities")
    generator(rng)
    P, L = problems.context.shape
    logp_table = model.log_probs(temperature)                               # (C, K)
    ctx = np.broadcast_to(problems.context[:, None, :], (P, n, L))
    real = ctx >= 0
    probs = np.exp(logp_table)[np.where(real, ctx, 0)]                      # (P, n, L, K)
    method = np.where(real, sample_categorical(probs, rng), -1)             # (P, n, L)
    # what each method computes, in toy.arith's codes (the carry error where a method fails)
    tricky, two = tricky_steps(problems), _two_digit(problems)
    usual_as = np.where(tricky, arith.BUG, arith.CORRECT)[:, None, :]
    rare_as = np.where(two & ~tricky, arith.BUG, arith.CORRECT)[:, None, :]
    as_arith = np.select([method == USUAL, method == RARE, method == BUG],
                         [usual_as, rare_as, arith.BUG], arith.SLIP)
    slip = rng.integers(1, 10, size=method.shape) * rng.choice([-1, 1], size=method.shape)
    return arith.as_samples(problems, method, arith.execute(problems, as_arith, slip, real), logp_table)


def verify(samples, problems):
    """(P, n) exact reward: 1 if the final answer is right."""
    instance(samples, arith.Samples, "samples"), instance(problems, arith.Problems, "problems")
    if samples.answer.shape[0] != len(problems):
        raise ValueError(f"samples and problems must have the same number of problems, "
                         f"got {samples.answer.shape[0]} and {len(problems)}")
    return (samples.answer == problems.answer[:, None]).astype(float)


def steps_right(samples, problems):
    """(P, n): 1 if *every* step of the solution used a method that is right there (usual off the
    tricky steps, rare off the ordinary "× 2 digits" steps) — the event whose probability
    :func:`p_solve` computes. :func:`verify` checks only the final answer, which two mistakes
    can also reach when they cancel (a carry error undone by a slip of the same size)."""
    instance(samples, arith.Samples, "samples"), instance(problems, arith.Problems, "problems")
    if samples.method.shape[0] != len(problems):
        raise ValueError(f"samples and problems must have the same number of problems, "
                         f"got {samples.method.shape[0]} and {len(problems)}")
    m = samples.method                                                       # (P, n, L)
    tricky, two = tricky_steps(problems)[:, None, :], _two_digit(problems)[:, None, :]
    ok = ((m == USUAL) & ~tricky) | ((m == RARE) & ~(two & ~tricky))
    return np.all(ok | (m < 0), axis=-1).astype(float)


def p_solve(model, problems, temperature=1.0):
    r"""(P,) P(every step right) = :math:`\prod_t [\pi(\text{usual}) \mathbb 1_{\text{not tricky}} + \pi(\text{rare})]`."""
    instance(model, Model, "model"), instance(problems, arith.Problems, "problems")
    p = model.probs(temperature)                                             # (C, K)
    ctx = problems.context
    c = np.where(ctx >= 0, ctx, 0)
    tricky, two = tricky_steps(problems), _two_digit(problems)
    right = (np.where(tricky, 0.0, p[c, USUAL])
             + np.where(two & ~tricky, 0.0, p[c, RARE]))                     # (P, L)
    return np.prod(np.where(ctx >= 0, right, 1.0), axis=1)


def pass1_exact(model, problems, temperature=1.0):
    """Expected pass@1: the mean of :func:`p_solve`."""
    if len(instance(problems, arith.Problems, "problems")) == 0:
        raise ValueError("problems must hold at least one problem")
    return float(p_solve(model, problems, temperature).mean())


def _check_train(policy, cfg, seed, train, test):
    cfg = ReinforceConfig() if cfg is None else instance(cfg, ReinforceConfig, "cfg")
    instance(policy, Model, "policy")
    if train is None or test is None:
        default = arith.make_dataset()
        train, test = (default[0] if train is None else train), (default[1] if test is None else test)
    instance(train, arith.Problems, "train"), instance(test, arith.Problems, "test")
    integer(cfg.n_prompts, "cfg.n_prompts", 1, len(train))
    if cfg.algo == "baseline":
        raise ValueError("cfg.algo must not be 'baseline' here (no running baseline in the variant's trainer)")
    if cfg.match_abs is not None:
        raise ValueError("cfg.match_abs must be None here (the variant's trainer has no rescaled advantages)")
    return {"cfg": cfg, "seed": check_seed(seed), "train": train, "test": test}


@checked(_check_train)
def train_reinforce(policy, cfg=None, seed=0, *, train=None, test=None):
    r"""REINFORCE in the variant world from a copy of ``policy`` (the variant's ``Model()``), one
    update per batch (``arith.train.pg_step`` with the advantage ``cfg.algo`` of an
    ``arith.train.ReinforceConfig``; the default is GRPO's):
    descend :math:`L = -\frac{1}{BG}\sum_i A_i \sum_t \log\pi(a_{it}\mid c_{it})`.

    ``train``, ``test``: the problems (None: ``arith.make_dataset()``'s). Returns (the final model,
    the history): ``pass1``, ``pass1_tricky`` (test, exact, index 0 = before training),
    ``probs`` (steps + 1, C, K) and ``reward`` (each batch's mean)."""
    rng = np.random.default_rng(seed)
    model = policy.copy()
    tricky = is_tricky(test)
    h = {"pass1": [], "pass1_tricky": [], "probs": [], "reward": []}

    def log():
        p = p_solve(model, test)
        h["pass1"].append(p.mean())
        h["pass1_tricky"].append(p[tricky].mean() if tricky.any() else np.nan)
        h["probs"].append(model.probs())

    log()
    for _ in range(cfg.steps):
        batch = train.subset(rng.choice(len(train), size=cfg.n_prompts, replace=False))
        s = sample(model, batch, cfg.G, rng)                                 # (B, G, L)
        r = verify(s, batch)                                                 # (B, G)
        pg_step(model, s, rl.advantages(r, cfg.algo), cfg.lr)
        h["reward"].append(r.mean())
        log()
    return model, {k: np.array(v) for k, v in h.items()}


def _check_train_seeds(policy, cfg, seeds, train, test):
    if isinstance(seeds, (str, dict)) or not np.iterable(seeds):
        raise ValueError(f"seeds must be a list of seeds (integers >= 0), got {seeds!r}")
    seeds = [check_seed(x, "seeds") for x in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    checked_ = _check_train(policy, cfg, 0, train, test)
    return {"cfg": checked_["cfg"], "train": checked_["train"], "test": checked_["test"], "seeds": seeds}


@checked(_check_train_seeds)
def train_reinforce_seeds(policy, cfg=None, seeds=range(10), *, train=None, test=None):
    """:func:`train_reinforce` for each of ``seeds``: (the final models, the histories stacked over
    seeds: ``pass1`` (seeds, steps + 1), ``probs`` (seeds, steps + 1, C, K), ...)."""
    return stacked([train_reinforce(policy, cfg, x, train=train, test=test) for x in seeds])
