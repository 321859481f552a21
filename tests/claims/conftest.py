"""Claims mode (``scripts/claims.py``) runs only when asked: ``make claims``, or ``make nbval`` on
a machine off the reference arithmetic. ``make unit`` (``pytest tests``) skips this folder."""
import os

if not os.environ.get("RL_BY_HAND_CLAIMS"):
    collect_ignore_glob = ["test_*.py"]


# make claims: the result, for the evidence record it checked, in $CLAIMS_RESULT (evidence/claims.json)
_RESULTS, _DIGESTS = {}, {}


def pytest_runtest_logreport(report):
    if os.environ.get("CLAIMS_RESULT") and report.when == "call":
        nb = report.nodeid.split("[", 1)[-1].rstrip("]")
        _RESULTS[nb] = "passed" if report.passed else "failed: " + str(report.longrepr).strip().splitlines()[-1][:300]
        _DIGESTS[nb] = dict(report.user_properties).get("digest")


def pytest_sessionfinish(session, exitstatus):
    """Write $CLAIMS_RESULT: per notebook its result and the digest of the committed notebook it was
    checked against. A run of some notebooks (``make claims NB="..."``) updates their entries in a
    result for the same arithmetic (the claims are checked on every run trained afresh, so what a
    notebook's entry depends on is its digest, not the record: ``make evidence`` re-checks only the
    notebooks whose code or outputs changed); ``passed`` needs every notebook of the book, passed."""
    path = os.environ.get("CLAIMS_RESULT")
    if not path or hasattr(session.config, "workerinput"):          # the controller writes, once
        return
    import json
    import subprocess
    import sys
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "scripts"))
    import claims
    # the arithmetic the notebooks ran on (a fresh process with this environment: numpy's settings
    # act only before it is imported) and the record's version
    probe = subprocess.run([sys.executable, "-c", "from toy.machine import fingerprint; from toy.record import "
                            "evidence; print(fingerprint()); print(evidence.version())"],
                           capture_output=True, text=True, check=True, cwd=root).stdout.split("\n")
    target = root / path
    try:
        before = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = {}
    same = before.get("arithmetic") == probe[0]
    book = {str(p.relative_to(root)) for p in root.glob("notebooks/part*/*.ipynb")}
    notebooks = {k: v for k, v in before.get("notebooks", {}).items()                # a notebook no longer
                 if isinstance(v, dict) and k in book} if same else {}              # in the book is dropped
    notebooks.update({nb: {"result": r, "digest": _DIGESTS.get(nb)} for nb, r in _RESULTS.items()})
    result = {"evidence": probe[1], "arithmetic": probe[0], "notebooks": dict(sorted(notebooks.items())),
              "passed": exitstatus == 0 and set(notebooks) >= book
              and all(v["result"] == "passed" for v in notebooks.values())}
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, target)
