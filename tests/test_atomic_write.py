"""The one atomic write: readers see the old file or the new one, never half; a failure or a cancelled
job (a generator closed mid-write) leaves nothing behind; the data and the rename are made durable."""
import os
import zipfile

import pytest

from checkpoint_inspector.core import atomic_write as atomic
from checkpoint_inspector.core.atomic_write import AtomicFile, atomic_path, atomic_write


def test_the_old_content_stays_until_the_new_is_complete(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old")
    with atomic_write(target, "w", encoding="utf-8") as f:
        f.write("new, half")
        assert target.read_text() == "old"
        temporary = [n for n in os.listdir(tmp_path) if n != "table.csv"]
        assert len(temporary) == 1 and temporary[0].startswith(".table.csv.") and temporary[0].endswith(".partial")
        f.write(" and the rest")
    assert target.read_text() == "new, half and the rest"
    assert os.listdir(tmp_path) == ["table.csv"]


def test_a_failure_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "model.index"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write(b"partial")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["model.index"]


def test_a_cancelled_job_leaves_nothing(tmp_path):
    def job():
        with atomic_write(tmp_path / "out.npy") as f:
            for _ in range(10):
                f.write(b"x" * 100)
                yield

    running = job()
    next(running)
    next(running)
    running.close()  # what the GUI's cancel does
    assert os.listdir(tmp_path) == []


def test_a_library_writes_the_temporary_path(tmp_path):
    with atomic_path(tmp_path / "arrays.npz") as temporary:
        with zipfile.ZipFile(temporary, "w") as archive:
            archive.writestr("a.npy", b"data")
        assert not (tmp_path / "arrays.npz").exists()
    assert zipfile.ZipFile(tmp_path / "arrays.npz").read("a.npy") == b"data"


def test_commit_syncs_the_file_then_the_folder(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    with atomic_write(tmp_path / "checkpoint", "w") as f:
        f.write('model_checkpoint_path: "ckpt-1"\n')
    assert len(synced) == 2
    assert synced[0].endswith(".partial") and synced[1] == str(tmp_path)


def test_commit_after_a_failed_rename_removes_the_temporary(tmp_path, monkeypatch):
    target = AtomicFile(tmp_path / "x")
    target.open("wb").write(b"data")
    monkeypatch.setattr(atomic.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(18, "cross-device")))
    with pytest.raises(OSError):
        target.commit()
    assert os.listdir(tmp_path) == []
