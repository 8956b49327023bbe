"""“Copy as code” runs: each snippet is executed as a person would paste it (in a fresh Python with
TensorFlow, h5py), and what it reads must equal our reader's value; the restore mapping of a saved remap
restores the original checkpoint into the renamed graph with TensorFlow's own init_from_checkpoint.

The fixtures' snippets are started together when the first of their tests asks, two at a time (each
fresh Python spends most of its time importing TensorFlow, and a core would otherwise wait)."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.export.code_snippets import reading_code, restore_mapping_code
from checkpoint_inspector.core.format.readers import open_reader
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.loading import checkpoint_at
from checkpoint_inspector.core.run.variables import describe_variables


def _run_snippet(code: str, tmp_path) -> np.ndarray:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "value.npy"
    script = code + f"\nimport numpy\nnumpy.save({str(out)!r}, value, allow_pickle=True)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240,
                            env={"TF_CPP_MIN_LOG_LEVEL": "2", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-2000:]
    return np.load(out, allow_pickle=True)


CASES = ("tf1", "v1", "partitioned", "saved_model", "keras", "weights_h5", "legacy_h5")


def _shown(tf_ckpts, case):
    """The case's reader and the variable copied as code: its largest numeric variable (a partitioned one
    for `partitioned`)."""
    path = {"tf1": tf_ckpts.tf1_run, "v1": tf_ckpts.v1_run, "partitioned": tf_ckpts.partitioned,
            "saved_model": tf_ckpts.saved_model, "keras": tf_ckpts.keras_files / "model.keras",
            "weights_h5": tf_ckpts.keras_files / "model.weights.h5", "legacy_h5": tf_ckpts.keras_files / "legacy.h5"}[case]
    _, reader = checkpoint_at(str(path), take_first=True)
    variables = [v for v in describe_variables(reader) if v.entry.is_numeric and v.kind == "variable"]
    if case == "partitioned":
        variables = [v for v in variables if v.entry.is_partitioned]
    return reader, max(variables, key=lambda v: v.entry.num_elements).name


@pytest.fixture(scope="module")
def pasted(tf_ckpts, tmp_path_factory):
    """{case: the future value its copied code reads}: every case's code made and run in a worker thread,
    two at a time; whatever fails (making the code, running it) fails that case's test only."""
    root = tmp_path_factory.mktemp("snippets")
    with ThreadPoolExecutor(2) as pool:
        yield {case: pool.submit(lambda case=case: _run_snippet(reading_code(*_shown(tf_ckpts, case)), root / case))
               for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_the_copied_code_reads_what_we_show(tf_ckpts, pasted, case):
    value = pasted[case].result()
    reader, name = _shown(tf_ckpts, case)
    np.testing.assert_array_equal(value, reader.read(name))
    assert value.dtype == reader.read(name).dtype


def test_a_key_with_quotes_and_backslashes_stays_exact(tmp_path):
    import tensorflow as tf

    prefix = str(tmp_path / "odd's folder" / "ckpt")  # a backslash in a path: TF globs it away
    name = 'scope/it\'s "odd"\\name'
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=[name], shape_and_slices=[""], tensors=[tf.constant([1.5, 2.5])])
    value = _run_snippet(reading_code(open_reader(prefix), name), tmp_path)
    assert list(value) == [1.5, 2.5]


def test_the_restore_mapping_restores_the_original_into_the_renamed_graph(compare_cases, tmp_path):
    """A TF1 graph made with the new names (hidden/, logits/) restores the original checkpoint's weights
    (layer1/, layer2/) through the snippet's init_from_checkpoint, values equal."""
    import tensorflow as tf

    source = str(compare_cases.renamed_ckpt)
    reader = open_reader(source)
    variables = describe_variables(reader)
    weights = {v.name for v in variables if v.kind == "variable"}
    plan = RemapPlan([RegexRename(pattern="^layer1/", replacement="hidden/"),
                      RegexRename(pattern="^layer2/", replacement="logits/")])
    renames = preview(plan, variables).renames
    code = restore_mapping_code(source, str(tmp_path / "copy"), renames, SourceKind.V2_BUNDLE, weights)
    assert "init_from_checkpoint" in code and "'layer1/weights': 'hidden/weights'" in code
    assert "Adam" not in code.split("init_from_checkpoint")[1]  # the optimizer makes its slots afresh
    mapping_code = code[code.index("tf.compat.v1.train.init_from_checkpoint"):]
    renamed_weights = {new: old for old, new in renames.items() if old in weights and old != new}
    assert len(renamed_weights) == 4
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        made = {new: tf.compat.v1.get_variable(new, shape=reader.entry(old).shape, dtype=reader.entry(old).dtype_name)
                for new, old in renamed_weights.items()}
        exec(mapping_code, {"tf": tf})
        session.run(tf.compat.v1.global_variables_initializer())
        for new, old in renamed_weights.items():
            np.testing.assert_array_equal(session.run(made[new]), reader.read(old))
