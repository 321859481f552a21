"""The evidence record (``evidence/``, ``toy/tinylm/evidence.py``): check it, and keep it tidy.

    python scripts/evidence.py check [--keys] [--no-claims] [--commit SHA] [--only ID ...]
    python scripts/evidence.py prune LOG          # remove the records no notebook used (make evidence)
    python scripts/evidence.py status             # one line a record: arm, seed, steps, current or stale

``check`` (``make evidence-check``) fails, naming each record and the command to run, when

1. a record's seal does not match its content (a number edited by hand), its file name is not its
   spec's, it was computed by other training code than this one (stale: ``make evidence``), or on
   another arithmetic than this machine's reference one; a measurement was computed by other
   ``toy`` code; a kept model or pool does not hold what its record names;
2. ``evidence/claims.json`` (``make claims``) is missing or checked another version of the record;
3. (not with ``--keys``) a sample of runs, **trained again here, differs by one bit**: one seed of
   every arm (RL runs and SFT warm-ups), the seed chosen from the commit's hash, so that over
   commits every record is re-trained; its history, its final parameters' hash and the
   measurements taken of it are compared exactly. ``--only`` re-trains the named records instead.

Exit status 1 on any failure. The sample trains on two processes with a progress line per run.
"""
import hashlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
FIX = "run `make evidence` (it re-trains what is stale and re-executes Part III's notebooks)"


def _ev():
    from toy.tinylm import evidence
    return evidence


def _sft_config(d):
    from toy.tinylm.model import ModelConfig
    from toy.tinylm.train import SFTConfig
    return SFTConfig(**{**d, "model": ModelConfig(**d["model"])})


def _function(key, ns):
    """The function a spec names by ``qualname\\nsource`` (a reward or a watched reward)."""
    if key is None:
        return None
    qual, src = key.split("\n", 1)
    exec(src, ns)                                        # noqa: S102 — the book's own notebook code
    return ns[qual]


def _run_of(spec, memo):
    """The ``cache.Run`` a spec describes (its start's policy trained again or loaded)."""
    from toy.tinylm import cache
    from toy.tinylm.train import PoolSampler
    ev = _ev()
    ns = ev._namespace()
    start = spec["start"]
    if start["kind"] == "sft":
        start_obj = _sft_config(start["sft_config"])
    else:
        start_obj = ev.RecordedPolicy(_run_of(start, memo), ev.spec_id(start), _policy_of(start, memo))
    sampler = None
    if spec["sampler"] is not None:
        sampler = PoolSampler(ev.pool(spec["sampler"]), spec["sampler"]["sampler"] == "curriculum")
    return cache.Run.of_spec(spec, start_obj, _function(spec["reward"], ns), _function(spec["watch"], ns), sampler)


def _policy_of(spec, memo):
    """A start policy: the recorded weights, or the run trained again (memoised)."""
    ev = _ev()
    rid = ev.spec_id(spec)
    if rid not in memo:
        rec = ev._read(rid)
        model = ev._load_weights(rec) if rec else None
        memo[rid] = model if model is not None else _train(spec, memo)[0]
    return memo[rid]


def _train(spec, memo):
    """Train the run of ``spec`` here, from its start: ``(policy, history)``."""
    from toy.tinylm import cache
    run = _run_of(spec, memo)
    return cache._train_runs([run], None)[0]


def retrain(rid):
    """Train record ``rid`` again and compare it with the record: ``(rid, differences, seconds)``
    (an exception is reported as a difference, naming the record)."""
    t0 = time.perf_counter()
    try:
        return _retrain(rid)
    except Exception as e:                                # noqa: BLE001 — reported per record
        return rid, [f"could not be trained again: {type(e).__name__}: {e}"], time.perf_counter() - t0


