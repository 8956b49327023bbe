"""Remap to and from a real S3 server: the saved checkpoint, fetched back, restores in TensorFlow with the
renamed values; it is uploaded data first, index after, state file last, each under a hidden temporary
name first; the source objects are never touched."""
import numpy as np
import pytest

from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan
from checkpoint_inspector.core.edit.save import save_remapped, save_remapped_run
from checkpoint_inspector.core.errors import DestinationError
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover


def _tf():
    import tensorflow as tf

    return tf


def _etags(client, bucket, prefix):
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"]: o["ETag"] for o in listed}


def _download(client, bucket, prefix, folder):
    for key in _etags(client, bucket, prefix):
        target = folder / key[len(prefix):].lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(bucket, key, str(target))


def test_a_remote_remap_to_a_remote_folder_restores_in_tensorflow(tf_ckpts, remote_ckpts, s3_server, remote_cache,
                                                                 tmp_path):
    client = s3_server.client()
    source_url = remote_ckpts.url(tf_ckpts.tf1_run / "model.ckpt-40")
    before = _etags(client, "runs", "ckpts/tf1_run/")
    plan = RemapPlan(operations=[RegexRename(pattern="^dense", replacement="encoder")])
    s3_server.forget_requests()
    report = run_to_end(save_remapped(open_reader(source_url), plan, "s3://runs/remapped/model.ckpt-40"))
    assert report.prefix == "s3://runs/remapped/model.ckpt-40"
    assert _etags(client, "runs", "ckpts/tf1_run/") == before  # the source run is untouched

    placed = [path.rsplit("/", 1)[1] for method, path, _, _ in s3_server.counted()
              if method == "PUT" and ".partial" not in path and "/remapped/" in path]
    assert placed == ["model.ckpt-40.data-00000-of-00001", "model.ckpt-40.index", "checkpoint"]
    assert not [k for k in _etags(client, "runs", "remapped/") if ".partial" in k]

    _download(client, "runs", "remapped", tmp_path / "back")
    tf = _tf()
    restored = tf.train.load_checkpoint(str(tmp_path / "back" / "model.ckpt-40"))
    original = tf.train.load_checkpoint(str(tf_ckpts.tf1_run / "model.ckpt-40"))
    for name in original.get_variable_to_shape_map():
        if name.startswith("dense"):
            assert np.array_equal(restored.get_tensor(name.replace("dense", "encoder", 1)), original.get_tensor(name))
    assert tf.train.latest_checkpoint(str(tmp_path / "back")).endswith("model.ckpt-40")


def test_a_remote_run_remapped_to_a_local_folder_restores_in_tensorflow(tf_ckpts, remote_ckpts, remote_cache, tmp_path):
    run = discover(remote_ckpts.url(tf_ckpts.tf1_run))
    plan = RemapPlan(operations=[RegexRename(pattern="^dense", replacement="head")])
    reports = run_to_end(save_remapped_run(run.checkpoints, plan, str(tmp_path / "local")))
    tf = _tf()
    for report, info in zip(reports, run.checkpoints):
        restored = tf.train.load_checkpoint(report.prefix)
        local_original = tf_ckpts.tf1_run / info.name
        expected = tf.train.load_checkpoint(str(local_original))
        for name in expected.get_variable_to_shape_map():
            if name.startswith("dense"):
                assert np.array_equal(restored.get_tensor(name.replace("dense", "head", 1)), expected.get_tensor(name))


def test_a_run_remapped_to_a_url_lists_every_step(tf_ckpts, remote_ckpts, remote_cache):
    run = discover(str(tf_ckpts.tf1_run))
    plan = RemapPlan(operations=[RegexRename(pattern="^dense", replacement="head")])
    reports = run_to_end(save_remapped_run(run.checkpoints, plan, "s3://runs/remapped-run"))
    assert [r.prefix for r in reports] == [f"s3://runs/remapped-run/{c.name}" for c in run.checkpoints]
    there = discover("s3://runs/remapped-run")
    assert [c.step for c in there.checkpoints] == [c.step for c in run.checkpoints]
    assert all(c.listed for c in there.checkpoints)


def test_an_existing_remote_checkpoint_is_not_replaced_unasked(tf_ckpts, remote_ckpts, remote_cache):
    source = open_reader(str(tf_ckpts.tf1_run / "model.ckpt-30"))
    with pytest.raises(DestinationError, match="a checkpoint exists there already"):
        run_to_end(save_remapped(source, RemapPlan(), remote_ckpts.url(tf_ckpts.tf1_run / "model.ckpt-40")))
    with pytest.raises(DestinationError, match="that is the source checkpoint"):
        url = remote_ckpts.url(tf_ckpts.tf1_run / "model.ckpt-30")
        run_to_end(save_remapped(open_reader(url), RemapPlan(), url, overwrite=True))
