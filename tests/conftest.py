"""Fixtures shared by the whole test suite."""

import sys
from pathlib import Path

# Tests import the application (``import core``) and the fixture writers
# (``tests.tf_fixtures``) straight from the checkout, which is not installed.
REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import pytest  # noqa: E402  (after the path set-up above, like the imports below)

from tests.tf_fixtures import Fixtures, write_all  # noqa: E402


@pytest.fixture(scope="session")
def tf_ckpts(tmp_path_factory: pytest.TempPathFactory) -> Fixtures:
    """Checkpoints written by TensorFlow itself, once per session (a few seconds)."""
    return write_all(tmp_path_factory.mktemp("tf_ckpts"))
