"""The `checkpoint` state file parser: quoting, escapes, timestamps, stale absolute paths."""
import os

import pytest

from checkpoint_inspector.core.format.checkpoint_state import read_state_file, resolve
from checkpoint_inspector.core.errors import CorruptCheckpointError


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
    # An absolute path names the folder the run was trained in: its checkpoint here is the one of that name,
    # wherever the old one is (here it still exists: the original of a copy, never looked at).
    assert resolve(str(tmp_path / "m-1"), "/elsewhere") == "/elsewhere/m-1"
    assert resolve(str(tmp_path / "m-1"), str(tmp_path)) == str(tmp_path / "m-1")
    assert resolve("/home/someone/old/m-1", str(tmp_path)) == os.path.join(str(tmp_path), "m-1")


def test_a_save_time_no_clock_can_show_is_no_time(tmp_path, tf_ckpts):
    """TensorFlow's text format reads `1e999999` as infinity: `steps` shows the file's own time for it,
    and `--json` stays JSON (the fuzzer found an OverflowError here)."""
    import json
    import shutil

    from tests.bounded_cli import run_cli

    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    state = read_state_file(str(run / "checkpoint"))
    lines = [f'model_checkpoint_path: "{state.latest}"']
    for raw, stamp in zip(state.all_paths, ("1e999999", "-1e999999", "1e300")):
        lines += [f'all_model_checkpoint_paths: "{raw}"', f"all_model_checkpoint_timestamps: {stamp}"]
    (run / "checkpoint").write_text("\n".join(lines) + "\n")
    reread = read_state_file(str(run / "checkpoint"))
    assert [reread.timestamp_of(raw) for raw in reread.all_paths[:3]] == [None, None, None]
    result = run_cli("steps", run)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    result = run_cli("steps", run, "--json")
    assert result.returncode == 0 and json.loads(result.stdout), result.stderr


def test_the_long_runs_fast_lines_refuse_what_the_general_parse_refuses(tmp_path):
    """A path line that is one quote is no quoted path, however it is spaced; a plain line equals what the
    general parse gives the same line written with an escape."""
    state_file = tmp_path / "checkpoint"
    for line in ('all_model_checkpoint_paths: "', 'all_model_checkpoint_paths:  "'):
        state_file.write_text(f'model_checkpoint_path: "a"\n{line}\n')
        with pytest.raises(CorruptCheckpointError, match="line 2: expected a quoted path"):
            read_state_file(str(state_file))
    state_file.write_text('all_model_checkpoint_paths: "ckpt-1"\nall_model_checkpoint_paths: "ckpt\\055 1"\n'
                          'all_model_checkpoint_paths: "é"\nall_model_checkpoint_paths: "\\303\\251"\n')
    paths = read_state_file(str(state_file)).all_paths
    assert paths == ["ckpt-1", "ckpt- 1", "é", "é"]
