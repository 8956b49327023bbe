"""`diff --values` of small tensors by groups (core.analysis.comparison.value_difference_groups) against TensorFlow: every
figure of every tensor of two TF-written checkpoints, computed with numpy from TensorFlow's own get_tensor,
and the same figures the per-tensor path (core.analysis.numerics.value_difference) reports; damage found in a group
is reported by the per-tensor path, naming the tensor."""
import math
import shutil

import numpy as np
import pytest

import checkpoint_inspector.core.analysis.comparison.comparison as comparison_module
import checkpoint_inspector.core.analysis.comparison.value_difference_groups as groups_module
from checkpoint_inspector.core.analysis.comparison.comparison import compare_checkpoints
from checkpoint_inspector.core.errors import ChecksumMismatchError, MissingShardError
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.jobs import run_to_end
from tests.cli.test_cli import cli

DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "uint8", "bool"]
BIG_ELEMENTS = 300_000  # 1.2 MB of float32: above GROUPED_BELOW, streamed by the per-tensor path


def _tf():
    import tensorflow as tf

    return tf


def _float_cases(rng) -> dict[str, tuple]:
    """name -> (A's values, B's values) as float64, before TensorFlow casts them to the dtype."""
    base = rng.normal(size=(12, 7)) * 3
    cases = {"equal": (base, base.copy()),
             "close": (base, base + 1e-3 * (rng.random(base.shape) < 0.5)),
             "different": (base, base + rng.normal(size=base.shape)),
             "empty": (np.zeros((0, 4)), np.zeros((0, 4))),
             "scalar": (np.array(1.5), np.array(2.0))}
    for name, where, value in (("nan_in_b", (1, 2), np.nan), ("inf_in_b", (3, 4), np.inf),
                               ("minus_inf_in_a", (0, 0), None)):
        a, b = base.copy(), base.copy()
        if value is None:
            a[where] = -np.inf
        else:
            b[where] = value
        cases[name] = (a, b)
    a, b = base.copy(), base + 1e-3  # NaN and infinity stored alike on both sides: no difference there
    a[2, 2] = b[2, 2] = np.nan
    a[5, 1] = b[5, 1] = np.inf
    cases["nan_inf_on_both_sides"] = (a, b)
    a, b = base.copy(), base.copy()
    a[0, 0], b[0, 0] = 1000.0, 1e-3  # the largest difference, rounded in the work dtype (not exact in float32)
    cases["rounded_difference"] = (a, b)
    a, b = base.copy(), base.copy()
    a[4, :] = 0.0
    b[4, :] = -0.0  # the bits differ, the values do not
    cases["signed_zero"] = (a, b)
    return cases