def _retrain(rid):
    os.environ["RL_BY_HAND_EVIDENCE"] = "read"
    ev = _ev()
    rec = ev._read(rid)
    spec, bad, t0 = rec["spec"], [], time.perf_counter()
    if spec["kind"] == "sft":
        from toy.tinylm.train import train_sft
        model, hist = train_sft(_sft_config(spec["sft_config"]), progress=False)
        if ev.params_sha256(model) != rec["params_sha256"]:
            bad.append("final parameters differ")
        if float(hist["loss"][-1]) != rec["history"]["final_loss"][0]:
            bad.append("final loss differs")
        return rid, bad, time.perf_counter() - t0
    policy, hist = _train(spec, {})
    full = ev._full(rec)
    want = ev._array_history(full["history"], spec["rl_config"]["steps"])
    for k in sorted(set(want) | set(hist)):
        if k not in want or k not in hist or not ev._same(want[k], hist[k]):
            bad.append(f"history[{k!r}] differs")
    if rec.get("params_sha256") not in (None, ev.params_sha256(policy)):
        bad.append("final parameters differ")
    for key, entry in sorted(rec.get("measurements", {}).items()):
        if not ev._equal(ev.replay(entry, policy), ev.decode(entry["value"])):
            bad.append(f"measurement {entry['call']} differs")
    return rid, bad, time.perf_counter() - t0


def check_keys(recs):
    """Seals, names, code, arithmetic, weights, pools: a list of (record, problem)."""
    from toy.machine import fingerprint, on_reference
    from toy.tinylm.cache import code_hash
    ev = _ev()
    out, code, mcode = [], code_hash(), ev.measure_code()
    for rid, rec in recs.items():
        if rec.get("seal") != ev.seal_of(rec):
            out.append((rid, "its seal does not match its content (edited by hand?)"))
            continue
        if ev.spec_id(rec["spec"]) != rid or rec.get("id") != rid:
            out.append((rid, "its file name is not its spec's"))
        if rec.get("code") != code:
            out.append((rid, f"stale: computed by other training code ({rec.get('code')}, now {code})"))
        if on_reference() and rec.get("arithmetic") != fingerprint():
            out.append((rid, f"computed on another arithmetic ({rec.get('arithmetic')})"))
        if rec.get("prefix_of") and rec["prefix_of"] not in recs:
            out.append((rid, f"a prefix of {rec['prefix_of']}, which is not in the record"))
        for entry in rec.get("measurements", {}).values():
            if entry.get("code") != mcode:
                out.append((rid, f"stale measurement {entry['call']} (other toy code)"))
        for key, entry in rec.get("measurements", {}).items():
            src = entry.get("source")
            if src is None:                               # a toy function: its source now
                try:
                    import importlib
                    fn = importlib.import_module(entry["module"])
                    for part in entry["qualname"].split("."):
                        fn = getattr(fn, part)
                    src = ev._fn_ident(fn)[2]
                except (ImportError, AttributeError, OSError):
                    src = ""
            if ev.measurement_key(entry["qualname"], src, entry["args"]) != key:
                out.append((rid, f"measurement {entry['call']} is filed under another key than its call's"))
        if rec.get("weights"):
            try:
                if ev._load_weights(rec) is None:
                    out.append((rid, f"its weights, evidence/models/{rid}.npz, are missing"))
            except ValueError as e:
                out.append((rid, str(e)))
        sampler = rec["spec"].get("sampler")
        if sampler:
            try:
                ev.pool(sampler)
            except (OSError, ValueError) as e:
                out.append((rid, f"its prompt pool is missing or wrong ({e})"))
    return out


def check_claims():
    ev = _ev()
    path = ev.evidence_dir() / "claims.json"
    if not path.is_file():
        return ["evidence/claims.json is missing: run `make claims` (it checks the book's claims on another arithmetic)"]
    got = json.loads(path.read_text(encoding="utf-8"))
    if got.get("evidence") != ev.version():
        return [f"evidence/claims.json checked evidence version {got.get('evidence')}, the record is now "
                f"{ev.version()}: run `make claims`"]
    if not got.get("passed"):
        return ["evidence/claims.json records a failed claims check: fix the claims, then `make claims`"]
    sys.path.insert(0, str(ROOT / "scripts"))
    import claims
    checked = got.get("notebooks", {})
    stale = [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("notebooks/part*/*.ipynb"))
             if not isinstance(checked.get(str(p.relative_to(ROOT))), dict)
             or checked[str(p.relative_to(ROOT))].get("digest") != claims.digest(p)]
    if stale:
        return [f"evidence/claims.json did not check these notebooks as committed (re-executed since, or new): "
                f"{' '.join(stale)}: run `make claims NB=\"{' '.join(stale)}\"`"]
    return []


