"""A SavedModel folder as TensorFlow's loader reads it, and the source of a SavedModel that holds no variables.

The rule, from TensorFlow 2.21's tensorflow/python/saved_model:
- A folder is a SavedModel when it holds saved_model.pb, saved_model.pbtxt or saved_model.cpb
  (constants.SAVED_MODEL_FILENAME_PB / _PBTXT / _CPB; loader_impl.contains_saved_model, parse_saved_model).
- Its variables are the checkpoint at `variables/variables` inside it (path_helpers.get_variables_path:
  constants.VARIABLES_DIRECTORY joined with constants.VARIABLES_FILENAME), and only there: a
  `variables.index` with its `variables.data-*` beside saved_model.pb is never read, and tf.saved_model.load
  fails on such a folder whenever it restores anything.
- A SavedModel may hold no variables: TF1's SavedModelBuilder saves through a Saver made with
  allow_empty=True (builder_impl._maybe_create_saver), which writes nothing for a graph without variables,
  leaving `variables/` empty (and a copy through git drops the empty folder). Whether loading needs the
  files is load.load_partial's choice: one MetaGraphDef with an object_graph_def (what tf.saved_model.save
  writes) is loaded by load.Loader, whose _restore_checkpoint always restores `variables/variables`; any
  other (TF1) by load_v1_in_v2, which restores through the graph's Saver: the one its saver_def describes,
  else a default Saver when the graph has variables or saveable objects, else none at all
  (training/saver._create_saver_from_imported_meta_graph). So a SavedModel without `variables/variables`
  loads exactly when none of its MetaGraphDefs has an object graph, a saver_def or such collections.
"""
from __future__ import annotations

import functools
import os

from ..errors import CorruptCheckpointError
from ..storage import files, paths
from .bundle.entry import LITTLE_ENDIAN, BundleHeader
from .bundle.reader import EntryListing
from .source import CHUNK_BYTES, SourceKind
from .wire.protobuf_messages import _BYTES, _MESSAGE, _OPTIONAL, _REPEATED, build_message_classes, parse

GRAPH_FILES = ("saved_model.pb", "saved_model.pbtxt", "saved_model.cpb")  # what loader_impl looks for
VARIABLES_DIRECTORY = VARIABLES_FILENAME = "variables"
# Collections whose entries a default Saver restores (ops.GraphKeys.GLOBAL_VARIABLES, SAVEABLE_OBJECTS).
_RESTORED_COLLECTIONS = {b"variables", b"saveable_objects"}
# Only the fields the loader's choice depends on (saved_model.proto, meta_graph.proto); graphs are skipped.
_HEADS = {
    "CollectionHead": [("key", 1, _BYTES, _OPTIONAL, None), ("value", 2, _BYTES, _OPTIONAL, None)],
    "MetaGraphHead": [("saver_def", 3, _BYTES, _OPTIONAL, None),
                      ("collection_def", 4, _MESSAGE, _REPEATED, "CollectionHead"),
                      ("object_graph_def", 7, _BYTES, _OPTIONAL, None)],
    "SavedModelHead": [("meta_graphs", 2, _MESSAGE, _REPEATED, "MetaGraphHead")],
}


def graph_file(folder: str) -> str | None:
    """The SavedModel's graph file when `folder` is a SavedModel, else None."""
    for name in GRAPH_FILES:
        path = paths.join(folder, name)
        if files.isfile(path):
            return path
    return None


def variables_prefix(folder: str) -> str:
    """Where TensorFlow's loader reads a SavedModel's variables: `variables/variables`."""
    return paths.join(folder, VARIABLES_DIRECTORY, VARIABLES_FILENAME)


def is_without_variables(folder: str) -> bool:
    """A SavedModel folder without the checkpoint `variables/variables` (its only checkpoint is itself)."""
    return files.isdir(folder) and graph_file(folder) is not None \
        and not files.exists(variables_prefix(folder) + ".index")


def misplaced_variables(prefix: str) -> str | None:
    """What to say of a checkpoint `<folder>/variables` beside a SavedModel's graph file when
    `<folder>/variables/variables` is not there: TensorFlow's loader never reads it. None otherwise."""
    if paths.basename(prefix) != VARIABLES_FILENAME:
        return None
    folder = paths.dirname(prefix)
    graph = graph_file(folder)
    if graph is None or files.exists(variables_prefix(folder) + ".index"):
        return None
    return (f"{folder}: TensorFlow will not load this SavedModel: its loader reads the variables from "
            f"variables/variables.index and variables/variables.data-* (a `variables` folder beside "
            f"{paths.basename(graph)}), not from {paths.basename(prefix)}.index beside it")


def restores_variables(graph: str) -> bool | None:
    """Whether tf.saved_model.load restores variables from `variables/variables` for this graph file (the
    rule in the module docstring); None when the file is not the binary saved_model.pb that is read here."""
    if not graph.endswith(".pb"):
        return None
    try:
        saved = parse("SavedModelHead", files.read_bytes(graph), _classes())
    except ValueError as exc:
        raise CorruptCheckpointError(graph, f"is not a readable SavedModel ({exc})") from None
    metas = list(saved.meta_graphs)
    if len(metas) == 1 and metas[0].HasField("object_graph_def"):
        return True
    return any(meta.HasField("saver_def") or any(entry.key in _RESTORED_COLLECTIONS and entry.value
                                                 for entry in meta.collection_def) for meta in metas)


@functools.lru_cache(maxsize=1)
def _classes() -> dict:
    return build_message_classes("checkpoint_inspector.saved_model", _HEADS)


class SavedModelWithoutVariables(EntryListing):
    """A SavedModel with no `variables/variables`: a source with nothing stored, named by its folder. Its
    model summary says whether TensorFlow loads it so; a warning, when it would not (its graph restores
    variables that are not there)."""

    kind = SourceKind.SAVED_MODEL_WITHOUT_VARIABLES

    def __init__(self, folder: str | os.PathLike):
        self.prefix = os.fspath(folder)
        self.index_path = graph_file(self.prefix) or paths.join(self.prefix, GRAPH_FILES[0])
        self.warnings: list[str] = []
        self._entries = {}
        self.header = BundleHeader(1, LITTLE_ENDIAN, 0)
        restores = restores_variables(self.index_path)
        if restores:
            self._summary = "a SavedModel without its variables: variables/variables.index is not there"
            self.warn(f"{self.prefix}: TensorFlow will not load this SavedModel: its graph restores variables "
                      f"from variables/variables.index, which is not there")
        elif restores is None:
            self._summary = (f"a SavedModel with no variables files ({paths.basename(self.index_path)} is not "
                             f"read to say whether it needs any)")
        else:
            self._summary = ("a SavedModel with no variables: its graph restores none (no Saver, no variables), "
                             "so TensorFlow loads it without variables files")

    def model_summary(self) -> str | None:
        return self._summary

    def data_files(self) -> list[str]:
        return []

    def slices_of(self, key: bytes) -> list:
        return []

    def read(self, name: str):
        return self.entry(name)  # nothing is stored: VariableNotFoundError naming the SavedModel

    def iter_chunks(self, name: str, chunk_bytes: int = CHUNK_BYTES):
        yield self.entry(name)

    def read_element(self, name: str, flat_index: int):
        return self.entry(name)

    def close(self) -> None:
        pass
