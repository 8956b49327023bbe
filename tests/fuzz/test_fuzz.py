"""Damaged and hostile inputs: one minimised input per class of bug found (tests/fuzz/regressions, built by
make_regressions.py), each giving one error of our family that names the file and the problem; short
fixed-seed fuzz passes (the long run is tests/fuzz/run.py): the engine's read path over TensorFlow-written
checkpoints, and the CLI's commands over checkpoints and graphs, over Keras files (HDF5 structure and
attributes, h5py-written lies, zip members and their DEFLATE/LZMA streams) and over event files
(framing, fields, purges, checked against TensorBoard's reader); and a closed pipe ending the CLI quietly.
Issue 47's cases are replayed by their call through the Python API and the CLI (tests/fuzz/replay.py):
one error of the family naming the damaged file from each, and no descriptor or mapping left open."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import checkpoint_inspector.core.errors as error_family
from checkpoint_inspector.launcher import main as door
from tests.fuzz import replay
from tests.bounded_cli import run_cli

from checkpoint_inspector.core.errors import InspectorError
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables
from tests.fuzz.harness import Fuzzer, seeds_from
from tests.fuzz.seeds import seeds_for
from tests.fuzz.target import exercise
from tests.locations import MAIN, ROOT

REGRESSIONS = sorted((Path(__file__).parent / "regressions").iterdir())
REPLAYED = [f for f in REGRESSIONS if "call" in replay.load(f)]  # issue 47's: a call through both doors
REGRESSIONS = [f for f in REGRESSIONS if f not in REPLAYED]
# The classes of issue 47's fuzz round that escaped the family (the looping `*.index` is tests/run's).
ISSUE_47_CLASSES = {"47:IndexError", "47:ValueError", "47:NotImplementedError", "47:OSError-remap",
                    "47:FileNotFoundError-remap", "47:ELOOP", "47:EIO"}
ENGINE_INPUTS = 1000  # the engine pass over TF checkpoints: a few hundredths of a second each
# (readers, inputs) of each short CLI pass: a few tenths of a second per Keras input, less for the rest.
CLI_PASSES = {"checkpoints_and_graphs": (("v2", "v1", "state", "graph_meta", "saved_model"), 60),
              "keras": (("keras_archive", "keras_weights", "keras_legacy_h5"), 80),
              "events": (("events",), 120)}


def messages(folder: Path) -> list[str]:
    """Every error and warning a person would see opening the folder and reading each tensor."""
    found = []
    try:
        run = discover(folder)
    except InspectorError as exc:
        return [str(exc)]
    for each in run.all_runs():
        found += each.warnings
        for info in each.checkpoints:
            try:
                reader = info.open_reader()
            except InspectorError as exc:
                found.append(str(exc))
                continue
            describe_variables(reader)
            found += reader.warnings
            for name in reader.names():
                try:
                    reader.read(name)
                except InspectorError as exc:
                    found.append(str(exc))
    return found


@pytest.mark.parametrize("folder", REGRESSIONS, ids=[f.name for f in REGRESSIONS])
def test_each_class_of_damage_gives_one_clear_error(folder):
    case = json.loads((folder / "case.json").read_text())
    exercise(str(folder))  # nothing outside our family escapes, whatever the app does with it
    seen = messages(folder)
    matching = [m for m in seen if re.search(case["expect"], m)]
    assert matching, f"{case['about']}: expected /{case['expect']}/ among {seen}"
    assert all(str(folder) in m for m in matching), "the message names the file"


def test_every_class_of_the_issue_has_a_regression_input():
    classes = {json.loads((f / "case.json").read_text())["class"] for f in REGRESSIONS}
    assert classes == {1, 2, 3, 4, 5, 6, 7}  # class 8, the closed pipe, is the test below
    assert {replay.load(f)["class"] for f in REPLAYED} == ISSUE_47_CLASSES


@pytest.mark.parametrize("folder", REPLAYED, ids=[f.name for f in REPLAYED])
def test_each_replayed_case_is_one_named_error_from_both_doors(folder, tmp_path, capsys):
    case = replay.load(folder)
    copy = replay.prepare(folder, tmp_path / folder.name)
    named = str(copy / case["names"])
    with pytest.raises(getattr(error_family, case["error"])) as raised:
        replay.api_call(case, copy)
    assert re.search(case["expect"], str(raised.value)), f"{case['about']}: {raised.value}"
    assert str(raised.value).startswith(named + ":"), "the message names the damaged file first"
    assert replay.open_files(copy) == set(), "left open after the error"
    capsys.readouterr()
    assert door(replay.cli_argv(case, copy)) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"error: {named}:") and err.count("\n") == 1 and re.search(case["expect"], err), err
    assert replay.open_files(copy) == set(), "left open after the CLI's error"
    assert not replay.output_folder(copy).exists(), "a failed remap leaves no folder behind"


def test_the_cli_reports_a_regression_input_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(MAIN), "list", str(REGRESSIONS[0])], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "empty key" in result.stderr and "Traceback" not in result.stderr
    # An index that reads as EIO, in a process of its own (its /proc/self/mem): the line names the index.
    eio = next(f for f in REPLAYED if f.name == "47_index_eio")
    copy = replay.prepare(eio, tmp_path / eio.name)
    result = run_cli(*replay.cli_argv(replay.load(eio), copy))
    assert result.returncode == 2 and result.stderr == f"error: {copy / 'plain.index'}: cannot be read: " \
                                                      f"Input/output error\n", result.stderr


def test_a_closed_pipe_ends_the_cli_quietly(tf_ckpts):
    process = subprocess.Popen([sys.executable, str(MAIN), "list", str(tf_ckpts.many_vars)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()  # `| head -1`
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(60) == 0 and stderr == ""


def test_a_short_fixed_seed_fuzz_pass_finds_nothing(tf_ckpts):
    results = Fuzzer(seeds_from(tf_ckpts), seed=20261201, cli=False).run(inputs=ENGINE_INPUTS)
    assert results.inputs == ENGINE_INPUTS
    assert results.bug_count == 0, results.report()
    seen = results.outcomes["ok"] + results.outcomes["clean-error"]
    assert seen == ENGINE_INPUTS and sum(results.errors.values()) > ENGINE_INPUTS / 3  # the damage was seen


@pytest.fixture(scope="module")
def fuzz_seeds(tf_ckpts, tmp_path_factory):
    """Every reader's seeds (event files written here by TensorFlow, .keras re-zipped DEFLATE and LZMA)."""
    return seeds_for(tf_ckpts, tmp_path_factory.mktemp("fuzz_seeds"))


@pytest.mark.parametrize("group", list(CLI_PASSES))
def test_a_short_fixed_seed_cli_pass_finds_nothing(fuzz_seeds, group):
    readers, inputs = CLI_PASSES[group]
    seeds = [s for s in fuzz_seeds if s.reader in readers]
    assert {s.reader for s in seeds} == set(readers)
    results = Fuzzer(seeds, seed=20261202, api=False, baseline_rounds=1).run(inputs=inputs)
    assert results.inputs == inputs
    assert results.bug_count == 0, results.report()
    # The damage was seen (a command refused the input or warned) and yet many inputs were read.
    assert results.signals["clean-error"] + results.signals["warned"] > inputs / 5, results.report()
    assert results.outcomes["ok"] > inputs / 10, results.report()
