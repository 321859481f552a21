"""Install the book's reference arithmetic into the running virtual environment (``make setup``).

Copies ``toy/_reference.py`` into the environment's site-packages as ``_rl_by_hand_reference.py``
and writes ``rl_by_hand_reference.pth``, whose one ``import`` line Python runs at the start of
every process of the environment, before numpy can be imported. See ``toy/_reference.py`` for
what it sets and where (only Linux x86-64 with glibc, AVX2 and FMA; never over a value the user
set). Both files are written atomically; running it again replaces them with the current copy.

    .venv/bin/python scripts/install_reference.py
"""
import pathlib
import sys
import sysconfig

import safe_io

ROOT = pathlib.Path(__file__).resolve().parent.parent
PTH_LINE = "import _rl_by_hand_reference; _rl_by_hand_reference.apply()\n"


def main():
    if sys.prefix == sys.base_prefix:
        sys.exit("install_reference.py: run it with the virtual environment's python (.venv/bin/python)")
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    safe_io.write_text(site / "_rl_by_hand_reference.py", (ROOT / "toy" / "_reference.py").read_text(encoding="utf-8"))
    safe_io.write_text(site / "rl_by_hand_reference.pth", PTH_LINE)
    print(f"reference arithmetic: installed in {site}")


if __name__ == "__main__":
    main()
