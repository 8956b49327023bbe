"""Checkpoints read over HTTP from a real S3 server (moto, tests.remote_fixtures): what we list and read
there equals what TensorFlow reads from the local original, in few requests, with a second open served
by the local cache; and a failing store is named in one line."""
import os

import numpy as np
import pytest

from checkpoint_inspector.core.errors import MissingShardError, StorageError
from checkpoint_inspector.core.format.bundle import index_cache
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.run import variables
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.run.variables import describe_variables
from checkpoint_inspector.core.storage import files, paths, remote
from tests.format.bundle.test_bundle_reader import all_prefixes, assert_same_tensor


def _tf():
    import tensorflow as tf

    return tf


def _fresh(url: str) -> None:
    """Forget what this process remembers of the listing and of decoded indexes (not the disk cache)."""
    index_cache.forget_all()
    variables.forget_listings()
    files.refresh(paths.dirname(url))


def test_every_remote_name_shape_dtype_and_value_equals_tensorflow(tf_ckpts, remote_ckpts, remote_cache):
    """Every fixture listed remotely; the values of those that cover the dtypes, partitions, shards,
    V1 tables and object graphs read too (a request each: all 12,000 would take minutes)."""
    tf = _tf()
    read_all = {str(p) for p in (tf_ckpts.all_dtypes, tf_ckpts.partitioned, tf_ckpts.sharded,
                                 tf_ckpts.tf2_keras_run / "ckpt-2", tf_ckpts.estimator_like)}
    listed = values = 0
    for prefix in all_prefixes(tf_ckpts):
        reference = tf.train.load_checkpoint(prefix)  # the local original: TF 2.21 has no s3:// of its own
        reader = open_reader(remote_ckpts.url(prefix))
        tf_shapes = dict(tf.train.list_variables(prefix))
        tf_dtypes = reference.get_variable_to_dtype_map()
        assert reader.names() == sorted(tf_shapes), prefix
        for entry in reader.entries:
            where = f"{prefix}:{entry.name}"
            assert list(entry.shape) == tf_shapes[entry.name], where
            assert entry.dtype_name == tf_dtypes[entry.name].name, where
            if prefix in read_all:
                assert_same_tensor(reader.read(entry.name), reference.get_tensor(entry.name), where)
                values += 1
            listed += 1
    assert listed > 12000 and values > 60


def test_remote_v1_checkpoints_equal_tensorflow(tf_ckpts, remote_ckpts, remote_cache):
    """V1 tables read remotely: what TensorFlow reads of them, and the rest (dtypes TF reads in V1 no
    more, partitions) as the local reader reads them (tests/format/test_v1_table.py checks that one)."""
    from tests.format.bundle.test_v1_table import TF_CANNOT_READ_IN_V1

    tf = _tf()
    for run in (tf_ckpts.v1_run, tf_ckpts.v1_sharded):
        local = discover(str(run)).latest.prefix
        reader, local_reader = open_reader(remote_ckpts.url(local)), open_reader(local)
        reference = tf.train.load_checkpoint(local)
        assert reader.names() == sorted(dict(tf.train.list_variables(local))), run
        for entry in reader.entries:
            where = f"{run}:{entry.name}"
            ours = reader.read(entry.name)
            if entry.dtype_name not in TF_CANNOT_READ_IN_V1 and not entry.is_partitioned:
                assert_same_tensor(ours, reference.get_tensor(entry.name), where)
            assert_same_tensor(ours, local_reader.read(entry.name), where)


