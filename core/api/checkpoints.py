"""One checkpoint seen from Python: its variables (Variable: stored key, shown name, shape, dtype, kind)
and its values as numpy arrays, by stored key or by the name the window shows.

A Checkpoint borrows its reader from the Run that opened it (core.api.runs): the run closes it, and a
checkpoint of a closed run says so (ClosedError) instead of reading a file it no longer holds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import ClosedError
from ..run.discovery import CheckpointInfo
from ..run.variables import VariableInfo

if TYPE_CHECKING:  # pragma: no cover
    import numpy
    import pandas

    from ..format.source import CheckpointSource


# Where a person using the API finds the names a checkpoint holds (the CLI says its own `list`).
LISTING_HINT = "the Checkpoint's `.keys()` (stored keys) or `.variables` (with each shown_name)"


@dataclass(frozen=True)
class Variable:
    """One stored variable, as `tf.train.list_variables` and the window list it.

    name: the stored key, exactly as TensorFlow's reader lists it (a partitioned variable under its full
    name); shown_name: the name the window shows (a Keras layer path, the program's variable name);
    shape: a tuple of ints; dtype: TensorFlow's dtype name (`float32`, `bfloat16`, `string`, ...);
    kind: `variable` (a weight), `slot` (an optimizer slot), `optimizer`, `bookkeeping` or `config`;
    size: the number of elements; nbytes: the bytes its values take in memory; slot_of: for a slot, the
    stored key of the variable it belongs to; object_path: a TF2 checkpoint's object path, else ""."""

    name: str
    shown_name: str
    shape: tuple
    dtype: str
    kind: str
    size: int
    nbytes: int
    slot_of: str | None = None
    object_path: str = ""

    @classmethod
    def of(cls, info: VariableInfo) -> "Variable":
        entry = info.entry
        return cls(info.name, info.display_name, tuple(int(d) for d in entry.shape), entry.dtype_name, info.kind,
                   int(entry.num_elements), int(entry.nbytes), info.slot_of, info.object_path)


class Checkpoint:
    """One checkpoint of an open run. `ckpt["dense/kernel"]` is the tensor as a numpy array (TensorFlow's
    `get_tensor`, bit for bit); the name may be the stored key, the shown name, an object path or a unique
    tail of one (`kernel` when only one variable ends so). Made by Run.checkpoint, never directly."""

    def __init__(self, info: CheckpointInfo, reader_of: Callable[[CheckpointInfo], "CheckpointSource"]):
        self._info = info
        self._reader_of = reader_of
        self._variables: list[Variable] | None = None

    # ---- what it is --------------------------------------------------------------------------------------
    @property
    def step(self) -> int | None:
        """The global step (from the name, else from a step variable); None when the checkpoint has none."""
        return self._info.step

    @property
    def prefix(self) -> str:
        """The checkpoint as TensorFlow names it: a V2/V1 prefix, a Keras file, a SavedModel's variables."""
        return self._info.prefix

    @property
    def kind(self) -> str:
        """Its format: `v2_bundle`, `v1_table`, `keras_archive`, `keras_weights_h5`, `keras_legacy_h5` or
        `saved_model_without_variables` (core.format.source.SourceKind)."""
        return self._reader().kind.value

    @property
    def warnings(self) -> list[str]:
        """What is wrong without stopping the listing (a damaged object graph), as the CLI prints them."""
        return list(self._reader().warnings)

    def __repr__(self) -> str:
        return f"<Checkpoint {self.prefix!r} step={self.step}>"

    # ---- its variables -----------------------------------------------------------------------------------
    @property
    def variables(self) -> list[Variable]:
        """Every variable in stored-key order (Variable objects)."""
        if self._variables is None:
            from ..run.variables import describe_variables

            self._variables = [Variable.of(v) for v in describe_variables(self._reader())]
        return list(self._variables)

    def keys(self) -> list[str]:
        """The stored keys, in order (as `tf.train.list_variables`)."""
        return [v.name for v in self.variables]

    def variable(self, name: str) -> Variable:
        """The Variable `name` means (stored key, shown name, object path or unique tail); VariableNotFoundError
        (a KeyError) when none, AmbiguousNameError when several."""
        key = self.resolve(name)
        return next(v for v in self.variables if v.name == key)

    def resolve(self, name: str) -> str:
        """The stored key `name` stands for (core.run.names.resolve_name: the CLI's rule). A name that is
        no str is a TypeError; one that names no variable (the empty name included), VariableNotFoundError."""
        from ..errors import VariableNotFoundError
        from ..run.names import resolve_name

        try:
            return resolve_name(self._reader(), name)
        except VariableNotFoundError as exc:
            raise exc.with_hint(LISTING_HINT) from None

    def __contains__(self, name: str) -> bool:
        from ..errors import VariableNotFoundError

        try:
            self.resolve(name)
        except VariableNotFoundError:
            return False
        return True

    def __len__(self) -> int:
        return len(self._reader())

    def __iter__(self):
        return iter(self.keys())

    # ---- its values --------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> "numpy.ndarray":
        return self.read(name)

    def read(self, name: str) -> "numpy.ndarray":
        """The whole tensor as a numpy array (strings as an object array of bytes, as TensorFlow gives
        them), its checksum checked."""
        return self._reader().read(self.resolve(name))

    def to_frame(self) -> "pandas.DataFrame":
        """The listing as a pandas DataFrame, a row per variable: name, shown_name, shape, dtype, kind,
        size, nbytes, slot_of, object_path."""
        from .frames import variables_frame

        return variables_frame(self.variables)

    def _reader(self) -> "CheckpointSource":
        reader = self._reader_of(self._info)
        if reader is None:
            raise ClosedError(self.prefix, "this checkpoint's run was closed; open it again with ci.open")
        return reader
