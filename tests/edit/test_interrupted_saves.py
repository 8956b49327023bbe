"""Saves that can never hurt a run: killed (SIGKILL) after every write, fsync, rename and removal, an
overwrite leaves the old checkpoint or the new one, whole (tests/edit/test_overwrite_kill.py asks
TensorFlow, through the CLI); what killed saves of earlier versions left is reported, then mended;
the source is never touched; a full disk names the file and leaves nothing; the source run's
`checkpoint` file stays as it is unless the person asks."""
import hashlib
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from checkpoint_inspector.core.atomic_write import remove_stale_temporaries
from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.errors import DestinationError, InspectorError
from checkpoint_inspector.core.format.bundle.commit import recover
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.locations import MAIN, ROOT

_CHILD = """
import os, signal, sys
sys.path.insert(0, {root!r})
kill_at, source, destination, overwrite = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
count = [0]

def after(function):
    def counted(*args, **kwargs):
        result = function(*args, **kwargs)
        count[0] += 1
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return counted

for name in ("fsync", "rename", "replace", "remove", "copy_file_range"):
    setattr(os, name, after(getattr(os, name)))
from checkpoint_inspector.core.format.bundle import writer as bundle_writer
from checkpoint_inspector.core.format.wire import sstable_writer
bundle_writer.BundleWriter._append = after(bundle_writer.BundleWriter._append)
sstable_writer.TableWriter.finish = after(sstable_writer.TableWriter.finish)
from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.jobs import run_to_end
plan = RemapPlan([RegexRename(pattern="^dense/", replacement="new/")])
run_to_end(save_remapped(CheckpointReader(source), plan, destination, overwrite=overwrite))
print("finished", count[0], flush=True)
"""


def _digest(folder) -> dict:
    return {n: hashlib.sha256(open(os.path.join(folder, n), "rb").read()).hexdigest() for n in sorted(os.listdir(folder))}


def _tensors(prefix) -> dict:
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(str(prefix))}


def _opening_says(folder) -> list[str]:
    try:
        return discover(folder).warnings
    except InspectorError as exc:  # the only checkpoint was set aside: the error says so
        return [str(exc)]


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture
def setting(tf_ckpts, tmp_path):
    """A source checkpoint in its own run folder; an older remap of it in `out/`; what the new remap gives."""
    source_folder = tmp_path / "source"
    shutil.copytree(tf_ckpts.tf1_run, source_folder)
    source = source_folder / "model.ckpt-60"
    (tmp_path / "out").mkdir()
    run_to_end(save_remapped(CheckpointReader(source), RemapPlan([RegexRename(pattern="^dense/", replacement="old/")]),
                             str(tmp_path / "out" / "ckpt")))
    (tmp_path / "reference").mkdir()
    run_to_end(save_remapped(CheckpointReader(source), RemapPlan([RegexRename(pattern="^dense/", replacement="new/")]),
                             str(tmp_path / "reference" / "ckpt")))
    return {"source": source, "old": _tensors(tmp_path / "out" / "ckpt"), "new": _tensors(tmp_path / "reference" / "ckpt"),
            "root": tmp_path}


@pytest.mark.parametrize("overwrite", [True, False], ids=["overwrite", "new-prefix"])
def test_a_save_killed_at_any_instant_leaves_the_old_or_the_new_checkpoint(setting, overwrite):
    source_files = _digest(setting["source"].parent)
    finished = False
    for kill_at in range(1, 60):
        trial = setting["root"] / f"trial-{kill_at}"
        shutil.copytree(setting["root"] / "out", trial)
        state_before = (trial / "checkpoint").read_bytes()
        destination = trial / ("ckpt" if overwrite else "ckpt-new")
        child = subprocess.run([sys.executable, "-c", _CHILD.format(root=str(ROOT)), str(kill_at), str(setting["source"]),
                                str(destination), "1" if overwrite else "0"], capture_output=True, text=True)
        finished = child.returncode == 0
        assert finished or child.returncode == -9, child.stderr
        assert _digest(setting["source"].parent) == source_files, "the source run was touched"
        leftover_warnings = _opening_says(trial)  # what a killed save left, and writes nothing
        recover(str(trial))                    # what the next save into the folder does first
        remove_stale_temporaries(str(trial))
        assert not [n for n in os.listdir(trial) if n.endswith((".partial", ".aside"))], (kill_at, os.listdir(trial))
        if os.path.exists(str(destination) + ".index"):
            got = _tensors(destination)
            assert _same(got, setting["new"]) or (overwrite and _same(got, setting["old"])), f"kill after step {kill_at}"
        else:
            assert not overwrite, f"killed after step {kill_at}, the old checkpoint is gone"
        assert (trial / "checkpoint").read_bytes() == state_before  # an existing run's state file is left alone
        if finished:
            assert _same(_tensors(destination), setting["new"]) and not leftover_warnings
            break
    steps = int(child.stdout.split()[1])
    assert finished and kill_at == steps + 1 and steps >= (11 if overwrite else 7)  # a kill after each of them


