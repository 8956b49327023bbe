"""The `checkpoint` state file parser: quoting, escapes, timestamps, stale absolute paths."""
import os

import pytest

from core.format.checkpoint_state import read_state_file, resolve
from core.errors import CorruptCheckpointError


def test_fields_escapes_and_timestamps(tmp_path):
    state_file = tmp_path / "checkpoint"
    state_file.write_text(
        'model_checkpoint_path: "ckpt-3"\n'
        'all_model_checkpoint_paths: "ckpt-2"\n'
        'all_model_checkpoint_paths: "ckpt-3"\n'
        'all_model_checkpoint_timestamps: 1700000000.5\n'
        'all_model_checkpoint_timestamps: 1700000100.25\n'
        'last_preserved_timestamp: 1699999999.0\n'
        'all_model_checkpoint_paths: "we\\"ird \\303\\251"\n')
    state = read_state_file(str(state_file))
    assert state.latest == "ckpt-3"
    assert state.all_paths == ["ckpt-2", "ckpt-3", 'we"ird é']
    assert state.timestamp_of("ckpt-3") == 1700000100.25
    assert state.last_preserved_timestamp == 1699999999.0


def test_not_a_state_file(tmp_path):
    state_file = tmp_path / "checkpoint"
    state_file.write_bytes(b"\x00\x01binary")
    with pytest.raises(CorruptCheckpointError, match="checkpoint"):
        read_state_file(str(state_file))
    state_file.write_text("this is not a proto\n")
    with pytest.raises(CorruptCheckpointError, match="line 1"):
        read_state_file(str(state_file))


def test_resolve_relative_absolute_and_stale(tmp_path):
    (tmp_path / "m-1.index").write_bytes(b"")
    assert resolve("m-1", str(tmp_path)) == str(tmp_path / "m-1")
    assert resolve(str(tmp_path / "m-1"), "/elsewhere") == str(tmp_path / "m-1")
    assert resolve("/home/someone/old/m-1", str(tmp_path)) == os.path.join(str(tmp_path), "m-1")
