"""Show graph in TensorBoard (core.tensorboard.graph_events): the event file is read back by TensorBoard's
own EventAccumulator, whose Graph() is TensorFlow's GraphDef of the `.meta` / SavedModel; it is written
into the app's folder of the run's logs (core.tensorboard.run_logs), the run left byte for byte as it
was, all at once (no partial folder left, an older graph replaced whole, nothing left by a failure),
never over a folder holding other files, and without importing TensorFlow."""
import hashlib
import os
import shutil
import subprocess
import sys

import pytest

from checkpoint_inspector.core.errors import CheckpointError, DestinationError
from checkpoint_inspector.core.tensorboard import event_folder
from checkpoint_inspector.core.tensorboard.graph_events import write_graph_events
from checkpoint_inspector.core.tensorboard.run_logs import graph_folder
from tests.graph_fixtures import cached_cases
from tests.locations import ROOT


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    return cached_cases(tmp_path_factory)


def _accumulated(folder):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(folder))
    accumulator.Reload()
    return accumulator


def _tf_graph_def(path):
    from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

    data = open(path, "rb").read()
    if os.path.basename(path) == "saved_model.pb":
        return saved_model_pb2.SavedModel.FromString(data).meta_graphs[0].graph_def
    return meta_graph_pb2.MetaGraphDef.FromString(data).graph_def


def _as_tf(graph_def):
    """TensorBoard's copy of the GraphDef proto as TensorFlow's (protos of two classes never compare equal)."""
    from tensorflow.core.framework import graph_pb2

    return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())


def _leftovers(run) -> list[str]:
    """Partial or set-aside folders of the graph of `run`, in the folder of every run's logs."""
    logs = os.path.dirname(graph_folder(run))
    staging = os.path.dirname(logs)
    return [n for n in os.listdir(staging) if n.startswith(f".{os.path.basename(logs)}.")]


def _hashes(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
            for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("which", ["run", "saved_model"])
def test_tensorboard_reads_back_the_graph(graphs, which, tmp_path):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2

    run = tmp_path / "run"
    source = graphs.saved_model if which == "saved_model" else graphs.tf1_run
    shutil.copytree(source, run)
    before = _hashes(run)
    event_file = write_graph_events(run, run)
    assert os.path.dirname(event_file) == graph_folder(run)
    assert event_file.startswith(os.environ["CHECKPOINT_INSPECTOR_DATA"])  # the app's folder (tests/conftest.py)
    assert os.listdir(graph_folder(run)) == [os.path.basename(event_file)]
    assert os.path.basename(event_file).startswith("events.out.tfevents.")
    graph_file = run / ("saved_model.pb" if which == "saved_model" else "model.ckpt-2.meta")
    assert _as_tf(_accumulated(graph_folder(run)).Graph()) == _tf_graph_def(str(graph_file))
    events = [event_pb2.Event.FromString(record) for record in RawEventFileLoader(event_file).Load()]
    assert events[0].file_version == "brain.Event:2"
    assert [e.WhichOneof("what") for e in events] == ["file_version", "graph_def"]
    assert events[1].graph_def in graph_file.read_bytes()  # passed on byte for byte, as the file stores it
    assert _leftovers(run) == [] and _hashes(run) == before


def test_a_second_graph_replaces_the_first_whole(graphs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(graphs.tf1_run, run)
    first = write_graph_events(run / "model.ckpt-1.meta", run)
    second = write_graph_events(graphs.saved_model, run)
    assert os.listdir(graph_folder(run)) == [os.path.basename(second)]
    assert len(_accumulated(graph_folder(run)).Graph().node) == len(
        _tf_graph_def(str(graphs.saved_model / "saved_model.pb")).node)
    assert first and _leftovers(run) == []


def test_a_graph_folder_holding_other_files_is_refused_and_kept(graphs, tmp_path):
    run = tmp_path / "run"
    os.makedirs(graph_folder(run))
    with open(os.path.join(graph_folder(run), "notes.txt"), "w") as f:
        f.write("mine")
    with pytest.raises(DestinationError, match="holds other files"):
        write_graph_events(graphs.tf1_meta, run)
    assert os.listdir(graph_folder(run)) == ["notes.txt"] and _leftovers(run) == []
    # event files, but not ours
    theirs = tmp_path / "theirs"
    os.makedirs(graph_folder(theirs))
    with open(os.path.join(graph_folder(theirs), "events.out.tfevents.1700000000.host"), "wb") as f:
        f.write(b"logs")
    with pytest.raises(DestinationError, match="event files this app did not write"):
        write_graph_events(graphs.tf1_meta, theirs)
    assert os.listdir(graph_folder(theirs)) == ["events.out.tfevents.1700000000.host"]


def test_the_graph_of_a_run_in_the_user_s_own_graph_folder_leaves_it(graphs, tmp_path):
    """A run whose own `graph/` holds its FileWriter logs (once refused, when the graph went into the
    run): the app's graph goes beside it, in the app's folder, and the run's folder is untouched."""
    run = tmp_path / "run"
    shutil.copytree(graphs.tf1_run, run)
    (run / "graph").mkdir()
    (run / "graph" / "events.out.tfevents.1700000000.host").write_bytes(b"logs")
    before = _hashes(run)
    written = write_graph_events(run / "model.ckpt-2.meta", run)
    assert os.path.dirname(written) == graph_folder(run) and _hashes(run) == before


def test_a_remote_run_s_graph_goes_to_a_local_folder(graphs):
    url = "s3://bucket/runs/run"
    written = write_graph_events(graphs.tf1_meta, url)  # the graph read locally here; the run only named
    assert os.path.dirname(written) == graph_folder(url) and os.path.isfile(written)
    assert graph_folder(url) != graph_folder("s3://bucket/other/run")


def test_a_failure_while_writing_leaves_the_earlier_graph(graphs, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    first = write_graph_events(graphs.tf1_meta, run)

    def broken(self, event):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(event_folder.EventFile, "write", broken)
    with pytest.raises(OSError):
        write_graph_events(graphs.saved_model, run)
    assert os.listdir(graph_folder(run)) == [os.path.basename(first)]
    assert _leftovers(run) == [] and os.listdir(run) == []


def test_bad_input_is_named_and_writes_nothing(tmp_path):
    bad = tmp_path / "broken.meta"
    bad.write_bytes(b"\x0a\xff\xff")
    with pytest.raises(CheckpointError, match="broken.meta"):
        write_graph_events(bad, tmp_path / "run")
    assert not (tmp_path / "run").exists() and not os.path.exists(os.path.dirname(graph_folder(tmp_path / "run")))


def test_writing_the_graph_imports_no_tensorflow(graphs, tmp_path):
    probe = ("import sys\n"
             "from checkpoint_inspector.core.tensorboard.graph_events import write_graph_events\n"
             f"write_graph_events({str(graphs.tf1_meta)!r}, {str(tmp_path)!r})\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'tensorflow'))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr
    assert os.listdir(graph_folder(tmp_path))  # the child had this process's data folder (tests/conftest.py)
