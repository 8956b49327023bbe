"""The API's frames and notebook views against TensorFlow: a trajectory of several variables is a
DataFrame whose columns are numpy's norms of TensorFlow's tensors; a stepless checkpoint's step is <NA> in
a nullable integer index; Difference.to_frame's value columns are numpy's figures of TensorFlow's tensors;
the HTML views parse, name the variables (escaped), stop at their row cap and read no tensor."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import checkpoint_inspector as ci
from checkpoint_inspector.core.api.views import MAX_ROWS


def _tf_tensor(prefix: str, key: str) -> np.ndarray:
    import tensorflow as tf

    return np.asarray(tf.train.load_variable(prefix, key))


def _weights(run) -> list[str]:
    return [v.shown_name for v in run.checkpoint().variables if v.kind == "variable" and v.dtype != "string"]


@pytest.mark.parametrize("run_name", ["tf1_run", "tf2_keras_run"])
def test_a_trajectory_of_several_names_is_a_frame_of_tensorflows_norms(tf_ckpts, run_name):
    with ci.open(getattr(tf_ckpts, run_name)) as run:
        names = _weights(run)
        assert len(names) >= 2
        frame = run.trajectory(names, "l2")
        assert isinstance(frame, pd.DataFrame) and list(frame.columns) == names  # the shown names, in order
        assert list(frame.index) == run.steps and frame.index.dtype == "Int64"
        assert frame.attrs["prefixes"] == [c.prefix for c in run.checkpoints]
        for column, key in zip(frame.columns, frame.attrs["stored_names"]):
            expected = [np.linalg.norm(_tf_tensor(c.prefix, key).astype(np.float64)) for c in run.checkpoints]
            np.testing.assert_allclose(frame[column].to_numpy(), expected, rtol=1e-12)
        by_pattern = run.trajectory(re.compile("|".join(f"^{re.escape(n)}$" for n in names)), "l2")
        pd.testing.assert_frame_equal(by_pattern, frame)
        one = run.trajectory(names[0], "l2")  # one name: a Series, as before
        assert isinstance(one, pd.Series)
        np.testing.assert_array_equal(one.to_numpy(), frame[names[0]].to_numpy())


def test_the_update_ratio_of_several_names_is_numpys_on_tensorflows_tensors(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        frame = run.trajectory(_weights(run), "update_ratio")
        prefixes = [c.prefix for c in run.checkpoints]
        for column, key in zip(frame.columns, frame.attrs["stored_names"]):
            tensors = [_tf_tensor(p, key).astype(np.float64) for p in prefixes]
            expected = [np.nan] + [np.linalg.norm(b - a) / np.linalg.norm(a) for a, b in zip(tensors, tensors[1:])]
            np.testing.assert_allclose(frame[column].to_numpy(), expected, rtol=1e-9)
            assert frame.attrs["reasons"][column][0]  # why the first has none


def test_a_name_that_is_no_name_list_or_pattern_is_a_type_error_naming_the_argument(tf_ckpts):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        for asked in (None, 3, {"hidden/kernel"}, "hidden/kernel".encode()):
            with pytest.raises(TypeError, match=r"^name must be a str .*re\.Pattern, not (NoneType|int|set|bytes)$"):
                run.trajectory(asked)
        with pytest.raises(ci.VariableNotFoundError, match="matches 'no_such'"):
            run.trajectory(re.compile("no_such"))


def test_a_stepless_checkpoints_step_is_a_nullable_integer(tf_ckpts):
    with ci.open(tf_ckpts.tf2_checkpoint_plain) as run:
        assert run.steps == [None]
        series = run.trajectory("v")
        frame = run.trajectory(["v", "nested/kernel"])
        overview = run.overview("l2")
        for index in (series.index, frame.index, overview.columns):
            assert index.dtype == "Int64" and index.isna().all() and index.name == "step"
        for column, key in zip(frame.columns, frame.attrs["stored_names"]):
            expected = np.linalg.norm(_tf_tensor(run.checkpoint().prefix, key).astype(np.float64))
            np.testing.assert_allclose(frame[column].to_numpy(), [expected], rtol=1e-12)


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).reshape(-1).view(f"u{array.dtype.itemsize}")


@pytest.mark.parametrize("run_name", ["tf1_run", "tf2_keras_run"])
def test_the_difference_frames_value_columns_are_numpys_on_tensorflows_tensors(tf_ckpts, run_name):
    with ci.open(getattr(tf_ckpts, run_name)) as run:
        a, b = run.checkpoints[0], run.checkpoints[-1]
        frame = ci.diff(a, b, values=True).to_frame()
        assert (frame.change == "values").sum() >= 2
        kinds = {v.name: v.kind for v in a.variables}
        for row in frame.itertuples():
            assert row.kind == kinds[row.name]
            x, y = _tf_tensor(a.prefix, row.name), _tf_tensor(b.prefix, row.name)
            differs = _bits(x) != _bits(y)
            assert row.differing == np.count_nonzero(differs)
            work = np.result_type(x.dtype, np.float32)  # float32 measured in float32, as the Compare window does
            delta = x.reshape(-1).astype(work) - y.reshape(-1).astype(work)
            np.testing.assert_allclose(row.max_abs_diff, np.abs(delta)[differs].max(), rtol=1e-12)
            expected = np.linalg.norm(delta.astype(np.float64)) / np.linalg.norm(x.astype(np.float64))
            np.testing.assert_allclose(row.rel_l2, expected, rtol=1e-6)
        assert frame["differing"].dtype == "Int64"
        by_checksum = ci.diff(a, b).to_frame()
        assert "differing" not in by_checksum and list(by_checksum.name) == list(frame.name)


class _Page(HTMLParser):
    """The text of each cell, the table's rows and everything else said, as a browser would read them."""

    def __init__(self, html: str):
        super().__init__()
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        (self._cell if self._cell is not None else self.text).append(data)


