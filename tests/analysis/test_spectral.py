"""core.analysis.spectral.spectral against its oracle, WeightWatcher 0.7.7: TF-written checkpoints of a small CNN and
MLP (tests/diagnose_fixtures.py) are read by our reader and analysed natively, and restored by TensorFlow
into a live Keras model that WeightWatcher's default analyze() is given; every layer must agree.
WeightWatcher's own functions (WeightWatcher.fit_powerlaw, WWLayer.conv2D_Wmats) are the oracle for the
edge cases a trained model does not reach. WeightWatcher is imported inside the fixtures and tests only
(its import is slow and sets warning filters and logging)."""
from __future__ import annotations

import numpy as np
import pytest

from checkpoint_inspector.core.analysis.spectral.spectral import (conv_sizes, eigenvalues, kind_of_shape, piece_for, spectral_batch,
                                    spectral_metrics, spectral_piece, ww_analyses)
from checkpoint_inspector.core.errors import CheckpointError
from checkpoint_inspector.core.analysis.spectral.spectral_fit import fit_power_law
from checkpoint_inspector.core.executor import ThreadExecutor
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.run.variables import describe_variables
from tests.diagnose_fixtures import SPECTRAL_MODELS, restore_spectral_model, write_spectral_checkpoint

ALPHA_RTOL = 1e-2   # the tolerance for alpha and what is computed from it
NORM_RTOL = 1e-6    # and for the norms, stable rank, xmin and the KS distance
EXACT = ("N", "M", "rf", "num_evals", "num_pl_spikes", "status", "warning")
ALPHA_METRICS = ("alpha", "alpha_weighted", "log_alpha_norm", "sigma")
NORM_METRICS = ("stable_rank", "spectral_norm", "log_spectral_norm", "norm", "log_norm", "lambda_max",
                "sv_max", "xmin", "xmax", "D")

# WeightWatcher's own complaints about what it computes (log10 of 0, 0/0; pandas 3 deprecating the call its
# analyze() makes), not ours: core.analysis.spectral.spectral computes under np.errstate.
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning:weightwatcher"),
              pytest.mark.filterwarnings("ignore:Passing a dict to DataFrame.from_records")]


def _weightwatcher():
    import weightwatcher

    assert weightwatcher.__version__ == "0.7.7"
    return weightwatcher


def _ww_rows(model) -> dict[str, dict]:
    """WeightWatcher's default analysis of a live Keras model: {layer name: its row}."""
    details = _weightwatcher().WeightWatcher(model=model).analyze()
    return {row["name"]: row for row in details.to_dict("records")}


def _kernels(prefix) -> dict[str, tuple[str, np.ndarray]]:
    """{layer name: (kind, kernel)} of the checkpoint's dense and conv kernels, as our reader gives them."""
    kernels = {}
    with open_reader(str(prefix)) as reader:
        for info in describe_variables(reader):
            if info.kind == "variable" and info.variable_name.endswith("/kernel"):
                kernel = reader.read(info.name)
                kernels[info.variable_name.split("/")[-2]] = (kind_of_shape(kernel.shape), kernel)
    return kernels


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("spectral")
    return {kind: write_spectral_checkpoint(root / kind, kind) for kind in SPECTRAL_MODELS}


@pytest.fixture(scope="module")
def ww_rows(checkpoints) -> dict:
    return {kind: _ww_rows(restore_spectral_model(prefix, kind)) for kind, prefix in checkpoints.items()}


def _assert_rows_equal(ours: dict, theirs: dict, where: str) -> None:
    for name in EXACT:
        assert ours[name] == theirs[name], f"{where}: {name} {ours[name]!r} != WeightWatcher's {theirs[name]!r}"
    for names, rtol in ((ALPHA_METRICS, ALPHA_RTOL), (NORM_METRICS, NORM_RTOL)):
        for name in names:
            np.testing.assert_allclose(ours[name], theirs[name], rtol=rtol, atol=0, err_msg=f"{where}: {name}")


