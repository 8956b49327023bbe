"""Spectral health of one weight matrix (a dense kernel, or a conv kernel as a set of matrices), with the
numbers and rules of WeightWatcher 0.7.7's default `WeightWatcher.analyze()` on a Keras model, computed
natively from the stored kernel (no TensorFlow, Keras or WeightWatcher here).

What WeightWatcher does with a Keras layer (weightwatcher.py), and so what is done here:
- KerasLayer.layer_type / get_weights_and_biases: a Dense layer (or any whose class name holds "dense")
  gives its kernel (in, out); a Conv2D (any class name holding "conv2d": also DepthwiseConv2D,
  SeparableConv2D's depthwise kernel, Conv2DTranspose) gives its kernel (kh, kw, a, b). Biases are unused.
- WWLayer.set_weight_matrices: a dense kernel is one matrix, N = its larger side, M = its smaller, rf = 1.
  A 3-D kernel (Conv1D (k, in, out); also an EinsumDense's, whose class name holds "dense") is taken the
  same way, as one "matrix" with N = max(shape), M = min(shape), rf = 1, which scipy.linalg.svd (>= 1.15,
  batched; older versions refuse it) treats as k matrices kernel[i] of (in, out): their singular values
  are pooled and combined_eigenvalues keeps the M largest (n_comp = M). Kind "conv1d" here.
  WWLayer.conv2D_Wmats (Keras layers are CHANNELS.FIRST): a conv kernel is kh*kw matrices kernel[i, j]
  (a x b), rf = kh*kw, and N, M follow its branches literally (`conv_sizes`), a swap inside the loop
  included: when b < a the swap runs once per position, so an even kh*kw gives N = b, M = a (M > N).
- WeightWatcher.apply_normalize_Wmats with the default conv2d_norm=True: a conv matrix is multiplied by
  sqrt(conv2d_count / 2) = sqrt(1/2); a dense or conv1d one is left as is (normalize and glorot_fix are
  off).
- WeightWatcher.combined_eigenvalues (pool=True, the default): the squared singular values of every
  matrix of the layer (min(a, b) each), pooled into one sorted array: the eigenvalues of W^T W, whichever
  side is smaller (the non-zero ones of W^T W and W W^T are the same).
- WWLayerIterator.layer_supported: a layer is analysed only if min_evals (8) <= M * rf <= max_evals
  (15000) and N <= max_N (50000), with M, N and rf as above (`ww_analyses`).
- WeightWatcher.apply_powerlaw / fit_powerlaw: the fit of core.analysis.spectral.spectral_fit.
- WeightWatcher.apply_norm_metrics: norm = sum(evals) (the squared Frobenius norm), log_norm = log10(norm),
  spectral_norm = max(evals) (the squared largest singular value: WeightWatcher's "spectral norm" is
  lambda_max), log_spectral_norm = log10 of it, alpha_weighted = alpha * log_spectral_norm,
  log_alpha_norm = log10(sum(evals ** alpha)), stable_rank = norm / spectral_norm. A conv layer's norms
  carry the 1/2 of conv2d_norm; a failed fit's alpha (-1) enters alpha_weighted and log_alpha_norm as it does
  there. Not reported: matrix_rank, entropy and rank_loss (they count singular values under a relative
  tolerance of eps * N, which only a full SVD resolves) and the MP-fit and eigenvector columns (off by
  default).

How: the eigenvalues are those of the smaller Gram matrix W^T W or W W^T, formed and diagonalised in
float64 (numpy's eigvalsh; batched over a conv kernel's positions), never with singular vectors. Against
WeightWatcher's float64 SVD squared, every eigenvalue agrees within about 1e-15 * lambda_max (measured
on 32x100 to 1024x1024 matrices: lambda_max and the sum to 1e-15 relative), far inside the oracle's 1e-6;
the only eigenvalues that can come out differently are those within that distance of the fit's 1e-5
threshold. Tiny negative eigenvalues of the Gram matrix (rounding of exact zeros) are set to 0.
`precision="float32"` forms the Gram matrix in float32 (eigvalsh still in float64) when speed matters more:
then lambda_max and the sum are within about 2e-7 relative and every eigenvalue within about 2e-7 *
lambda_max (same measures), which can move the fit's xmin among near-equal candidates.

A kernel holding NaN or Inf, or finite values so big that its Gram matrix overflows float64, gives no
spectrum: every metric is NaN and status is "non_finite" (the
non-finite detector says where it came from; WeightWatcher's analyze() stops there with scipy's
ValueError).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import CheckpointError
from ..numerics.blas_threads import one_blas_thread
from ..trajectories.metric_pieces import Source, source_of
from .spectral_fit import fit_power_law

KINDS = ("dense", "conv1d", "conv")
NDIM = {"dense": 2, "conv1d": 3, "conv": 4}
MIN_EVALS = 8        # analyze(min_evals=DEFAULT_MIN_EVALS)
MAX_EVALS = 15000    # analyze(max_evals=DEFAULT_MAX_EVALS)
MAX_N = 50000        # analyze(max_N=DEFAULT_MAX_N)
CONV2D_NORM_SQUARED = 0.5  # (sqrt(conv2d_count / 2))^2 with conv2d_count = 1: what conv eigenvalues are scaled by
PRECISIONS = ("float64", "float32")
METRIC_NAMES = ("alpha", "xmin", "xmax", "D", "sigma", "norm", "log_norm", "spectral_norm",
                "log_spectral_norm", "alpha_weighted", "log_alpha_norm", "stable_rank", "sv_max", "lambda_max")


@dataclass(frozen=True)
class MatrixSizes:
    """WeightWatcher's N, M and rf for a layer (as its table shows them, Q = N / M)."""

    N: int
    M: int
    rf: int


