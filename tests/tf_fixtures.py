"""Real TensorFlow checkpoints, written by TensorFlow itself, for the test suite.

This module owns the on-disk fixtures that our native checkpoint reader is tested
against. Every file is produced by TensorFlow's own writers (the TF1 ``Saver``, TF2
``Checkpoint`` / ``CheckpointManager``, the ``SaveV2`` op, ``tf.saved_model.save``),
never by our code, so agreeing with these files means agreeing with TensorFlow.

``write_all(root)`` writes the whole set and returns a :class:`Fixtures` of paths.
Each fixture also has its own ``write_*`` function, so a benchmark or a single test
can write just the one it needs.

TensorFlow is imported inside functions only: importing this module stays cheap,
and code that never writes a fixture never needs TensorFlow at all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

# Dtypes TensorFlow has saved for years; the all_dtypes writer fails without any of them.
REQUIRED_DTYPES = (
    "float16", "bfloat16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "bool", "complex64", "complex128", "string",
)
# Newer or exotic dtypes: each is saved only if this TensorFlow can create and save
# it. The narrow ones (float8/float4/int4/int2) live in tf.dtypes.experimental; the
# quantized ones are old but still savable, so a viewer may meet them.
OPTIONAL_DTYPES = (
    "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2fnuz", "int4", "uint4", "int2", "uint2", "float4_e2m1fn",
    "qint8", "quint8", "qint16", "quint16", "qint32",
)
# (dtype name, reason) for each optional dtype the last write_all_dtypes left out.
SKIPPED_DTYPES: list[tuple[str, str]] = []

# Names of the edge-case tensors in all_dtypes that tests may want to look up.
UNICODE_NAME = "special/ünïcödé_名前"
DOTTED_NAME = "special/v1.2/dotted.name"

TF1_STEPS = (0, 10, 20, 30, 40, 50, 60)
KERAS_SAVES = 4
KERAS_MAX_TO_KEEP = 3
# Where the stale run's state file claims its checkpoints live; never exists here.
STALE_TRAIN_DIR = "/home/someone/old-machine/train"
MANY_VARS_MIN_INDEX_BYTES = 600 * 1024
SHARD_MAX_BYTES = 16 * 1024


@dataclasses.dataclass(frozen=True)
class Fixtures:
    """Where write_all put each fixture: a run folder or a checkpoint prefix."""

    tf1_run: Path  # folder: TF1 Saver, steps 0..60, last 5 kept
    tf1_kept_run: Path  # folder: all 7 prefixes on disk, state file lists 2
    tf1_partial: Path  # prefix: Saver({'a_name': var}), graph name differs
    tf2_keras_run: Path  # folder: Keras 3 model + Adam, ckpt-2..ckpt-4
    tf2_checkpoint_plain: Path  # prefix: tf.train.Checkpoint.write of a nested Module
    sharded: Path  # prefix: TF2 checkpoint in several .data shards
    partitioned: Path  # prefix: TF1 partitioned variables (tensor slices)
    all_dtypes: Path  # prefix: one tensor per savable dtype plus edge cases
    saved_model: Path  # folder: tf.saved_model.save output
    many_vars: Path  # prefix: 12,000 keys, .index with several data blocks
    nested_runs: Path  # folder holding run_a (TF1) and run_b (TF2)
    stale_abs_run: Path  # folder: state file points at a missing absolute dir
    tf2_slot_keys: Path  # prefix: TF2 Checkpoint with `.OPTIMIZER_SLOT` keys (slot_variables)
    v1_run: Path  # folder: V1 format Saver, steps 10 and 20, many dtypes and a partitioned variable
    v1_sharded: Path  # folder: V1 format, sharded Saver (`model.ckpt-20-?????-of-00002`)
    estimator_like: Path  # prefix: Estimator-like partitioned variables and their TF1 slots, roles beside
    keras_cp_run: Path  # folder: `cp-0005.ckpt`... (the Keras tutorial's names), mtimes reversed
    optimizer_steps: Path  # prefix: unnumbered, no step variable; Adam's iteration counter is 3
    serving: Path  # folder: a TF Serving base folder with SavedModel versions 1 and 2
    object_config: Path  # prefix: TF2 checkpoint with an `.ATTRIBUTES/OBJECT_CONFIG_JSON` string
    sgd_state: Path  # prefix: a Keras 2 style SGD (`SGD/iter`, `SGD/learning_rate`, `SGD/momentum`)
    cnn_run: Path  # folder: Keras 3 CNN (4-D conv kernels, a 90-character layer name) + Adam, ckpt-1, ckpt-2
    keras_files: Path  # folder: model.keras, model.weights.h5, legacy.h5 (Keras 3's legacy writer), nested.keras
    keras2_h5: Path  # file: a tf.keras 2 whole-model .h5 (`dense/kernel:0`, `Adam/dense/kernel/m:0`), laid out with h5py
    keras_run: Path  # folder: ModelCheckpoint's `epoch_{epoch:02d}.keras` and `weights.{epoch:02d}-{loss:.2f}.weights.h5`


def write_all(root: Path) -> Fixtures:
    from tests.keras_fixtures import write_cnn_run, write_keras2_h5, write_keras_files, write_keras_run

    """Write every fixture under ``root``, a new or empty folder; takes a few seconds."""
    root = Path(root)
    return Fixtures(
        tf1_run=write_tf1_run(root / "tf1_run"),
        tf1_kept_run=write_tf1_kept_run(root / "tf1_kept_run"),
        tf1_partial=write_tf1_partial(root / "partial" / "partial.ckpt"),
        tf2_keras_run=write_tf2_keras_run(root / "tf2_keras_run"),
        tf2_checkpoint_plain=write_tf2_checkpoint_plain(root / "tf2_plain" / "plain"),
        sharded=write_sharded(root / "sharded" / "sharded"),
        partitioned=write_partitioned(root / "partitioned" / "partitioned.ckpt"),
        all_dtypes=write_all_dtypes(root / "all_dtypes" / "all_dtypes"),
        saved_model=write_saved_model(root / "saved_model"),
        many_vars=write_many_vars(root / "many_vars" / "many_vars"),
        nested_runs=write_nested_runs(root / "nested_runs"),
        stale_abs_run=write_stale_abs_run(root / "stale_abs_run"),
        tf2_slot_keys=write_tf2_slot_keys(root / "tf2_slot_keys" / "slots"),
        v1_run=write_v1_run(root / "v1_run"),
        v1_sharded=write_v1_run(root / "v1_sharded", sharded=True),
        estimator_like=write_estimator_like(root / "estimator" / "model.ckpt"),
        keras_cp_run=write_keras_cp_run(root / "keras_cp_run"),
        optimizer_steps=write_optimizer_steps(root / "optimizer_steps" / "final"),
        serving=write_serving(root / "serving"),
        object_config=write_object_config(root / "object_config" / "ckpt"),
        sgd_state=write_sgd_state(root / "sgd_state" / "ckpt"),
        cnn_run=write_cnn_run(root / "cnn_run"),
        keras_files=write_keras_files(root / "keras_files"),
        keras2_h5=write_keras2_h5(root / "keras2" / "model.h5"),
        keras_run=write_keras_run(root / "keras_run"),
    )


# --- TF1 graph-mode writers ------------------------------------------------------


def write_tf1_run(run_dir: Path) -> Path:
    """A TF1 training run: 7 saves at steps 0..60, the Saver's default keeps 5."""
    _save_tf1_run(run_dir, TF1_STEPS)
    on_disk = prefixes_on_disk(run_dir)
    _require(len(on_disk) == 5, f"tf1_run should keep 5 prefixes, has {on_disk}")
    return run_dir