@pytest.mark.parametrize("model", SPECTRAL_MODELS)
def test_every_layer_equals_weightwatcher(checkpoints, ww_rows, model):
    kernels = _kernels(checkpoints[model])
    analysed = {name for name, (kind, kernel) in kernels.items() if ww_analyses(kernel.shape, kind)}
    assert analysed == set(ww_rows[model]), "the layers analysed differ from WeightWatcher's"
    assert analysed != set(kernels), "the fixture meant some layers too small to analyse"
    for name in sorted(analysed):
        kind, kernel = kernels[name]
        _assert_rows_equal(spectral_metrics(kernel, kind), ww_rows[model][name], f"{model} {name}")


def test_the_fixture_reaches_both_fits(checkpoints, ww_rows):
    """Small-N (fewer than 20 eigenvalues) and standard fits both occur in the oracle comparison."""
    sizes = {row["num_evals"] for rows in ww_rows.values() for row in rows.values()}
    assert min(sizes) < 20 <= max(sizes)


def test_float32_gram_within_its_stated_tolerance(checkpoints):
    for prefix in checkpoints.values():
        for name, (kind, kernel) in _kernels(prefix).items():
            wide, narrow = spectral_metrics(kernel, kind), spectral_metrics(kernel, kind, precision="float32")
            for metric in ("spectral_norm", "norm", "stable_rank"):
                np.testing.assert_allclose(narrow[metric], wide[metric], rtol=1e-6, err_msg=f"{name} {metric}")


def test_pieces_on_threads_give_the_same_metrics(checkpoints):
    prefix = str(checkpoints["cnn"])
    with open_reader(prefix) as reader:
        infos = [info for info in describe_variables(reader) if info.kind == "variable"]
        pieces = [piece_for(reader, prefix, info.name, info.entry.shape) for info in infos]
        expected = [spectral_metrics(reader.read(info.name), piece.kind) if piece else None
                    for info, piece in zip(infos, pieces)]
    wanted = [(index, piece) for index, piece in enumerate(pieces) if piece is not None]
    assert {piece.kind for _, piece in wanted} == {"dense", "conv"}  # the CNN's
    with ThreadExecutor(2) as executor:
        results = dict(executor.map_unordered(spectral_piece, [piece for _, piece in wanted]))
    for position, (index, _) in enumerate(wanted):
        assert results[position] == expected[index], infos[index].name


def test_a_batch_gives_each_kernel_its_metrics_and_a_damaged_one_its_error(checkpoints, tmp_path):
    """Small kernels travel to the executor together (spectral_batch): each result is the one its own piece
    gives, and a kernel whose stored bytes are damaged (one byte of its data flipped: its CRC32C no longer
    matches) gives its error in its place while the others are still analysed."""
    import shutil

    source = str(checkpoints["mlp"])
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(source + suffix, tmp_path / (source.rsplit("/", 1)[-1] + suffix))
    prefix = str(tmp_path / source.rsplit("/", 1)[-1])
    with open_reader(prefix) as reader:
        infos = [info for info in describe_variables(reader) if info.kind == "variable"]
        pieces = [piece for piece in (piece_for(reader, prefix, info.name, info.entry.shape) for info in infos) if piece]
        expected = [spectral_piece(piece) for piece in pieces]
        damaged = reader.tensor_range(pieces[1].source.name)
    assert len(pieces) >= 3
    with open(damaged.path, "r+b") as data:
        data.seek(damaged.offset + damaged.size // 2)
        byte = data.read(1)
        data.seek(damaged.offset + damaged.size // 2)
        data.write(bytes([byte[0] ^ 0xFF]))
    results = spectral_batch(tuple(pieces))
    assert isinstance(results[1], CheckpointError), results[1]
    assert [r for i, r in enumerate(results) if i != 1] == [e for i, e in enumerate(expected) if i != 1]


def test_zero_and_rank_one_layers_equal_weightwatcher():
    """A dead layer (all zeros: no eigenvalue to fit, log of 0) and a rank-one one (a single eigenvalue: the
    fit fails) give WeightWatcher's failed-fit row, infinities and NaN included."""
    import keras

    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(12, name="dead"),
                              keras.layers.Dense(10, name="rank_one")])
    rank_one = np.outer(np.arange(1, 13), np.linspace(-1, 1, 10)).astype(np.float32)
    model.get_layer("dead").set_weights([np.zeros((16, 12), np.float32), np.zeros(12, np.float32)])
    model.get_layer("rank_one").set_weights([rank_one, np.zeros(10, np.float32)])
    theirs = _ww_rows(model)
    for name in ("dead", "rank_one"):
        ours = spectral_metrics(model.get_layer(name).get_weights()[0], "dense")
        assert ours["status"] == "failed" and ours["alpha"] == -1
        for metric in ("norm", "log_norm", "spectral_norm", "log_spectral_norm", "stable_rank",
                       "alpha_weighted"):
            np.testing.assert_allclose(ours[metric], theirs[name][metric], rtol=1e-6, err_msg=f"{name} {metric}")


