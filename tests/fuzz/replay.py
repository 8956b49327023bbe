"""Replaying a saved fuzz case (tests/fuzz/regressions/47_*, made by make_regressions.py) through both doors:
the same call through the Python API and through the CLI, on a copy of the case where its `links` are made.

A case's `call` is one of CALLS, its `args` name files of the case folder (`path`, `b`) and a variable
(`name`); a remap writes to a new folder beside the copy (`NAME.out/new/ckpt`), which must not exist afterwards
when the remap fails. open_files() is what this process holds open under a folder (descriptors and memory
maps), for the promise that nothing is left open after an error.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

CALLS = ("list", "read", "remap", "diff")


def load(folder: Path) -> dict:
    return json.loads((folder / "case.json").read_text())


def prepare(folder: Path, where: Path) -> Path:
    """A copy of the case folder at `where`, its links made (a link that loops, a pseudo file)."""
    shutil.copytree(folder, where, ignore=shutil.ignore_patterns("case.json"))
    for name, target in load(folder).get("links", {}).items():
        os.symlink(target, where / name)
    return where


def output_folder(copy: Path) -> Path:
    """Beside the copy, not in it: the copy is the run read, and a copy inside it is refused unless meant."""
    return copy.parent / f"{copy.name}.out"


def destination(copy: Path) -> Path:
    return output_folder(copy) / "new" / "ckpt"


def api_call(case: dict, copy: Path) -> None:
    """The case's call through `import checkpoint_inspector as ci`."""
    import checkpoint_inspector as ci

    args = case["args"]
    path = copy / args["path"]
    if case["call"] == "list":
        with ci.open(path) as run:
            run.checkpoint().keys()
    elif case["call"] == "read":
        with ci.open(path) as run:
            run.checkpoint()[args["name"]]
    elif case["call"] == "remap":
        ci.remap(path, destination(copy), {"operations": [], "name_based": bool(args.get("name_based"))})
    else:
        ci.diff(path, copy / args["b"], values=True)


def cli_argv(case: dict, copy: Path) -> list[str]:
    """The same call as a command line."""
    args = case["args"]
    path = str(copy / args["path"])
    return {"list": lambda: ["list", path],
            "read": lambda: ["show", path, args["name"]],
            "remap": lambda: ["remap", path, str(destination(copy))] + (["--name-based"] if args.get("name_based") else []),
            "diff": lambda: ["diff", path, str(copy / args.get("b", "")), "--values"]}[case["call"]]()


def open_files(folder: Path) -> set[str]:
    """The files under `folder` this process has open: descriptors (/proc/self/fd) and memory maps."""
    inside = os.path.realpath(folder) + os.sep
    held = set()
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            held.add(os.readlink(f"/proc/self/fd/{descriptor}"))
        except OSError:  # the listing's own descriptor, closed by now
            pass
    with open("/proc/self/maps") as maps:
        held.update("mapped " + line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6)
    return {path for path in held if path.removeprefix("mapped ").startswith(inside)}
