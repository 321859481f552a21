"""Tests of toy.progress: where a bar shows (a terminal, a notebook a person runs) and where it
never does (pytest, a notebook executed by nbclient: the committed outputs and nbval), and that
it is removed at the end; and of toy.parallel.starmap's ``poll``."""
import types

import nbformat
import pytest
from nbclient import NotebookClient

from toy import parallel, progress


class _Kernel:
    def __init__(self, allow_stdin):
        self._allow_stdin = allow_stdin


def _fake_ipython(monkeypatch, kernel):
    import IPython
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=kernel))


def test_where_a_bar_shows(monkeypatch):
    monkeypatch.delenv("TOY_PROGRESS", raising=False)
    assert progress.where() is None                         # pytest: stderr is not a terminal
    monkeypatch.setenv("TOY_PROGRESS", "1")
    assert progress.where() == "terminal"
    monkeypatch.setenv("TOY_PROGRESS", "0")
    _fake_ipython(monkeypatch, _Kernel(True))
    assert progress.where() is None                         # off, even for a person
    monkeypatch.delenv("TOY_PROGRESS")
    assert progress.where() == "jupyter"                    # a front end that accepts input()
    _fake_ipython(monkeypatch, _Kernel(False))
    assert progress.where() is None                         # nbclient, nbval


def test_terminal_bar_is_drawn_then_erased(monkeypatch, capsys):
    monkeypatch.setenv("TOY_PROGRESS", "1")
    with progress.Progress(4, "work", "steps", after=0, every=0) as bar:
        bar.update(2)
        assert "work: 2 / 4 steps (50 %)" in capsys.readouterr().err
        bar.update(5)                                       # capped at the total
        assert bar.done == 4
    err = capsys.readouterr().err
    assert err.endswith("\r\033[K")                         # erased at the end
    assert capsys.readouterr().out == ""


def test_no_bar_and_no_output_where_nothing_shows(monkeypatch, capsys):
    monkeypatch.delenv("TOY_PROGRESS", raising=False)
    with progress.Progress(3, after=0, every=0) as bar:
        for _ in range(3):
            bar.update()
    assert capsys.readouterr() == ("", "")


def test_jupyter_bar_is_one_display_updated_then_emptied(monkeypatch):
    monkeypatch.delenv("TOY_PROGRESS", raising=False)
    _fake_ipython(monkeypatch, _Kernel(True))
    shown = []

    class Handle:
        def update(self, bundle, raw=False):
            shown.append(("update", bundle["text/plain"]))

    import IPython.display
    monkeypatch.setattr(IPython.display, "display",
                        lambda bundle, raw=False, display_id=False: shown.append(("display", bundle["text/plain"])) or Handle())
    with progress.Progress(3, "run", after=0, every=0) as bar:
        for _ in range(3):
            bar.update()
    assert [k for k, _ in shown] == ["display", "update", "update", "update"]
    assert shown[0][1].startswith("run: 1 / 3") and shown[-1] == ("update", "")


def test_a_notebook_executed_by_nbclient_records_no_bar():
    """What ``jupyter nbconvert --execute``, nbval and jupyter-book run: the cell's outputs are
    those of the cell alone (the committed outputs and nbval's comparison are unaffected)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from toy.progress import Progress\n"
        "with Progress(50, 'training', after=0, every=0) as bar:\n"
        "    for _ in range(50):\n"
        "        bar.update()\n"
        "print('done')")]
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in outputs] == [("stream", "stdout", "done\n")]


def test_starmap_polls_while_it_waits():
    calls = []
    assert parallel.starmap(pow, [(2, 3), (3, 2)], 2, poll=lambda: calls.append(1)) == [8, 9]
    assert calls                                            # at least once, at the end
    calls.clear()
    assert parallel.starmap(pow, [(2, 3)], 2, poll=lambda: calls.append(1)) == [8]
    assert calls == [1]
    with pytest.raises(ValueError, match="^poll"):
        parallel.starmap(pow, [(2, 3)], 2, poll=3)