def write_tf1_kept_run(run_dir: Path) -> Path:
    """A TF1 run whose older checkpoints stay on disk but are not in the state file.

    With ``keep_checkpoint_every_n_hours`` the Saver preserves a checkpoint it rotates
    out of ``max_to_keep`` if that much time passed since the last preserved one. At
    1e-9 hours (3.6 microseconds) every rotated-out checkpoint qualifies, so all
    seven stay on disk while the ``checkpoint`` file lists only the newest two.
    """
    _save_tf1_run(run_dir, TF1_STEPS, max_to_keep=2, keep_checkpoint_every_n_hours=1e-9)
    on_disk, listed = prefixes_on_disk(run_dir), _prefixes_listed(run_dir)
    _require(
        len(on_disk) > len(listed) == 2,
        f"tf1_kept_run: {len(on_disk)} prefixes on disk, {len(listed)} listed",
    )
    return run_dir


def write_tf1_partial(prefix: Path) -> Path:
    """A Saver given ``{'a_name': var}``: the key differs from the graph name.

    A second variable exists in the graph but is not in the Saver's list, so it
    must not appear in the checkpoint.
    """
    tf = _tf()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        var = tf.compat.v1.get_variable(
            "graph_scope/graph_name", initializer=np.arange(6, dtype=np.float32).reshape(2, 3)
        )
        tf.compat.v1.get_variable("not_saved", initializer=np.float32(1.0))
        saver = tf.compat.v1.train.Saver({"a_name": var})
        sess.run(tf.compat.v1.global_variables_initializer())
        saver.save(sess, str(prefix))
    return prefix


