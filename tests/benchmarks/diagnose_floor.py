"""bench_diagnose's floor, LAPACK alone, and what it is checked by: the child that times the eigenvalues of
every matrix WeightWatcher analyses (read into memory before its clock starts), the byte ranges of those
matrices in every checkpoint (from our index), the ways of computing the eigenvalues measured (svd or the
smaller Gram matrix, float64 or float32) and which of them are accurate enough to be the floor (what
WeightWatcher reports from the eigenvalues within the oracle tests' tolerances of its own SVD's), and the
check of each floor's sums of eigenvalues against our norms. bench_diagnose.py's docstring says why."""
from __future__ import annotations

import json

import numpy as np

ALPHA_RTOL = 1e-2      # the tolerance for alpha
NORM_RTOL = 1e-6       # and for the norms and the stable rank (and here for xmin, D, the sum, the largest)

# The floor: every matrix's bytes read into memory first (untimed), then LAPACK alone on them, timed.
# A kernel is a stack of matrices: a dense kernel one, a conv kernel (kh, kw, a, b) its kh*kw positions.
FLOOR = """\
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np

def svd64(stack):
    return np.linalg.svd(stack.astype(np.float64), compute_uv=False) ** 2

def svd32(stack):
    return np.linalg.svd(stack, compute_uv=False).astype(np.float64) ** 2

def _smaller_side(stack):
    return stack.transpose(0, 2, 1) if stack.shape[1] < stack.shape[2] else stack

def gram64(stack):
    wide = _smaller_side(stack.astype(np.float64))
    return np.linalg.eigvalsh(np.matmul(wide.transpose(0, 2, 1), wide))

def gram32(stack):
    narrow = _smaller_side(stack)
    return np.linalg.eigvalsh(np.matmul(narrow.transpose(0, 2, 1), narrow)).astype(np.float64)

WAYS = {"svd64": svd64, "svd32": svd32, "gram64": gram64, "gram32": gram32}

def load(kernels):
    stacks = []
    for path, offset, count, shape in kernels:
        values = np.fromfile(path, dtype=np.float32, count=count, offset=offset)
        stacks.append(values.reshape((-1,) + tuple(shape[-2:])))
    return stacks

if __name__ == "__main__":
    way, pool = WAYS[sys.argv[1]], sys.argv[2] == "pool"
    stacks = load(json.load(open(sys.argv[3])))
    started = time.perf_counter()
    if pool:  # the matrices on two threads (with OPENBLAS_NUM_THREADS=1: one core each)
        with ThreadPoolExecutor(2) as threads:
            evals = list(threads.map(way, stacks))
    else:
        evals = [way(stack) for stack in stacks]
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "sums": [float(e.sum()) for e in evals]}))
"""

FLOORS = {  # key: (way, on two threads?, OpenBLAS threads: None for its default); all but svd64 warmed up
    "floor-gram64": ("gram64", False, None),
    "floor-gram64-1": ("gram64", False, 1),
    "floor-gram64-pool": ("gram64", True, 1),
    "floor-svd64": ("svd64", False, None),
}


