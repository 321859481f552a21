"""The evidence record (toy/record/, scripts/evidence.py) on a tiny model in a temporary record:
what record mode writes is what read mode serves, without training; a prefix is sliced (and equals
the shorter run trained alone); measurements are read back; a record whose number was changed,
whose training code changed, or whose run no longer reproduces fails ``scripts/evidence.py check``,
which names it; a forgery committed to git is re-trained and named; a refactor is proven by one run
per arm and re-keyed, and a change that only one arm's branch takes leaves that arm stale."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toy import tinylm
from toy.record import cache, evidence
from toy.tinylm import rewards, task
from toy.tinylm import many as MANY, model as M
from toy.tinylm import train as T

ROOT = Path(__file__).resolve().parents[1]
TINY = M.ModelConfig(n_layer=1, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)
SFT = T.SFTConfig(model=TINY, steps=3, batch_size=4)
CFG = T.RLConfig(steps=4, n_prompts=2, G=2)


def proxy(ans, digits):
    return rewards.consistency_reward(task.decode_rows(ans))


@tinylm.measured
def accuracy_of(policy, n=8, seed=0):
    d, _ = task.make_prompts(n, np.random.default_rng(seed))
    return float(np.mean(task.verify_tokens(policy.generate(task.prompts_of(d), 12, np.random.default_rng(seed)), d)["reward"]))


def _record(tmp_path, monkeypatch, mode):
    monkeypatch.setenv("TOY_EVIDENCE_DIR", str(tmp_path / "ev"))
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path / f"cache-{mode}"))
    monkeypatch.setenv("RL_BY_HAND_EVIDENCE", mode)
    evidence.forget()
    monkeypatch.setattr(cache, "_memory", {})


def _experiment():
    pool, _ = task.make_prompts(6, np.random.default_rng(1))
    pols, h = cache.cached_train_rl_seeds(CFG, range(2), sft_cfg=SFT, warmups=2, watch=proxy,
                                          prompt_sampler=T.PoolSampler(pool, curriculum=True))
    short, hs = cache.cached_train_rl_seeds(T.RLConfig(steps=2, n_prompts=2, G=2), range(2), sft_cfg=SFT, warmups=2,
                                            watch=proxy, prompt_sampler=T.PoolSampler(pool, curriculum=True))
    late, hl = cache.cached_train_rl_seeds(CFG, range(2), start=short)
    return h, hs, hl, [accuracy_of(p) for p in pols], [accuracy_of(p) for p in late]


def test_record_then_read_trains_nothing(tmp_path, monkeypatch):
    _record(tmp_path, monkeypatch, "record")
    made = _experiment()
    recs = evidence.records()
    assert sum(r["prefix_of"] is not None for r in recs.values()) == 2       # the 2-step runs: prefixes
    assert (tmp_path / "ev" / "pools").is_dir() and len(list((tmp_path / "ev" / "models").glob("*.npz"))) == 2
    _record(tmp_path, monkeypatch, "read")
    monkeypatch.setattr(cache, "train_rl_many", lambda *a, **k: pytest.fail("read mode trained a run"))
    monkeypatch.setattr(cache, "train_sft", lambda *a, **k: pytest.fail("read mode trained a warm-up"))
    got = _experiment()
    for a, b in zip(made[:3], got[:3]):
        assert sorted(a) == sorted(b)
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    assert made[3:] == got[3:]
    assert not list((tmp_path / "cache-read").glob("*.npz"))


def test_a_prefix_is_the_shorter_run(tmp_path, monkeypatch):
    """``train_rl`` depends on ``steps`` only through the loop: the slice the record serves is the
    shorter run, bit for bit, for every algorithm (PPO and its KL reward included)."""
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    sft = cache.warmup_model(SFT, verbose=False)
    for kw in ({}, {"algo": "rft"}, {"algo": "ppo", "mu": 2, "kl_coef": 0.1}, {"beta": 0.1, "mu": 2}):
        _, long = MANY.train_rl_many(sft, [T.RLConfig(steps=5, n_prompts=2, G=2, **kw)], [3])[0]
        _, short = MANY.train_rl_many(sft, [T.RLConfig(steps=3, n_prompts=2, G=2, **kw)], [3])[0]
        for k in short:
            if k != "time":
                np.testing.assert_array_equal(np.asarray(long[k])[:3], np.asarray(short[k]), err_msg=f"{kw} {k}")


def by_hand(rid, change):
    """Edit record ``rid`` as a person would, in its file, seal untouched."""
    rec = evidence._read(rid)
    change(rec)
    with evidence._locked():
        evidence._write([rec])
    return rec


def _check(*args, env=None):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "evidence.py"), "check", "--no-claims", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.fixture()
def recorded(tmp_path, monkeypatch):
    _record(tmp_path, monkeypatch, "record")
    _experiment()
    import os
    env = {**os.environ, "RL_BY_HAND_EVIDENCE": "read"}
    return tmp_path / "ev", env


def test_check_passes_then_names_an_edited_record(recorded):
    ev, env = recorded
    every = sorted(evidence.records())
    ok = _check("--only", *every, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("\nok  ") + ok.stdout.startswith("ok  ") == len(every)
    rid = next(r for r in every if r.startswith("grpo") and evidence._read(r)["history"])

    def one_number(rec):                                       # one number changed by hand
        rec["history"]["accuracy"][1] += 0.25
    by_hand(rid, one_number)
    bad = _check("--keys", env=env)
    assert bad.returncode == 1 and f"BROKEN {rid}: its seal" in bad.stdout and f"retrain {rid}" in bad.stdout
    by_hand(rid, lambda rec: rec.__setitem__("seal", evidence.seal_of(rec)))   # ... and its seal forged: re-training catches it
    assert _check("--keys", env=env).returncode == 0
    bad = _check("--only", rid, env=env)
    assert bad.returncode == 1 and f"DIFF {rid}" in bad.stdout and "history['accuracy'] differs" in bad.stdout
    assert f"python scripts/evidence.py retrain {rid}" in bad.stdout       # the command that repairs it ...
    fix = subprocess.run([sys.executable, str(ROOT / "scripts" / "evidence.py"), "retrain", rid],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert _check("--only", rid, env=env).returncode == 0                  # ... repairs it


def test_check_names_records_of_other_training_code(recorded, tmp_path):
    """A training-code change that alters results makes every record stale (the code hash keys
    them), so check fails at once, naming them and `make evidence`."""
    ev, env = recorded
    rid = sorted(r for r in evidence.records() if r.startswith("grpo"))[0]
    by_hand(rid, lambda rec: rec.update(code="0" * 16))          # as if computed by other training code ...
    by_hand(rid, lambda rec: rec.update(seal=evidence.seal_of(rec)))   # ... and sealed
    bad = _check("--keys", env=env)
    assert bad.returncode == 1 and f"BROKEN {rid}: stale" in bad.stdout and "make evidence" in bad.stdout


def test_the_rotation_reaches_every_record_in_twenty_commits():
    from toy.record import history
    ids = [f"grpo-{i:016x}-100" for i in range(500)]
    rounds = [history.rotation(ids, count) for count in range(100, 120)]
    assert sorted(sum(rounds, [])) == sorted(ids)                      # each once in 20 consecutive commits
    assert max(map(len, rounds)) < 2.5 * len(ids) / 20                  # and in shares of about 1/20
    assert history.rotation(ids, 7) == history.rotation(ids, 27)       # fixed by the commit count alone


def test_measured_values_and_bad_arguments():
    assert evidence.decode(evidence.encode({3: 0.5, "a": [1, 2.5], "t": (1,), "r": range(2)})) == \
        {3: 0.5, "a": [1, 2.5], "t": (1,), "r": range(2)}
    with pytest.raises(ValueError, match="seeds, not random generators"):
        evidence._args_key((np.random.default_rng(0),), {})
    with pytest.raises(ValueError, match="on must be True or False"):
        evidence.use_record("no")
    with pytest.raises(ValueError, match="start must be"):
        cache.Run(CFG, 0, object())
    with pytest.raises(ValueError, match="prompt_sampler must be"):
        cache.Run(CFG, 0, SFT, sampler=lambda n, rng: None)


def test_a_training_code_change_fails_the_check(recorded, tmp_path):
    """One line of training code changed (here in a copy of the repository: the learning-rate
    schedule of the SFT warm-up) makes ``check`` fail, naming every record and `make evidence`."""
    import shutil
    ev, env = recorded
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "toy", repo / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", repo / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**env, "PYTHONPATH": str(repo)}
    run = lambda: subprocess.run([sys.executable, str(repo / "scripts" / "evidence.py"), "check", "--keys",  # noqa: E731
                                  "--no-claims"], capture_output=True, text=True, env=env, cwd=repo)
    assert run().returncode == 0, run().stdout                 # the copy keys like the original
    train_py = repo / "toy" / "tinylm" / "train.py"
    text = train_py.read_text()
    assert "return cfg.lr * (step + 1) / cfg.warmup_steps" in text
    train_py.write_text(text.replace("return cfg.lr * (step + 1) / cfg.warmup_steps",
                                     "return cfg.lr * (step + 2) / cfg.warmup_steps"))
    out = run()
    stale = {line.split()[1].rstrip(":") for line in out.stdout.splitlines() if ": stale" in line}
    assert out.returncode == 1 and stale == set(evidence.records()), out.stdout
    assert "make evidence" in out.stdout


def test_off_mode_trains_everything_and_starts_from_trained_policies(tmp_path, monkeypatch):
    """``RL_BY_HAND_EVIDENCE=off`` (claims mode, ``use_record(False)``): nothing is read, runs that
    continue other runs start from their trained policies, and the values equal record mode's."""
    _record(tmp_path, monkeypatch, "record")
    made = _experiment()
    _record(tmp_path, monkeypatch, "off")
    got = _experiment()
    assert len(list((tmp_path / "cache-off").glob("tinylm-rl-*.npz"))) == 6     # trained here, not read
    for a, b in zip(made[:3], got[:3]):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    assert made[3:] == got[3:]


