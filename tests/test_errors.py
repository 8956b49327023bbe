"""The one error family: every cause is an InspectorError whose message names where the problem is,
"not found" is also a KeyError (as in h5py), and the CLI turns any of them into one line and exit 2."""
import subprocess
import sys

import pytest

from checkpoint_inspector.core import errors
from checkpoint_inspector.core.errors import (AmbiguousNameError, CorruptCheckpointError, DecodeError, InspectorError, PlanError,
                         VariableNotFoundError)
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.format.wire.protowire import read_varint
from checkpoint_inspector.core.run.names import resolve_name
from tests.locations import MAIN, ROOT, SAMPLE_RUN


def _all_error_classes():
    return [value for value in vars(errors).values() if isinstance(value, type) and issubclass(value, Exception)]


def test_every_error_is_an_inspector_error():
    classes = _all_error_classes()
    assert len(classes) >= 15
    assert all(issubclass(cls, InspectorError) for cls in classes)


def test_messages_name_where_the_problem_is():
    assert str(PlanError("plan.json", "unknown operation 'x'")) == "plan.json: unknown operation 'x'"
    assert str(InspectorError(None, "just the problem")) == "just the problem"


def test_variable_not_found_is_a_key_error_with_an_unquoted_message():
    reader = CheckpointReader(SAMPLE_RUN / "ckpt-300")
    with pytest.raises(KeyError) as caught:
        reader.entry("no/such/variable")
    assert isinstance(caught.value, VariableNotFoundError)
    assert str(caught.value) == f"{reader.prefix}: no variable named 'no/such/variable' in this checkpoint"


def test_a_name_that_fits_several_variables_says_which():
    reader = CheckpointReader(SAMPLE_RUN / "ckpt-300")
    with pytest.raises(AmbiguousNameError, match="names several variables") as caught:
        resolve_name(reader, "kernel")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(VariableNotFoundError, match="no variable named 'nothing_like_this'"):
        resolve_name(reader, "nothing_like_this")


def test_wire_decoding_errors_are_corrupt_checkpoint_errors():
    with pytest.raises(CorruptCheckpointError) as caught:
        read_varint(b"\xff", 0)
    assert isinstance(caught.value, DecodeError) and caught.value.path is None


@pytest.mark.parametrize("arguments, expected", [
    (["list"], "the following arguments are required: path"),                     # UsageError
    (["show", str(SAMPLE_RUN), "nothing_like_this"], "no variable named"),       # VariableNotFoundError
    (["remap", str(SAMPLE_RUN), "/tmp/x", "--rename", "zzz=y"], "matches no variable"),   # PlanError
    (["remap", str(SAMPLE_RUN / "ckpt-300"), str(SAMPLE_RUN / "ckpt-300")], "that is the source"),  # DestinationError
    (["trajectory", str(SAMPLE_RUN), "kernel", "--metric", "l2"], "names several variables"),  # AmbiguousNameError
])
def test_the_cli_reports_every_cause_in_one_line(arguments, expected):
    result = subprocess.run([sys.executable, str(MAIN), *arguments], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
