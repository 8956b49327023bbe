"""The child process that runs libhdf5 for the app and the CLI: damaged or hostile HDF5 bytes can make
libhdf5 loop for ever, block on a named pipe, allocate terabytes or crash, and none of that may happen in
the process a person is using. Started and watched by core.format.keras.hdf5_guard (which kills it at a
deadline and restarts it); serves many requests, so a run of 50 weight files pays one Python start.

    python -m core.format.keras.hdf5_worker PARENT_PID

Protocol, over stdin/stdout: one JSON request per line; one JSON reply line, then for a read `nbytes` raw
bytes of values. Requests name the HDF5 bytes as `source`: [path, start, size, stamp] (a whole file, or a
`.keras` member's byte range of its archive; `stamp` changes when the file does).
- {"op": "layout", "source", "template": bool}: the group tree, the attributes Keras needs, each dataset's
  shape, type and storage (core.format.keras.hdf5_layout reads it). External files are named, never
  opened; only hard links are followed (a soft or external link would lead elsewhere). With "template",
  the file is parsed as h5py reads a file object and the reply's "template" lists the byte ranges whose
  bytes (the `nbytes` that follow) make another file's layout this one (core.format.keras.hdf5_templates).
- {"op": "read", "source", "dataset", "rows": [a, b] | null, "element": [i, ...] | null, "limit"}: values
  decoded by h5py, refused above `limit` bytes or for external or virtual storage.
- {"op": "write_edited", "source", "target", "values", "names", "dropped", "layer_names"}: an edited copy of
  the source at `target` (core.format.keras.hdf5_edit; the new values in the NumPy archive `values`).
Replies {"error": text} or {"error": "memory"} when it fails; the worker then carries on.

The process runs under an address-space limit, ignores Ctrl+C (its parent decides) and dies with its
parent; its stdout is kept for the protocol (anything libhdf5 prints goes to stderr, which is discarded).
"""
from __future__ import annotations

import json
import os
import sys

from ...storage.files import FileRange
from . import hdf5_templates

MEMORY_HEADROOM = 4 << 30   # address space allowed above what the worker holds once started
MAX_OBJECTS = 500_000       # links visited in one file; a Keras model has a few per weight
MAX_OPEN_FILES = 8
WANTED_ATTRS = ("keras_version", "backend", "model_config", "layer_names", "weight_names", "name")


