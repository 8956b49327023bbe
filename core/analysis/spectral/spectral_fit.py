"""The power-law fit of a layer's eigenvalues, exactly as WeightWatcher 0.7.7 makes it by default.

WeightWatcher.analyze() (weightwatcher.py) fits with `fit='PL'`, `pl_package='ww'`, `xmin=None`,
`xmax=None`, `fix_fingers=False`; WeightWatcher.fit_powerlaw then keeps the eigenvalues above
EVALS_THRESH (1e-5) and hands them to WW_powerlaw.pl_fit, which builds a WW_powerlaw.WWFit (WeightWatcher's
own fit, not the `powerlaw` package's). The rule WWFit follows, ported here:

- every eigenvalue x_i (sorted ascending, all but the largest) is tried as xmin; the tail is x_i..x_N-1,
  of n = N - i values;
- N >= 20 (WWFit.fit_power_law_standard): alpha_i = 1 + n / sum(log(x_j / x_i)), the continuous maximum
  likelihood estimate, and D_i = max_k |1 - (x_i+k / x_i)^(1 - alpha_i) - k / n| (k = 0..n-1), the
  Kolmogorov-Smirnov distance between the fitted CDF and the empirical CDF k/n; D_i stays 1 when
  alpha_i <= 1;
- N < 20 (SMALL_N_CUTOFF, WWFit.fit_powerlaw_smallN): the bias-corrected alpha_i = 1 + (n - 1) / sum(...),
  only for tails of at least 8 values (k_min) whose log sum exceeds 1e-12, other D_i staying 1 and alpha_i
  0. That method also ranks the candidates by D - 0.868/sqrt(n) and falls back to the whole data when
  none qualifies (setting alpha_0 and D_0 after the sigmas were computed), but WWFit.__init__ then
  chooses again by the smallest D alone: that second choice is the one WeightWatcher reports, so it is
  the one made here;
- the chosen xmin is the first candidate with the smallest D; alpha, D and sigma = (alpha - 1)/sqrt(n)
  are that candidate's; xmax is the largest eigenvalue kept; num_pl_spikes counts all the layer's
  eigenvalues (the tiny ones too) >= xmin.

A fit WeightWatcher cannot make (no eigenvalue above the threshold, or a single one: WWFit raises, and
fit_powerlaw reports status "failed") gives alpha = D = sigma = xmin = num_pl_spikes = -1 and xmax None,
as WeightWatcher's table shows it. The warning is WeightWatcher's: "over-trained" when alpha < 2 (a failed
fit's -1 included), "under-trained" when alpha > 6.

The fit is deterministic (analyze() samples nothing: fit_powerlaw's `sample` is off). Scoring every
candidate is O(N^2), as in WWFit, done here in blocks of candidates instead of a Python loop, with exp
rather than a power (_ks_distances): about 3 ms for 1024 eigenvalues, 8 ms for 2048 and 0.3 s at the 15000
of max_evals (the powers took about 0.1 s for 1024 and 7 s for 15000, as WWFit's loop does).
"""
from __future__ import annotations

import numpy as np

EVALS_THRESH = 1e-5       # constants.EVALS_THRESH: eigenvalues at or below it are not fitted
SMALL_N_CUTOFF = 20       # WW_powerlaw.SMALL_N_CUTOFF: fewer values take the small-N estimator
SMALL_N_MIN_TAIL = 8      # WWFit.fit_powerlaw_smallN's k_min
SMALL_N_DEGENERATE = 1e-12  # a tail whose log sum is at most this is skipped (all values equal)
OVER_TRAINED_THRESH = 2.0   # constants.OVER_TRAINED_THRESH
UNDER_TRAINED_THRESH = 6.0  # constants.UNDER_TRAINED_THRESH
BLOCK_ELEMENTS = 1 << 16    # candidates are scored in blocks of about this many (row, value) pairs: 512 KB
                            # a block, which stays in the CPU's L2 cache between the passes over it


def fit_power_law(evals: np.ndarray) -> dict:
    """WeightWatcher's default power-law fit of a layer's eigenvalues (any order, zeros allowed):
    {alpha, xmin, xmax, D, sigma, num_pl_spikes, status, warning}."""
    evals = np.asarray(evals, dtype=np.float64)
    data = np.sort(evals[evals > EVALS_THRESH])
    if data.size < 2:  # WWFit fails on no value (data[0]) and on one (argmin of no candidate)
        return _result(-1.0, -1.0, None, -1.0, -1.0, -1, "failed")
    if data.size < SMALL_N_CUTOFF:
        alphas, ds, sigmas = _small_n_candidates(data)
    else:
        alphas, ds = _standard_candidates(data)
        sigmas = _sigmas(alphas)
    best = int(np.argmin(ds))  # WWFit.__init__: the first smallest D
    xmin = float(data[best])
    return _result(float(alphas[best]), xmin, float(data[-1]), float(ds[best]), float(sigmas[best]),
                   int(np.count_nonzero(evals >= xmin)), "success")


