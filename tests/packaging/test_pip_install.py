"""`pip install .` from a copy of the checkout into a new Python 3.11 venv, as a notebook user installs it:
the engine and the API only (no Qt, no TensorFlow, no top-level `core` or `gui`), the `checkpoint-inspector`
command answering as the checkout's CLI does, docs/api.md's examples running on TensorFlow-written runs;
then the [gui] extra, which gives the window (its --smoke-test, offscreen). CI's `.ci/run` runs this with
the rest of the suite (about a minute: the wheels come from pip's cache after the first time)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.doc_examples import example_blocks, run_example
from tests.api.example_runs import write_example_runs
from tests.locations import MAIN, ROOT

_NOT_SOURCES = shutil.ignore_patterns(".venv", ".git", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache",
                                      ".cache")  # the benchmarks' checkpoints (git-ignored)


def _pip(venv: Path, *arguments: str) -> None:
    result = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                             "--disable-pip-version-check", *arguments], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]


def _installed(venv: Path) -> set[str]:
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json",
                             "--disable-pip-version-check"], capture_output=True, text=True, check=True)
    return {package["name"].lower().replace("_", "-") for package in json.loads(listed.stdout)}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, example folder): the package pip-installed from a copy of the sources, and runs to open."""
    root = tmp_path_factory.mktemp("pip_install")
    source = root / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_NOT_SOURCES)  # the links under checkpoint_inspector/ kept
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _pip(venv, str(source))
    return venv, source, write_example_runs(root / "examples")


def test_the_engine_installs_without_qt_or_tensorflow(installed):
    venv, _, _ = installed
    packages = _installed(venv)
    assert "checkpoint-inspector" in packages and {"numpy", "h5py", "pandas"} <= packages
    assert not packages & {"pyside6", "pyside6-essentials", "shiboken6", "pyqtgraph", "tensorflow", "tensorflow-cpu",
                           "keras", "tensorboard"}


@pytest.mark.parametrize("generic", ["core", "gui", "tests", "main"])
def test_no_generic_top_level_module_is_installed(installed, generic):
    venv, _, _ = installed
    result = subprocess.run([str(venv / "bin" / "python"), "-c", f"import {generic}"], capture_output=True,
                            text=True, cwd=venv)
    assert result.returncode != 0 and f"No module named '{generic}'" in result.stderr


def test_the_command_answers_as_the_checkouts_cli(installed):
    venv, _, examples = installed
    run = examples / "runs" / "keras_adam"
    command = subprocess.run([str(venv / "bin" / "checkpoint-inspector"), "list", str(run), "--json"],
                             capture_output=True, text=True)
    checkout = subprocess.run([sys.executable, str(MAIN), "list", str(run), "--json"], capture_output=True, text=True)
    assert command.returncode == 0, command.stderr
    assert json.loads(command.stdout) == json.loads(checkout.stdout)


def test_without_the_gui_extra_the_window_says_which_extra_to_install(installed):
    venv, _, examples = installed
    for program in ("checkpoint-inspector", "checkpoint-inspector-window"):
        result = subprocess.run([str(venv / "bin" / program), str(examples / "runs" / "keras_adam")],
                                capture_output=True, text=True)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            "checkpoint-inspector: the window needs the [gui] extra (PySide6, pyqtgraph): "
            "pip install 'checkpoint-inspector[gui]' (in a clone of the repository: pip install '.[gui]', "
            "or start the window with ./run-app)"]


@pytest.mark.parametrize("number", range(len(example_blocks())))
def test_the_api_examples_run_from_the_installed_package(installed, number):
    venv, _, examples = installed
    result = run_example(example_blocks()[number], str(venv / "bin" / "python"), examples, checkout=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gui_extra_gives_the_window(installed):
    venv, source, examples = installed
    _pip(venv, f"{source}[gui]")
    assert {"pyside6-essentials", "pyqtgraph"} <= _installed(venv)
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    smoke = subprocess.run([str(venv / "bin" / "checkpoint-inspector"), "--smoke-test",
                            str(examples / "runs" / "keras_adam")], capture_output=True, text=True, env=environment,
                           timeout=300, cwd=venv)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.startswith("smoke test: ")
    sample = subprocess.run([str(venv / "bin" / "checkpoint-inspector"), "--smoke-test"], capture_output=True,
                            text=True, env=environment, timeout=300, cwd=venv)
    assert sample.returncode == 0 and "sample_run" in sample.stdout, sample.stdout + sample.stderr  # resources installed