class _Files:
    """The files recently asked about, kept open (a streamed tensor asks once per slab)."""

    def __init__(self):
        self._open: dict[tuple, object] = {}

    def get(self, source):
        import h5py

        key = (source[0], source[1], source[2], tuple(source[3]))
        if key in self._open:
            self._open[key] = self._open.pop(key)  # most recently used last
            return self._open[key]
        path, start, size, _stamp = source
        if len(self._open) >= MAX_OPEN_FILES:
            oldest = next(iter(self._open))
            self._open.pop(oldest).close()
        whole = start == 0 and os.path.getsize(path) == size
        h5 = h5py.File(path, "r") if whole else h5py.File(FileRange(path, start, size), "r")
        self._open[key] = h5
        return h5


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _attr_value(value):
    """An attribute as JSON: text, or a list of texts (`layer_names`); anything else is not Keras's."""
    import numpy as np

    if isinstance(value, (bytes, str)):
        return _text(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "SUO":
        return [_text(v) for v in value.reshape(-1).tolist()]
    return None


def _attrs(group) -> dict:
    """The attributes Keras needs of a group (a low-level GroupID), read as h5py's `attrs` reads them."""
    import h5py
    from h5py import h5a

    found, attrs = {}, None
    for key in WANTED_ATTRS:
        if h5a.exists(group, key.encode()):
            attrs = attrs or h5py.Group(group).attrs
            value = _attr_value(attrs[key])
            if value is not None:
                found[key] = value
    return found


def _type_facts(dataset) -> dict:
    """What the dataset's HDF5 type is (`dataset` a low-level DatasetID): plain (a standard integer or IEEE
    float, its bytes as numpy reads them), decodable by h5py (other integers and floats, h5py's bool and
    complex), or refused, named."""
    from h5py import h5t

    tid = dataset.get_type()
    kind, size = tid.get_class(), tid.get_size()
    refused = {h5t.STRING: "variable-length strings" if kind == h5t.STRING and tid.is_variable_str()
               else "fixed-length byte strings",
               h5t.VLEN: "variable-length sequences", h5t.REFERENCE: "object references",
               h5t.OPAQUE: "an opaque type", h5t.BITFIELD: "a bitfield type", h5t.ARRAY: "an array type",
               h5t.TIME: "a time type"}
    if kind in refused:
        return {"refused_type": refused[kind], "itemsize": size}
    if kind not in (h5t.INTEGER, h5t.FLOAT, h5t.ENUM, h5t.COMPOUND):
        return {"refused_type": f"HDF5 type class {kind}", "itemsize": size}
    dtype = dataset.dtype
    if kind == h5t.ENUM and dtype.kind != "b":
        return {"refused_type": "an enum type", "itemsize": size}
    if kind == h5t.COMPOUND and dtype.kind != "c":
        return {"refused_type": "a compound type", "itemsize": size}
    plain = kind in (h5t.INTEGER, h5t.FLOAT) and dtype.itemsize == size and any(
        tid.equal(standard) for standard in _plain_types())
    return {"dtype": dtype.str, "itemsize": dtype.itemsize, "plain": plain}


_PLAIN_TYPES = tuple(f"STD_{s}{bits}{order}" for s in "IU" for bits in (8, 16, 32, 64) for order in ("LE", "BE")) \
    + tuple(f"IEEE_F{bits}{order}" for bits in (16, 32, 64) for order in ("LE", "BE"))
_PLAIN: list = []


def _plain_types() -> list:
    """h5py's predefined standard types of _PLAIN_TYPES (those this h5py has), looked up once."""
    if not _PLAIN:
        from h5py import h5t

        _PLAIN.extend(getattr(h5t, name) for name in _PLAIN_TYPES if hasattr(h5t, name))
    return _PLAIN


def _dataset_facts(dataset) -> dict:
    """Shape, type and storage of a dataset (`dataset` a low-level DatasetID: h5py's Dataset.shape and
    .dtype are its .shape and .dtype)."""
    from h5py import h5d

    facts = _type_facts(dataset)
    plist = dataset.get_create_plist()
    layout = plist.get_layout()
    facts["layout"] = {h5d.CONTIGUOUS: "contiguous", h5d.CHUNKED: "chunked", h5d.COMPACT: "compact",
                       getattr(h5d, "VIRTUAL", -1): "virtual"}.get(layout, f"layout {layout}")
    if layout == h5d.CONTIGUOUS:
        count = plist.get_external_count()
        facts["external"] = [_text(plist.get_external(i)[0]) for i in range(min(count, 4))]
    facts["filters"] = [_text(plist.get_filter(i)[3]) for i in range(min(plist.get_nfilters(), 32))]
    shape = dataset.shape
    facts["shape"] = list(shape) if shape is not None else None
    if layout != getattr(h5d, "VIRTUAL", -1) and not facts.get("external"):
        facts["stored"] = dataset.get_storage_size()
        # The offset of unwritten storage is garbage (HADDR_UNDEF plus any user block): only when written.
        if layout == h5d.CONTIGUOUS and facts["stored"] and \
                dataset.get_space_status() == h5d.SPACE_STATUS_ALLOCATED:
            facts["offset"] = dataset.get_offset()
    return facts


def layout(h5) -> dict:
    """The tree below the root, hard links only, each object once (a link back up is not a loop), in
    h5py's order. Walked with h5py's low-level calls (a group's links in one iteration, objects opened by
    name): its Group and Dataset objects cost ten times more, and a run asks this of every file."""
    from h5py import h5g, h5i, h5l, h5o

    groups, datasets, visited = {}, {}, 0
    root = h5g.open(h5.id, b"/")
    seen = {hash(root)}  # h5py hashes an object by its file and address: what makes it the same object
    stack = [("/", root)]
    while stack:
        path, group = stack.pop()
        links: list[tuple[bytes, int]] = []

        def note(name: bytes, info) -> bool | None:
            links.append((name, info.type))
            return visited + len(links) > MAX_OBJECTS or None  # True ends the iteration: enough seen

        group.links.iterate(note, info=True)
        members = []
        for raw, kind in links:
            visited += 1
            if visited > MAX_OBJECTS:
                raise ValueError(f"more than {MAX_OBJECTS:,} links: not a Keras file")
            if kind != h5l.TYPE_HARD:
                continue
            child = h5o.open(group, raw)
            if hash(child) in seen:
                continue
            seen.add(hash(child))
            name = _decoded(raw)
            child_path = f"{path.rstrip('/')}/{name}"
            kind = h5i.get_type(child)
            if kind == h5i.GROUP:
                stack.append((child_path, child))
            elif kind == h5i.DATASET:
                datasets[child_path] = _dataset_facts(child)
            else:
                continue
            members.append(name)
        groups[path] = {"members": members, "attrs": _attrs(group)}
    return {"groups": groups, "datasets": datasets}


def _decoded(name: bytes):
    """A link name as h5py's Group gives it: text when UTF-8, else the bytes."""
    try:
        return name.decode("utf8")
    except UnicodeDecodeError:
        return name


def read(h5, request: dict):
    """The values asked for, as a C-ordered numpy array, after the same refusals as the parent's."""
    import numpy as np
    from h5py import h5d

    dataset = h5[request["dataset"]]
    plist = dataset.id.get_create_plist()
    if plist.get_layout() == getattr(h5d, "VIRTUAL", -1) or (
            plist.get_layout() == h5d.CONTIGUOUS and plist.get_external_count()):
        raise ValueError("its values are stored in other files, which are never read")
    shape = dataset.shape or ()
    if request.get("element") is not None:
        selection, count = tuple(int(i) for i in request["element"]), 1
    elif request.get("rows") is not None and shape:
        start, stop = (int(i) for i in request["rows"])
        selection, count = slice(start, stop), max(0, min(stop, shape[0]) - start)
        for dim in shape[1:]:
            count *= dim
    else:
        selection, count = (), 1
        for dim in shape:
            count *= dim
    if count * dataset.dtype.itemsize > int(request["limit"]):
        raise ValueError(f"declares {count * dataset.dtype.itemsize:,} bytes, more than allowed")
    values = np.ascontiguousarray(dataset[selection])
    if values.dtype.kind not in "iufcb" or values.dtype.fields is not None:
        raise ValueError(f"decodes to {values.dtype}, not numbers")
    return values


def write_edited(h5, request: dict) -> dict:
    """The edited copy (core.format.keras.hdf5_edit) of the file `h5` is open on, at request["target"]."""
    import numpy as np

    from .hdf5_edit import copy_edited

    replaced = {}
    if request.get("values"):
        with np.load(request["values"], allow_pickle=False) as archive:
            replaced = {name: archive[f"arr_{i}"] for i, name in enumerate(request["names"])}
    copy_edited(h5, request["target"], replaced, set(request["dropped"]), dict(request["layer_names"]))
    return {"written": request["target"]}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _limit_memory() -> None:
    import resource

    with open("/proc/self/statm") as f:
        virtual = int(f.read().split()[0]) * resource.getpagesize()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = virtual + MEMORY_HEADROOM
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))


