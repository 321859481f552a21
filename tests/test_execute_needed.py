"""scripts/execute_needed.py (`make book`) and scripts/safe_io.py: nothing a reader made is lost.

- a notebook a reader edited and did not run is named and left byte for byte as it was;
- a file that is not a notebook gets one line naming it (no traceback);
- ``--inplace`` (the explicit request) keeps the old file as a .bak, and on a full disk (a file
  size limit, ``ulimit -f``) leaves the notebook exactly as it was: no half-written JSON.
"""
import json
import resource
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import execute_needed  # noqa: E402
import safe_io  # noqa: E402

BIG = "x" * 150_000          # a markdown cell that makes the notebook ~150 kB


def _notebook(path, run=True, big=False):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(BIG if big else "# a page"),
                nbformat.v4.new_code_cell("x = 6 * 7\nx"),
                nbformat.v4.new_code_cell("print('mine')")]
    if run:
        for i, c in enumerate(nb.cells[1:], 1):
            c.execution_count = i
        nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "42"}, execution_count=1)]
        nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="my own output\n")]
    nbformat.write(nb, path)
    return path


def _run(args, cwd, fsize=None):
    """Run a script in a subprocess, with a file size limit of ``fsize`` bytes (ulimit -f)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit if fsize else None)


def test_an_edited_notebook_is_named_and_left_as_it_is(tmp_path, capsys):
    """A reader adds a cell and does not run it: `make book` stops, names it, and changes nothing."""
    path = _notebook(tmp_path / "s01_mine.ipynb")
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("y = x + 1"))          # the edit, never run
    nbformat.write(nb, path)
    before = path.read_bytes()
    assert execute_needed.main([str(path)]) == 1
    out = capsys.readouterr().out
    assert f"STOP  {path}: 1 code cell(s) never run (code cells [2])" in out
    assert "--inplace" in out
    assert path.read_bytes() == before                                # every output kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s01_mine.ipynb"]


def test_executed_notebooks_pass_and_are_not_touched(tmp_path, capsys):
    path = _notebook(tmp_path / "a.ipynb")
    before = path.read_bytes()
    assert execute_needed.main([str(path)]) == 0
    assert path.read_bytes() == before


BROKEN = [('{"cells": [', "invalid JSON at line 1"), ("", "the file is empty"), ("[1, 2]", "no list of cells"),
          ('{"cells": [{"source": "x"}]}', "no list of cells"), (b"\xff\xfe{", "cannot read it")]


@pytest.mark.parametrize("script, text, why", [(s, t, w) for s in ("execute_needed.py", "student_edition.py")
                                               for t, w in BROKEN] + [
    ("execute_needed.py", '{"cells": [], "nbformat": "four"}', "nbformat can read")])
def test_a_broken_notebook_gets_one_line_naming_the_file(tmp_path, text, why, script):
    (tmp_path / "nb").mkdir()
    bad = tmp_path / "nb" / "s02_broken.ipynb"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    args = [str(bad)] if script == "execute_needed.py" else [str(tmp_path / "nb"), str(tmp_path / "out")]
    r = _run([str(SCRIPTS / script), *args], cwd=ROOT)
    assert r.returncode == 1
    lines = (r.stdout + r.stderr).strip().splitlines()
    assert "Traceback" not in r.stderr
    error = [ln for ln in lines if str(bad) in ln]
    assert len(error) == 1 and why in error[0], lines
    assert bad.read_bytes() == (text if isinstance(text, bytes) else text.encode())


def test_write_text_is_atomic_on_a_full_disk(tmp_path):
    """With a 64 kB file size limit, rewriting a 150 kB file fails and leaves it intact."""
    target = tmp_path / "nb.ipynb"
    target.write_text("old " * 40_000)                               # 160 kB, written before the limit
    code = (f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); import safe_io\n"
            f"safe_io.write_text({str(target)!r}, 'new ' * 40_000)")
    r = _run(["-c", code], cwd=tmp_path, fsize=64 * 1024)
    assert r.returncode != 0 and "File too large" in r.stderr
    assert target.read_text() == "old " * 40_000
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]       # no temp file left behind
    safe_io.write_text(target, "new")                                # and without the limit it writes
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_inplace_execution_keeps_a_backup_and_loses_nothing_on_a_full_disk(tmp_path):
    path = _notebook(tmp_path / "s03_big.ipynb", run=False, big=True)   # ~150 kB, never run
    before = path.read_bytes()
    r = _run([str(SCRIPTS / "execute_needed.py"), "--inplace", str(path)], cwd=ROOT, fsize=64 * 1024)
    assert r.returncode == 1 and "the notebook is unchanged" in r.stdout, r.stdout + r.stderr
    assert path.read_bytes() == before
    json.loads(path.read_text())                                      # still valid JSON
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    # with room on the disk it runs, and the old file is kept as a .bak
    r = _run([str(SCRIPTS / "execute_needed.py"), "--inplace", str(path)], cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[1].outputs[0]["data"]["text/plain"] == "42"
    backups = list(tmp_path.glob("s03_big.ipynb.*.bak"))
    assert len(backups) == 1 and backups[0].read_bytes() == before


def test_a_cell_that_times_out_is_that_notebooks_error_and_recording_has_no_timeout(tmp_path, monkeypatch):
    """A cell past its time is reported on the notebook's line, the notebook left as it was (no
    traceback that stops the other notebooks); and ``make evidence`` (``RL_BY_HAND_EVIDENCE=record``),
    whose cells train every run the record does not hold yet, gives its cells no time limit."""
    monkeypatch.delenv("RL_BY_HAND_EVIDENCE", raising=False)
    assert execute_needed.cell_timeout() == 600
    monkeypatch.setenv("RL_BY_HAND_EVIDENCE", "record")
    assert execute_needed.cell_timeout() is None
    path = _notebook(tmp_path / "slow.ipynb", run=False)
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = "import time\ntime.sleep(30)"
    nbformat.write(nb, path)
    before = path.read_bytes()
    monkeypatch.setattr(execute_needed, "cell_timeout", lambda: 2)
    name, seconds, err = execute_needed.execute(path)
    assert name == str(path) and err and "timed out" in err and seconds < 25
    assert path.read_bytes() == before
