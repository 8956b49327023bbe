"""The long fuzz run, by hand (CI runs a short fixed-seed pass in test_fuzz.py):

    .venv/bin/python -m tests.fuzz.run --minutes 30 [--seed 1] [--keep /tmp/fuzz-bugs]

TensorFlow writes the seed checkpoints first (a few seconds); then inputs are mutated and run until the
time is up, and the figures are printed: inputs run, outcomes by input (ok or a bug kind), the errors
of our family reported, mutations used, inputs per second, and the first bugs with the inputs kept.
Exit status 1 when any bug was found.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", help="copy inputs that found a bug here")
    parser.add_argument("--fixtures", help="a folder tests.tf_fixtures.write_all already filled (skips TF)")
    args = parser.parse_args()

    from tests.fuzz.harness import Fuzzer, seeds_from
    from tests.tf_fixtures import Fixtures, write_all

    if args.fixtures:
        root = Path(args.fixtures)
        fixtures = Fixtures(**{name: root / path for name, path in FIXTURE_PATHS.items()})
    else:
        fixtures = write_all(Path(tempfile.mkdtemp(prefix="fuzz-seeds-")))
    results = Fuzzer(seeds_from(fixtures), seed=args.seed, keep=args.keep).run(seconds=args.minutes * 60)
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
