"""A record's key follows what determines its numbers, not the bytes of files (toy/record/codehash.py,
toy/record/keys.py): a docstring, a comment, a reformat, a function no run calls or a new config
field with a default changes no key; a one-token change in an equation a run reaches does. And the
hash covers every function that runs while training (traced)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toy.record import codehash, keys

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def copy(tmp_path, monkeypatch):
    """A copy of toy/ whose code hash is computed here (codehash pointed at it)."""
    shutil.copytree(ROOT / "toy", tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(codehash, "TOY_ROOT", tmp_path / "toy")

    def hash_(names=frozenset()):
        codehash._hash.cache_clear(), codehash._definitions.cache_clear()      # the files changed
        return codehash.code_hash(names), codehash.measure_hash(names | {"evaluate"})    # a measurement by evaluate
    yield tmp_path / "toy", hash_
    codehash._hash.cache_clear(), codehash._definitions.cache_clear()


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_the_copy_hashes_like_the_original(copy):
    _, hash_ = copy
    assert hash_() == (codehash._hash.cache_clear(), codehash.code_hash(), codehash.measure_hash({"evaluate"}))[1:]


@pytest.mark.parametrize("what, file, old, new", [
    ("a docstring", "tinylm/train.py", "def _lr_at(step, cfg):\n", 'def _lr_at(step, cfg):\n    """The schedule."""\n'),
    ("a comment", "tinylm/train.py", "    if step < cfg.warmup_steps:\n", "    if step < cfg.warmup_steps:   # warming up\n"),
    ("a reformat", "tinylm/train.py", "        return cfg.lr * (step + 1) / cfg.warmup_steps",
     "        return (cfg.lr\n                * (step + 1)\n                / cfg.warmup_steps)"),
    ("a function no run calls", "rl/loss.py", "\ndef ", "\ndef never_called(x):\n    return 2 * x\n\n\ndef "),
    ("a new config field with a default", "tinylm/train.py", "    grad_clip: float = 1.0",
     "    grad_clip: float = 1.0\n    new_knob: float = 0.0"),
    ("the record's own code", "record/evidence.py", "def forget():\n", "def forget():\n    print('bookkeeping')\n"),
    ("the record package's docstring", "record/__init__.py", '"""The book', '"""Here: the book'),
])
def test_what_changes_no_number_changes_no_key(copy, what, file, old, new):
    toy, hash_ = copy
    before = hash_()
    edit(toy / file, old, new)
    assert hash_() == before, what


@pytest.mark.parametrize("what, file, old, new", [
    ("the warm-up's schedule", "tinylm/train.py", "return cfg.lr * (step + 1) / cfg.warmup_steps",
     "return cfg.lr * (step + 2) / cfg.warmup_steps"),
    ("the model's initial weights", "tinylm/model.py", "self.qkv = Linear(C, 3 * C, rng, cfg.init_std)",
     "self.qkv = Linear(C, 3 * C, rng, 1.01 * cfg.init_std)"),
    ("a constant a run reads", "tinylm/task.py", "TEACHER_ERROR_RATE = ", "TEACHER_ERROR_RATE = 0.5 * "),
    ("an evaluation", "tinylm/evals.py", "def ", "def _unused_before(x):\n    return x\n\n\ndef "),
])
def test_one_token_in_an_equation_changes_the_key(copy, what, file, old, new):
    toy, hash_ = copy
    before = hash_()
    edit(toy / file, old, new)
    after = hash_()
    if what == "an evaluation":                                 # a new function no run calls: neither key moves
        assert after == before
        edit(toy / file, '"accuracy": float(v["reward"].mean())', '"accuracy": float(v["reward"].mean() + 0)')
        assert hash_()[0] == before[0] and hash_()[1] != before[1]     # evaluate's equation: measurements' key only
        return
    assert after[0] != before[0] and after[1] != before[1], what


def test_a_reward_function_keys_the_code_it_calls(copy):
    """Kimi's length reward is in the key of the runs whose reward calls it, not of the others."""
    toy, hash_ = copy
    kimi = keys.code_key({"kind": "rl", "reward": "kimi\ndef kimi(a, d):\n    return rl.kimi_length_reward(a, d)\n"})
    plain, with_kimi = hash_()[0], hash_(codehash.names_in("rl.kimi_length_reward(a, d)"))[0]
    assert plain != with_kimi
    edit(toy / "rl/advantages.py", "return np.where(c, lam, np.minimum(0.0, lam))",
         "return np.where(c, lam, np.minimum(0.1, lam))")
    assert hash_()[0] == plain and hash_(codehash.names_in("rl.kimi_length_reward(a, d)"))[0] != with_kimi
    assert kimi != keys.code_key({"kind": "rl", "reward": None})


