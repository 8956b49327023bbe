"""The browser's columns, made column by column for speed, equal what each variable's own names give:
odd names included (empty parts, a leading or trailing slash, a newline, the same name shown twice)."""
from checkpoint_inspector.core.format.bundle.entry import BundleEntry
from checkpoint_inspector.core.run.variables import VariableInfo
from checkpoint_inspector.gui.browser.visible_set import VisibleSet

NAMES = ["a/b/kernel", "a//b", "/lead", "trail/", "/", "x\ny/z", "dense/kernel/Adam", "dense/kernel", "Ünï/cödé"]


def _infos():
    infos = []
    for n, name in enumerate(sorted(NAMES)):
        entry = BundleEntry(name, name.encode(), 1, (n + 1,), 0, 0, 4 * (n + 1), 0)
        slot = name == "dense/kernel/Adam"
        infos.append(VariableInfo(entry, "slot" if slot else "variable", variable_name="own" if n % 2 else "",
                                  slot_of="dense/kernel" if slot else None, slot_name="Adam" if slot else None))
    return infos


def test_columns_equal_the_per_variable_definitions():
    infos = _infos()
    visible = VisibleSet.prepared(infos)
    assert visible.parts == [tuple(p for p in v.display_name.split("/") if p) or (v.display_name,) for v in infos]
    assert visible.haystacks == ["\n".join(n for n in (v.display_name, v.name, v.variable_name) if n).casefold()
                                 for v in infos]
    assert visible.position == {v.name: i for i, v in enumerate(infos)}
    slot = visible.position["dense/kernel/Adam"]
    assert visible.slot_parent[slot] == visible.position["dense/kernel"] and visible.slot_set == {slot}
    assert visible.plain == [i for i, v in enumerate(infos) if v.kind == "variable"]
    assert visible.compute("KERNEL", False, True) == [i for i, v in enumerate(infos) if "kernel" in v.name]

