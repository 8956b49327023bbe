"""What an HDF5 file holds, as the HDF5 worker (core.format.keras.hdf5_worker) reported it: the group tree
with the attributes Keras needs, and for each dataset its shape, type, storage layout and where its bytes
are. Plain data, built in this process from the worker's JSON, with the little of h5py's Group interface
the naming code uses (`in`, `[]`, iteration in h5py's order, `.attrs`, `.name`, `.file`, `.shape`).

It also says how a dataset's values may be had (`value_plan`), and why not where they may not:
- "direct": a contiguous dataset of a standard integer or IEEE float type whose bytes lie inside the file:
  read by byte range in this process (like the V2 bundle reader), no libhdf5 involved;
- "decode": anything else numeric (chunked, compressed, compact, never written, a non-standard bit
  layout, h5py's bool and complex): decoded by the worker, only if its declared size is what the file
  could expand to (a fill value or compressed chunks can declare terabytes in a few KB);
- refused, named for what it is: external raw-data storage (its bytes are in another file, never read),
  virtual datasets (other files again), and the types we do not decode (compound, enum, opaque,
  reference, variable-length, fixed-length strings, bitfield, array).
"""
from __future__ import annotations

from math import prod

from ...errors import CorruptCheckpointError, UnsupportedDtypeError
from .files import MAX_EXPANSION

DECODE_FLOOR = 64 << 20  # a small file may still declare this much (a zero-filled layer, say) for the worker


class Node:
    """A group or dataset at `name` (h5py's absolute form, `/layers/dense/vars`)."""

    def __init__(self, name: str, attrs: dict, root: Group | None):
        self.name = name
        self.attrs = attrs
        self.file = root if root is not None else self

    # A dataset answers like an empty group, so that hostile files (a dataset where Keras has a group)
    # only ever find nothing, never an exception.
    def __contains__(self, path: str) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def get(self, path: str, default=None):
        return default


class Group(Node):
    def __init__(self, name: str, attrs: dict, root: Group | None = None):
        super().__init__(name, attrs, root)
        self.members: dict[str, Node] = {}  # h5py's iteration order (by name)

    def _find(self, path: str) -> Node | None:
        node: Node | None = self.file if path.startswith("/") else self
        for part in path.split("/"):
            if part in ("", "."):
                continue
            node = node.members.get(part) if isinstance(node, Group) else None
            if node is None:
                return None
        return node

    def __contains__(self, path: str) -> bool:
        return self._find(path) is not None

    def __getitem__(self, path: str) -> Node:
        node = self._find(path)
        if node is None:
            raise KeyError(path)
        return node

    def get(self, path: str, default=None):
        node = self._find(path)
        return default if node is None else node

    def __iter__(self):
        return iter(list(self.members))


class Dataset(Node):
    def __init__(self, name: str, facts: dict, root: Group):
        super().__init__(name, {}, root)
        shape = facts.get("shape")
        self.shape: tuple[int, ...] | None = tuple(int(d) for d in shape) if shape is not None else None
        self.dtype: str | None = facts.get("dtype")        # numpy's dtype string of what h5py reads, e.g. "<f4"
        self.itemsize: int = int(facts.get("itemsize") or 0)
        self.plain: bool = bool(facts.get("plain"))          # a standard integer or IEEE float type
        self.refused_type: str | None = facts.get("refused_type")  # "a compound type", ...
        self.layout: str = facts.get("layout", "?")          # contiguous, chunked, compact, virtual
        self.offset: int | None = facts.get("offset")        # contiguous and written: where its bytes start
        self.stored: int = int(facts.get("stored") or 0)     # bytes the file stores for it
        self.filters: list[str] = list(facts.get("filters") or [])
        self.external: list[str] = list(facts.get("external") or [])

    @property
    def nbytes(self) -> int:
        return prod(self.shape or ()) * self.itemsize


def build_tree(report: dict) -> Group:
    """The worker's report ({"groups": {path: {"members", "attrs"}}, "datasets": {path: facts}}) as nodes."""
    groups, datasets = report.get("groups", {}), report.get("datasets", {})
    root = Group("/", dict(groups.get("/", {}).get("attrs", {})))
    stack = [root]
    while stack:  # iterative: a deep tree needs no recursion
        group = stack.pop()
        for member in groups.get(group.name, {}).get("members", []):
            path = f"{group.name.rstrip('/')}/{member}"
            if path in groups:
                child = Group(path, dict(groups[path].get("attrs", {})), root)
                stack.append(child)
            elif path in datasets:
                child = Dataset(path, datasets[path], root)
            else:
                continue  # a link we do not follow, or an object seen under another path
            group.members[member] = child
    return root


def datasets_in(root: Group) -> int:
    count, stack = 0, [root]
    while stack:
        for node in stack.pop().members.values():
            if isinstance(node, Group):
                stack.append(node)
            else:
                count += 1
    return count


def value_plan(path: str, name: str, dataset: Dataset, capacity: int) -> str:
    """"direct" or "decode" (see the module's docstring), or raises the error that names why the values
    of `name` (the dataset, in a file whose HDF5 bytes are `capacity` long, at `path`) are not read."""
    if dataset.refused_type is not None:
        raise UnsupportedDtypeError(path, f"{name}: is an HDF5 dataset of {dataset.refused_type}, listed but "
                                          f"its values are not decoded")
    if dataset.external:
        raise CorruptCheckpointError(path, f"{name}: its values are stored outside the file (HDF5 external "
                                           f"storage in {_shown(dataset.external[0])}), which is never read")
    if dataset.layout == "virtual":
        raise CorruptCheckpointError(path, f"{name}: is an HDF5 virtual dataset (its values live in other "
                                           f"files), which is never read")
    if dataset.shape is None or dataset.dtype is None or not dataset.itemsize:
        raise CorruptCheckpointError(path, f"{name}: is an HDF5 dataset with no dataspace or type to read")
    if dataset.offset is not None and dataset.stored:  # written contiguous bytes: they must be in the file
        if dataset.offset < 0 or dataset.offset + dataset.stored > capacity:
            raise CorruptCheckpointError(path, f"{name}: its {dataset.stored:,} bytes at offset {dataset.offset:,} "
                                               f"run past the end of the HDF5 data ({capacity:,} bytes)")
        if dataset.stored != dataset.nbytes:
            raise CorruptCheckpointError(path, f"{name}: stores {dataset.stored:,} bytes where its shape "
                                               f"{list(dataset.shape)} of {dataset.dtype} needs {dataset.nbytes:,}")
        if dataset.plain:
            return "direct"
    allowed = max(DECODE_FLOOR, capacity * MAX_EXPANSION)
    if dataset.nbytes > allowed:
        what = "no values (only a fill value)" if not dataset.stored else f"{dataset.stored:,} bytes"
        raise CorruptCheckpointError(path, f"{name}: declares {dataset.nbytes:,} bytes of values but stores "
                                           f"{what} in a file of {capacity:,} bytes: refused, it cannot "
                                           f"expand that much")
    return "decode"


def _shown(text: str) -> str:
    """A name from the file, on one line and of a sane length, whatever bytes it holds."""
    text = repr(text)
    return text if len(text) <= 120 else text[:117] + "..."
