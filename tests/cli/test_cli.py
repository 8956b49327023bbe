"""The command-line contract (docs/cli.md), run as a real process like a script would,
checked against TensorFlow's view of the same checkpoints."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.locations import ROOT


def cli(*args, check=True):
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), *map(str, args)],
                            capture_output=True, text=True, cwd=ROOT)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def _tf():
    import tensorflow as tf

    return tf


def test_list_json_matches_tensorflow(tf_ckpts):
    tf = _tf()
    prefix = str(tf_ckpts.all_dtypes)
    listing = json.loads(cli("list", prefix + ".index", "--json").stdout)
    assert listing["prefix"] == prefix and listing["step"] is None
    dtypes = tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()
    expected = [(n, dtypes[n].name, s) for n, s in tf.train.list_variables(prefix)]
    assert [(v["name"], v["dtype"], v["shape"]) for v in listing["variables"]] == expected
    for v in listing["variables"]:
        assert v["elements"] == int(np.prod(v["shape"]))


def test_list_json_of_a_run_at_a_step_with_object_paths(tf_ckpts):
    listing = json.loads(cli("list", tf_ckpts.tf2_keras_run, "--step", 3, "--json").stdout)
    assert listing["step"] == 3 and listing["prefix"].endswith("ckpt-3")
    kernel = next(v for v in listing["variables"] if v["name"].startswith("optimizer/_trainable_variables/0/"))
    assert kernel["object_path"].startswith("model/") and kernel["kind"] == "variable"
    assert kernel["bytes"] == 4 * kernel["elements"]


def test_list_table_is_readable(tf_ckpts):
    out = cli("list", tf_ckpts.tf1_run).stdout
    assert out.splitlines()[0].split()[:3] == ["name", "dtype", "shape"]
    assert "dense/kernel/Adam" not in out and "dense/kernel" in out
    assert "3 variables" in out and "model.ckpt-60 at step 60" in out


def test_steps_json_oldest_first_including_unlisted(tf_ckpts):
    steps = json.loads(cli("steps", tf_ckpts.tf1_kept_run, "--json").stdout)
    assert [c["step"] for c in steps["checkpoints"]] == [0, 10, 20, 30, 40, 50, 60]
    assert [c["listed_in_state_file"] for c in steps["checkpoints"]].count(True) == 2
    assert all(os.path.exists(c["prefix"] + ".index") for c in steps["checkpoints"])


def test_steps_of_nested_runs(tf_ckpts):
    steps = json.loads(cli("steps", tf_ckpts.nested_runs, "--json").stdout)
    assert steps["checkpoints"] == [] and len(steps["subruns"]) == 2
    text = cli("steps", tf_ckpts.nested_runs).stdout
    assert "run_a" in text and "run_b" in text


@pytest.mark.parametrize("name", ["dtype/bfloat16", "special/float_specials", "dtype/complex128", "dtype/int4",
                                  "special/ünïcödé_名前", "special/empty_3x0", "dtype/string"])
def test_show_npy_is_bit_equal_to_tensorflow(tf_ckpts, tmp_path, name):
    prefix = str(tf_ckpts.all_dtypes)
    out = tmp_path / "t.npy"
    cli("show", prefix, name, "--npy", out)
    expected = np.asarray(_tf().train.load_checkpoint(prefix).get_tensor(name))
    saved = np.load(out, allow_pickle=True)
    assert saved.shape == expected.shape
    if expected.dtype.kind in "OS":
        assert saved.dtype.kind == "S" and saved.tolist() == expected.astype(bytes).tolist()
    else:
        assert saved.dtype.itemsize == expected.dtype.itemsize and saved.tobytes() == expected.tobytes()


def test_show_by_object_path_prints_values(tf_ckpts):
    out = cli("show", tf_ckpts.tf2_checkpoint_plain, "nested/kernel").stdout
    assert out.startswith("nested/kernel/.ATTRIBUTES/VARIABLE_VALUE: float32 [3, 2]")


@pytest.mark.parametrize("args, message", [
    (["list", "/no/such/run"], "/no/such/run: no such file or folder"),
    (["show", "{dtypes}", "no/such/var"], "no variable named 'no/such/var'"),
    (["list", "{run}", "--step", "7"], "no checkpoint at step 7"),
    (["list", "{nested}"], "holds several runs"),
    (["list"], "required: path"),
    (["list", "{junk}"], "junk.index: does not end with the LevelDB table magic number"),
])
def test_bad_input_is_one_line_on_stderr_and_exit_2(tf_ckpts, tmp_path, args, message):
    junk = tmp_path / "junk.index"
    junk.write_bytes(os.urandom(1000))
    paths = {"dtypes": tf_ckpts.all_dtypes, "run": tf_ckpts.tf1_run, "nested": tf_ckpts.nested_runs, "junk": junk}
    result = cli(*[a.format(**paths) for a in args], check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


def test_the_command_names_main_py_knows_are_the_parsers():
    """main.py tells a command from a path by core.cli.COMMANDS without importing the commands."""
    from checkpoint_inspector.core.cli import COMMANDS
    from checkpoint_inspector.core.cli.entry import build_parser

    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert set(COMMANDS) == set(choices)