def analysed_kernels(checkpoints) -> tuple[list[dict], list[list]]:
    """(per kernel WeightWatcher analyses: {name, label, layer, kind, shape, judged: whether the diagnosis'
    spectral rule judges it, and so has its metrics in the table}; per checkpoint the floor's [data file,
    offset, count, shape] of each, in the same order)."""
    from checkpoint_inspector.core.analysis.diagnosis.diagnosis_tensors import SPECTRAL_MIN_EVALS
    from checkpoint_inspector.core.analysis.spectral.spectral import eigenvalue_count, kind_of_shape, ww_analyses
    from checkpoint_inspector.core.format.readers import open_reader
    from checkpoint_inspector.core.run.variables import describe_variables

    kernels, sources = [], []
    for index, info in enumerate(checkpoints):
        with open_reader(info.prefix) as reader:
            if index == 0:
                for variable in describe_variables(reader):
                    shape, dtype = tuple(variable.entry.shape), variable.entry.dtype_name
                    kind = kind_of_shape(shape)
                    if variable.kind == "variable" and dtype == "float32" and kind and ww_analyses(shape, kind):
                        kernels.append({"name": variable.name, "label": variable.display_name,
                                        "layer": variable.display_name.split("/")[-2], "kind": kind,
                                        "shape": list(shape),
                                        "judged": eigenvalue_count(shape, kind) >= SPECTRAL_MIN_EVALS})
            column = []
            for kernel in kernels:
                found = reader.tensor_range(kernel["name"])
                column.append([found.path, found.offset, found.size // 4, kernel["shape"]])
            sources.append(column)
    return kernels, sources


def number(value) -> float:
    """A JSON table cell as a float (None or a string: NaN)."""
    return float("nan") if value is None or isinstance(value, str) else float(value)


def check_floor(ours: dict, floor_runs: dict, kernels: list[dict]) -> str:
    """Each floor way's sums of eigenvalues (floor_runs: {key: its first bench_trajectory.ChildRun}) against our
    norm (10 ** log_norm; a conv's without its 1/2)."""
    table = ours["table"]
    row_of = {name: row for row, name in enumerate(table["variables"])}
    worst = {}
    for key, run in floor_runs.items():
        sums = json.loads(run.stdout)["sums"]
        for index, total in enumerate(sums):
            column, kernel = divmod(index, len(kernels))
            if not kernels[kernel]["judged"]:
                continue
            mine = 10 ** number(table["metrics"]["log_norm"][row_of[kernels[kernel]["name"]]][column])
            mine /= 0.5 if kernels[kernel]["kind"] == "conv" else 1.0
            difference = abs(mine - total) / total
            if not difference <= NORM_RTOL:
                raise RuntimeError(f"{key}: {kernels[kernel]['label']} at checkpoint {column}: sum of eigenvalues "
                                   f"{total!r}, ours {mine!r} ({difference:.1e}, limit {NORM_RTOL:.0e})")
            worst[key] = max(worst.get(key, 0.0), difference)
    return ", ".join(f"{key} {value:.1e}" for key, value in worst.items())


def floor_accuracy(sources: list[list]) -> dict[str, dict[str, float]]:
    """Per floor way, the largest relative difference from svd64's (WeightWatcher's SVD) of what WeightWatcher
    reports from the eigenvalues, over the matrices of the first, middle and last checkpoints (untimed, in this
    process): alpha, xmin and D of the power-law fit (core.analysis.spectral.spectral_fit, WeightWatcher's fit, which
    the oracle tests hold to WeightWatcher itself), the sum and the largest eigenvalue."""
    from checkpoint_inspector.core.analysis.spectral.spectral_fit import fit_power_law

    namespace: dict = {"__name__": "bench_diagnose_floor"}
    exec(FLOOR, namespace)
    ways = namespace["WAYS"]
    worst = {way: dict.fromkeys(("alpha", "xmin", "D", "sum", "max"), 0.0) for way in ways}
    for column in sorted({0, len(sources) // 2, len(sources) - 1}):
        for stack in namespace["load"](sources[column]):
            found = {way: np.sort(function(stack).ravel()) for way, function in ways.items()}
            reference = found["svd64"]
            fits = {way: fit_power_law(values) for way, values in found.items()}
            for way, values in found.items():
                measured = {"alpha": (fits[way]["alpha"], fits["svd64"]["alpha"]),
                            "xmin": (fits[way]["xmin"], fits["svd64"]["xmin"]),
                            "D": (fits[way]["D"], fits["svd64"]["D"]),
                            "sum": (values.sum(), reference.sum()), "max": (values[-1], reference[-1])}
                for what, (mine, theirs) in measured.items():
                    worst[way][what] = max(worst[way][what], abs(mine - theirs) / abs(theirs))
    return worst


def accurate(difference: dict[str, float]) -> bool:
    """Within the oracle tests' tolerances (tests/analysis/test_spectral.py): alpha 1e-2, the rest 1e-6."""
    return all(value <= (ALPHA_RTOL if what == "alpha" else NORM_RTOL) for what, value in difference.items())