def _result(alpha, xmin, xmax, d, sigma, spikes, status) -> dict:
    if alpha < OVER_TRAINED_THRESH:
        warning = "over-trained"
    elif alpha > UNDER_TRAINED_THRESH:
        warning = "under-trained"
    else:
        warning = ""
    return {"alpha": alpha, "xmin": xmin, "xmax": xmax, "D": d, "sigma": sigma, "num_pl_spikes": spikes,
            "status": status, "warning": warning}


def _sigmas(alphas: np.ndarray) -> np.ndarray:
    """(alpha_i - 1) / sqrt(n_i), the standard error WWFit reports for each candidate."""
    return (alphas - 1.0) / np.sqrt(alphas.size + 1 - np.arange(alphas.size))


def _tail_log_sums(logs: np.ndarray) -> np.ndarray:
    """sum_{j >= i} log(x_j / x_i) for every candidate i (all but the last value)."""
    suffix = np.cumsum(logs[::-1])[::-1]
    counts = logs.size - np.arange(logs.size - 1)
    return suffix[:-1] - counts * logs[:-1]


def _standard_candidates(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WWFit.fit_power_law_standard: the MLE alpha and the KS distance of every candidate xmin."""
    total = data.size
    counts = (total - np.arange(total - 1)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = 1.0 + counts / _tail_log_sums(np.log(data))
    ds = np.ones(total - 1)
    valid = np.flatnonzero(alphas > 1.0)
    ds[valid] = _ks_distances(data, valid, alphas[valid], counts[valid])
    return alphas, ds


def _small_n_candidates(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WWFit.fit_powerlaw_smallN as WWFit.__init__ uses it: the bias-corrected alpha of the tails of at
    least 8 values (0 elsewhere), their KS distance (1 elsewhere) and the sigmas. When no tail qualifies,
    the method's fallback fits the whole data: alpha_0 and D_0 from it (alpha_0 stays 0 if its log sum is
    degenerate), set after the sigmas were computed, so sigma_0 stays (0 - 1) / sqrt(N)."""
    total = data.size
    counts = (total - np.arange(total - 1)).astype(np.float64)
    sums = _tail_log_sums(np.log(data))
    alphas, ds = np.zeros(total - 1), np.ones(total - 1)
    qualified = (counts >= SMALL_N_MIN_TAIL) & (sums > SMALL_N_DEGENERATE)
    fallback = not qualified.any()
    if fallback:  # the whole data (i = 0)
        if sums[0] <= SMALL_N_DEGENERATE:
            return alphas, ds, _sigmas(alphas)
        qualified[0] = True
    chosen = np.flatnonzero(qualified)
    alphas[chosen] = 1.0 + (counts[chosen] - 1.0) / sums[chosen]
    ds[chosen] = _ks_distances(data, chosen, alphas[chosen], counts[chosen])
    sigmas = _sigmas(np.zeros_like(alphas) if fallback else alphas)
    return alphas, ds, sigmas


def _ks_distances(data: np.ndarray, rows: np.ndarray, alphas: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """max_k |1 - (x_{i+k} / x_i)^(1 - alpha_i) - k / n_i| for each candidate i in rows (ascending), scored in
    blocks of candidates against the values from the block's first candidate on (O(N^2) work, bounded memory).

    The same numbers as WWFit's, computed with fewer passes over each block: the power as
    exp((1 - alpha_i) (log x_j - log x_i)) (numpy's exp is vectorised, its power is not), and 1 - k / n_i as
    (N - j) / n_i (k = j - i, n_i = N - i), one outer product; each D differs from WWFit's by rounding
    alone (~1e-16); an infinite alpha_i (equal values) takes the power's 1 ** -inf = 1 where the exponent
    is 0 * inf. The pairs j < i of a block (the corner left of its diagonal) are no part of a tail: set to 0
    before the maximum."""
    total = data.size
    logs = np.log(data)
    out = np.empty(rows.size)
    falls = alphas - 1.0                              # -(1 - alpha_i)
    shares = 1.0 / counts                             # 1 / n_i
    remaining = (total - np.arange(total)).astype(np.float64)  # N - j
    step = max(1, BLOCK_ELEMENTS // total)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, rows.size, step):
            stop = min(start + step, rows.size)
            block = rows[start:stop]
            first = int(block[0])
            gaps = np.subtract.outer(logs[block], logs[first:])  # log x_i - log x_j
            gaps *= falls[start:stop, None]                       # (1 - alpha_i) (log x_j - log x_i)
            np.exp(gaps, out=gaps)                                # (x_j / x_i) ** (1 - alpha_i)
            if np.isinf(falls[start:stop]).any():  # alpha_i = inf (a tail of equal values): 1 ** -inf is 1
                gaps[np.isnan(gaps)] = 1.0         # where the exponent's 0 * inf made NaN
            gaps -= np.multiply.outer(shares[start:stop], remaining[first:])  # minus (1 - k / n_i)
            np.abs(gaps, out=gaps)
            width = int(block[-1]) - first
            if width:
                corner = gaps[:, :width]
                corner[np.arange(first, first + width)[None, :] < block[:, None]] = 0.0
            out[start:stop] = gaps.max(axis=1)
    return out
