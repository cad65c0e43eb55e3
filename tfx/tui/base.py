"""What both explorer apps share: the job runner's messages and exports.

``ExplorerApp`` is the base of ``TfxApp`` (``tfx open``) and ``ModelApp``
(``tfx open --model``). It owns a ``JobRunner`` (``self.jobs``), dispatches its
``JobDone`` messages to ``done_<kind>`` methods, turns a crashed worker coroutine
into a notification, and writes exports through ``tfx.files`` (atomic, never
over an earlier export, a safe file name whatever the profile or model is called;
a failed write is a notification and the app keeps every edit).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, Callable

from textual.app import App
from textual.worker import Worker, WorkerState

from tfx.errors import TfxError
from tfx.tui.jobs import JobDone, JobRunner


class ExplorerApp(App):
    """A Textual app whose long work runs through one ``JobRunner``."""

    jobs: JobRunner
    export_dir: Path

    # ---------------------------------------------------------------- jobs
    def on_job_done(self, message: JobDone) -> None:
        getattr(self, f"done_{message.kind}")(message.outcome)
        self.jobs.mark_shown(message.kind, message.generation)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            err = event.worker.error
            self.notify(f"{type(err).__name__}: {err}", title=f"{event.worker.group} failed",
                        severity="error", timeout=6)

    async def on_unmount(self) -> None:
        self.jobs.shutdown()

    def startup_done(self) -> None:
        """Called once the first screen with data is drawn. What exists now (Textual's
        modules, styles and widgets, the model's modules) lives as long as the app:
        frozen out of the collector's passes (O(1)), which otherwise cost a keystroke
        ~45 ms now and then; then the collector, paused while the app started
        (``tfx.tui.open_command.collector_paused``), runs again."""
        gc.freeze()
        gc.enable()

    # ---------------------------------------------------------------- exports
    def export_stem(self) -> str:
        """What an export's file name starts with (subclasses: kernel/model, hardware, pane)."""
        raise NotImplementedError

    def write_export(self, suffix: str, write: Callable[[Path], Any], stem: str | None = None) -> Path | None:
        """Write an export as ``<export_dir>/<stem><suffix>`` (``-2``, ``-3``... when taken)
        through ``write(path)``; the toast names the full path, a failure is a notification."""
        from tfx.files import next_free_path
        try:
            path = next_free_path(self.export_dir, stem or self.export_stem(), suffix)
            write(path)
        except TfxError as err:
            self.notify(err.headline(), title="export failed", severity="error", timeout=8)
            return None
        self.notify(f"saved {path.resolve()}", timeout=5)
        return path

    def export_text(self, suffix: str, text: str, stem: str | None = None) -> Path | None:
        from tfx.files import write_text_atomic
        return self.write_export(suffix, lambda p: write_text_atomic(p, text, what="the export"), stem)

    def action_export_svg(self) -> None:
        self.export_text(".svg", self.export_screenshot())
