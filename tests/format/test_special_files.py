"""A named pipe, a socket, a device or a folder where a checkpoint file belongs (issue 29, item 3) is
refused at once, naming what it is, by every command: the check is where every local file is opened
(core.storage.files), so no reader can forget it. A pipe's open() would wait for a writer for ever, and
its read() for bytes.

Checkpoints are written by TensorFlow; the special file takes the place of one of their files."""
from __future__ import annotations

import os
import shutil
import socket

import pytest

from checkpoint_inspector.core.errors import NotACheckpointError
from checkpoint_inspector.core.storage import files
from tests.bounded_cli import assert_one_error, run_cli
from tests.tf_fixtures import _tf

VARIABLE = "v/.ATTRIBUTES/VARIABLE_VALUE"
DATA = "ckpt-10.data-00000-of-00001"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    """A TF2 run of one checkpoint at step 10, written by TensorFlow."""
    tf = _tf()
    folder = tmp_path_factory.mktemp("genuine")
    checkpoint = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0, 3.0]), w=tf.Variable([[1, 2], [3, 4]]))
    checkpoint.write(str(folder / "ckpt-10"))
    return folder


def _with(genuine, tmp_path, name: str, make) -> os.PathLike:
    """A copy of the genuine run with its file `name` replaced by what `make(path)` puts there."""
    run = tmp_path / "run"
    shutil.copytree(genuine, run)
    os.unlink(run / name)
    make(run / name)
    return run


def _socket(path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))  # the file stays after the socket closes: a socket file nobody listens on
    server.close()


@pytest.mark.parametrize("command", [
    ("show", "{prefix}", VARIABLE), ("export", "{prefix}", "{out}/all.npz"), ("diff", "{prefix}", "{good}", "--values"),
    ("list", "{prefix}"), ("list", "{run}"), ("list", "{run}/ckpt-10.index"),
    ("overview", "{run}", "--metric", "l2"), ("trajectory", "{run}", VARIABLE, "--metric", "l2")])
def test_a_data_file_that_is_a_named_pipe_is_refused_by_every_command(genuine, tmp_path, command):
    run = _with(genuine, tmp_path, DATA, os.mkfifo)
    out = tmp_path / "out"
    out.mkdir()
    args = [part.format(prefix=run / "ckpt-10", run=run, out=out, good=genuine / "ckpt-10") for part in command]
    result = run_cli(*args)
    if command[0] in ("show", "export", "diff"):  # the values are the answer: without them, one error
        assert_one_error(result, run / DATA, "is a named pipe (FIFO), not a regular file")
        assert not (out / "all.npz").exists()
    else:  # the names come from the index: listed (or a metric's gap shown), the pipe named as the cause
        said = result.stdout + result.stderr
        assert result.returncode in (0, 2) and "is a named pipe (FIFO), not a regular file" in said, said[-3000:]
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [("list", "{prefix}"), ("list", "{run}/" + DATA), ("show", "{prefix}", VARIABLE),
                                     ("diff", "{good}", "{prefix}")])
def test_an_index_that_is_a_named_pipe_is_refused_beside_its_genuine_data(genuine, tmp_path, command):
    run = _with(genuine, tmp_path, "ckpt-10.index", os.mkfifo)
    args = [part.format(prefix=run / "ckpt-10", run=run, out=tmp_path, good=genuine / "ckpt-10") for part in command]
    assert_one_error(run_cli(*args), run / "ckpt-10.index", "is a named pipe (FIFO), not a regular file")


def test_steps_of_a_run_with_a_pipe_for_a_file_ends_at_once(genuine, tmp_path):
    """`steps` reads names only: it lists the checkpoint (its data cannot be read, which `list` says)."""
    run = _with(genuine, tmp_path, DATA, os.mkfifo)
    result = run_cli("steps", run)
    assert result.returncode == 0 and "10" in result.stdout, result.stderr


@pytest.mark.parametrize("name, make, what", [
    ("ckpt-10.index", os.mkdir, "is a folder, not a regular file"),
    ("ckpt-10.index", lambda path: os.symlink("/dev/null", path), "is a character device, not a regular file"),
    (DATA, _socket, "is a socket, not a regular file"),
    (DATA, lambda path: os.symlink("/dev/zero", path), "is a character device, not a regular file")])
def test_a_folder_socket_or_device_in_a_files_place_is_named_for_what_it_is(genuine, tmp_path, name, make, what):
    if "/dev/" in what and not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    run = _with(genuine, tmp_path, name, make)
    assert_one_error(run_cli("show", run / "ckpt-10", VARIABLE), run / name, what)


def test_a_pipe_swapped_in_after_the_check_is_caught_on_the_open_descriptor(tmp_path, monkeypatch):
    """The stat before the open cannot see a file replaced in between: the open is non-blocking and the
    descriptor is checked again, so the race ends in the same refusal, never in a wait."""
    pipe = tmp_path / "x.index"
    os.mkfifo(pipe)
    monkeypatch.setattr(files, "check_regular", lambda path: None)  # as if it was a file when looked at
    with pytest.raises(NotACheckpointError, match="is a named pipe"):
        files.open_binary(str(pipe))
    with pytest.raises(NotACheckpointError, match="is a named pipe"):
        files.read_bytes(str(pipe), 0, 8)
    regular = tmp_path / "y.index"
    regular.write_bytes(b"0123456789")
    with files.open_binary(str(regular)) as f:  # a regular file reads as ever (blocking mode restored)
        assert os.get_blocking(f.fileno()) and f.read() == b"0123456789"
    assert files.read_bytes(str(regular), 2, 5) == b"234"
