"""The series of what `scalars --json` printed, {"runs": {RUN: {TAG: points}}}, by one name each: the run
and the tag joined as TensorBoard's logdir shows them (`train/loss`; the tag alone for the folder itself),
for tests that compare them with readers keyed so."""
from __future__ import annotations


def series_by_name(record: dict) -> dict[str, list[dict]]:
    return {f"{run}/{tag}" if run else tag: points
            for run, tags in record["runs"].items() for tag, points in tags.items()}
