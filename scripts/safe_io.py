"""Reading and writing notebooks without losing anything.

- :func:`read_notebook`: a file that is not a notebook (invalid JSON, no cells, unreadable)
  raises :class:`NotebookError` whose message is one line naming the file.
- :func:`write_text`: atomic: the text goes to a temporary file in the same folder, which then
  replaces the target with ``os.replace``. On a full disk (or a file size limit) the write fails
  and the old file is left exactly as it was; no half-written file is ever at the target path.
"""
import json
import os
import pathlib
import tempfile


class NotebookError(Exception):
    """A notebook that cannot be read; the message is one line that names the file."""


def read_notebook(path):
    """The notebook at ``path`` as a dict (its JSON), or a one-line :class:`NotebookError`."""
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise NotebookError(f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    if not text.strip():
        raise NotebookError(f"{path}: not a notebook (the file is empty)")
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as e:
        raise NotebookError(f"{path}: not a notebook (invalid JSON at line {e.lineno}, "
                            f"column {e.colno}: {e.msg})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or not all(
            isinstance(c, dict) and "cell_type" in c and "source" in c for c in nb["cells"]):
        raise NotebookError(f"{path}: not a notebook (no list of cells with cell_type and source)")
    return nb


def write_text(path, text):
    """Write ``text`` (UTF-8) to ``path`` atomically: see :func:`write_bytes`."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path, data):
    """Write ``data`` to ``path`` atomically (temp file in the same folder + ``os.replace``),
    keeping the mode of the file it replaces (0644 for a new file)."""
    path = pathlib.Path(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not e.filename:               # name the file the reader asked for
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise


def notebook_text(nb):
    """The JSON text a notebook is saved as (nbformat's layout: indent 1, UTF-8, final newline)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
