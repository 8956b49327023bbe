"""Damaged and hostile inputs: one minimised input per class of bug found (tests/fuzz/regressions, built by
make_regressions.py), each giving one error of our family that names the file and the problem; a
short fixed-seed fuzz pass over TensorFlow-written checkpoints (the long run is tests/fuzz/run.py);
and a closed pipe ending the CLI quietly."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import InspectorError
from core.run.discovery import discover
from core.run.variables import describe_variables
from tests.fuzz.harness import Fuzzer, seeds_from
from tests.fuzz.target import exercise
from tests.locations import MAIN, ROOT

REGRESSIONS = sorted((Path(__file__).parent / "regressions").iterdir())


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


def test_the_cli_reports_a_regression_input_in_one_line():
    result = subprocess.run([sys.executable, str(MAIN), "list", str(REGRESSIONS[0])], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "empty key" in result.stderr and "Traceback" not in result.stderr


def test_a_closed_pipe_ends_the_cli_quietly(tf_ckpts):
    process = subprocess.Popen([sys.executable, str(MAIN), "list", str(tf_ckpts.many_vars)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()  # `| head -1`
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(60) == 0 and stderr == ""


def test_a_short_fixed_seed_fuzz_pass_finds_nothing(tf_ckpts):
    results = Fuzzer(seeds_from(tf_ckpts), seed=20261201).run(inputs=3000)
    assert results.inputs == 3000
    assert results.bug_count == 0, results.report()
    assert results.outcomes["ok"] == 3000 and sum(results.errors.values()) > 1000  # the damage was seen