def test_a_new_config_field_at_its_default_leaves_names_as_they_were(tmp_path):
    """The record's file names (keys.spec_id) leave out config fields at their defaults: in a copy
    with a new RLConfig field, a recorded spec keeps its name, and the field set to another value
    gives another name."""
    shutil.copytree(ROOT / "toy", tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    spec = ("from dataclasses import asdict; from toy.tinylm.train import RLConfig, SFTConfig;"
            "s = lambda **kw: {'kind': 'rl', 'rl_config': asdict(RLConfig(**kw)), 'seed': 3, 'reward': None,"
            "'watch': None, 'sampler': None, 'start': {'kind': 'sft', 'sft_config': asdict(SFTConfig())}};")
    name = lambda prog: subprocess.run([sys.executable, "-c", spec + prog], cwd=tmp_path, capture_output=True,  # noqa: E731
                                       text=True, check=True, env={"PYTHONPATH": str(tmp_path)}).stdout.strip()
    before = name("from toy.record.keys import spec_id; print(spec_id(s(steps=40)))")
    edit(tmp_path / "toy" / "tinylm" / "train.py", "    grad_clip: float = 1.0", "    grad_clip: float = 1.0\n    new_knob: float = 0.0")
    assert name("from toy.record.keys import spec_id; print(spec_id(s(steps=40)))") == before
    assert name("from toy.record.keys import spec_id; print(spec_id(s(steps=40, new_knob=0.5)))") != before


def test_the_hash_covers_every_function_training_runs():
    """Every function that runs while the record's runs train (traced in a fresh interpreter over SFT
    and RL runs of every kind, through ``train_rl_many`` as the record trains them) is one of the
    definitions the code hash reaches; the record's own code (toy/record/) is not among them."""
    script = """
import sys
from toy.tinylm import many as MANY, model as M, train as T, task, rewards
import numpy as np
ran = set()
def prof(frame, event, arg):
    if event == "call" and "/toy/" in frame.f_code.co_filename:
        ran.add((frame.f_code.co_filename, frame.f_code.co_qualname.split(".")[0]))
TINY = M.ModelConfig(n_layer=1, n_head=2, n_embd=8, mlp_hidden=12)
pool, _ = task.make_prompts(6, np.random.default_rng(1))
def shaped(ans, d):
    return rewards.shaped_reward(task.decode_rows(ans), d, w_format=0.1, w_consistency=0.1)
sys.setprofile(prof)
sft, _ = T.train_sft(T.SFTConfig(model=TINY, steps=2, batch_size=4), progress=False)
for kw in ({}, {"algo": "rft"}, {"algo": "dr_grpo", "beta": 0.1}, {"algo": "ppo", "mu": 2, "kl_coef": 0.1},
           {"mu": 2, "ratio_level": "sequence"}, {"mu": 2, "loss_mode": "cispo", "eps_low": 1.0},
           {"mu": 2, "loss_mode": "sapo"}, {"mu": 2, "delta": 3.0},
           {"mu": 2, "top_entropy_quantile": 0.5}, {"loss_type": "bnpo", "micro_batch": 2}):
    cfg = T.RLConfig(steps=2, n_prompts=2, G=2, **kw)
    MANY.train_rl_many(sft, [cfg], [0], progress=False)
cfg = T.RLConfig(steps=2, n_prompts=2, G=2)
seen = []
MANY.train_rl_many(sft, [cfg], [0], reward_fns=[T.watching(shaped, shaped, seen)],
                   prompt_samplers=[T.PoolSampler(pool, curriculum=True).fresh()], progress=False)
sys.setprofile(None)
print("\\n".join(sorted(f"{f}|{q}" for f, q in ran if q != "<module>")))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    ran = {tuple(line.split("|")) for line in out.split()}
    ran = {(str(Path(f).resolve().relative_to(codehash.TOY_ROOT)), q) for f, q in ran}
    roots = {**codehash.ROOTS}
    files = codehash.code_files(*(codehash.TOY_ROOT / r for r in roots))
    defs, _, _ = codehash._definitions(tuple(sorted(str(f) for f in files)))
    reached = set(codehash.reachable(roots, files, codehash.names_in("rewards.shaped_reward(task.decode_rows(a))")))
    covered = {(rel, name) for name, items in defs.items() for rel, dump, _ in items if (rel, dump) in reached}
    assert len(ran) > 40
    assert not {f for f, _ in ran if f.startswith("record/")}
    assert ran <= covered, sorted(ran - covered)
