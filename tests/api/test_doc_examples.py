"""docs/api.md's examples run as a notebook user would copy them, on runs TensorFlow and Keras wrote, and
print what TensorFlow says of those runs."""
from __future__ import annotations

import sys

import pytest

from tests.api.doc_examples import example_blocks, run_example
from tests.api.example_runs import write_example_runs


@pytest.fixture(scope="module")
def example_folder(tmp_path_factory):
    return write_example_runs(tmp_path_factory.mktemp("api_examples"))


def test_the_page_has_its_examples():
    blocks = example_blocks()
    assert len(blocks) >= 5
    assert all("import checkpoint_inspector as ci" in block for block in blocks)


@pytest.mark.parametrize("number", range(len(example_blocks())))
def test_each_example_runs(number, example_folder):
    result = run_example(example_blocks()[number], sys.executable, example_folder, checkout=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip()


def test_the_first_example_prints_tensorflows_steps(example_folder):
    import tensorflow as tf

    state = tf.train.get_checkpoint_state(str(example_folder / "runs" / "keras_adam"))
    steps = sorted(int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths)
    printed = run_example(example_blocks()[0], sys.executable, example_folder, checkout=True).stdout.splitlines()
    assert printed[0] == str(steps)
