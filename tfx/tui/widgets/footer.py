"""The key bar of both explorer apps: Textual's ``Footer``, rebuilt only when what it shows changes.

Textual's ``Footer`` removes and mounts all its keys again every time the screen
publishes ``bindings_updated``, which it does on each focus change and after each
refresh that follows one, whether or not a binding changed. At start-up that is
four identical rebuilds between the first analysis and the frame that shows it
(~7 ms of CPU each on the 2-core bench machine). This footer compares what it
would show (the shown bindings, whether each is enabled, their tooltips, the
command palette's key) with what it shows, and rebuilds only on a difference: the
screen is the same, frame for frame.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeyFooter(Footer):
    """``Footer`` that skips a rebuild which would mount the same keys again."""

    _composed_keys: tuple | None = None

    def _shown_keys(self) -> tuple | None:
        """Everything ``Footer.compose`` reads; None while the bindings are not ready
        (it then composes nothing)."""
        if not self._bindings_ready:
            return None
        active = self.screen.active_bindings
        shown = tuple((binding, enabled, tooltip)
                      for _node, binding, enabled, tooltip in active.values() if binding.show)
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            palette = found[1:] if found is not None else None
        return shown, palette

    async def recompose(self) -> None:
        if not self.is_attached:
            return
        keys = self._shown_keys()
        if keys is not None and keys == self._composed_keys:
            return
        self._composed_keys = keys
        await super().recompose()
