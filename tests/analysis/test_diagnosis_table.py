"""The run diagnosis' metric table (core.analysis.diagnosis.diagnosis_data.gather), read in one pass where it can be: on
TensorFlow-written runs (tests/diagnosis_fixtures.py), every variable's l2, nan_count and inf_count at every
checkpoint equal what TensorFlow's own tensors give (tf.train.load_checkpoint), whether the update-ratio pass
gave them (finite tensors: a healthy run, and one with a variable saved from the middle of the run on, need no
statistics pass) or the statistics pass did (a run whose weights turn NaN). Then the one-BLAS-thread setting the spectral
pieces run under (core.analysis.numerics.blas_threads)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.diagnosis import diagnosis_data
from checkpoint_inspector.core.analysis.numerics.blas_threads import _openblas, one_blas_thread
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.diagnosis_fixtures import write_run
from tests.tf_fixtures import _tf


@pytest.fixture(scope="module", params=("healthy", "nan", "new_variable"))
def run(request, tmp_path_factory):
    folder, _ = write_run(tmp_path_factory.mktemp(request.param), request.param)
    return request.param, discover(str(folder)).single_run().checkpoints


def _expected(reader, name: str) -> tuple[float, int, int]:
    """(l2 of the finite values, NaN count, Inf count) of TensorFlow's tensor, in float64."""
    values = np.asarray(reader.get_tensor(name), dtype=np.float64).reshape(-1)
    finite = values[np.isfinite(values)]
    l2 = float(np.sqrt(np.sum(finite * finite))) if finite.size else float("nan")
    return l2, int(np.isnan(values).sum()), int(np.isinf(values).sum())


def test_table_equals_tensorflows_tensors(run, monkeypatch):
    plant, checkpoints = run
    asked = []
    overview = diagnosis_data.compute_overview
    monkeypatch.setattr(diagnosis_data, "compute_overview",
                        lambda checkpoints, metric, **options: asked.append(metric) or overview(checkpoints, metric,
                                                                                               **options))
    data = run_to_end(diagnosis_data.gather(checkpoints))
    tf = _tf()
    checked = 0
    for column, info in enumerate(checkpoints):
        reader = tf.train.load_checkpoint(info.prefix)
        held = reader.get_variable_to_shape_map()
        for row, name in enumerate(data.names):
            cells = [data.table[metric][row, column] for metric in ("l2", "nan_count", "inf_count")]
            if name not in held:
                assert np.isnan(cells).all(), (name, info.prefix)
                continue
            l2, nans, infs = _expected(reader, name)
            np.testing.assert_allclose(cells[0], l2, rtol=1e-12, err_msg=f"{name} at {info.prefix}")
            assert (cells[1], cells[2]) == (nans, infs), (name, info.prefix)
            checked += 1
    assert checked > 10 * len(checkpoints)
    if plant == "nan":  # the variables with a NaN tensor took the statistics pass
        assert asked[0] == "update_ratio" and "l2" in asked and np.nansum(data.table["nan_count"]) > 0
    else:  # every tensor finite and summed by the update-ratio pass (a variable saved from the middle on too)
        assert asked == ["update_ratio"]


def test_one_blas_thread_while_any_piece_runs():
    api = _openblas()
    if api is None:
        pytest.skip("numpy is not linked to a bundled OpenBLAS")
    get, set_threads = api
    before = int(get())
    set_threads(2)
    try:
        inside, release = threading.Event(), threading.Event()

        def piece():
            with one_blas_thread():
                inside.set()
                release.wait(10)

        other = threading.Thread(target=piece)
        other.start()
        inside.wait(10)
        with one_blas_thread():
            assert get() == 1
        assert get() == 1  # the other piece still runs
        release.set()
        other.join(10)
        assert get() == 2  # the last one out puts back what was there
    finally:
        set_threads(before)