def _fit_cases():
    rng = np.random.default_rng(3)
    cases = {"empty": np.zeros(0), "one": np.array([0.3]), "all_below_threshold": np.full(12, 1e-6),
             "equal_small": np.full(10, 0.5), "equal_standard": np.full(30, 0.5),
             "fallback": rng.uniform(0.1, 2.0, 5), "equal_fallback": np.full(5, 2.0)}
    for size in (2, 7, 8, 9, 12, 19, 20, 21, 64, 400):
        cases[f"pareto_{size}"] = rng.pareto(2.5, size) + 1e-3
        cases[f"zeros_and_ties_{size}"] = np.round(rng.uniform(0, 1, size), 1)
    return cases


FIT_CASES = _fit_cases()


@pytest.mark.parametrize("case", sorted(FIT_CASES))
def test_fit_equals_weightwatchers_fit(case):
    evals = FIT_CASES[case]
    theirs = _weightwatcher().WeightWatcher().fit_powerlaw(evals.copy(), plot=False)
    alpha, _, xmin, xmax, d, sigma, spikes, _, _, status, warning = theirs
    ours = fit_power_law(evals)
    assert (ours["status"], ours["warning"], ours["num_pl_spikes"]) == (status, warning, spikes)
    assert (ours["xmax"] is None) == (xmax is None)
    np.testing.assert_allclose([ours["alpha"], ours["xmin"], ours["D"], ours["sigma"]], [alpha, xmin, d, sigma],
                               rtol=1e-9, atol=0)
    if xmax is not None:
        np.testing.assert_allclose(ours["xmax"], xmax, rtol=1e-12)


CONV_SHAPES = [(kh, kw, a, b) for kh in (1, 2, 3) for kw in (1, 2, 3) for a in (1, 2, 3, 5, 8)
               for b in (1, 2, 3, 5, 8)]


def test_conv_sizes_follow_weightwatchers_conv2d_wmats():
    """N, M and rf of every branch of WWLayer.conv2D_Wmats for a Keras (channels-first in WW's terms) kernel."""
    ww = _weightwatcher()
    layer = ww.weightwatcher.WWLayer.__new__(ww.weightwatcher.WWLayer)  # the method needs no layer state
    rng = np.random.default_rng(0)
    for shape in CONV_SHAPES:
        kernel = rng.normal(size=shape)
        matrices, n, m, rf = layer.conv2D_Wmats(kernel, ww.constants.CHANNELS.FIRST)
        sizes = conv_sizes(shape)
        assert (sizes.N, sizes.M, sizes.rf) == (n, m, rf), shape
        theirs = np.sort(np.concatenate([np.linalg.svd(w * np.sqrt(0.5), compute_uv=False) ** 2 for w in matrices]))
        np.testing.assert_allclose(eigenvalues(kernel, "conv"), theirs, rtol=1e-9, atol=1e-12, err_msg=str(shape))


def test_a_non_finite_kernel_has_no_spectrum():
    kernel = np.ones((16, 12), np.float32)
    kernel[3, 4] = np.nan
    metrics = spectral_metrics(kernel, "dense")
    assert metrics["status"] == "non_finite" and np.isnan(metrics["alpha"]) and np.isnan(metrics["spectral_norm"])


def test_a_kernel_too_big_to_square_has_no_spectrum_and_no_warning():
    """float64 weights beyond ~1e154 overflow their Gram matrix: no spectrum (status non_finite, as for a
    kernel holding Inf), and no numpy warning on the CLI's stderr."""
    import warnings

    kernel = np.full((64, 64), 1e200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = spectral_metrics(kernel, "dense")
    assert row["status"] == "non_finite" and np.isnan(row["alpha"]) and row["num_evals"] == 64
