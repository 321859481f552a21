"""What the record's git history says must be trained again: the records whose numbers changed
where nothing that determines them did, and a rotation that reaches every record.

A run's numbers are a function of its key (its spec, the training code as code, the arithmetic).
So over the last ``WINDOW`` commits (``git log``; or every commit since ``base``, when the landing's
base is known):

1. a record whose numbers changed while its key did not is forged or not reproducible;
2. in a commit that re-keyed an arm (new code, same numbers: a refactor proven by ``prove``), a
   record of that arm whose numbers changed with the key was changed by hand, not by the re-key;
3. with ``base``: every record whose numbers differ from ``base``'s, or that ``base`` did not hold.

Each of these is re-trained in full by ``scripts/evidence.py check``. Every other record is
re-trained by the rotation: the records whose ``bucket`` is the commit count modulo ``PERIOD``, so
that ``PERIOD`` consecutive commits re-train every record once (the count is git's, not anything a
contributor writes). What (1)-(2) cannot see without a base is a record new in the window, or one
re-trained with its whole arm under new code: the rotation reaches it within ``PERIOD`` commits.
"""
import gzip
import json
import subprocess
from pathlib import Path

from . import files
from .keys import arm_key, numbers, sha, spec_id

__all__ = ["WINDOW", "PERIOD", "git_place", "commit_count", "bucket", "rotation", "flagged", "records_at"]

WINDOW, PERIOD = 100, 20


def _git(top, *args, text=True, stdin=None):
    return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=text, input=stdin,
                          check=True).stdout


def git_place(d):
    """``(repository root, path of d inside it)``, or None where ``d`` is not in a git work tree."""
    try:
        top = Path(_git(d, "rev-parse", "--show-toplevel").strip())
    except (OSError, subprocess.CalledProcessError):
        return None
    return top, Path(d).resolve().relative_to(top.resolve()).as_posix()