def write_partitioned(prefix: Path) -> Path:
    """TF1 partitioned variables: the index holds each full tensor as slices.

    ``embed/table`` is [10, 4] in 3 partitions, ``counts/ids`` is int64 [7] in 2;
    ``plain/bias`` is an ordinary variable for contrast. Values are ``arange`` so a
    reassembly mistake shows up as out-of-order numbers.
    """
    tf = _tf()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with _tf1_session() as sess:
        with tf.compat.v1.variable_scope(
            "embed", partitioner=tf.compat.v1.fixed_size_partitioner(3)
        ):
            # Partitioners need a static shape; a numpy initializer has none, a tensor has.
            tf.compat.v1.get_variable("table", initializer=tf.reshape(tf.range(40.0), [10, 4]))
        with tf.compat.v1.variable_scope(
            "counts", partitioner=tf.compat.v1.fixed_size_partitioner(2)
        ):
            tf.compat.v1.get_variable("ids", initializer=tf.range(7, dtype=tf.int64))
        tf.compat.v1.get_variable("plain/bias", initializer=np.array([0.5, -0.5], np.float32))
        saver = tf.compat.v1.train.Saver()
        sess.run(tf.compat.v1.global_variables_initializer())
        saver.save(sess, str(prefix))
    listed = dict(tf.train.list_variables(str(prefix)))
    expected = {"embed/table": [10, 4], "counts/ids": [7], "plain/bias": [2]}
    _require(listed == expected, f"partitioned lists {listed}, expected {expected}")
    return prefix


def _save_tf1_run(run_dir: Path, steps: tuple[int, ...], **saver_kwargs) -> None:
    """Save a small TF1 graph at each step, changing every value in between.

    The values follow the step (``dense/kernel`` = k0 + step, ``dense/bias`` =
    step / 10, ``global_step`` = step), so each prefix holds different data.
    """
    tf = _tf()
    run_dir.mkdir(parents=True, exist_ok=True)
    base_kernel = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    with _tf1_session() as sess:
        kernel = tf.compat.v1.get_variable("dense/kernel", initializer=base_kernel)
        bias = tf.compat.v1.get_variable("dense/bias", initializer=np.zeros(3, np.float32))
        global_step = tf.compat.v1.train.get_or_create_global_step()
        step = tf.compat.v1.placeholder(tf.int64, shape=[])
        step_f = tf.cast(step, tf.float32)
        update = tf.group(
            kernel.assign(step_f + base_kernel),
            bias.assign(tf.fill([3], step_f / 10)),
            global_step.assign(step),
        )
        saver = tf.compat.v1.train.Saver(**saver_kwargs)
        sess.run(tf.compat.v1.global_variables_initializer())
        for value in steps:
            sess.run(update, {step: value})
            saver.save(sess, str(run_dir / "model.ckpt"), global_step=value)


def write_estimator_like(prefix: Path) -> Path:
    """What canned Estimators left: partitioned weights trained by Adagrad, Ftrl, RMSProp (inside
    optimize_loss's `OptimizeLoss` scope) and Adam, saved by a default Saver; what the graph says of
    each key is written beside it (tests.estimator_fixture)."""
    from tests.estimator_fixture import write_estimator_like as write

    return write(prefix)


def _eager(model):
    """The compiled Keras model, set to train step by step in Python: for a fixture's few steps that is
    quicker than tracing and compiling Keras's train function, and the variables written, their names and
    the optimizer's state are the same (values may differ in their last bits). Set after compile, so that
    a saved .keras keeps the default compile config."""
    model.run_eagerly = True
    return model


def _small_keras_model():
    import keras

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return _eager(model)