def _no_tensor_read(monkeypatch, ckpt):
    """Any read of a tensor's values fails the test; the object graph (the names, not a variable) may be."""
    reader = ckpt._reader()
    read = reader.read

    def only_names(key, *args, **kwargs):
        assert key == "_CHECKPOINTABLE_OBJECT_GRAPH", f"{key} was read to draw the view"
        return read(key, *args, **kwargs)

    monkeypatch.setattr(reader, "read", only_names)
    monkeypatch.setattr(reader, "read_element", lambda *a, **k: pytest.fail("a tensor was read to draw the view"))


def test_the_views_of_a_run_a_checkpoint_and_a_difference_name_what_they_show(tf_ckpts, monkeypatch):
    with ci.open(tf_ckpts.tf2_keras_run) as run:
        page = _Page(run._repr_html_())
        assert [row[:2] for row in page.rows[1:]] == [[str(c.step), c.prefix.rsplit("/", 1)[1]] for c in run]
        assert str(run.path) in "".join(page.text) and "steps 2–4" in repr(run)
        ckpt = run.checkpoint()
        _no_tensor_read(monkeypatch, ckpt)
        page = _Page(ckpt._repr_html_())
        assert page.rows[0] == ["name", "stored key", "shape", "dtype", "kind"]
        assert {row[0] for row in page.rows[1:]} == {v.shown_name for v in ckpt.variables}
        difference = ci.diff(run.checkpoints[0], ckpt, values=True)
        page = _Page(difference._repr_html_())
        assert page.rows[0][-3:] == ["differing", "max |a−b|", "rel. L2"]
        assert [row[0] for row in page.rows[1:]] == list(difference.to_frame().name)


def test_a_views_names_are_escaped_and_long_tables_capped(tf_ckpts, tmp_path, monkeypatch):
    import tensorflow as tf

    odd = "a<b>&c"
    tf.train.Checkpoint(**{odd: tf.Variable([1.0, 2.0])}).write(str(tmp_path / "odd"))
    with ci.open(tmp_path / "odd") as run:
        ckpt = run.checkpoint()
        html = ckpt._repr_html_()
        assert odd not in html and any(odd in cell for row in _Page(html).rows[1:] for cell in row)
    with ci.open(tf_ckpts.many_vars) as run:
        ckpt = run.checkpoint()
        _no_tensor_read(monkeypatch, ckpt)
        page = _Page(ckpt._repr_html_())
        assert len(page.rows) == 1 + MAX_ROWS
        assert f"… {len(ckpt.variables) - MAX_ROWS} more" in "".join(page.text)


def test_the_findings_view_and_frame(training_runs):
    with ci.open(training_runs.exploding_run) as run:
        findings = run.diagnose()
    assert isinstance(findings, list) and len(findings) >= 2
    page = _Page(findings._repr_html_())
    assert page.rows[0] == ["severity", "kind", "steps", "variables", "summary"]
    assert [row[:2] for row in page.rows[1:]] == [[f.severity, f.kind] for f in findings]
    frame = findings.to_frame()
    assert frame["first_step"].dtype == "Int64" and list(frame.kind) == [f.kind for f in findings]
    assert repr(findings).startswith(f"<Findings: {len(findings)}: {findings[0].severity} {findings[0].kind}")
