"""Numbers numpy warns about are the CLI's to report, never numpy's to print: a signalling NaN (a damaged
float32 widened to float64 raised "invalid value encountered in cast": a fuzz find), Inf - Inf, values
near float64's maximum. Every whole-run command on such a run prints nothing on stderr."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from checkpoint_inspector.core.cli import entry

SIGNALLING_NAN_32 = np.array([0x7F800001], np.uint32).view(np.float32)[0]
SIGNALLING_NAN_64 = np.array([0x7FF0000000000001], np.uint64).view(np.float64)[0]


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory):
    """Three TF-written checkpoints: `w` (float32, 600 values) gains a signalling NaN, then an Inf; `d`
    (float64) holds values near its maximum and a signalling NaN; `h` (float16) an Inf and a -Inf."""
    import tensorflow as tf

    folder = tmp_path_factory.mktemp("odd_numbers")
    rng = np.random.default_rng(5)
    w = rng.normal(size=(20, 30)).astype(np.float32)
    for step in (1, 2, 3):
        w = w + rng.normal(scale=0.01, size=w.shape).astype(np.float32)
        saved = w.copy()
        if step >= 2:
            saved[3, 4] = SIGNALLING_NAN_32
        if step == 3:
            saved[0, 0] = np.inf
        d = np.full(8, np.finfo(np.float64).max / (step + 1))
        d[step] = SIGNALLING_NAN_64
        h = np.array([np.inf, -np.inf, step], np.float16)
        tensors = {"w": saved, "d": d, "h": h}
        tf.raw_ops.SaveV2(prefix=str(folder / f"model.ckpt-{step}"), tensor_names=list(tensors),
                          shape_and_slices=[""] * len(tensors), tensors=[tf.constant(v) for v in tensors.values()])
    assert np.isnan(tf.train.load_checkpoint(str(folder / "model.ckpt-2")).get_tensor("w")[3, 4])
    return folder


def _quiet(argv, capsys) -> int:
    """The command's exit status, after checking it warned of nothing and printed nothing on stderr."""
    from checkpoint_inspector.core.analysis.trajectories.trajectory import CACHE

    CACHE.clear()  # computed again, as by a process of its own
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as warned:  # what would reach a process's stderr
        warnings.simplefilter("always")  # each place warns again, as in a process of its own
        status = entry.run([str(a) for a in argv])
    assert [str(w.message) for w in warned if issubclass(w.category, RuntimeWarning)] == [], argv
    assert capsys.readouterr().err == "", argv
    return status


@pytest.mark.parametrize("metric", ["l2", "update_ratio", "dist_from_first", "mean", "std", "abs_mean"])
def test_overview_and_trajectories_print_no_numpy_warning(odd_run, capsys, metric):
    assert _quiet(["overview", odd_run, "--metric", metric, "--all", "--json"], capsys) == 0
    for name in ("w", "d", "h"):
        assert _quiet(["trajectory", odd_run, name, "--metric", metric, "--json"], capsys) == 0


def test_diff_and_statistics_print_no_numpy_warning(odd_run, capsys):
    assert _quiet(["diff", odd_run / "model.ckpt-1", odd_run / "model.ckpt-3", "--values", "--json"], capsys) == 1
    for name in ("w", "d", "h"):
        assert _quiet(["show", odd_run / "model.ckpt-3", name], capsys) == 0
