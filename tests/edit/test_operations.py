"""The typed remap operations: each renames names and TF2 object paths by one rule (the preview and the
object-graph rewrite share it), and each survives a plan file's JSON round trip."""
import pytest

from checkpoint_inspector.core.edit.shown_names import RenameShown
from checkpoint_inspector.core.edit.operations import (OPERATION_TYPES, AddPrefix, AddVariable, Cast, Drop, DropRegex, RegexRename,
                                  Rename, SetValues, StripPrefix)
from checkpoint_inspector.core.edit.plan import RemapPlan, preview
from checkpoint_inspector.core.errors import PlanError
from checkpoint_inspector.core.format.bundle.reader import CheckpointReader
from checkpoint_inspector.core.run.variables import describe_variables


@pytest.mark.parametrize("operation, path, expected", [
    (Rename(source="model/dense", target="model/encoder"), "model/dense/kernel/", "model/encoder/kernel/"),
    (Rename(source="model/dense", target="model/encoder"), "model/dense_1/kernel/", None),
    (RegexRename(pattern=r"^model/(\w+)/", replacement=r"net/\1/"), "model/dense/kernel/", "net/dense/kernel/"),
    (RegexRename(pattern="nothing", replacement="x"), "model/dense/", None),
    (AddPrefix(prefix="outer/"), "model/dense/", "outer/model/dense/"),
    (StripPrefix(prefix="model/"), "model/dense/", "dense/"),
    (StripPrefix(prefix="model/"), "optimizer/iter/", None),
    (Drop(names=["model/dense"]), "model/dense/", None),
    (Cast(name="model/dense", dtype="float16"), "model/dense/", None),
])
def test_each_operation_renames_paths_by_its_rule(operation, path, expected):
    assert operation.rename_name(path) == expected
    assert operation.renames == (expected is not None or isinstance(operation, (Rename, RegexRename, AddPrefix,
                                                                                StripPrefix)))


def test_the_plan_renames_object_paths_with_its_operations_in_order():
    plan = RemapPlan([StripPrefix(prefix="model/"), AddPrefix(prefix="net/"),
                      RegexRename(pattern="^net/dense", replacement="net/encoder"), Drop(names=["x"])])
    assert plan.rename_path("model/dense/kernel/") == "net/encoder/kernel/"
    assert plan.renames and not RemapPlan([Drop(names=["x"])]).renames


def test_the_preview_renames_keys_by_the_same_rule(tf_ckpts):
    variables = describe_variables(CheckpointReader(tf_ckpts.tf1_run / "model.ckpt-60"))
    for operation in (StripPrefix(prefix="dense/"), AddPrefix(prefix="net/"),
                      RegexRename(pattern="^dense/(.*)$", replacement=r"layer_\1")):
        result = preview(RemapPlan([operation]), variables)
        for planned in result.planned:
            if planned.source != "_CHECKPOINTABLE_OBJECT_GRAPH":
                assert planned.target == (operation.rename_name(planned.source) or planned.source)


def test_every_operation_survives_a_json_round_trip():
    operations = [Rename(source="a", target="b"), RegexRename(pattern="^a/(.*)", replacement=r"b/\1"),
                  AddPrefix(prefix="p/"), StripPrefix(prefix="p/"), Drop(names=["a", "b"]), DropRegex(pattern="Adam"),
                  Cast(name="a", dtype="bfloat16"), Cast(pattern="^a/", dtype="float16"),
                  SetValues(name="a", npy="values.npy"), SetValues(name="a", constant=0.5),
                  AddVariable(name="new", npy="new.npy", dtype="float32"),
                  RenameShown(pattern="/fc1/", replacement="/dense_1/")]
    assert {type(op) for op in operations} == set(OPERATION_TYPES.values())
    plan = RemapPlan(operations, slots_follow=False, name_based=True)
    again = RemapPlan.from_json(plan.to_json())
    assert again == plan


def test_arrays_edited_in_the_window_are_not_written_to_a_plan_file():
    import json

    import numpy as np

    plan = RemapPlan([SetValues(name="a", edited="in the value table", array=np.zeros(3))])
    assert json.loads(plan.to_json())["operations"] == [{"kind": "set_values", "name": "a",
                                                         "edited": "in the value table"}]


@pytest.mark.parametrize("text, message", [
    ('{"operations": [{"kind": "explode"}]}', "unknown operation 'explode'"),
    ('{"operations": [{"kind": "rename", "source": "a", "tagret": "b"}]}', "unknown field"),
    ('{"operations": [{"kind": "set_values", "name": "a", "array": [1, 2]}]}', "arrays are not part of a plan"),
    ("[1, 2", "not a remap plan"),
])
def test_a_bad_plan_file_is_named_in_the_error(text, message):
    with pytest.raises(PlanError, match=message) as caught:
        RemapPlan.from_json(text, "my-plan.json")
    assert caught.value.path == "my-plan.json"


def test_names_tensorflow_wrote_are_kept_while_another_is_renamed(tf_ckpts):
    """An Estimator's slot key may hold `//` (slot_creator's cut, tests/estimator_fixture.py): a plan that
    renames something else keeps it; a plan that would make such a name is refused."""
    reader = CheckpointReader(tf_ckpts.estimator_like)
    variables = describe_variables(reader)
    odd = [v.name for v in variables if "//" in v.name]
    assert odd, "the fixture's slots under an enclosing scope"
    kept = preview(RemapPlan([RegexRename(pattern="^global_step$", replacement="step")]), variables)
    assert not kept.problems and set(odd) <= {p.target for p in kept.planned}
    made = preview(RemapPlan([RegexRename(pattern="^global_step$", replacement="a//b")]), variables)
    assert any("empty scope" in problem for problem in made.problems)
