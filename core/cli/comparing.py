"""The commands that compare: `diff A B` (what changed between two checkpoints) and `check CKPT --against
TARGET` (will it restore, and the plan that makes it). Exit status as `diff`'s: 0 same / compatible,
1 different / not compatible, 2 bad input."""
from __future__ import annotations

import json

from ..errors import UsageError
from ..formatting import format_shape
from . import program_name
from .output import print_table
from .reading import open_checkpoint

EXIT_SAME, EXIT_DIFFERENT = 0, 1
KIND_TITLES = {"variable": "weights", "slot": "optimizer slots", "optimizer": "optimizer state",
               "bookkeeping": "bookkeeping", "config": "configuration"}


def command_diff(args) -> int:
    from ..analysis.comparison.comparison import compare_checkpoints
    from ..executor import executor_for
    from ..jobs import run_to_end

    if args.atol < 0 or args.rtol < 0:
        raise UsageError("diff", "--atol and --rtol cannot be negative")
    if (args.atol or args.rtol) and not args.values:
        raise UsageError("diff", "--atol and --rtol need --values (tolerances apply to values read)")
    if args.dask and not args.values:
        raise UsageError("diff", "--dask needs --values (without it, the checksums the files store are compared)")
    _, reader_a = open_checkpoint(args.a, args.step_a)
    _, reader_b = open_checkpoint(args.b, args.step_b)
    with executor_for(args.dask) as executor:  # threads, or a Dask cluster's workers for the values
        comparison = run_to_end(compare_checkpoints(reader_a, reader_b, args.values, args.atol, args.rtol,
                                                    executor=executor if args.dask else None))
    if args.json:
        print(json.dumps(comparison.record()))
    else:
        _print_comparison(comparison, args.all)
    return EXIT_DIFFERENT if comparison.different else EXIT_SAME


def _print_comparison(comparison, show_all: bool) -> None:
    print(f"A: {comparison.a}\nB: {comparison.b}")
    for kind, title in KIND_TITLES.items():
        only_a = [s for s in comparison.only_a if s.kind == kind]
        only_b = [s for s in comparison.only_b if s.kind == kind]
        changed = [c for c in comparison.changed if c.kind == kind]
        equal = sum(1 for name in comparison.equal if comparison.kinds.get(name) == kind)
        unchecked = sum(1 for name in comparison.unchecked if comparison.kinds.get(name) == kind)
        renamed = [r for r in comparison.shown_renames if comparison.kinds.get(r.name) == kind]
        if not (only_a or only_b or changed or equal or unchecked):
            continue
        counts = [f"{len(changed)} changed", f"{len(only_a)} only in A", f"{len(only_b)} only in B", f"{equal} equal"]
        counts += [f"{unchecked} not compared"] if unchecked else []
        counts += [f"{len(renamed)} renamed"] if renamed else []
        print(f"\n{title}: {', '.join(counts)}")
        if kind != "variable" and not show_all and (only_a or only_b or changed):
            print("  (listed with --all)")
            continue
        shown = comparison.shown
        rows = [("only in A", shown.get(s.name, s.name), s.dtype_name, format_shape(s.shape), "") for s in only_a]
        rows += [("only in B", shown.get(s.name, s.name), s.dtype_name, format_shape(s.shape), "") for s in only_b]
        rows += [(c.change, shown.get(c.name, c.name), _pair(c.a.dtype_name, c.b.dtype_name),
                  _pair(format_shape(c.a.shape), format_shape(c.b.shape)), _numbers(c.values)) for c in changed]
        rows += [("renamed", f"{r.a} → {r.b}", r.signature.dtype_name, format_shape(r.signature.shape),
                  "same stored key, named otherwise by the object graph") for r in renamed]
        if rows:
            print_table(("", "name", "dtype", "shape", "difference"), rows)
    if comparison.unchecked and not comparison.values_read:
        print(f"\n{len(comparison.unchecked)} variables with the same shape and dtype are stored without checksums: "
              f"compare their values with --values")
    elif not comparison.values_read:
        print("\nvalues compared by the checksums the files store; --values reads them and says how far apart they are")
    if comparison.different:
        print(f"\nA and B differ: {len(comparison.changed)} changed, {len(comparison.only_a)} only in A, "
              f"{len(comparison.only_b)} only in B"
              + (f", {len(comparison.shown_renames)} renamed" if comparison.shown_renames else ""))
    else:
        how = "read" if comparison.values_read else "compared by checksum"
        print(f"\nA and B hold the same {len(comparison.equal) + len(comparison.unchecked)} variables"
              + (f", the same values ({how})" if comparison.equal else "")
              + (f"; {len(comparison.unchecked)} not compared" if comparison.unchecked else ""))
    if comparison.renames:
        print("\nlikely renames (A → B):")
        for match in comparison.renames:
            print(f"  {match.old} → {match.new}   [{match.evidence}: {match.detail}]")
        print(f"as a remap plan: {program_name()} remap A NEW " + " ".join(
            f"--rename '^{_quoted(m.old)}$={m.new}'" for m in comparison.renames[:20]))