def test_listing_a_remote_checkpoint_takes_three_requests_and_a_second_open_one(tf_ckpts, remote_ckpts,
                                                                                 s3_server, remote_cache):
    url = remote_ckpts.url(tf_ckpts.tf2_keras_run / "ckpt-3")
    _fresh(url)
    s3_server.forget_requests()
    described = describe_variables(CheckpointReader(url))
    first = s3_server.counted()
    assert len(first) <= 3, first  # the folder's listing, the index, the object graph's range
    assert [r for r in first if r[1].endswith(".index")] == [("GET", "/runs/ckpts/tf2_keras_run/ckpt-3.index", "", "")]
    assert not [r for r in first if ".data-" in r[1] and not r[3]], "a data shard was downloaded whole"

    _fresh(url)
    s3_server.forget_requests()
    again = describe_variables(CheckpointReader(url))
    second = s3_server.counted()
    assert not [r for r in second if r[1].endswith(".index")], "the cached index was fetched again"
    assert len(second) <= 2, second
    assert [(v.name, v.entry.shape, v.kind, v.object_path) for v in again] == \
           [(v.name, v.entry.shape, v.kind, v.object_path) for v in described]


def test_a_rewritten_remote_index_is_not_served_from_the_cache(tf_ckpts, s3_server, remote_cache):
    client = s3_server.client()
    s3_server.make_bucket("rewritten")
    prefix_a, prefix_b = tf_ckpts.tf2_keras_run / "ckpt-2", tf_ckpts.tf2_checkpoint_plain
    for suffix in (".index", ".data-00000-of-00001"):
        client.upload_file(str(prefix_a) + suffix, "rewritten", "run/ckpt" + suffix)
    url = "s3://rewritten/run/ckpt"
    assert CheckpointReader(url).names() == CheckpointReader(str(prefix_a)).names()
    for suffix in (".index", ".data-00000-of-00001"):
        client.upload_file(str(prefix_b) + suffix, "rewritten", "run/ckpt" + suffix)
    _fresh(url)
    assert CheckpointReader(url).names() == CheckpointReader(str(prefix_b)).names()


def test_a_remote_run_is_discovered_as_the_local_one(tf_ckpts, remote_ckpts, remote_cache):
    for folder in (tf_ckpts.tf2_keras_run, tf_ckpts.tf1_kept_run, tf_ckpts.serving, tf_ckpts.v1_run):
        local, there = discover(str(folder)), discover(remote_ckpts.url(folder))
        assert [(c.step, c.listed, c.is_latest, c.size_bytes) for c in there.checkpoints] == \
               [(c.step, c.listed, c.is_latest, c.size_bytes) for c in local.checkpoints], folder
        assert [c.prefix for c in there.checkpoints] == [remote_ckpts.url(c.prefix) for c in local.checkpoints]
        assert [c.name for c in there.checkpoints] == [c.name for c in local.checkpoints]


def test_a_remote_prefix_and_its_files_open_their_run(tf_ckpts, remote_ckpts, remote_cache):
    prefix = tf_ckpts.tf2_keras_run / "ckpt-3"
    for given in ("", ".index", ".data-00000-of-00001"):
        run = discover(remote_ckpts.url(prefix) + given)
        assert run.selected_prefix == remote_ckpts.url(prefix), given
        assert run.find().step == 3


def test_a_missing_remote_shard_is_named(tf_ckpts, s3_server, remote_cache):
    s3_server.make_bucket("no-shard")
    s3_server.client().upload_file(str(tf_ckpts.tf2_keras_run / "ckpt-2.index"), "no-shard", "run/ckpt-2.index")
    reader = CheckpointReader("s3://no-shard/run/ckpt-2")
    name = next(e.name for e in reader.entries if e.dtype_name == "float32")
    with pytest.raises(MissingShardError, match=r"s3://no-shard/run/ckpt-2\.data-00000-of-00001: data shard missing"):
        reader.read(name)