def write_keras_cp_run(run_dir: Path) -> Path:
    """The names of TensorFlow's Keras tutorial (`cp-{epoch:04d}.ckpt`), written at epochs 5, 10, 15 by
    tf.train.Checkpoint.write (no save counter), then given reversed mtimes, as a copy can leave them."""
    tf = _tf()
    run_dir.mkdir(parents=True, exist_ok=True)
    model = _small_keras_model()
    data = np.ones((4, 3), np.float32)
    for number, epoch in enumerate((5, 10, 15)):
        model.fit(data, data[:, :2], epochs=1, verbose=0)
        tf.train.Checkpoint(model=model).write(str(run_dir / f"cp-{epoch:04d}.ckpt"))
    for number, path in enumerate(sorted(run_dir.iterdir())):
        stamp = 2_000_000_000 - number * 1000  # the later the epoch, the older the file looks
        os.utime(path, (stamp, stamp))
    return run_dir


def write_optimizer_steps(prefix: Path) -> Path:
    """An unnumbered TF2 checkpoint without a step variable, whose Adam has made 3 steps."""
    tf = _tf()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    model = _small_keras_model()
    data = np.ones((4, 3), np.float32)
    model.fit(data, data[:, :2], epochs=3, batch_size=4, verbose=0)
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(str(prefix))
    return prefix


def write_serving(base: Path) -> Path:
    """A TF Serving base folder: versions 1 and 2, each a tf.saved_model.save of a module whose variable
    holds its version number."""
    tf = _tf()
    for version in (1, 2):
        module = tf.Module()
        module.weights = tf.Variable(np.full((2, 2), version, np.float32), name="weights")
        tf.saved_model.save(module, str(base / str(version)))
    return base


OBJECT_CONFIG = {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "relu"}}


def write_object_config(prefix: Path) -> Path:
    """A layer saving its configuration as Keras 2 did (`.ATTRIBUTES/OBJECT_CONFIG_JSON`), written by
    tf.train.Checkpoint from a module that serializes it as a tensor."""
    import json

    tf = _tf()

    class Configured(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(tf.ones((2, 2)), name="kernel")

        def _serialize_to_tensors(self):
            return {"OBJECT_CONFIG_JSON": tf.constant(json.dumps(OBJECT_CONFIG))}

        def _restore_from_tensors(self, restored_tensors):
            return tf.no_op()

    tf.train.Checkpoint(layer=Configured()).write(str(prefix))
    return prefix


def write_sgd_state(prefix: Path) -> Path:
    """The layout Keras 2 SavedModels have for SGD without momentum slots: an `SGD` object holding
    `iter`, `learning_rate`, `momentum` and `decay`, beside the model (written by tf.train.Checkpoint)."""
    tf = _tf()
    model, sgd = tf.Module(), tf.Module()
    model.dense = tf.Module()
    model.dense.kernel = tf.Variable(tf.ones((2, 2)), name="kernel")
    sgd.iter = tf.Variable(7, dtype=tf.int64, name="iter")
    sgd.learning_rate = tf.Variable(0.01, name="learning_rate")
    sgd.momentum = tf.Variable(0.9, name="momentum")
    sgd.decay = tf.Variable(0.0, name="decay")
    tf.train.Checkpoint(model=model, SGD=sgd).write(str(prefix))
    return prefix


V1_STEPS = (10, 20)


def write_v1_run(run_dir: Path, sharded: bool = False) -> Path:
    """The pre-2016 V1 format (`Saver(write_version=V1)`): one table file per shard, no .index. Values
    follow the step; what each variable held is kept in `v1_values.npz` beside the files, because
    TensorFlow's own reader cannot read V1 float16, complex64 or partitioned variables back. With
    `sharded`, two devices' variables go to two shard files."""
    tf = _tf()
    run_dir.mkdir(parents=True, exist_ok=True)
    held = {}
    with _tf1_session() as sess:
        step = tf.compat.v1.placeholder(tf.float32, shape=[])
        variables, updates = {}, []
        initial = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "f64": np.array([0.1, -2.5]),
                   "f16": np.array([1.5, -2.25], np.float16), "i64": np.array([1, -(1 << 40)], np.int64),
                   "i32": np.array([-7, 1 << 30], np.int32), "i8": np.array([-3, 4], np.int8),
                   "u8": np.array([200, 7], np.uint8), "c64": np.array([1 + 2j, -0.5j], np.complex64),
                   "scalar": np.float32(3.25)}
        for number, (name, value) in enumerate(initial.items()):
            with tf.device("/cpu:0" if number % 2 == 0 or not sharded else "/device:CPU:0"):
                variable = tf.compat.v1.get_variable(f"v1/{name}", initializer=value)
            variables[name] = variable
            if value.dtype.kind in "fc":
                updates.append(variable.assign(value + tf.cast(step, variable.dtype)))
        flags = tf.compat.v1.get_variable("v1/flags", initializer=np.array([True, False]))
        words = tf.compat.v1.get_variable("v1/words", initializer=np.array([b"ab", b"\x00c", b""]))
        table = tf.compat.v1.get_variable("v1/partitioned", shape=[6, 2], dtype=tf.float32,
                                          initializer=tf.compat.v1.initializers.random_normal(seed=3),
                                          partitioner=tf.compat.v1.fixed_size_partitioner(3))
        global_step = tf.compat.v1.train.get_or_create_global_step()
        updates.append(global_step.assign(tf.cast(step, tf.int64)))
        saver = tf.compat.v1.train.Saver(write_version=tf.compat.v1.train.SaverDef.V1, sharded=sharded)
        sess.run(tf.compat.v1.global_variables_initializer())
        for value in V1_STEPS:
            sess.run(updates, {step: value})
            saver.save(sess, str(run_dir / "model.ckpt"), global_step=value)
            current = {f"v1/{n}": sess.run(v) for n, v in variables.items()}
            current.update({"v1/flags": sess.run(flags), "v1/words": np.array(sess.run(words), dtype=object),
                            "v1/partitioned": sess.run(tf.convert_to_tensor(table)), "global_step": sess.run(global_step)})
            held.update({f"{value}:{name}": array for name, array in current.items()})
    np.savez(run_dir / "v1_values.npz", **held, allow_pickle=True)
    _require(not list(run_dir.glob("*.index")), "a V1 save wrote a V2 .index")
    return run_dir


