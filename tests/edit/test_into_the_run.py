"""One rule for a copy inside the source's run, in the doors that have no one to ask: `ci.remap` raises
DestinationError and the CLI's `remap` exits 2 with one line, the run untouched, unless the caller says it is
meant (`inside_run=True`, `--into-run`); then the copy is written and TensorFlow reads it. The window asks
(tests/gui/edits/test_outputs_outside_the_run.py)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import checkpoint_inspector as ci
from tests.bounded_cli import run_cli
from tests.tf_fixtures import _tf


@pytest.fixture
def run(tf_ckpts, tmp_path):
    return shutil.copytree(tf_ckpts.tf1_run, tmp_path / "tf1_run")


def _snapshot(folder) -> dict:
    return {path.relative_to(folder): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("inside", ["renamed/model.ckpt", "model.ckpt-renamed"])
def test_a_copy_inside_the_run_is_refused_by_both_doors_unless_meant(run, inside):
    before = _snapshot(run)
    destination = run / inside
    with pytest.raises(ci.DestinationError, match="inside_run=True"):
        ci.remap(run, destination, rename={"^dense/": "layer/"})
    result = run_cli("remap", run, destination, "--rename", "^dense/=layer/", seconds=60)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert str(destination) in result.stderr and "--into-run" in result.stderr
    assert _snapshot(run) == before  # nothing written into the run, no folder made

    written = ci.remap(run, destination, rename={"^dense/": "layer/"}, inside_run=True)
    tf = _tf()
    kernel = tf.train.load_checkpoint(str(run / "model.ckpt-60")).get_tensor("dense/kernel")
    assert np.array_equal(tf.train.load_checkpoint(written).get_tensor("layer/kernel"), kernel)


def test_the_cli_writes_inside_the_run_when_told(run):
    destination = run / "fixed" / "model.ckpt"
    result = run_cli("remap", run, destination, "--rename", "^dense/=layer/", "--into-run", seconds=60)
    assert result.returncode == 0, result.stderr
    assert "layer/bias" in {name for name, _ in _tf().train.list_variables(str(destination))}


def test_the_source_itself_is_refused_as_the_source_whatever_is_said(run):
    with pytest.raises(ci.DestinationError, match="source checkpoint"):
        ci.remap(run, run / "model.ckpt-60", inside_run=True)


def test_convert_refuses_a_copy_inside_the_source_run_unless_told(tf_ckpts, tmp_path):
    run = shutil.copytree(tf_ckpts.keras_run, tmp_path / "keras_run")
    before = _snapshot(run)
    source = sorted(run.glob("*.keras"))[-1]
    result = run_cli("convert", source, run / "as_checkpoint" / "model", seconds=60)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--into-run" in result.stderr and str(run / "as_checkpoint" / "model") in result.stderr
    assert _snapshot(run) == before