def _integer_cases(rng) -> dict[str, tuple]:
    base = rng.integers(0, 100, size=(9, 5)).astype(np.float64)
    changed = base.copy()
    changed[rng.random(base.shape) < 0.3] += 1
    return {"equal": (base, base.copy()), "different": (base, changed), "empty": (np.zeros(0), np.zeros(0))}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two checkpoints written by tf.raw_ops.SaveV2: every case in every dtype, and one big tensor."""
    tf = _tf()
    rng = np.random.default_rng(31)
    folder = tmp_path_factory.mktemp("value_groups")
    sides = ({}, {})
    for dtype in DTYPES:
        cases = _float_cases(rng) if dtype in ("float16", "bfloat16", "float32", "float64") else _integer_cases(rng)
        for case, values in cases.items():
            for side, array in zip(sides, values):
                tensor = tf.constant(array)
                side[f"{dtype}/{case}"] = tf.cast(tensor > 0, tf.bool) if dtype == "bool" else tf.cast(tensor, dtype)
    big = rng.normal(size=BIG_ELEMENTS).astype(np.float32)
    sides[0]["big/float32"], sides[1]["big/float32"] = big, big + np.float32(1e-2)
    prefixes = []
    for name, tensors in zip("ab", sides):
        prefix = str(folder / name)
        tf.raw_ops.SaveV2(prefix=prefix, tensor_names=list(tensors), shape_and_slices=[""] * len(tensors),
                          tensors=list(tensors.values()))
        prefixes.append(prefix)
    return tuple(prefixes)


def _bits(array):
    array = np.ascontiguousarray(array).reshape(-1)
    return array.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize])


def _expected(a, b, atol: float, rtol: float):
    """(status, count, differing, max |a - b|, relative L2) by the rules of value_difference's docstring,
    from TensorFlow's arrays: differences in float32 for float32 and narrower floats, float64 otherwise,
    measured over the elements whose bits differ."""
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    differ = _bits(a) != _bits(b)
    if not differ.any():
        return "equal", a.size, 0, None, 0.0
    is_float = a.dtype.kind == "f" or a.dtype.name == "bfloat16"
    work = np.float32 if is_float and a.dtype.itemsize <= 4 else np.float64
    with np.errstate(invalid="ignore", over="ignore"):
        delta = (a.astype(work) - b.astype(work))[differ]
        bound = (atol + rtol * np.abs(b.astype(work)))[differ]
    size = np.abs(delta).astype(np.float64)
    finite = bool(np.isfinite(size).all())
    largest = math.nan if np.isnan(size).any() else math.inf if np.isinf(size).any() else float(size.max())
    norm_a = float(np.sum(np.square(a.astype(np.float64))))
    known = finite and math.isfinite(norm_a) and norm_a > 0
    relative = (float(np.sum(np.square(size))) / norm_a) ** 0.5 if known else None
    within = finite and bool(np.all(np.abs(delta) <= bound))
    return "close" if within else "different", a.size, int(differ.sum()), largest, relative


def _check(found, expected, name: str) -> None:
    status, count, differing, largest, relative = expected
    assert (found.status, found.count, found.differing) == (status, count, differing), name
    if largest is None or math.isnan(largest):
        assert found.max_abs_diff is largest or math.isnan(found.max_abs_diff), name
    else:
        assert found.max_abs_diff == largest, name  # the same float32 (or float64) difference, exactly
    if relative is None:
        assert found.rel_l2 is None, name
    else:
        assert found.rel_l2 == pytest.approx(relative, rel=1e-6, abs=1e-12), name


def _differences(a: str, b: str, atol: float, rtol: float) -> dict:
    comparison = run_to_end(compare_checkpoints(open_reader(a), open_reader(b), values=True, atol=atol, rtol=rtol))
    assert not comparison.only_a and not comparison.only_b
    out = {c.name: c.values for c in comparison.changed}
    assert not set(out) & set(comparison.equal)
    return out, comparison


@pytest.fixture
def grouped(monkeypatch):
    """The names compare_checkpoints measured by groups in this test."""
    names: list[str] = []
    piece = groups_module.difference_piece

    def spy(work):
        names.extend(work.names)
        return piece(work)

    monkeypatch.setattr(comparison_module, "difference_piece", spy)
    return names


@pytest.mark.parametrize("atol, rtol", [(0.0, 0.0), (1e-2, 0.0), (0.0, 1e-2)])
@pytest.mark.parametrize("share", [groups_module.GROUP_SHARE, 64])  # a few groups, or one per tensor or two
def test_every_figure_is_what_numpy_makes_of_tensorflows_values(pair, grouped, monkeypatch, atol, rtol, share):
    tf = _tf()
    monkeypatch.setattr(groups_module, "GROUP_SHARE", share)
    a, b = pair
    tf_a, tf_b = tf.train.load_checkpoint(a), tf.train.load_checkpoint(b)
    names = sorted(tf_a.get_variable_to_shape_map())
    changed, comparison = _differences(a, b, atol, rtol)
    assert set(grouped) == set(names) - {"big/float32"}  # every small one by groups, the big one streamed
    assert len(grouped) == len(set(grouped))
    if share == 64:
        assert comparison_module.COMPARING_THREADS > 1 and len(grouped) > 1
    within = set(comparison.within_tolerance)
    for name in names:
        expected = _expected(tf_a.get_tensor(name), tf_b.get_tensor(name), atol, rtol)
        if expected[0] == "different":
            _check(changed[name], expected, name)
        else:
            assert name in comparison.equal and (name in within) == (expected[0] == "close"), name
    # the cases mean what their names say (so a case that came out equal by accident would show here)
    assert "float32/signed_zero" in within and "float32/equal" in comparison.equal and "float32/equal" not in within
    assert math.isnan(changed["float32/nan_in_b"].max_abs_diff) and changed["float32/inf_in_b"].max_abs_diff == math.inf
    assert ("float32/close" in changed) == (not atol and not rtol)
    if not atol and not rtol:
        both = changed["float32/nan_inf_on_both_sides"]
        assert both.max_abs_diff == pytest.approx(1e-3, rel=1e-3) and both.rel_l2 is None  # ||a|| is no number


def test_groups_report_what_the_per_tensor_path_reports(pair, monkeypatch):
    a, b = pair
    for atol, rtol in ((0.0, 0.0), (1e-2, 1e-2)):
        grouped, _ = _differences(a, b, atol, rtol)
        with monkeypatch.context() as patch:
            patch.setattr(groups_module, "GROUPED_BELOW", 0)  # nothing grouped: every tensor on its own
            alone, _ = _differences(a, b, atol, rtol)
        assert set(grouped) == set(alone)
        for name, difference in alone.items():
            found = grouped[name]
            assert (found.status, found.count, found.differing) == (difference.status, difference.count,
                                                                    difference.differing), name
            assert found.max_abs_diff == difference.max_abs_diff or (
                math.isnan(found.max_abs_diff) and math.isnan(difference.max_abs_diff)), name
            assert (found.rel_l2 is None) == (difference.rel_l2 is None), name
            if found.rel_l2 is not None:
                assert found.rel_l2 == pytest.approx(difference.rel_l2, rel=1e-6), name


def _damaged_copy(prefix: str, folder, name: str, how: str) -> tuple[str, str]:
    """A copy of the checkpoint whose data file is damaged inside tensor `name` (`how`: "flip" a byte of it,
    or "cut" the file there); (the copy's prefix, its data file)."""
    copy = str(folder / "damaged")
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(prefix + suffix, copy + suffix)
    entry = open_reader(copy).entry(name)
    data = copy + ".data-00000-of-00001"
    with open(data, "r+b") as f:
        if how == "flip":
            f.seek(entry.offset + entry.size // 2)
            byte = f.read(1)
            f.seek(entry.offset + entry.size // 2)
            f.write(bytes([byte[0] ^ 0xFF]))
        else:
            f.truncate(entry.offset + entry.size // 2)
    return copy, data


@pytest.mark.parametrize("how, error", [("flip", ChecksumMismatchError), ("cut", MissingShardError)])
def test_damage_in_a_group_is_named_by_the_per_tensor_path(pair, tmp_path, how, error):
    tf = _tf()
    a, b = pair
    name = "float32/different"
    damaged, data = _damaged_copy(b, tmp_path, name, how)
    reader = open_reader(damaged)
    cut = reader.entry(name).offset + reader.entry(name).size // 2
    with pytest.raises(error) as raised:
        run_to_end(compare_checkpoints(open_reader(a), reader, values=True))
    assert data in str(raised.value)
    assert any(entry.name == "compare_values" for entry in raised.traceback)  # not the group's own error
    if how == "flip":
        assert repr(name) in str(raised.value)
    else:  # a tensor cut short is named: the first the per-tensor path meets, of those past the cut
        named = [e.name for e in reader.entries if e.offset + e.size > cut and repr(e.name) in str(raised.value)]
        assert len(named) == 1 and "truncated" in str(raised.value)
        name = named[0]
    result = cli("diff", a, damaged, "--values", check=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert data in result.stderr and ("truncated" in result.stderr if how == "cut" else repr(name) in result.stderr)
    with pytest.raises(Exception):  # TensorFlow refuses the damaged tensor too
        tf.train.load_checkpoint(damaged).get_tensor(name)


def test_a_pair_in_a_store_is_compared_as_on_disk(pair, s3_server, remote_cache, grouped):
    """Groups read from a store (ranged requests, core.format.bundle.data_shards.RemoteShard) give the
    figures they give on a local disk."""
    from pathlib import Path

    from tests.remote_fixtures import RemoteCopy

    folder = Path(pair[0]).parent
    s3_server.make_bucket("value-groups")
    copy = RemoteCopy(folder, s3_server.upload(folder, "value-groups", "pair"))
    there, _ = _differences(copy.url(pair[0]), copy.url(pair[1]), 0.0, 0.0)
    assert len(grouped) > 1
    here, _ = _differences(*pair, 0.0, 0.0)
    assert {name: repr(v) for name, v in there.items()} == {name: repr(v) for name, v in here.items()}
