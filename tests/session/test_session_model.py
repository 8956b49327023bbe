"""The session model's checks (tests/session/model_checks.py) run in a child Python that never imports Qt:
the state of the app (what is open, the selection, each run's plan and undo history) works without it."""
import json
import os
import subprocess
import sys

import pytest

from tests.api.doc_examples import ROOT
from tests.session import model_checks

CHECKS = sorted(name for name in vars(model_checks) if name.startswith("check_"))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-m", "tests.session.model_checks", str(tmp_path_factory.mktemp("runs"))],
                          cwd=ROOT, capture_output=True, text=True, env=environment, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("check", CHECKS)
def test_the_session_model(results, check):
    assert results[check] == "ok", results[check]


def test_qt_was_never_imported(results):
    assert results["qt_imported"] == []