def kind_of_shape(shape: tuple) -> str | None:
    """'dense' for a 2-D kernel, 'conv1d' for a 3-D one, 'conv' for a 4-D one, None for what WeightWatcher
    has no matrix of."""
    return {ndim: kind for kind, ndim in NDIM.items()}.get(len(shape))


def conv_sizes(shape: tuple) -> MatrixSizes:
    """N, M, rf of a Keras conv kernel (kh, kw, a, b) as WWLayer.conv2D_Wmats sets them for CHANNELS.FIRST."""
    kh, kw, a, b = (int(size) for size in shape)
    rf = kh * kw
    if kh + kw >= a + b:  # "detected" channels-last, flipped back: N, M = a, b
        return MatrixSizes(a, b, rf)
    if b < a and rf % 2 == 1:  # N, M start as (b, a) and swap at every one of the rf positions
        return MatrixSizes(a, b, rf)
    return MatrixSizes(b, a, rf)


def matrix_sizes(shape: tuple, kind: str) -> MatrixSizes:
    _check_kind(shape, kind)
    if kind == "conv":
        return conv_sizes(shape)
    return MatrixSizes(int(max(shape)), int(min(shape)), 1)


def ww_analyses(shape: tuple, kind: str) -> bool:
    """Whether WeightWatcher's default analyze() reports this layer (WWLayerIterator.layer_supported)."""
    sizes = matrix_sizes(shape, kind)
    return MIN_EVALS <= sizes.M * sizes.rf <= MAX_EVALS and sizes.N <= MAX_N