@contextlib.contextmanager
def _tf1_session() -> Iterator:
    """A fresh graph and session, so graph-mode writers leave eager TF2 untouched.

    The TF1 Saver logs deprecation warnings through the Python "tensorflow" logger;
    they are noise in a fixture, so that logger is raised to ERROR meanwhile.
    """
    tf = _tf()
    logger = tf.get_logger()
    old_level = logger.level
    logger.setLevel("ERROR")
    try:
        with tf.Graph().as_default() as graph, tf.compat.v1.Session(graph=graph) as sess:
            yield sess
    finally:
        logger.setLevel(old_level)


# --- TF2 eager writers -----------------------------------------------------------


def write_tf2_keras_run(run_dir: Path) -> Path:
    """A Keras 3 model trained with Adam, saved 4 times by a CheckpointManager (3 kept).

    Keras 3 optimizers keep Adam's moments as ordinary tracked variables
    (``optimizer/_variables/N``), not TF2 ``.OPTIMIZER_SLOT`` keys.
    """
    tf = _tf()
    rng = np.random.default_rng(2)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ rng.normal(size=(4, 1))).astype(np.float32)
    # Seeded initializers make the weights reproducible without touching global seeds.
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(4,)),
        tf.keras.layers.Dense(
            8, activation="relu", name="hidden",
            kernel_initializer=tf.keras.initializers.GlorotUniform(seed=3),
        ),
        tf.keras.layers.Dense(
            1, name="output", kernel_initializer=tf.keras.initializers.GlorotUniform(seed=4)
        ),
    ])
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    model.compile(optimizer=optimizer, loss="mse")
    _eager(model)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, str(run_dir), max_to_keep=KERAS_MAX_TO_KEEP)
    for _ in range(KERAS_SAVES):
        model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)  # 4 steps
        manager.save()

    on_disk = prefixes_on_disk(run_dir)
    _require(on_disk == {"ckpt-2", "ckpt-3", "ckpt-4"}, f"tf2_keras_run has {on_disk}")
    keys = [name for name, _ in tf.train.list_variables(manager.latest_checkpoint)]
    _require("_CHECKPOINTABLE_OBJECT_GRAPH" in keys, "tf2_keras_run lacks the object graph")
    _require(
        any(".OPTIMIZER_SLOT" in k or k.startswith("optimizer/_variables/") for k in keys),
        f"tf2_keras_run has no Adam slot variables among {keys}",
    )
    return run_dir


def write_tf2_checkpoint_plain(prefix: Path) -> Path:
    """``tf.train.Checkpoint.write`` of a variable and a nested ``tf.Module``.

    The module has variables of several dtypes, including a string and a list, to
    give object keys like ``nested/layers/0/.ATTRIBUTES/VARIABLE_VALUE``.
    """
    tf = _tf()
    rng = np.random.default_rng(3)
    nested = tf.Module()
    nested.kernel = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32))
    nested.step = tf.Variable(np.int64(42))
    nested.label = tf.Variable("hello")
    nested.layers = [tf.Variable(rng.normal(size=(2,))), tf.Variable(np.float16([1, 2, 3]))]
    checkpoint = tf.train.Checkpoint(v=tf.Variable([1.5, -2.0, 3.25]), nested=nested)
    checkpoint.write(str(prefix))  # write(), unlike save(), adds no number or state file
    return prefix


