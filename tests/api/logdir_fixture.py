"""A TensorBoard logdir without a checkpoint, written by the writers people log with: run `tf1/train` by
TF1's `tf.compat.v1.summary.FileWriter` (simple_value scalars, a histogram, a text summary from the
graph's summary ops) and, in the same folder, a PyTorch-style log (simple_value scalars) written by
TensorBoard's own EventFileWriter, the writer PyTorch's SummaryWriter wraps; run `tf2` by TF2's
`tf.summary` (tensor scalars, a histogram, a text). Tiny: a few steps each (about a second)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tf_fixtures import _tf, _tf1_session

STEPS = 5
TF1_RUN, TF2_RUN = "tf1/train", "tf2"


def write_logdir(root: Path) -> Path:
    """`root/logs` holding the two runs; returns it."""
    logdir = Path(root) / "logs"
    _write_tf1(logdir / TF1_RUN)
    _write_torch_style(logdir / TF1_RUN)
    _write_tf2(logdir / TF2_RUN)
    return logdir


def _write_tf1(folder: Path) -> None:
    tf = _tf()
    with _tf1_session() as sess:
        weights = tf.compat.v1.placeholder(tf.float32, [None])
        histogram = tf.compat.v1.summary.histogram("weights", weights)
        text = tf.compat.v1.summary.text("note", tf.constant("tf1 says hello"))
        writer = tf.compat.v1.summary.FileWriter(str(folder))
        rng = np.random.default_rng(1)
        for step in range(STEPS):
            loss = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(tag="loss", simple_value=1.0 / (step + 1))])
            writer.add_summary(loss, step)
            writer.add_summary(sess.run(histogram, {weights: rng.normal(size=50)}), step)
            if step == 0:
                writer.add_summary(sess.run(text), step)
        writer.close()


def _write_torch_style(folder: Path) -> None:
    """As torch.utils.tensorboard.SummaryWriter.add_scalar writes: an Event whose summary value is a
    simple_value, through TensorBoard's EventFileWriter (its file named after this one's writer)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(folder), filename_suffix=".torch")
    for step in range(STEPS):
        value = summary_pb2.Summary.Value(tag="accuracy", simple_value=0.5 + step / 10)
        writer.add_event(event_pb2.Event(step=step, wall_time=1_700_000_000.0 + step,
                                         summary=summary_pb2.Summary(value=[value])))
    writer.close()


def _write_tf2(folder: Path) -> None:
    tf = _tf()
    writer = tf.summary.create_file_writer(str(folder))
    rng = np.random.default_rng(2)
    with writer.as_default():
        for step in range(STEPS):
            tf.summary.scalar("loss", 2.0 / (step + 1), step=step)
            tf.summary.scalar("learning_rate", 0.01, step=step)
            tf.summary.histogram("weights", rng.normal(size=50), step=step)
        tf.summary.text("note", "tf2 says hello", step=0)
    writer.close()


if __name__ == "__main__":
    import sys

    print(write_logdir(Path(sys.argv[1])))