def commit_id():
    sha = os.environ.get("EVIDENCE_COMMIT")
    if sha:
        return sha
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no-commit"


def sample(recs, commit):
    """One record of every arm, chosen by the commit's hash (every arm, every commit)."""
    ev = _ev()
    arms = {}
    for rid, rec in sorted(recs.items()):
        arms.setdefault(ev.arm_key(rec["spec"]), []).append(rid)
    out = []
    for arm, ids in sorted(arms.items()):
        i = int(hashlib.sha256(f"{commit}:{arm}".encode()).hexdigest(), 16) % len(ids)
        out.append(ids[i])
    return out


def main(argv):
    if not argv or argv[0] not in ("check", "prune", "status"):
        print(__doc__)
        return 2
    ev = _ev()
    recs = ev.records()
    if argv[0] == "status":
        from toy.tinylm.cache import code_hash
        for rid, rec in recs.items():
            s = rec["spec"]
            print(f"{rid:32s} seed {s.get('seed', s.get('sft_config', {}).get('seed'))!s:3s} "
                  f"{'current' if rec.get('code') == code_hash() else 'STALE'}"
                  f"{' prefix of ' + rec['prefix_of'] if rec.get('prefix_of') else ''}")
        print(f"{len(recs)} records, version {ev.version()}")
        return 0
    if argv[0] == "prune":
        used = set(Path(argv[1]).read_text().split())
        gone = [rid for rid in recs if rid not in used]
        for rid in gone:
            for p in (ev.evidence_dir() / "runs" / f"{rid}.json", ev.evidence_dir() / "models" / f"{rid}.npz"):
                if p.exists():
                    p.unlink()
        pools = {json.dumps(r["spec"].get("sampler"), sort_keys=True) for rid, r in recs.items() if rid in used}
        for p in (ev.evidence_dir() / "pools").glob("*.json"):
            if not any(p.stem in s for s in pools):
                p.unlink()
                gone.append(f"pool {p.stem}")
        print(f"evidence: removed {len(gone)} record(s) no notebook used" + (": " + ", ".join(gone) if gone else ""))
        return 0
    keys_only = "--keys" in argv
    only = argv[argv.index("--only") + 1:] if "--only" in argv else None
    commit = argv[argv.index("--commit") + 1] if "--commit" in argv else commit_id()
    t0 = time.perf_counter()
    if not recs:
        print("evidence-check: no records in evidence/runs: " + FIX)
        return 1
    bad = check_keys(recs)
    for rid, why in bad:
        print(f"STALE OR BROKEN {rid}: {why}")
    claims = [] if "--no-claims" in argv else check_claims()
    for why in claims:
        print(f"CLAIMS: {why}")
    if bad:
        print(f"evidence-check: {len(bad)} problem(s) in {len({r for r, _ in bad})} record(s): {FIX}")
    print(f"evidence-check: {len(recs)} records, version {ev.version()}: seals, keys, weights and pools "
          f"{'ok' if not bad else 'NOT ok'} ({time.perf_counter() - t0:.1f} s)", flush=True)
    failed = bool(bad or claims)
    if keys_only or bad:
        return int(failed)
    todo = only or sample(recs, commit)
    print(f"evidence-check: re-training {len(todo)} record(s) (one seed of every arm, chosen by commit "
          f"{commit[:12]}) on 2 processes, comparing every bit", flush=True)
    with ProcessPoolExecutor(2) as pool:
        steps = lambda rid: -recs[rid]["steps"]                       # noqa: E731 — the longest first
        for rid, diffs, secs in pool.map(retrain, sorted(todo, key=steps)):
            print(f"{'ok  ' if not diffs else 'DIFF'} {rid} ({secs:.0f} s){': ' + '; '.join(diffs) if diffs else ''}",
                  flush=True)
            if diffs:
                failed = True
                print(f"  the record {rid} does not reproduce: {FIX}")
    print(f"evidence-check: {'FAILED' if failed else 'passed'} in {time.perf_counter() - t0:.0f} s")
    return int(failed)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