def write_tf2_slot_keys(prefix: Path) -> Path:
    """A TF2 object-based checkpoint whose optimizer keeps slots as `slot_variables` in the object
    graph, keyed `<var>/.OPTIMIZER_SLOT/optimizer/m/...` (as TF 2.11-2.15 legacy Keras optimizers and
    the tf.compat.v1 optimizers write them; Keras 3 keeps moments in plain lists instead)."""
    tf = _tf()
    dense = tf.Module()
    dense.kernel = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dense.kernel ** 2)
    optimizer.apply_gradients([(tape.gradient(loss, dense.kernel), dense.kernel)])
    tf.train.Checkpoint(dense=dense, optimizer=optimizer).write(str(prefix))
    keys = [name for name, _ in tf.train.list_variables(str(prefix))]
    _require(any(".OPTIMIZER_SLOT/optimizer/m/" in k for k in keys), f"no Adam m slot key among {keys}")
    return prefix


def write_sharded(prefix: Path) -> Path:
    """A TF2 checkpoint split into data shards of at most SHARD_MAX_BYTES.

    ``embedding`` (32 KiB) is bigger than one shard, so TensorFlow also cuts that
    one tensor into slices stored in different shards.
    """
    tf = _tf()
    rng = np.random.default_rng(4)
    layers = {
        f"layer_{i}": tf.Variable(rng.normal(size=(32, 32)).astype(np.float32))
        for i in range(5)
    }
    checkpoint = tf.train.Checkpoint(
        embedding=tf.Variable(rng.normal(size=(128, 64)).astype(np.float32)),
        step=tf.Variable(np.int64(7)),
        **layers,
    )
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=SHARD_MAX_BYTES)
    options = tf.train.CheckpointOptions(experimental_sharding_callback=policy)
    checkpoint.write(str(prefix), options=options)
    shards = data_files(prefix)
    _require(len(shards) >= 3, f"sharded wrote only {len(shards)} data file(s)")
    return prefix


def write_saved_model(model_dir: Path) -> Path:
    """``tf.saved_model.save`` of a module with two variables and a tf.function."""
    tf = _tf()
    module = tf.Module()
    module.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    module.b = tf.Variable(np.array([0.5, -1.0], np.float32), name="b")
    module.predict = tf.function(
        lambda x: tf.matmul(x, module.w) + module.b,
        input_signature=[tf.TensorSpec([None, 3], tf.float32)],
    )
    tf.saved_model.save(module, str(model_dir))
    _require(
        (model_dir / "variables" / "variables.index").is_file(),
        "saved_model has no variables/variables.index",
    )
    return model_dir


def write_nested_runs(root: Path) -> Path:
    """A folder of two runs: ``run_a`` (TF1 Saver) and ``run_b`` (TF2 manager)."""
    _save_tf1_run(root / "run_a", TF1_STEPS[:2])
    _save_small_tf2_run(root / "run_b", "ckpt", (1, 2))
    return root


def write_stale_abs_run(run_dir: Path) -> Path:
    """A run copied off its training machine: the state file names absolute paths there.

    The prefixes are in ``run_dir``, but ``model_checkpoint_path`` and
    ``all_model_checkpoint_paths`` point into STALE_TRAIN_DIR, which does not exist
    here. The timestamp lines are kept as the CheckpointManager wrote them.
    """
    tf = _tf()
    from google.protobuf import text_format

    _save_small_tf2_run(run_dir, "model.ckpt", (10, 20))
    state = tf.train.get_checkpoint_state(str(run_dir))

    def on_old_machine(path: str) -> str:
        return posixpath.join(STALE_TRAIN_DIR, os.path.basename(path))

    state.model_checkpoint_path = on_old_machine(state.model_checkpoint_path)
    state.all_model_checkpoint_paths[:] = [
        on_old_machine(p) for p in state.all_model_checkpoint_paths
    ]
    # Same serialisation TensorFlow uses for this file (CheckpointState text proto).
    (run_dir / "checkpoint").write_text(text_format.MessageToString(state), encoding="utf-8")
    return run_dir