def test_bad_inputs_at_the_door():
    def make(w):
        def reward(ans, digits):
            return w * task.verify_tokens(ans, digits)["reward"]
        return reward
    with pytest.raises(ValueError, match="reward_fn must be a function defined at the top level"):
        cache.Run(CFG, 0, SFT, make(2))
    with pytest.raises(ValueError, match="reward_fn must be a function defined at the top level"):
        cache.Run(CFG, 0, SFT, lambda a, d: 0)
    with pytest.raises(ValueError, match="seeds must be a non-empty"):
        cache.cached_train_rl_seeds(CFG, 3)
    with pytest.raises(ValueError, match="seeds must be a non-empty"):
        cache.cached_train_rl_seeds(CFG, [])
    with pytest.raises(ValueError, match="start must not be given with sft_cfg or warmups"):
        cache.cached_train_rl_seeds(CFG, [0], warmups=3, start=[None])
    with pytest.raises(ValueError, match="pool must be problems"):
        T.PoolSampler(np.zeros((3, 4), int))
    with pytest.raises(ValueError, match="pool must hold at least n_prompts = 4"):
        T.PoolSampler(task.make_prompts(3, np.random.default_rng(0))[0])(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="fn must be a function"):
        evidence.measured(5)
    with pytest.raises(ValueError, match="arguments must be numbers"):
        evidence._args_key((object(),), {})