def test_a_truncated_remote_shard_is_named(tf_ckpts, s3_server, remote_cache):
    s3_server.make_bucket("short-shard")
    client = s3_server.client()
    prefix = tf_ckpts.tf2_keras_run / "ckpt-2"
    client.upload_file(str(prefix) + ".index", "short-shard", "run/ckpt-2.index")
    data = (prefix.parent / "ckpt-2.data-00000-of-00001").read_bytes()
    client.put_object(Bucket="short-shard", Key="run/ckpt-2.data-00000-of-00001", Body=data[:len(data) // 2])
    reader = CheckpointReader("s3://short-shard/run/ckpt-2")
    last = max((e for e in reader.entries if not e.slices), key=lambda e: e.offset)
    with pytest.raises(MissingShardError, match="short-shard.*shorter than the index says"):
        reader.read(last.name)


def test_no_such_bucket_and_no_such_key_are_named(s3_server, remote_cache):
    with pytest.raises(StorageError, match=r"^s3://no-bucket-here/run: no such bucket$"):
        discover("s3://no-bucket-here/run")
    s3_server.make_bucket("empty-bucket")
    with pytest.raises(Exception, match=r"s3://empty-bucket/run: no such file or folder"):
        discover("s3://empty-bucket/run")


def test_an_unreachable_store_is_named_in_bounded_time(monkeypatch, remote_cache):
    import socket
    import time

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    remote.forget_filesystems()
    started = time.monotonic()
    try:
        with pytest.raises(StorageError, match=r"^s3://somewhere/run: cannot reach the storage server"):
            discover("s3://somewhere/run")
    finally:
        remote.forget_filesystems()
    assert time.monotonic() - started < 60


def test_a_protocol_without_its_library_says_what_to_install(remote_cache):
    with pytest.raises(StorageError, match=r"^nosuchproto://b/run: no file system for nosuchproto:// URLs"):
        discover("nosuchproto://b/run")


def test_url_paths_keep_their_scheme():
    assert paths.dirname("s3://b/run/ckpt-1") == "s3://b/run"
    assert paths.dirname("s3://b") == "s3://b"
    assert paths.join("gs://b/run", "ckpt-1.index") == "gs://b/run/ckpt-1.index"
    assert paths.normpath("s3://b/run/../other/./x") == "s3://b/other/x"
    assert paths.basename("az://c/run/") == "run"
    assert paths.abspath("file:///tmp/x") == os.path.abspath("/tmp/x")
    assert not paths.is_url("C://not/a/url") and not paths.is_url("/local/path") and paths.is_url("https://h/x")
    assert np.array_equal(paths.relpath("s3://b/run/sub/x", "s3://b/run"), "sub/x")


def test_a_console_made_folder_marker_is_the_folder_itself(tf_ckpts, s3_server, remote_cache):
    """The AWS console's "Create folder" leaves an empty `run/` object: the folder still lists."""
    s3_server.make_bucket("console-made")
    client = s3_server.client()
    client.put_object(Bucket="console-made", Key="run/", Body=b"")
    for name in ("checkpoint", "ckpt-2.index", "ckpt-2.data-00000-of-00001"):
        client.upload_file(str(tf_ckpts.tf2_keras_run / name), "console-made", f"run/{name}")
    run = discover("s3://console-made/run")
    assert [c.step for c in run.checkpoints] == [2]


def test_normalising_a_url_never_leaves_its_bucket():
    assert paths.normpath("s3://b/run/../../x") == "s3://b/x"
    assert paths.normpath("s3://b/") == "s3://b"


def test_an_object_readable_in_a_folder_that_cannot_be_listed_is_still_found(tf_ckpts, remote_ckpts, remote_cache,
                                                                             monkeypatch):
    """A role with GetObject but no ListBucket: the folder's listing is refused, the object is asked about."""
    url = remote_ckpts.url(tf_ckpts.tf2_keras_run / "ckpt-3")

    def refused(folder):
        raise StorageError(folder, "access denied (ListObjectsV2)")

    monkeypatch.setattr(remote, "listing", refused)
    _fresh(url)
    assert files.exists(url + ".index") and files.getsize(url + ".index") == (tf_ckpts.tf2_keras_run / "ckpt-3.index").stat().st_size
    assert not files.exists(url + ".nothing")
    assert CheckpointReader(url).names() == CheckpointReader(str(tf_ckpts.tf2_keras_run / "ckpt-3")).names()
