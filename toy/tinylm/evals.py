"""Measuring the tiny thinking model: accuracy by format, greedy vs sampled, pass@k, and
accuracy under a thinking budget (Qwen3-style early stopping of the chain)."""
import numpy as np

from ..metrics import pass_at_k
from ..prob import sample_categorical
from .._blas import single_thread_blas
from .._check_args import flag, has_methods, int_array, integer, real, seed as check_seed
from . import runs
from ..record.evidence import measured
from .model import TinyLM
from .task import (MAX_ANSWER_LEN, N_DIGITS, STOI, check_digits, make_prompts, n_digits, prompts_of,
                   true_answers, verify_tokens)

__all__ = ["evaluate", "pass_at_k_curve", "thinking_budget"]


def _generate(model, prefix, n, rng, temperature=1.0, greedy=False, n_repeat=1):
    """``model.generate``; for a ``TinyLM``, the same draws through the speed path (``runs.sample``)."""
    if isinstance(model, TinyLM):
        return runs.sample(model, prefix, n, rng, temperature, greedy, n_repeat)
    return model.generate(prefix, n, rng, temperature, greedy=greedy, n_repeat=n_repeat)


def _check(model, temperature, seed, greedy=False, **counts):
    has_methods(model, "model", "generate"), check_seed(seed), flag(greedy, "greedy")
    if not greedy:
        real(temperature, "temperature", lo=0, lo_open=True)
    for name, n in counts.items():
        integer(n, name, lo=1)


@measured
@single_thread_blas
def evaluate(model, n_prompts=1000, temperature=1.0, greedy=False, seed=0, digits=None, min_digits=N_DIGITS):
    """One answer per problem (sampled at ``temperature``, or greedy) on ``n_prompts`` random
    problems of ``min_digits``..10 digits (or the given ``digits`` (n, 10)). Returns a dict: ``accuracy``, ``think_share``,
    ``acc_think`` / ``acc_direct`` (accuracy within each format; NaN if none), ``chain_acc``
    (think-first answers whose bracket is all right), ``malformed``, ``mean_length``."""
    _check(model, temperature, seed, greedy, **({"n_prompts": n_prompts} if digits is None else {}))
    rng = np.random.default_rng(seed)
    if digits is None:
        digits, _ = make_prompts(n_prompts, rng, min_digits)
    else:
        digits = check_digits(digits)
    ans = _generate(model, prompts_of(digits), MAX_ANSWER_LEN, rng, temperature, greedy=greedy)
    v = verify_tokens(ans, digits)
    think, direct = v["think"] > 0, v["direct"] > 0
    mean = lambda x, m: float(x[m].mean()) if m.any() else float("nan")  # noqa: E731
    return {
        "accuracy": float(v["reward"].mean()),
        "think_share": float(think.mean()),
        "acc_think": mean(v["reward"], think),
        "acc_direct": mean(v["reward"], direct),
        "chain_acc": mean(v["chain_ok"], think),
        "malformed": float(1 - think.mean() - direct.mean()),
        "mean_length": float(v["length"].mean()),
    }


@measured
@single_thread_blas
def pass_at_k_curve(model, ks=(1, 2, 4, 8, 16), n_prompts=200, n_samples=16, temperature=1.0,
                    seed=0, min_digits=N_DIGITS):
    """pass@k (``toy.metrics.pass_at_k``, unbiased) averaged over ``n_prompts`` problems from
    ``n_samples`` samples each. Returns ``{k: pass@k}``."""
    _check(model, temperature, seed, n_prompts=n_prompts, n_samples=n_samples)
    ks = int_array(ks, "ks", lo=1, ndim=1)
    if len(ks) == 0:
        raise ValueError("ks must hold at least one k")
    if max(ks) > n_samples:
        raise ValueError(f"ks must be <= n_samples = {n_samples}, got {max(ks)}")
    rng = np.random.default_rng(seed)
    digits, _ = make_prompts(n_prompts, rng, min_digits)
    rep = np.repeat(digits, n_samples, axis=0)                              # (n * s, 10)
    ans = _generate(model, prompts_of(digits), MAX_ANSWER_LEN, rng, temperature, n_repeat=n_samples)
    r = verify_tokens(ans, rep)["reward"].reshape(n_prompts, n_samples)
    c = r.sum(axis=1).astype(int)
    return {int(k): float(np.mean(pass_at_k(n_samples, c, k))) for k in ks}


@measured
@single_thread_blas
def thinking_budget(model, budgets=range(N_DIGITS + 1), n_prompts=1000, temperature=1.0,
                    greedy=False, seed=0, min_digits=N_DIGITS):
    """Accuracy when thinking is cut off after ``b`` chain digits.

    For each budget b the model is forced to think (the answer starts with ``[``), writes b
    digits of its chain (sampled or greedy), then we append ``]#`` — our stand-in for Qwen3's
    "time is up, answer now" — and the model must answer: its next token is drawn from its
    distribution restricted to the ten digits (a cut-off model is off its training
    distribution and might otherwise not write a digit at all). b = 10 is the model's full
    chain. The same problems and chains are used for every b. A problem of k < b digits keeps
    its whole chain of k digits (the budget is not binding). Returns ``{b: accuracy}``.
    """
    _check(model, temperature, seed, greedy, n_prompts=n_prompts)
    has_methods(model, "model", "forward")
    budgets = int_array(list(budgets), "budgets", 0, N_DIGITS, ndim=1)
    rng = np.random.default_rng(seed)
    digits, _ = make_prompts(n_prompts, rng, min_digits)
    truth, k = true_answers(digits), n_digits(digits)
    prefix = np.concatenate([prompts_of(digits), np.full((n_prompts, 1), STOI["["])], axis=1)
    # the full chain once (one sample per problem); a budget b keeps its first b tokens
    chain = _generate(model, prefix, N_DIGITS, rng, temperature, greedy=greedy)
    chain = np.pad(chain, ((0, 0), (0, N_DIGITS - chain.shape[1])), constant_values=STOI["$"])
    out = {}
    for b in budgets:
        logits = np.empty((n_prompts, 10))
        kept = np.minimum(k, b)                                             # chain digits written
        for m in np.unique(kept):                                           # one forward per length
            rows = kept == m
            cut = np.concatenate([prefix[rows], chain[rows, :m], np.tile([STOI["]"], STOI["#"]], (rows.sum(), 1))],
                                 axis=1)
            logits[rows] = model.forward(cut)[:, -1, :10].astype(np.float64)   # (n, 10) digits only
        if greedy:
            ans = logits.argmax(axis=1)
        else:
            p = np.exp((logits - logits.max(axis=1, keepdims=True)) / temperature)
            ans = sample_categorical(p / p.sum(axis=1, keepdims=True), rng)
        out[int(b)] = float(np.mean(ans == truth))
    return out
