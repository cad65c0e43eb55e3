"""The explorer's panes, one module per area of the screen (Posting's layout).

``layout_if_resized``: redraw a widget in place, a layout of the whole screen only where its
height moves. Textual lays the whole screen out again on every ``Static.update``
(``layout=True``) and on ``refresh(layout=True)``; after a keystroke that layout was most of
the app's side of the redraw (bench/keystroke_speed.py). A widget whose width the screen sets (not ``width: auto``)
and whose height follows its content is repainted with ``layout=False``, then laid out only
where Textual's own measure of the new content at its width gives another height.
"""

from __future__ import annotations


def layout_if_resized(widget) -> None:
    """After a repaint-only update of ``widget``: a layout where its content's height at its
    width is not the height it has. None where it has no width: a widget in a pane not shown
    (display: none; showing the pane lays it out) or one not laid out yet (its mount's layout
    is still to come)."""
    size = widget.content_size
    if size.width and widget.get_content_height(size, widget.app.size, size.width) != size.height:
        widget.refresh(layout=True)
