"""Presentation: how every number a person reads is written, the rows of each report and
pane, and the one diff between two results.

The layers below compute; this package only renders. CLI text, TUI panes and exports
all build their lines from here, so the same quantity reads the same everywhere:

- ``tfx.present.formatting``: the unit policy (decimal prefixes for bytes, as for
  bandwidths; times in ns/us/ms/s; work in flop with decimal prefixes), one formatter
  per quantity and ``metric`` which picks the formatter from a metric's dotted name.
- ``tfx.present.analysis_report``: an ``Analysis`` as text: the summary block, the
  annotated IR, the Traffic table's rows, the header line.
- ``tfx.present.diff``: two results compared metric by metric (``tfx diff`` and the
  explorer's "what moved" line).

No function here recomputes a model quantity: each reads the result object (or its
JSON) and formats what it finds.
"""