def eigenvalues(kernel: np.ndarray, kind: str, precision: str = "float64") -> np.ndarray:
    """The layer's pooled eigenvalues, sorted ascending: min(a, b) per matrix, times 1/2 for a conv; the
    M largest for a conv1d."""
    _check_kind(kernel.shape, kind)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    stack = kernel[None] if kind == "dense" else kernel.reshape((-1,) + kernel.shape[-2:])
    stack = stack.astype(precision, copy=False)
    if stack.shape[1] < stack.shape[2]:  # the smaller Gram matrix: W W^T rather than W^T W
        stack = stack.transpose(0, 2, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        gram = np.matmul(stack.transpose(0, 2, 1), stack).astype(np.float64, copy=False)
    if not np.isfinite(gram).all():  # finite float64 weights beyond ~1e154 whose squares overflow
        raise FloatingPointError("the kernel's Gram matrix overflows float64")
    evals = np.linalg.eigvalsh(gram).ravel()
    np.maximum(evals, 0.0, out=evals)
    if kind == "conv":
        evals *= CONV2D_NORM_SQUARED
    evals.sort()
    return evals[-min(kernel.shape):] if kind == "conv1d" else evals


def spectral_metrics(kernel: np.ndarray, kind: str, precision: str = "float64") -> dict:
    """WeightWatcher's row for this layer: alpha, xmin, xmax, D, sigma, num_pl_spikes, status, warning,
    norm, log_norm, spectral_norm, log_spectral_norm, alpha_weighted, log_alpha_norm, stable_rank,
    sv_max, lambda_max, num_evals, N, M, rf, Q (whether WeightWatcher would analyse it at all is
    `ww_analyses`)."""
    kernel = np.asarray(kernel)
    sizes = matrix_sizes(kernel.shape, kind)
    row = {"N": sizes.N, "M": sizes.M, "rf": sizes.rf, "Q": sizes.N / sizes.M if sizes.M > 0 else -1}
    if not np.isfinite(kernel).all():
        return row | _non_finite_row(kernel, kind)
    if kernel.size == 0:
        raise ValueError(f"a {kind} kernel of shape {kernel.shape} has no values")
    try:
        evals = eigenvalues(kernel, kind, precision)
    except FloatingPointError:  # no spectrum to speak of, as for a kernel holding Inf
        return row | _non_finite_row(kernel, kind)
    fit = fit_power_law(evals)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        norm = float(np.sum(evals))
        spectral_norm = float(np.max(evals))
        log_spectral_norm = float(np.log10(spectral_norm))
        row |= fit | {
            "num_evals": int(evals.size),
            "lambda_max": spectral_norm,
            "sv_max": float(np.sqrt(spectral_norm)),
            "norm": norm,
            "log_norm": float(np.log10(norm)),
            "spectral_norm": spectral_norm,
            "log_spectral_norm": log_spectral_norm,
            "alpha_weighted": fit["alpha"] * log_spectral_norm,
            "log_alpha_norm": float(np.log10(np.sum(evals ** fit["alpha"]))),
            "stable_rank": float(np.float64(norm) / np.float64(spectral_norm)),
        }
    return row


def eigenvalue_count(shape: tuple, kind: str) -> int:
    """How many eigenvalues the layer's spectrum has (num_evals): min(a, b) per position of a conv kernel,
    M for a dense or conv1d one."""
    sizes = matrix_sizes(tuple(shape), kind)
    return min(shape[-2:]) * sizes.rf if kind == "conv" else sizes.M


def _non_finite_row(kernel: np.ndarray, kind: str) -> dict:
    return dict.fromkeys(METRIC_NAMES, float("nan")) | {
        "num_pl_spikes": -1, "num_evals": eigenvalue_count(kernel.shape, kind), "status": "non_finite", "warning": ""}


def _check_kind(shape: tuple, kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if len(shape) != NDIM[kind]:
        raise ValueError(f"a {kind} kernel is {NDIM[kind]}-D, not of shape {tuple(shape)}")


# --- the piece an executor runs (core.executor): one kernel of one checkpoint ----------------------------

@dataclass(frozen=True)
class SpectralPiece:
    """A kernel to analyse where it is stored (core.analysis.trajectories.metric_pieces.Source), with its shape and
    kind; small enough to send to a Dask worker, which reads the bytes itself."""

    source: Source
    shape: tuple
    kind: str
    precision: str = "float64"


def piece_for(reader, prefix: str, name: str, shape: tuple, precision: str = "float64") -> SpectralPiece | None:
    """The piece of a stored kernel (its byte range when the reader gives one), None for a tensor that is
    no kernel WeightWatcher has a matrix of."""
    kind = kind_of_shape(tuple(shape))
    if kind is None:
        return None
    return SpectralPiece(source_of(reader, prefix, name), tuple(int(size) for size in shape), kind, precision)


def read_kernel(piece: SpectralPiece) -> np.ndarray:
    """The stored tensor, its chunks copied into one array of its shape and stored dtype."""
    size = int(np.prod(piece.shape))
    values, done = None, 0
    for chunk in piece.source.chunks():
        if values is None:
            values = np.empty(size, dtype=chunk.dtype)
        if done + chunk.size > size:
            break
        values[done:done + chunk.size] = chunk
        done += chunk.size
    else:
        if done == size and values is not None:
            return values.reshape(piece.shape)
    raise ValueError(f"{piece.source.name!r} in {piece.source.prefix}: the values stored do not fill its "
                     f"shape {piece.shape} exactly")


def spectral_piece(piece: SpectralPiece) -> dict:
    """spectral_metrics of the stored kernel: the function handed to Executor.map_unordered. Pieces run side by
    side, one core each: LAPACK in one BLAS thread (core.analysis.numerics.blas_threads says why)."""
    kernel = read_kernel(piece)
    with one_blas_thread():
        return spectral_metrics(kernel, piece.kind, piece.precision)


BATCH_ELEMENTS = 1 << 18  # kernels are sent to the executor together up to this many elements a piece


def spectral_batch(pieces: tuple) -> list:
    """[spectral_piece of each kernel, or the error reading it gave], for several kernels of a checkpoint in
    one executor piece: a piece's own cost (a task, a future, a hand-off between threads; on Dask a message)
    is several times a 16x16 kernel's analysis (56 us), and a model of 2,000 such kernels made 40,000 pieces
    of a 20-checkpoint run. A kernel that cannot be read gives its error in its place; the others are
    analysed."""
    results: list = []
    with one_blas_thread():  # once for the batch (nested entries are counted, not set again)
        for piece in pieces:
            try:
                results.append(spectral_piece(piece))
            except (CheckpointError, OSError, ValueError) as exc:
                results.append(exc)
    return results
