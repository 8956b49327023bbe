"""The command line on s3:// URLs (a real S3 server, tests.remote_fixtures), run as a script would run it:
the JSON equals the command's own on the local original (which tests/cli checks against TensorFlow),
and a failing store is one line on stderr with exit status 2."""
import json
import os
import subprocess
import sys

from tests.locations import ROOT


def cli(*args, env=None):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def _json(*args):
    result = cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _with_local_names(record, local_root, remote_base):
    """The record with every URL written as the local path it was uploaded from, and no write times
    (an uploaded object's is its upload's)."""
    record = json.loads(json.dumps(record).replace(remote_base, str(local_root)))
    for checkpoint in record.get("checkpoints", []) if isinstance(record, dict) else []:
        assert checkpoint.pop("mtime") > 0
    return record


def test_list_steps_and_trajectory_of_a_remote_run_equal_the_local_ones(tf_ckpts, remote_ckpts, remote_cache):
    run = tf_ckpts.tf2_keras_run
    url = remote_ckpts.url(run)
    for command in (("list", url), ("steps", url), ("trajectory", url, "hidden/kernel", "--metric", "l2"),
                    ("trajectory", url, "hidden/kernel", "--metric", "update_ratio")):
        local_command = tuple(str(run) if part == url else part for part in command)
        there, here = _json(*command), _json(*local_command)
        assert _with_local_names(there, remote_ckpts.root, remote_ckpts.base) == _with_local_names(here, "", ""), command


def test_scalars_of_a_remote_run_equal_the_local_ones(training_runs, s3_server, remote_cache):
    from tests.remote_fixtures import RemoteCopy

    local = training_runs.tf2_run
    s3_server.make_bucket("logs")
    copy = RemoteCopy(local, s3_server.upload(local, "logs", "run"))
    there, here = _json("scalars", copy.base), _json("scalars", local)
    there = _with_local_names(there, copy.root, copy.base)
    assert there["runs"] == here["runs"] and there["runs"]
    assert [f["records"] for f in there["files"]] == [f["records"] for f in here["files"]]


def test_a_missing_bucket_is_one_line_and_exit_2(s3_server, remote_cache):
    result = cli("list", "s3://no-such-bucket-anywhere/run")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: s3://no-such-bucket-anywhere/run: no such bucket"]


def test_an_unreachable_store_is_one_line_and_exit_2(remote_cache):
    env = dict(os.environ, AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y")
    result = cli("steps", "s3://somewhere/run", env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: s3://somewhere/run: cannot reach the storage server")


def test_a_trajectory_on_a_local_dask_cluster_equals_the_threaded_one(tf_ckpts, remote_ckpts, remote_cache):
    url = remote_ckpts.url(tf_ckpts.tf2_keras_run)
    threaded = _json("trajectory", url, "hidden/kernel", "--metric", "dist_from_first")
    on_dask = _json("trajectory", url, "hidden/kernel", "--metric", "dist_from_first", "--dask", "local[2]")
    assert on_dask == threaded and len(threaded["points"]) == 3
