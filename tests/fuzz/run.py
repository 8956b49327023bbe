"""The long fuzz run, by hand (CI runs a short fixed-seed pass in test_fuzz.py):

    .venv/bin/python -m tests.fuzz.run --minutes 30 --readers all [--seed 1] [--out /tmp/fuzz-bugs]
        [--fixtures FOLDER] [--no-engine]

TensorFlow and Keras write the seeds first (half a minute; --fixtures reuses a folder
tests.tf_fixtures.write_all filled): checkpoints V2 and V1, a run with its state file, `.keras`
(stored, DEFLATE, LZMA, nested), `.weights.h5`, legacy `.h5`, event files, a `.meta`, a SavedModel.
Then mutants are made and run until the time is up, seeds in turn, each through the CLI's commands
(and TF checkpoints through the engine's read path with its value oracle too). Printed: executions per
reader with the count of each outcome class, the failure classes (kind / reader / command) and the
first input of each. Every input that found a bug is copied under --out (default: a new folder in
/tmp, never in the repository) with REPRODUCE.txt, the command line that fails. Exit status 1 when any
bug was found.

--readers: `all` or a comma-separated list of v2, v1, state, keras_archive, keras_weights,
keras_legacy_h5, events, graph_meta, saved_model.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def main() -> int:
    from tests.fuzz.seeds import READERS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--readers", default="all", help="all, or some of: " + ", ".join(READERS))
    parser.add_argument("--out", "--keep", dest="out", help="copy inputs that found a bug here (default: a new "
                                                             "folder in /tmp)")
    parser.add_argument("--fixtures", help="a folder tests.tf_fixtures.write_all already filled (skips TF's "
                                           "checkpoints; the event files are still written)")
    parser.add_argument("--no-engine", action="store_true", help="only the CLI's commands on TF checkpoints")
    args = parser.parse_args()
    readers = READERS if args.readers == "all" else tuple(r.strip() for r in args.readers.split(","))
    unknown = set(readers) - set(READERS)
    if unknown:
        parser.error(f"unknown readers {sorted(unknown)}; choose from {', '.join(READERS)}")

    from tests.fuzz.harness import Fuzzer
    from tests.fuzz.seeds import seeds_for
    from tests.tf_fixtures import Fixtures, write_all

    if args.fixtures:
        root = Path(args.fixtures)
        fixtures = Fixtures(**{name: root / path for name, path in FIXTURE_PATHS.items()})
    else:
        fixtures = write_all(Path(tempfile.mkdtemp(prefix="fuzz-fixtures-")))
    seeds = seeds_for(fixtures, Path(tempfile.mkdtemp(prefix="fuzz-seeds-")), readers)
    out = args.out or tempfile.mkdtemp(prefix="fuzz-bugs-")
    print(f"{len(seeds)} seeds ({', '.join(s.name for s in seeds)}); bugs kept in {out}", flush=True)
    results = Fuzzer(seeds, seed=args.seed, keep=out, api=not args.no_engine).run(seconds=args.minutes * 60)
    print(results.report())
    return 1 if results.bug_count else 0


FIXTURE_PATHS = {"tf1_run": "tf1_run", "tf1_kept_run": "tf1_kept_run", "tf1_partial": "partial/partial.ckpt",
                 "tf2_keras_run": "tf2_keras_run", "tf2_checkpoint_plain": "tf2_plain/plain",
                 "sharded": "sharded/sharded", "partitioned": "partitioned/partitioned.ckpt",
                 "all_dtypes": "all_dtypes/all_dtypes", "saved_model": "saved_model", "many_vars": "many_vars/many_vars",
                 "nested_runs": "nested_runs", "stale_abs_run": "stale_abs_run", "tf2_slot_keys": "tf2_slot_keys/slots",
                 "v1_run": "v1_run", "v1_sharded": "v1_sharded", "estimator_like": "estimator/model.ckpt",
                 "keras_cp_run": "keras_cp_run", "optimizer_steps": "optimizer_steps/final", "serving": "serving",
                 "object_config": "object_config/ckpt", "sgd_state": "sgd_state/ckpt",
                 "cnn_run": "cnn_run", "keras_files": "keras_files", "keras2_h5": "keras2/model.h5",
                 "keras_run": "keras_run"}

if __name__ == "__main__":
    sys.exit(main())