def test_claims_result_names_a_notebook_changed_after_its_check(tmp_path, monkeypatch):
    """claims.json keeps, per notebook, the digest of the committed notebook it was checked against:
    a notebook re-executed since (its outputs changed) is named, and the book's own result holds."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import claims
    import importlib.util
    spec = importlib.util.spec_from_file_location("evidence_script", ROOT / "scripts" / "evidence.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.check_claims() == []                        # the committed result covers the book as committed
    one = "notebooks/part1/s01_why_rl.ipynb"
    real = claims.digest
    monkeypatch.setattr(claims, "digest", lambda p: "0" * 16 if str(p).endswith(one) else real(p))
    problems = script.check_claims()
    assert len(problems) == 1 and one in problems[0] and "NB=" in problems[0]


def test_the_claims_digest_sees_code_and_outputs_not_prose(tmp_path):
    """What claims.json's digest covers is what the claims check: the code cells and their outputs
    (a re-execution or a code change is seen); a prose edit is not (every glued value is checked)."""
    import nbformat
    sys.path.insert(0, str(ROOT / "scripts"))
    import claims
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("x = 1\nprint(x)")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("The value is 1."), code]
    path = tmp_path / "a.ipynb"

    def digest():
        nbformat.write(nb, path)
        return claims.digest(path)
    before = digest()
    nb.cells[0].source = "The value, glued, is one."
    assert digest() == before                                 # prose
    code.outputs[0].text = "2\n"
    assert digest() != before                                 # an output
    code.outputs[0].text, code.source = "1\n", "x = 1\nprint(x)  # same"
    assert digest() != before                                 # the code


def test_the_committed_record_is_current():
    """Every committed record's seal, key, weights, pool and measurements are current for the toy
    code as committed: a change to a file a measurement depends on (e.g. toy/metrics.py under
    ``evaluate``) leaves its measurements stale, and this names them before nbval does."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("evidence_script", ROOT / "scripts" / "evidence.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    recs = script._ev().records()
    assert recs, "no records in evidence/runs"
    assert script.check_keys(recs) == []


def test_the_committed_record_is_small():
    """evidence/ within its 8 MB budget on disk (4 KiB blocks): one compressed file an arm, one manifest."""
    files = [p for p in (ROOT / "evidence").rglob("*") if p.is_file()]
    on_disk = sum(-(-p.stat().st_size // 4096) * 4096 for p in files)
    assert on_disk <= 8 * 2**20, f"evidence/ takes {on_disk / 2**20:.1f} MiB"
