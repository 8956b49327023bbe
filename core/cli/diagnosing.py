"""The `diagnose` command: what went wrong in a run's training, from its checkpoints alone
(core.analysis.diagnosis.diagnosis). Exit 0 when nothing is found, 1 with findings, 2 on bad input (core.cli.entry)."""
from __future__ import annotations

import json
import math
import sys

from ..jobs import run_to_end
from ..run.discovery import discover
from .output import print_table
from .training import NON_FINITE_JSON

EXIT_FINDINGS = 1


def command_diagnose(args) -> int:
    from ..analysis.diagnosis.diagnosis import diagnose, parse_kinds, parse_step_range
    from ..errors import CorruptCheckpointError
    from ..executor import executor_for

    kinds = parse_kinds(args.kinds)
    step_range = parse_step_range(args.step_range)
    run = discover(args.path).single_run()
    with executor_for(args.dask) as executor:
        diagnosis = run_to_end(diagnose(run.checkpoints, kinds, step_range, executor))
    # No checkpoint could be read: that is the answer (not merely no rows: see command_overview).
    if diagnosis.problems and not diagnosis.variables and all(p in diagnosis.problems for p in diagnosis.prefixes):
        prefix, problem = next(iter(diagnosis.problems.items()))
        raise CorruptCheckpointError(prefix, problem if problem.startswith(prefix) else f"cannot be read ({problem})")
    for problem in diagnosis.problems.values():  # what could not be read leaves gaps; say why
        print(f"warning: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(_finite({"run": run.folder, "findings": [f.to_json() for f in diagnosis.findings],
                                  "table": diagnosis.table_json()})))
    else:
        steps = [s for s in diagnosis.steps if s is not None]
        span = f"steps {steps[0]}..{steps[-1]}" if steps else "no steps"
        print(f"{len(diagnosis.findings)} findings in {len(diagnosis.steps)} checkpoints ({span}) of {run.folder}")
        if diagnosis.findings:
            print_table(("severity", "kind", "variables", "first step", "summary"),
                        [(f.severity, f.kind, f.labels_in_brief(), "-" if f.first_step is None else str(f.first_step),
                          f.summary) for f in diagnosis.findings], right={3})
    return EXIT_FINDINGS if diagnosis.findings else 0


def _finite(value):
    """The record with every non-finite number as the string NON_FINITE_JSON gives it ("NaN", "Infinity",
    "-Infinity"), numpy numbers as plain ones."""
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    if isinstance(value, float) or type(value).__module__ == "numpy":
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, float) and not math.isfinite(number):
            return json.loads(NON_FINITE_JSON[repr(number)])
        return number
    return value