def test_opening_a_folder_reports_what_a_killed_save_left(setting):
    """Earlier versions set the old files aside before renaming the new ones in: killed right then, the
    folder held only the aside files. Opening reports them; the next save puts them back."""
    trial = setting["root"] / "trial"
    shutil.copytree(setting["root"] / "out", trial)
    day_ago = time.time() - 2 * 24 * 3600  # a day-old aside file's writer is gone, whatever its pid
    for name in ("ckpt.data-00000-of-00001", "ckpt.index"):
        aside = trial / f".{name}.{os.getpid()}-0badc0de.aside"
        os.rename(trial / name, aside)
        os.utime(aside, (day_ago, day_ago))
    before = _digest(trial)
    warnings = " ".join(_opening_says(trial))
    assert "an interrupted save left" in warnings and "the next save into this folder restores" in warnings
    assert _digest(trial) == before  # reported, not mended: opening never writes
    notes = recover(str(trial))
    assert notes and "restored the checkpoint an interrupted save was replacing" in notes[0]
    assert _same(_tensors(trial / "ckpt"), setting["old"])


def test_saving_into_the_source_run_leaves_its_state_file(setting):
    import tensorflow as tf

    source_folder = setting["source"].parent
    state = (source_folder / "checkpoint").read_bytes()
    plan = RemapPlan([RegexRename(pattern="^dense/", replacement="layer/")])
    report = run_to_end(save_remapped(CheckpointReader(setting["source"]), plan, str(source_folder / "remapped")))
    assert (source_folder / "checkpoint").read_bytes() == state
    assert tf.train.latest_checkpoint(str(source_folder)).endswith("model.ckpt-60")
    assert any("latest checkpoint is left as it was" in note for note in report.notes)
    run_to_end(save_remapped(CheckpointReader(setting["source"]), plan, str(source_folder / "latest"), make_latest=True))
    assert tf.train.latest_checkpoint(str(source_folder)).endswith("latest")
    listed = tf.train.get_checkpoint_state(str(source_folder)).all_model_checkpoint_paths
    assert [os.path.basename(p) for p in listed][-2:] == ["model.ckpt-60", "latest"]  # the run's list kept


def test_overwriting_another_checkpoint_of_the_source_run_is_refused(setting):
    source_folder = setting["source"].parent
    with pytest.raises(DestinationError, match="another checkpoint of the source's run"):
        run_to_end(save_remapped(CheckpointReader(setting["source"]), RemapPlan(), str(source_folder / "model.ckpt-50"),
                                 overwrite=True))


def test_a_state_file_that_cannot_be_written_leaves_a_complete_checkpoint(setting, monkeypatch):
    from checkpoint_inspector.core.edit import save

    def full_disk(folder, prefixes):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(save, "write_state_file", full_disk)
    destination = setting["root"] / "fresh" / "ckpt"
    destination.parent.mkdir()
    report = run_to_end(save_remapped(CheckpointReader(setting["source"]), RemapPlan(), str(destination)))
    assert any("could not be written (No space left on device)" in note for note in report.notes)
    assert _same(_tensors(destination), _tensors(setting["source"]))
    assert sorted(os.listdir(destination.parent)) == ["ckpt.data-00000-of-00001", "ckpt.index"]


@pytest.fixture
def small_filesystem(tmp_path):
    """A 16 KiB tmpfs (as root, where mounting is allowed)."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=False)


def test_a_full_disk_names_the_file_and_leaves_nothing(tf_ckpts, small_filesystem):
    filler = small_filesystem / "filler"
    filler.write_bytes(b"\0" * 8192)
    result = subprocess.run([sys.executable, str(MAIN), "remap", str(tf_ckpts.all_dtypes), str(small_filesystem / "out"),
                             "--rename", "^special/=s/"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "out.data-00000-of-00001: No space left on device" in result.stderr
    assert sorted(os.listdir(small_filesystem)) == ["filler"]
