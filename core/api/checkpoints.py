"""One checkpoint seen from Python: its variables (Variable: stored key, shown name, shape, dtype, kind)
and its values as numpy arrays, by stored key or by the name the window shows.

Two kinds of names, kept apart: the mapping side (`keys()`, `items()`, `values()`, `len`, `in`,
`get_tensor`, `shapes`, `dtypes`) is TensorFlow's reader's (`tf.train.load_checkpoint`: exact stored
keys), while `ckpt[name]`, `read`, `variable` and `resolve` also take the names a person uses (the shown
name, an object path, a unique tail) and `resolve` says which rule found the key.

A Checkpoint borrows its reader from the Run that opened it (core.api.runs): the run closes it, and a
checkpoint of a closed run says so (ClosedError) instead of reading a file it no longer holds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple

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


class Resolution(NamedTuple):
    """What Checkpoint.resolve found: the stored key and the rule (`stored key`, `shown name`, `object
    path`, `variable name` or `unique tail`: core.run.names.resolve_name_by_rule)."""

    key: str
    rule: str


class Checkpoint:
    """One checkpoint of an open run. `ckpt["dense/kernel"]` is the tensor as TensorFlow's `get_tensor`
    gives it, bit for bit; the name may be the stored key, the shown name, an object path or a unique
    tail of one (`kernel` when only one variable ends so). `in`, `len`, iteration, `keys()`, `items()`,
    `values()` and `get_tensor(key)` take stored keys only, as TensorFlow's reader does. Made by
    Run.checkpoint, never directly."""

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

    @property
    def listed(self) -> bool:
        """The run's `checkpoint` state file lists it (in all_model_checkpoint_paths or as the latest)."""
        return self._info.listed

    @property
    def is_latest(self) -> bool:
        """The state file's model_checkpoint_path names it (False for all without a state file)."""
        return self._info.is_latest

    @property
    def timestamp(self) -> float | None:
        """The save time the state file gives it (all_model_checkpoint_timestamps, seconds since the
        epoch); None when the file gives none (a TF1 Saver writes none)."""
        return self._info.timestamp

    def __repr__(self) -> str:
        state = ", latest" if self.is_latest else ""
        return f"<Checkpoint {self.prefix!r} step={self.step}{state}>"

    def _repr_html_(self) -> str:
        """A notebook's view: a table of the variables as the index lists them (no tensor read)."""
        from .views import checkpoint_html

        return checkpoint_html(self)

    # ---- its variables -----------------------------------------------------------------------------------
    @property
    def variables(self) -> list[Variable]:
        """Every variable in stored-key order (Variable objects)."""
        if self._variables is None:
            from ..run.variables import describe_variables

            self._variables = [Variable.of(v) for v in describe_variables(self._reader())]
        return list(self._variables)

    def keys(self) -> list[str]:
        """The stored keys, in order: `tf.train.list_variables`'s names, sorted, `_CHECKPOINTABLE_OBJECT_GRAPH`
        included (a Keras file's in the file's own order)."""
        return self._reader().names()

    def items(self) -> Iterator[tuple[str, object]]:
        """(stored key, value) of every tensor, in key order; each value read when its turn comes."""
        return ((key, self.get_tensor(key)) for key in self.keys())

    def values(self) -> Iterator[object]:
        """Every tensor's value, in key order, each read when its turn comes."""
        return (self.get_tensor(key) for key in self.keys())

    @property
    def shapes(self) -> dict[str, tuple]:
        """{stored key: shape as a tuple}: TensorFlow's `get_variable_to_shape_map` (there, lists)."""
        return {entry.name: tuple(int(d) for d in entry.shape) for entry in self._reader().entries}

    @property
    def dtypes(self) -> dict[str, str]:
        """{stored key: TensorFlow's dtype name}: `get_variable_to_dtype_map`, each `tf.DType` by its
        `.name` (`float32`, `bfloat16`, `string`: names numpy lacks some of)."""
        return {entry.name: entry.dtype_name for entry in self._reader().entries}

    def variable(self, name: str) -> Variable:
        """The Variable `name` means (stored key, shown name, object path or unique tail); VariableNotFoundError
        (a KeyError) when none, AmbiguousNameError when several."""
        key = self.resolve(name).key
        return next(v for v in self.variables if v.name == key)

    def resolve(self, name: str) -> Resolution:
        """The stored key `name` stands for and the rule that found it (core.run.names.resolve_name_by_rule:
        the CLI's rule), as `(key, rule)`. A name that is no str is a TypeError; one that names no variable
        (the empty name included), VariableNotFoundError; one that fits several, AmbiguousNameError."""
        from ..errors import VariableNotFoundError
        from ..run.names import resolve_name_by_rule

        try:
            return Resolution(*resolve_name_by_rule(self._reader(), name))
        except VariableNotFoundError as exc:
            raise exc.with_hint(LISTING_HINT) from None

    def __contains__(self, key: str) -> bool:
        """`key` is a stored key (TensorFlow's `has_tensor`, except for the empty key of a V2 index's
        header, which holds no tensor and which TensorFlow's maps do not list either)."""
        if not isinstance(key, str):
            raise TypeError(f"name must be a str (a variable's name), not {type(key).__name__}")
        return key in self._reader()

    def __len__(self) -> int:
        return len(self._reader())

    def __iter__(self):
        return iter(self.keys())

    # ---- its values --------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> "numpy.ndarray | bytes":
        return self.read(name)

    def read(self, name: str) -> "numpy.ndarray | bytes":
        """The whole tensor `name` (any name resolve takes) as TensorFlow's `get_tensor` gives it: a
        numpy array, strings as an object array of bytes, a 0-d string as `bytes`; its checksum checked."""
        return self.get_tensor(self.resolve(name).key)

    def get_tensor(self, key: str) -> "numpy.ndarray | bytes":
        """The tensor stored under exactly `key` (TensorFlow's `get_tensor`; no other name is looked up):
        VariableNotFoundError (a KeyError) when the checkpoint stores no such key."""
        from ..errors import VariableNotFoundError

        if key not in self:
            error = VariableNotFoundError(self.prefix, f"stores no key {key!r}", see_listing=True)
            raise error.with_hint(LISTING_HINT)
        value = self._reader().read(key)
        # TensorFlow gives a 0-d string tensor as the bytes themselves (py_checkpoint_reader), not wrapped
        # in a 0-d object array; string arrays stay object arrays of bytes, as it gives them.
        return value.item() if value.ndim == 0 and value.dtype == object else value

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
