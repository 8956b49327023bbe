"""docs/api.md's examples as programs: each ```python block of the page, run in a fresh interpreter from a
folder of runs (tests.api.example_runs). The suite runs them with the checkout (test_doc_examples) and with
a package installed by pip into a new venv (tests/packaging/test_pip_install.py); by hand:
`python -m tests.api.doc_examples PYTHON FOLDER`."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.locations import ROOT

API_PAGE = ROOT / "docs" / "api.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def example_blocks(page: Path = API_PAGE) -> list[str]:
    """The page's Python examples, in order."""
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


def run_example(code: str, python: str, folder: Path, checkout: bool) -> subprocess.CompletedProcess:
    """One example run by `python` in `folder`; with `checkout`, importing the package from this checkout
    (an installed package needs nothing on PYTHONPATH)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if checkout:
        environment["PYTHONPATH"] = str(ROOT)
    return subprocess.run([python, "-c", code], cwd=folder, capture_output=True, text=True, env=environment,
                          timeout=300)


if __name__ == "__main__":
    failed = 0
    for number, block in enumerate(example_blocks(), 1):
        result = run_example(block, sys.argv[1], Path(sys.argv[2]), checkout=False)
        print(f"--- example {number}: exit {result.returncode}\n{result.stdout}{result.stderr}")
        failed += result.returncode != 0
    sys.exit(1 if failed else 0)
