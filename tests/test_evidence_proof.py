"""Proving the record (scripts/evidence.py, toy/record/history.py) on a tiny record in a scratch git
repository: a forgery committed self-consistently (a number, its seal) is re-trained and named by
``check`` every time; a forged fresh-seed verdict is flagged; a refactor that changes no number is
proven by one run per arm and re-keyed (``prove``), while a change that only SAPO's branch takes
leaves SAPO's arm stale and re-keys the others; the records re-train bit for bit through a local Dask
cluster of two workers (joblib's dask backend)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toy import seeds
from toy.record import cache, evidence, history, keys
from toy.tinylm import model as M
from toy.tinylm import train as T

ROOT = Path(__file__).resolve().parents[1]
TINY = M.ModelConfig(n_layer=1, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)
SFT = T.SFTConfig(model=TINY, steps=3, batch_size=4)
ARMS = {"grpo": T.RLConfig(steps=3, n_prompts=2, G=2, mu=2),
        "sapo": T.RLConfig(steps=3, n_prompts=2, G=2, mu=2, loss_mode="sapo")}


def varied(ans, digits):
    """A reward with signal for an untrained tiny model (the verifier's is 0 for every answer)."""
    return (np.asarray(ans).sum(axis=1) % 3 == 0).astype(float)


def git(d, *args):
    return subprocess.run(["git", "-C", str(d), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    """A git repository holding a record of two arms (GRPO, SAPO) of two seeds each, committed."""
    ev = tmp_path / "repo" / "evidence"
    monkeypatch.setenv("TOY_EVIDENCE_DIR", str(ev))
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RL_BY_HAND_EVIDENCE", "record")
    evidence.forget()
    monkeypatch.setattr(cache, "_memory", {})
    for cfg in ARMS.values():
        cache.cached_train_rl_seeds(cfg, range(2), sft_cfg=SFT, warmups=2, reward_fn=varied)
    git(ev.parent, "init", "-q")
    git(ev.parent, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(ev.parent, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the record")
    env = {**os.environ, "RL_BY_HAND_EVIDENCE": "read", "TOY_CACHE_DIR": str(tmp_path / "cache-check")}
    return ev, env


def script(*args, env, cwd=ROOT, path=ROOT):
    return subprocess.run([sys.executable, str(path / "scripts" / "evidence.py"), *args], capture_output=True,
                          text=True, env=env, cwd=cwd)


def commit(ev, msg):
    git(ev.parent, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", msg)


def test_a_forgery_committed_is_retrained_and_named(repo):
    ev, env = repo
    rid = sorted(r for r in evidence.records() if r.startswith("grpo-"))[0]
    rec = evidence._read(rid)
    rec["history"]["accuracy"][1] += 0.25                          # one number changed ...
    with evidence._locked():
        evidence._write([rec])
    sealed = script("reseal", rid, env=env)                         # ... and sealed by the maintainer's command
    assert sealed.returncode == 0, sealed.stdout + sealed.stderr
    assert script("check", "--keys", "--no-claims", env=env).returncode == 0      # the seal and key look right
    commit(ev, "an innocent-looking change")
    got = history.flagged(evidence.records(), ev)
    assert set(got) == {rid} and "while its key did not" in got[rid]
    for extra in ([], ["--base", git(ev.parent, "rev-parse", "HEAD~1").strip()]):
        out = script("check", "--no-claims", *extra, env=env)
        assert out.returncode == 1 and f"DIFF {rid}" in out.stdout, out.stdout + out.stderr
        assert f"python scripts/evidence.py retrain {rid}" in out.stdout
    for _ in range(3):                                              # later commits: still flagged, whatever they say
        (ev.parent / "note.txt").write_text(str(_))
        git(ev.parent, "add", "note.txt")
        commit(ev, f"reword {_}")
        assert rid in history.flagged(evidence.records(), ev)


def test_a_forged_fresh_verdict_is_flagged(repo):
    ev, env = repo
    path = ev / "fresh" / "part3.json"
    seeds.write_json(path, seeds.seal({"rows": {"§1 | a claim": {"finding": "reproduced", "book": "x"}}}))
    git(ev.parent, "add", ".")
    commit(ev, "fresh verdicts")
    count = history.commit_count(ev.parent)
    sys.path.insert(0, str(ROOT / "scripts"))
    import evidence as cli
    assert "part3" not in {k for k, v in cli.fresh_flagged(count).items() if v != "rotation"}
    data = json.loads(path.read_text())
    data["rows"]["§1 | a claim"]["finding"] = "not reproduced"
    path.write_text(json.dumps(data))
    assert cli.check_fresh_seals()                                  # a hand edit: its seal is wrong
    seeds.write_json(path, seeds.seal(data))                        # ... resealed
    assert not cli.check_fresh_seals()
    commit(ev, "forged")
    why = cli.fresh_flagged(history.commit_count(ev.parent)).get("part3", "")
    assert "its rows changed in" in why and "ledger's code did not" in why


def _copy_of_the_code(tmp_path):
    code = tmp_path / "code"
    shutil.copytree(ROOT / "toy", code / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", code / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    return code


def test_a_refactor_is_proven_and_rekeyed_and_a_sapo_change_is_caught(repo, tmp_path):
    ev, env = repo
    code = _copy_of_the_code(tmp_path)
    env = {**env, "PYTHONPATH": str(code)}
    before = {rid: keys.numbers(r) for rid, r in evidence.records().items()}
    arm_files = {p.name: p.read_bytes() for p in (ev / "runs").glob("*.json.gz")}
    many = code / "toy" / "tinylm" / "many.py"                      # a refactor: a local variable renamed
    text = many.read_text()
    assert text.count("rngs") > 3
    many.write_text(text.replace("rngs", "generators"))
    out = script("prove", env=env, path=code)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 of 3 arms reproduce bit for bit" in out.stdout and "0 left stale" in out.stdout, out.stdout
    assert script("check", "--keys", "--no-claims", env=env, path=code).returncode == 0
    evidence.forget()
    assert {rid: keys.numbers(r) for rid, r in evidence.records().items()} == before     # no number moved,
    assert {p.name: p.read_bytes() for p in (ev / "runs").glob("*.json.gz")} == arm_files  # no arm file rewritten
    loss = code / "toy" / "rl" / "loss.py"                          # a change only SAPO's branch takes
    text = loss.read_text()
    assert "return sig * (4.0 / tau), 4.0 * sig * (1 - sig)" in text
    loss.write_text(text.replace("return sig * (4.0 / tau), 4.0 * sig * (1 - sig)",
                                 "return sig * (4.01 / tau), 4.01 * sig * (1 - sig)"))
    out = script("prove", env=env, path=code)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 of 3 arms reproduce bit for bit" in out.stdout and "2 left stale" in out.stdout, out.stdout
    check = script("check", "--keys", "--no-claims", env=env, path=code)
    stale = {line.split()[1].rstrip(":") for line in check.stdout.splitlines() if ": stale" in line}
    evidence.forget()
    sapo = {rid for rid, r in evidence.records().items() if r["spec"].get("rl_config", {}).get("loss_mode") == "sapo"}
    assert check.returncode == 1 and stale == sapo and len(sapo) == 2, check.stdout


def test_records_retrain_bit_for_bit_on_a_dask_cluster(repo):
    ev, env = repo
    ids = sorted(evidence.records())
    out = script("check", "--no-claims", "--only", *ids, env={**env, "BACKEND": "dask", "WORKERS": "2"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert sum(line.startswith("ok  ") for line in out.stdout.splitlines()) == len(ids) == 6


def test_engine_settings_refuse_bad_values():
    from toy.record import engine
    with pytest.raises(ValueError, match="WORKERS must be a whole number"):
        engine.settings(workers="two")
    with pytest.raises(ValueError, match="WORKERS must be at least 1"):
        engine.settings(workers=0)
    with pytest.raises(ValueError, match="BACKEND must be"):
        engine.settings(backend="ray")
    assert list(engine.imap(np.add, [(1, 2), (3, 4)], workers=2)) in ([3, 7], [7, 3])
