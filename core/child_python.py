"""Where a child Python process of ours imports the package from: the folder holding `checkpoint_inspector`
(site-packages when installed, the checkout's root otherwise, where checkpoint_inspector/ links to core/).
The HDF5 worker (core.format.keras.hdf5_guard) and TensorFlow's children (core.edit.child_process) start
as `python -m checkpoint_inspector.core...` from here, so they import the same copy as their parent."""
from __future__ import annotations

import os

# core/child_python.py -> core -> checkpoint_inspector -> the folder holding it. abspath, not realpath: in a
# checkout this file is reached through the checkpoint_inspector/core link, and the link's side is wanted.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_environment(**overrides: str) -> dict[str, str]:
    """This process's environment for a child, with PACKAGE_PARENT first on PYTHONPATH and `overrides` set."""
    path = os.pathsep.join(p for p in (PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **overrides}
