"""What the CLI says and where (issue 47): stderr holds only `error:`, `warning:` and `note:` lines, so what
`export` and `export-csv` wrote is said on stdout; every message that tells a person what to type names
the command they typed (`./run-app` from the checkout's launcher, `checkpoint-inspector` installed,
`main.py` as a script), never another door's; an OSError that names no file is said with the command's
path, never as `error: : ...`. Run in this process through the program's entry (launcher.main), which is
what main.py and the installed command call."""
from __future__ import annotations

import errno
import subprocess
import sys

import pytest

import checkpoint_inspector as ci
from checkpoint_inspector.core.cli import PROGRAM_VARIABLE
from checkpoint_inspector.launcher import main as door
from tests.locations import ROOT


def _said(capsys, argv) -> tuple[int, str, str]:
    capsys.readouterr()
    status = door([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("command", ["export-csv", "export", "export-csv --all-steps"])
def test_what_an_export_wrote_is_said_on_stdout(tf_ckpts, tmp_path, capsys, command):
    out_file = tmp_path / ("table.csv" if command.startswith("export-csv") else "tensors.npz")
    name, *options = command.split()
    status, out, err = _said(capsys, [name, tf_ckpts.tf2_keras_run, out_file, *options])
    assert status == 0 and err == "" and out.startswith("wrote ") and str(out_file) in out


@pytest.fixture
def typed_as(monkeypatch):
    """The command as ./run-app says it was typed (the variable it sets), or argv[0] without it."""

    def typed(program: str | None, argv0: str = "main.py") -> None:
        if program is None:
            monkeypatch.delenv(PROGRAM_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(PROGRAM_VARIABLE, program)
        monkeypatch.setattr(sys, "argv", [argv0])

    return typed


@pytest.mark.parametrize("program, argv0, said", [("./run-app", "/x/main.py", "./run-app"),
                                                  (None, "/venv/bin/checkpoint-inspector", "checkpoint-inspector"),
                                                  (None, "/x/main.py", "main.py")])
def test_messages_name_the_command_that_was_typed(tf_ckpts, capsys, typed_as, program, argv0, said):
    typed_as(program, argv0)
    run = tf_ckpts.tf2_keras_run
    status, _, err = _said(capsys, ["show", run, "no/such/variable"])
    assert status == 2 and f"(see `{said} list " in err and (said == "main.py" or "main.py" not in err), err
    status, _, err = _said(capsys, ["overview", run])  # a usage error: --metric is missing
    assert status == 2 and err.startswith(f"error: {said} overview: "), err


def test_a_diffs_rename_hint_names_the_command_typed(tf_ckpts, tmp_path, capsys, typed_as):
    typed_as("./run-app")
    latest = ci.open(tf_ckpts.tf1_run)
    prefix = latest.checkpoint().prefix
    latest.close()
    renamed = ci.remap(prefix, tmp_path / "renamed" / "model.ckpt", rename={"^dense/kernel$": "dense/weights"})
    status, out, _ = _said(capsys, ["diff", prefix, renamed])
    assert status == 1 and "as a remap plan: ./run-app remap A NEW --rename" in out and "main.py" not in out, out


def test_run_app_tells_the_cli_how_it_was_typed(tf_ckpts):
    """The launcher script itself: its errors say `./run-app`, the way it was typed here."""
    result = subprocess.run(["./run-app", "overview", str(tf_ckpts.tf2_keras_run)], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("error: ./run-app overview: "), result.stderr


def test_an_os_error_naming_no_file_is_said_with_the_commands_path(tf_ckpts, capsys, monkeypatch):
    from checkpoint_inspector.core.cli import reading

    def failing(args):  # what a read() of a file gives: no file name in the error
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(reading, "command_list", failing)
    status, _, err = _said(capsys, ["list", tf_ckpts.tf2_keras_run])
    assert status == 2 and err == f"error: {tf_ckpts.tf2_keras_run}: Input/output error\n"


def test_no_message_of_the_engine_names_one_door():
    """Text the engine gives every door (errors, findings' advice) names no command line: the CLI adds
    its own command (program_name), the API and the window theirs. Docstrings and comments may."""
    import ast

    found = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "main.py" in node.value \
                    and id(node) not in docstrings:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