def _save_small_tf2_run(run_dir: Path, name: str, numbers: tuple[int, ...]) -> None:
    """A CheckpointManager run of two variables, one save per checkpoint number."""
    tf = _tf()
    weights = tf.Variable(np.zeros((2, 3), np.float32))
    step = tf.Variable(np.int64(0))
    checkpoint = tf.train.Checkpoint(weights=weights, step=step)
    manager = tf.train.CheckpointManager(
        checkpoint, str(run_dir), max_to_keep=len(numbers), checkpoint_name=name
    )
    for number in numbers:
        weights.assign_add(tf.ones_like(weights))
        step.assign(number)
        manager.save(checkpoint_number=number)


# --- SaveV2 writers --------------------------------------------------------------


def write_all_dtypes(prefix: Path) -> Path:
    """One tensor per savable dtype (``dtype/<name>``) plus edge cases (``special/...``).

    Optional dtypes this TensorFlow cannot create or save are left out and listed
    in SKIPPED_DTYPES with the reason.
    """
    tf = _tf()
    rng = np.random.default_rng(5)
    tensors = {dtype_key(name): _dtype_tensor(name, rng) for name in REQUIRED_DTYPES}
    skipped = []
    for name in OPTIONAL_DTYPES:
        try:
            tensor = _dtype_tensor(name, rng)
            _trial_save(tensor)
        except Exception as error:  # whatever TF raises, the dtype is just not savable
            skipped.append((name, f"{type(error).__name__}: {error}"))
        else:
            tensors[dtype_key(name)] = tensor
    SKIPPED_DTYPES[:] = skipped
    tensors.update(_special_tensors(rng))
    _save_v2(prefix, tensors)
    return prefix


def write_many_vars(prefix: Path) -> Path:
    """A checkpoint with 12,000 small tensors under long TF2 object-style keys.

    4,000 variables of a 250-block encoder, each with Adam's two slots, keys of
    62-105 characters. The .index must exceed MANY_VARS_MIN_INDEX_BYTES so that it
    has several data blocks (TensorFlow cuts index blocks near 256 KiB). The index
    stores of each key only the part it does not share with the previous key, and
    neighbouring keys share long prefixes, so it takes about 12,000 keys (not 5,000)
    to get there.
    """
    rng = np.random.default_rng(6)
    tensors = {}
    for key in _many_var_keys(blocks=250):
        shape = (4, 4) if "/kernel/" in key else (4,)
        tensors[key] = rng.normal(size=shape).astype(np.float32)
    _save_v2(prefix, tensors)
    size = prefix.with_name(prefix.name + ".index").stat().st_size
    _require(size > MANY_VARS_MIN_INDEX_BYTES, f"many_vars .index is only {size} bytes")
    return prefix


def dtype_key(dtype_name: str) -> str:
    """The all_dtypes tensor name for one dtype, e.g. ``dtype/bfloat16``."""
    return f"dtype/{dtype_name}"


def prefixes_on_disk(run_dir: Path) -> set[str]:
    """Names of the checkpoint prefixes in ``run_dir`` that have an .index file."""
    return {p.name[: -len(".index")] for p in run_dir.glob("*.index")}


def data_files(prefix: Path) -> list[Path]:
    """The ``.data-XXXXX-of-NNNNN`` shard files of a prefix, sorted."""
    return sorted(prefix.parent.glob(prefix.name + ".data-?????-of-?????"))


def _dtype_tensor(name: str, rng: np.random.Generator):
    """A [2, 3] (string: [2, 2]) tensor of dtype ``name`` with edge values where they matter."""
    tf = _tf()
    dtype = getattr(tf.dtypes, name, None)
    if dtype is None:
        dtype = getattr(tf.dtypes.experimental, name, None)
    if dtype is None:
        raise LookupError(f"no tf.dtypes.{name} or tf.dtypes.experimental.{name}")
    if dtype == tf.string:
        return tf.constant(np.array([[b"a", b"bc"], [b"", b"\x00\xff"]], dtype=object))
    if dtype == tf.bool:
        return tf.constant(rng.integers(0, 2, size=(2, 3)).astype(bool))
    if dtype.is_complex:
        values = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
        return tf.constant(values, dtype=dtype)
    if dtype.is_floating:
        return tf.constant(rng.normal(size=(2, 3)).astype(dtype.as_numpy_dtype), dtype=dtype)
    # Integers, narrow and quantized alike: both extremes catch width and sign mistakes.
    # Quantized dtypes are a struct around a plain integer; build from that integer.
    base = np.dtype(dtype.as_numpy_dtype)
    if dtype.is_quantized:
        base = base[0]
        lo, hi = int(np.iinfo(base).min), int(np.iinfo(base).max)
    else:
        lo, hi = int(dtype.min), int(dtype.max)
    drawn = rng.integers(max(lo, -1000), min(hi, 1000), size=2, endpoint=True)
    values = np.array([lo, hi, 0, 1, *drawn], dtype=object).reshape(2, 3)
    return tf.constant(values.astype(np.int64 if lo < 0 else np.uint64).astype(base), dtype=dtype)