def _pair(a: str, b: str) -> str:
    return a if a == b else f"{a} → {b}"


def _numbers(values) -> str:
    if values is None:
        return "checksums differ"
    parts = [f"{values.differing:,} of {values.count:,} differ"]
    if values.max_abs_diff is not None:
        parts.append(f"max |a-b| {values.max_abs_diff:.4g}")
    if values.rel_l2 is not None:
        parts.append(f"rel l2 {values.rel_l2:.4g}")
    return ", ".join(parts)


def _quoted(name: str) -> str:
    import re

    return re.escape(name).replace("'", "'\\''")


def command_check(args) -> int:
    from ..edit.fix_plan import check_and_plan
    from ..jobs import run_to_end
    from ..run.variables import describe_variables

    checkpoint, reader = open_checkpoint(args.ckpt, args.step)
    report, fix = run_to_end(check_and_plan(checkpoint.prefix, describe_variables(reader), args.against))
    target = report.target
    if args.plan_out:
        from ..atomic_write import atomic_write

        with atomic_write(args.plan_out, "w", encoding="utf-8") as f:
            f.write(fix.plan.to_json())
    verified = None
    if args.verify:
        from ..edit.verify import verify_restore

        verified = run_to_end(verify_restore(checkpoint.prefix, target))
    if args.json:
        extra = {"verified": {"ok": verified.ok, "by": verified.by, "messages": verified.mismatches}} if verified else {}
        print(json.dumps(report.record() | {"plan": json.loads(fix.plan.to_json()), "steps": fix.steps,
                                            "unresolved": fix.unresolved} | extra))
    else:
        _print_check(report, fix, args.plan_out)
        if verified:
            print(f"\nrestore: {verified.summary()}")
    compatible = report.compatible and (verified is None or verified.ok)
    return EXIT_SAME if compatible else EXIT_DIFFERENT


def _print_check(report, fix, plan_out: str | None) -> None:
    print(f"checkpoint: {report.checkpoint}\ntarget: {report.target.description} ({report.target.path})")
    verdict = "compatible: every tensor the target asks for is there with its shape and dtype" if report.compatible \
        else "NOT compatible"
    print(f"{verdict} ({len(report.matched)} fit, {len(report.missing)} missing, {len(report.mismatched)} "
          f"mismatched, {len(report.unexpected)} not asked for)")
    rows = [("missing", s.name, s.dtype_name, format_shape(s.shape) if s.shape is not None else "?") for s in report.missing]
    rows += [("mismatched", m.name, _pair(m.found.dtype_name, m.expected.dtype_name),
              _pair(format_shape(m.found.shape), format_shape(m.expected.shape) if m.expected.shape is not None else "?"))
             for m in report.mismatched]
    rows += [("unexpected", s.name, s.dtype_name, format_shape(s.shape)) for s in report.unexpected]
    if rows:
        print()
        print_table(("", "name", "dtype (found → expected)", "shape"), rows)
    if report.compatible:
        return
    print("\nproposed plan:" if fix.plan.operations else "\nno plan found")
    evidence: dict[str, list[str]] = {}
    for step in fix.steps:  # one line per operation, with the evidence of every pair it fixes
        evidence.setdefault(step["operation"], []).append(f"{step['evidence']}: {step['detail']}")
    for operation, reasons in evidence.items():
        print(f"  {operation}   [{'; '.join(reasons)}]")
    for item in fix.unresolved:
        print(f"unresolved: {item['name'] + ': ' if item['name'] else ''}{item['reason']}")
    if plan_out:
        print(f"plan written to {plan_out}: {program_name()} remap {report.checkpoint} NEW --plan {plan_out}")
    elif fix.plan.operations:
        print(f"write it with --plan-out PLAN.json, then: {program_name()} remap CKPT NEW --plan PLAN.json")