def commit_count(top):
    """The number of commits reachable from HEAD (0 outside git)."""
    try:
        return int(_git(top, "rev-list", "--count", "HEAD").strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 0


def bucket(rid, period=PERIOD):
    return int(sha(rid)[:8], 16) % period


def rotation(ids, count, period=PERIOD):
    """The records this commit re-trains by rotation: those whose bucket is ``count % period``."""
    return sorted(r for r in ids if bucket(r, period) == count % period)


def _blobs(top, refs):
    """The bytes of each ``commit:path`` in ``refs`` (None where missing), read in one git call."""
    if not refs:
        return {}
    out = _git(top, "cat-file", "--batch", text=False, stdin="".join(f"{r}\n" for r in refs).encode())
    got, i = {}, 0
    for ref in refs:
        j = out.index(b"\n", i)
        head = out[i:j].split()
        if head[-1] == b"missing":
            got[ref], i = None, j + 1
            continue
        size = int(head[2])
        got[ref] = out[j + 1:j + 1 + size]
        i = j + 1 + size + 1
    return got


def _json(blob):
    return None if blob is None else json.loads(gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob)


def _state(rec):
    """``(name, numbers, key, arm, numbers without the measurements)`` of a record as the current
    code names it."""
    return (spec_id(rec["spec"]), numbers(rec), (rec.get("code"), rec.get("arithmetic")), arm_key(rec["spec"]),
            numbers({**rec, "measurements": {}}))


def _records(top, rel, commit, manifest, rids):
    """The records ``rids`` at ``commit`` in the layout of ``files`` (a manifest, one file an arm)."""
    arms = sorted({manifest[r]["arm"] for r in rids if r in manifest})
    bodies = _blobs(top, [f"{commit}:{rel}/runs/{a}.json.gz" for a in arms])
    bodies = {a: _json(bodies[f"{commit}:{rel}/runs/{a}.json.gz"]) or {} for a in arms}
    return [files.join(r, bodies[manifest[r]["arm"]][r], manifest[r]) for r in rids
            if r in manifest and r in bodies[manifest[r]["arm"]]]


def records_at(top, rel, commit):
    """The records of the evidence directory ``rel`` at ``commit``: {name: record} (either layout)."""
    manifest = _json(_blobs(top, [f"{commit}:{rel}/{files.MANIFEST}"])[f"{commit}:{rel}/{files.MANIFEST}"])
    if manifest is not None:
        recs = _records(top, rel, commit, manifest, sorted(manifest))
    else:
        try:
            names = _git(top, "ls-tree", "--name-only", f"{commit}:{rel}/runs").split()
        except subprocess.CalledProcessError:
            return {}
        got = _blobs(top, [f"{commit}:{rel}/runs/{n}" for n in names if n.endswith(".json")])
        recs = [_json(b) for b in got.values() if b]
    return {spec_id(r["spec"]): r for r in recs}


def _changed(top, rel, commit, parent, changes):
    """``(before, after)``: the records a commit changed, as they were at its parent and at it (record
    files of the old layout, one JSON a run; or arm files and manifest lines of ``files``' layout)."""
    before, after = [], []
    runs = [(st, p) for st, p in changes if p.endswith(".json") and "/runs/" in p]
    refs = [f"{commit}:{p}" for st, p in runs if st != "D"] + [f"{parent}:{p}" for st, p in runs if parent and st != "A"]
    blobs = _blobs(top, refs)
    before += [_json(blobs[f"{parent}:{p}"]) for st, p in runs if parent and st != "A"]
    after += [_json(blobs[f"{commit}:{p}"]) for st, p in runs if st != "D"]
    if any(p.endswith(".json.gz") or p.endswith(files.MANIFEST) for _, p in changes):
        m = _blobs(top, [f"{c}:{rel}/{files.MANIFEST}" for c in (commit, parent) if c])
        now = _json(m.get(f"{commit}:{rel}/{files.MANIFEST}")) or {}
        then = _json(m.get(f"{parent}:{rel}/{files.MANIFEST}")) or {}
        arms = {p.rsplit("/", 1)[1][:-len(".json.gz")] for _, p in changes if p.endswith(".json.gz")}
        rids = sorted(r for r in set(now) | set(then) if now.get(r) != then.get(r)
                      or (now.get(r) or then.get(r))["arm"] in arms)
        before += _records(top, rel, parent, then, rids) if parent else []
        after += _records(top, rel, commit, now, rids)
    return [_state(r) for r in before if r], [_state(r) for r in after if r]


def flagged(recs, evidence_dir, base=None, window=WINDOW):
    """{record name: why} for the records of ``recs`` (as now, by name) that the history says to
    re-train in full (rules 1-3 of this module). Empty outside git."""
    place = git_place(evidence_dir)
    if place is None:
        return {}
    top, rel = place
    now = {rid: numbers(rec) for rid, rec in recs.items()}
    out = {}
    if base:
        then = {rid: numbers(r) for rid, r in records_at(top, rel, base).items()}
        out.update({rid: f"its numbers changed since {base[:12]}" if rid in then else f"new since {base[:12]}"
                    for rid in now if then.get(rid) != now[rid]})
        span = [f"{base}..HEAD"]
    else:
        span = ["-n", str(window), "HEAD"]
    log = _git(top, "log", "--format=@%H %P", "--name-status", "--no-renames", *span, "--", f"{rel}/runs",
               f"{rel}/{files.MANIFEST}")
    commits = []
    for line in log.splitlines():
        if line.startswith("@"):
            ids = line[1:].split()
            commits.append((ids[0], ids[1] if len(ids) > 1 else None, []))
        elif line.strip() and commits:
            status, path = line.split("\t", 1)
            commits[-1][2].append((status[0], path))
    for c, parent, ch in commits:
        before, after = _changed(top, rel, c, parent, ch)
        old = {name: (num, key, arm, bare) for name, num, key, arm, bare in before}
        rekeyed_arms = {arm for name, num, key, arm, _ in after if name in old and old[name][0] == num
                        and old[name][1] != key}
        for name, num, key, arm, bare in after:
            if name not in old or old[name][0] == num or name not in now:
                continue
            if old[name][1] == key:
                out.setdefault(name, f"its numbers changed in {c[:12]} while its key did not" if old[name][3] != bare
                               else f"its measurements changed (or were added) in {c[:12]} while its key did not")
            elif arm in rekeyed_arms:
                out.setdefault(name, f"its numbers changed in {c[:12]}, where the rest of its arm was re-keyed "
                                     "with the same numbers")
    return out
