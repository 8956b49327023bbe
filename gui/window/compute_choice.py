"""Where the window's whole-run jobs (trajectories, the overview, the diagnosis, the TensorBoard history) run
their pieces: threads of this app (the default), or a Dask cluster the person names (Tools ▸ Compute On…):
a scheduler's address, or local[N] worker processes.

The choice is kept in the settings; connecting to a cluster (or starting a local one) takes seconds, so
it runs as a job off the GUI thread, and until it is up the threads go on serving. A cluster that cannot
be reached is said in one message and the threads stay.
"""
from __future__ import annotations

from checkpoint_inspector.core.executor import Executor, ThreadExecutor
from checkpoint_inspector.core.jobs import Progress

from ..base import errors


class ComputeChoice:
    def __init__(self, runner, settings, parent):
        self.runner, self.settings, self.parent = runner, settings, parent
        self.current: Executor = ThreadExecutor()
        self._retired: list[Executor] = []  # replaced while a trajectory may still run on them
        self._job = None

    def start_saved(self) -> None:
        """Connect to the cluster of the last session, if one was chosen."""
        if self.settings.executor_setting():
            self.choose(self.settings.executor_setting(), remember=False)

    def ask(self) -> None:
        """Tools ▸ Compute On…: the setting, asked in lines short enough for a laptop's screen."""
        from ..base import dialogs

        setting = dialogs.ask_text(self.parent, "Compute on", "Where trajectories, the overview, the diagnosis and\n"
                                                              "the TensorBoard history compute.\n\n"
                                                              "Empty: this machine (threads of this app).\n"
                                                              "Or a Dask scheduler (tcp://host:8786),\n"
                                                              "or local[N] for N worker processes:",
                                   self.settings.executor_setting())
        if setting is not None:
            self.choose(setting.strip())

    def choose(self, setting: str, remember: bool = True) -> None:
        if remember:
            self.settings.set_executor_setting(setting)
        if not setting:
            self._use(ThreadExecutor())
            return

        def job():
            from checkpoint_inspector.core.executor import executor_for

            yield Progress(0, 0, f"Connecting to {setting}")
            return executor_for(setting)

        self._job = self.runner.start(f"compute on {setting}", job, on_finished=self._use,
                                      on_failed=lambda exc: errors.show_error(
                                          self.parent, "Cannot use this cluster", str(exc)))

    def _use(self, executor: Executor) -> None:
        # The one replaced is closed with the window, not now: a trajectory started on it finishes there.
        self._retired.append(self.current)
        self.current = executor

    def close(self) -> None:
        for executor in self._retired + [self.current]:
            executor.close()
        self._retired.clear()
