"""`diff` and `check` as a script runs them: the JSON the issue promises, exit 0 / 1 / 2, one line on stderr
for bad input, and `check --plan-out` then `remap --plan` giving a checkpoint TensorFlow restores."""
import json

import numpy as np

from tests.cli.test_cli import cli


def test_diff_json_of_two_steps_and_its_exit_status(tf_ckpts):
    run = tf_ckpts.tf1_run
    result = cli("diff", run, run, "--step-a", 30, "--step-b", 60, "--values", "--json", check=False)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert set(report) >= {"a", "b", "only_a", "only_b", "changed", "equal", "renames"}
    kernel = next(c for c in report["changed"] if c["name"] == "dense/kernel")
    assert kernel["change"] == "values" and kernel["a"] == {"dtype": "float32", "shape": [4, 3]}
    assert kernel["differing"] == 12 and kernel["max_abs_diff"] > 0 and kernel["rel_l2"] > 0
    same = cli("diff", run, run, "--json", check=False)
    assert same.returncode == 0 and json.loads(same.stdout)["equal"] == 3


def test_diff_text_keeps_optimizer_slots_to_a_count(tf_ckpts):
    run = tf_ckpts.tf2_keras_run
    text = cli("diff", run / "ckpt-2", run / "ckpt-4", check=False).stdout
    assert "weights:" in text and "optimizer state:" in text and "(listed with --all)" in text
    everything = cli("diff", run / "ckpt-2", run / "ckpt-4", "--all", check=False).stdout
    assert len(everything.splitlines()) > len(text.splitlines())


def test_check_plan_out_then_remap_restores_into_the_graph(compare_cases, tmp_path):
    import tensorflow as tf

    plan = tmp_path / "plan.json"
    result = cli("check", compare_cases.renamed_ckpt, "--against", compare_cases.renamed_meta, "--json",
                 "--plan-out", plan, check=False)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["compatible"] is False and report["unresolved"] == []
    assert {m["name"] for m in report["missing"]} >= {"hidden/weights", "logits/biases"}
    assert all(set(m) >= {"name", "dtype", "shape"} for m in report["missing"] + report["unexpected"])
    assert json.loads(plan.read_text())["operations"] == report["plan"]["operations"]
    fixed = tmp_path / "fixed" / "model.ckpt"
    cli("remap", compare_cases.renamed_ckpt, fixed, "--plan", plan)
    after = cli("check", fixed, "--against", compare_cases.renamed_meta, "--json", check=False)
    assert after.returncode == 0 and json.loads(after.stdout)["compatible"] is True
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        tf.compat.v1.train.import_meta_graph(str(compare_cases.renamed_meta)).restore(session, str(fixed))
        weights = session.run(next(v for v in tf.compat.v1.global_variables() if v.op.name == "hidden/weights"))
    original = tf.train.load_checkpoint(str(compare_cases.renamed_ckpt)).get_tensor("layer1/weights")
    assert np.array_equal(weights, original)


def test_check_mismatched_json(compare_cases):
    result = cli("check", compare_cases.float32_ckpt, "--against", compare_cases.float16_meta, "--json", check=False)
    report = json.loads(result.stdout)
    assert report["mismatched"] == [{"name": "w", "kind": "variable", "expected": {"dtype": "float16", "shape": [3, 4]},
                                     "found": {"dtype": "float32", "shape": [3, 4]}}]
    assert report["plan"]["operations"] == [{"kind": "cast", "name": "w", "dtype": "float16"}]


def test_bad_inputs_are_one_line_and_exit_2(compare_cases, tmp_path):
    junk = tmp_path / "junk.meta"
    junk.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    for args in (("diff", tmp_path / "nothing", compare_cases.merged_ckpt),
                 ("check", compare_cases.merged_ckpt, "--against", junk),
                 ("diff", compare_cases.merged_ckpt, compare_cases.merged_ckpt, "--atol", "-1", "--values"),
                 ("check", compare_cases.merged_ckpt)):
        result = cli(*args, check=False)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert str(junk) in cli("check", compare_cases.merged_ckpt, "--against", junk, check=False).stderr