def _die_with_parent(parent: int) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is for the parent; it ends us
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when the parent dies
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl
        sys.exit(0)


def main(argv: list[str]) -> int:
    import warnings

    _die_with_parent(int(argv[0]) if argv else os.getppid())
    # The protocol keeps the real stdout; whatever a library prints goes to stderr (discarded).
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    __import__("h5py")  # before the limit: the mappings of its libraries are not the file's
    import numpy as np

    _limit_memory()
    files = _Files()
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        payload = None
        try:
            request = json.loads(line)
            if request["op"] == "layout" and request.get("template"):
                reply, ranges, payload = hdf5_templates.build(request["source"], layout)
                reply = {**reply, "template": ranges, "nbytes": len(payload)}
            elif request["op"] == "layout":
                reply = layout(files.get(request["source"]))
            elif request["op"] == "write_edited":
                reply = write_edited(files.get(request["source"]), request)
            else:
                values = read(files.get(request["source"]), request)
                reply = {"dtype": values.dtype.str, "shape": list(values.shape), "nbytes": values.nbytes}
                payload = memoryview(values.reshape(-1).view(np.uint8) if values.size else np.empty(0, np.uint8))
        except MemoryError:
            reply, payload = {"error": "memory"}, None
        except Exception as exc:  # whatever libhdf5 and h5py raise on bad bytes: one line back
            reply, payload = {"error": _one_line(exc)}, None
        out.write(json.dumps(reply).encode() + b"\n")
        if payload is not None:
            out.write(payload)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