def _special_tensors(rng: np.random.Generator) -> dict:
    """Edge cases for the reader: scalars, empties, float specials, odd strings and names."""
    f32 = np.finfo(np.float32)
    strings = [
        b"",
        b"\xff\xfe",  # not UTF-8
        "héllo wörld ✓".encode(),
        rng.integers(0, 256, size=300, dtype=np.uint8).tobytes(),  # 2-byte varint length
        rng.integers(0, 256, size=70_000, dtype=np.uint8).tobytes(),  # 3-byte varint length
    ]
    return {
        "special/scalar_float": np.float32(3.25),
        "special/scalar_string": np.array(b"scalar", dtype=object),
        "special/empty_float": np.zeros([0], np.float32),
        "special/empty_3x0": np.zeros([3, 0], np.float32),
        "special/float_specials": np.array(
            [np.nan, np.inf, -np.inf, -0.0, 0.0, f32.smallest_subnormal,
             -f32.smallest_subnormal * 3, f32.tiny / 2, f32.tiny, f32.max],
            np.float32,
        ),
        "special/strings": np.array(strings, dtype=object),
        "special/rank3": rng.normal(size=(2, 3, 4)).astype(np.float32),
        "special/rank4": rng.integers(-50, 50, size=(2, 1, 3, 2)).astype(np.int32),
        UNICODE_NAME: np.array([1.0, 2.0], np.float64),
        DOTTED_NAME: np.array([7], np.int32),
    }


def _many_var_keys(blocks: int) -> list[str]:
    """TF2 object-graph keys of a transformer encoder's variables and Adam slots."""
    parts = (
        "attention/query", "attention/key", "attention/value", "attention/output",
        "feed_forward/intermediate", "feed_forward/output", "layer_norm_1", "layer_norm_2",
    )
    keys = []
    for block in range(blocks):
        for part in parts:
            for leaf in ("gamma", "beta") if "norm" in part else ("kernel", "bias"):
                variable = f"encoder/block_{block:03d}/{part}/{leaf}/"
                for slot in ("", ".OPTIMIZER_SLOT/optimizer/m/", ".OPTIMIZER_SLOT/optimizer/v/"):
                    keys.append(variable + slot + ".ATTRIBUTES/VARIABLE_VALUE")
    return keys


def _save_v2(prefix: Path, tensors: dict) -> None:
    """Write ``tensors`` (name -> array or tensor) as one checkpoint with the SaveV2 op."""
    tf = _tf()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    tf.raw_ops.SaveV2(
        prefix=str(prefix),
        tensor_names=list(tensors),
        shape_and_slices=[""] * len(tensors),
        tensors=list(tensors.values()),
    )


def _trial_save(tensor) -> None:
    """Save ``tensor`` alone to a scratch prefix; raises if TensorFlow cannot save it."""
    tf = _tf()
    with tempfile.TemporaryDirectory() as scratch:
        tf.raw_ops.SaveV2(
            prefix=os.path.join(scratch, "trial"),
            tensor_names=["t"], shape_and_slices=[""], tensors=[tensor],
        )


# --- small helpers -----------------------------------------------------------------


def _tf():
    """Import TensorFlow on first use, with its C++ info/warning logs silenced.

    TF_CPP_MIN_LOG_LEVEL is read once, at import, so it must be set before. (TF 2.21
    still prints its oneDNN notice at import; that line ignores this variable.)
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    return tf


def _prefixes_listed(run_dir: Path) -> list[str]:
    """Base names of ``all_model_checkpoint_paths`` in the run's state file."""
    state = _tf().train.get_checkpoint_state(str(run_dir))
    return [os.path.basename(p) for p in state.all_model_checkpoint_paths]


def _require(condition: bool, message: str) -> None:
    """Fail loudly if TensorFlow did not produce the layout a fixture promises."""
    if not condition:
        raise RuntimeError(f"TensorFlow fixture not as intended: {message}")
