"""Keras's two counts of one epoch, lined up: what its TensorBoard callback logged per epoch beside the
checkpoints its ModelCheckpoint named by epoch.

How Keras writes both (keras/src/callbacks/tensorboard.py and model_checkpoint.py, Keras 3 as tf.keras 2):
at the end of epoch `i` (counted from 0, as `fit` passes it to every callback) the TensorBoard callback
logs `epoch_<metric>` (`epoch_loss`, `epoch_accuracy`, `epoch_learning_rate`, ...) at step `i`, in its
`train/` and `validation/` folders, and, with `histogram_freq`, each weight as `<weight path>/histogram`
at step `i` too; ModelCheckpoint, at the same moment, formats its file name with `epoch=i + 1`
(`weights.{epoch:02d}.weights.h5` -> `weights.01.weights.h5` after the first epoch). So the weights in
the file a run's discovery reads as step N are those whose loss was logged at step N - 1: drawn on one
axis, every logged epoch sits one checkpoint early. Restarted training (`initial_epoch`) keeps the
same relation: both count from the absolute epoch.

The rule: the run's checkpoint steps come from numbers in their names, its logs hold `epoch_*` scalars,
and every checkpoint step is one more than a logged epoch (never 0: ModelCheckpoint has no epoch 0).
Then the `epoch_*` scalars, and the weight histograms logged beside them, move one step later; nothing
else moves (`batch_*` tags count batches, `evaluation_*_vs_iterations` optimizer steps).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .training_logs import TrainingLogs

EPOCH_TAG_PREFIX = "epoch_"      # what Keras's TensorBoard callback names its per-epoch scalars
WEIGHT_HISTOGRAM_SUFFIX = "/histogram"  # and the weight histograms it logs at the same steps
NOTE = ("Keras logs epoch N at step N−1 and names its checkpoint after it N: the logged epoch_* values "
        "are drawn one step later, at the checkpoint of their epoch")


@dataclass(frozen=True)
class EpochAlignment:
    logs: TrainingLogs | None   # the logs to draw (the very object given when nothing moved)
    shifted: frozenset          # the scalar and histogram tags moved one step later
    note: str                   # what was done, for a person; "" when nothing moved

    @property
    def applied(self) -> bool:
        return bool(self.shifted)


def align_keras_epochs(logs: TrainingLogs | None, checkpoints) -> EpochAlignment:
    """The logs with Keras's per-epoch tags moved onto the checkpoints of their epochs, when the run looks
    as Keras's ModelCheckpoint and TensorBoard callbacks write it (see the module); else the logs as given."""
    unchanged = EpochAlignment(logs, frozenset(), "")
    if logs is None:
        return unchanged
    epoch_tags = [tag for tag in logs.scalars if _is_epoch_tag(tag)]
    steps = [info.step for info in checkpoints if info.step is not None]
    if not epoch_tags or not steps or any(info.step_source != "name" for info in checkpoints if info.step is not None):
        return unchanged
    logged = {int(step) for tag in epoch_tags for step in logs.scalars[tag].steps}
    if min(logged, default=-1) < 0 or not {step - 1 for step in steps} <= logged:
        return unchanged
    folders = {_folder(tag) for tag in epoch_tags}
    histogram_tags = [tag for tag in logs.histograms
                      if tag.endswith(WEIGHT_HISTOGRAM_SUFFIX) and _folder_of_histogram(tag, folders) is not None
                      and {h.step for h in logs.histograms[tag]} <= logged]
    scalars = dict(logs.scalars)
    for tag in epoch_tags:
        series = scalars[tag]
        scalars[tag] = dataclasses.replace(series, steps=series.steps + 1)
    histograms = dict(logs.histograms)
    for tag in histogram_tags:
        histograms[tag] = [dataclasses.replace(h, step=h.step + 1) for h in histograms[tag]]
    aligned = dataclasses.replace(logs, scalars=scalars, histograms=histograms)
    return EpochAlignment(aligned, frozenset(epoch_tags) | frozenset(histogram_tags), NOTE)


def _is_epoch_tag(tag: str) -> bool:
    return tag.rsplit("/", 1)[-1].startswith(EPOCH_TAG_PREFIX)


def _folder(tag: str) -> str:
    return tag.rsplit("/", 1)[0] if "/" in tag else ""


def _folder_of_histogram(tag: str, folders: set[str]) -> str | None:
    """The log folder of a weight histogram among those holding epoch tags (its name has the weight's
    path after the folder, `logs/train/dense/kernel/histogram`), or None."""
    for folder in sorted(folders, key=len, reverse=True):
        if not folder or tag.startswith(folder + "/"):
            return folder
    return None
