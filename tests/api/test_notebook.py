"""The API in a real notebook (issue 49): tests/api/notebook/walk.ipynb executed by nbclient on ipykernel's
python3 kernel, as Jupyter runs it, on a run TensorFlow wrote: no cell raises, the long calls draw tqdm's
widget (ipywidgets installed: requirements-dev.txt) and leave it full, and the notebook views
(`_repr_html_`) show as text/html."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.locations import ROOT

nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient and ipykernel (requirements-dev.txt)")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK = Path(__file__).parent / "notebook" / "walk.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture(scope="module")
def executed(tf_ckpts, tmp_path_factory):
    """The notebook executed, with a first cell naming the run; IPython's and Jupyter's files in a
    temporary folder, not the home folder; the package imported from this checkout."""
    folder = tmp_path_factory.mktemp("notebook")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(f"RUN = {str(tf_ckpts.tf1_run)!r}", id="parameters"))
    with pytest.MonkeyPatch.context() as patch:
        for variable, sub in [("IPYTHONDIR", "ipython"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                              ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_CONFIG_DIR", "config")]:
            patch.setenv(variable, str(folder / sub))
        patch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120,
                                resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def _cell(notebook, cell_id: str):
    return next(cell for cell in notebook.cells if cell.get("id") == cell_id)


def _bars(notebook, cell) -> list[dict]:
    """The state of each tqdm widget the cell displayed: its label's text, its bar's value and maximum."""
    models = notebook.metadata["widgets"][WIDGET_STATE]["state"]
    bars = []
    for output in cell.outputs:
        if WIDGET_VIEW not in output.get("data", {}):
            continue
        box = models[output.data[WIDGET_VIEW]["model_id"]]["state"]
        parts = [models[child.removeprefix("IPY_MODEL_")] for child in box["children"]]
        label = next(p["state"]["value"] for p in parts if p["model_name"] == "HTMLModel")
        bar = next(p["state"] for p in parts if p["model_name"] == "FloatProgressModel")
        bars.append({"label": label, "value": bar["value"], "max": bar["max"], "style": bar["bar_style"]})
    return bars


def test_no_cell_raises(executed):
    errors = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs
              if o.output_type == "error"]
    assert not errors
    warnings = [o.text for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs
                if o.output_type == "stream" and o.name == "stderr"]
    assert not any("IProgress not found" in text for text in warnings), warnings  # the widget, not its fallback


@pytest.mark.parametrize("cell_id, description", [("trajectory", "trajectory"), ("diff", "diff")])
def test_long_calls_draw_tqdms_widget_to_its_end(executed, cell_id, description):
    bars = _bars(executed, _cell(executed, cell_id))
    assert len(bars) == 1, bars
    bar = bars[0]
    assert bar["label"].startswith(description)
    assert bar["max"] > 0 and bar["value"] == bar["max"] and bar["style"] == "success", bar


@pytest.mark.parametrize("cell_id", ["open-run", "checkpoint", "trajectory", "diff"])
def test_the_html_views_are_shown(executed, cell_id):
    """A Run, a Checkpoint, the trajectory of several variables (a DataFrame) and a Difference."""
    results = [o for o in _cell(executed, cell_id).outputs if o.output_type == "execute_result"]
    assert len(results) == 1 and "text/plain" in results[0].data
    assert "<table" in results[0].data["text/html"]
