"""``tfx open``: the keyboard-first terminal explorer (Textual).

Only this package imports Textual, and only ``tfx.tui.app`` and the widget
modules do: ``tfx.tui.core`` (the headless model: jobs, the worker function,
table rows, diffs, adapters to the simulator and the explorer) and
``tfx.tui.canvas`` (the braille canvas) are plain Python, tested without a
screen.
"""
