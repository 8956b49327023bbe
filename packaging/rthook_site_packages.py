"""PyInstaller runtime hook (runs inside the frozen interpreter before main.py): lets the bundled app use
the packages that are deliberately not bundled, and start its helper processes.

1. TensorFlow (about 1 GB installed), Keras and TensorBoard are left out of the bundle (the spec's
   EXCLUDES): only optional features and the tests import them. A person who wants those features
   points CHECKPOINT_INSPECTOR_SITE_PACKAGES at the site-packages folder of a Python environment that
   has them (several folders separated by os.pathsep). That environment must be the same Python
   version as the bundle: TensorFlow's compiled extensions are built for one version. The folders are
   appended, not prepended, so the bundle's own numpy, protobuf and Qt still win and the app keeps
   running on what was tested; the extra folders only fill in what is missing. (A frozen app ignores
   PYTHONPATH, hence a variable of our own.)

2. The app starts helper processes as `sys.executable -m MODULE ARGS` (core/edit/verify.py: TensorFlow's
   check of a saved checkpoint; core/tensorboard/process.py: TensorBoard). In a bundle sys.executable is the
   app itself, so `APP -m MODULE ARGS` runs MODULE here the way `python -m` would, and never reaches
   main.py. When MODULE needs one of the left-out packages and it cannot be found, the process ends
   with one line saying so, which those features show as the reason.
"""
import os
import runpy
import sys

SITE_PACKAGES_ENV = "CHECKPOINT_INSPECTOR_SITE_PACKAGES"
LEFT_OUT = ("tensorflow", "keras", "tensorboard")

for _folder in os.environ.get(SITE_PACKAGES_ENV, "").split(os.pathsep):
    if _folder and os.path.isdir(_folder) and _folder not in sys.path:
        sys.path.append(_folder)


def _run_module_like_python_m() -> None:
    module, arguments = sys.argv[2], sys.argv[3:]
    sys.argv = [sys.executable, *arguments]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in LEFT_OUT:
            raise
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        sys.exit(f"{exc.name} is needed for this and is not part of the Checkpoint Inspector bundle: set "
                 f"{SITE_PACKAGES_ENV} to the site-packages folder of a Python {version} environment "
                 f"that has it")
    sys.exit(0)


if len(sys.argv) >= 3 and sys.argv[1] == "-m":
    _run_module_like_python_m()
