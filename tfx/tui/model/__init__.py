"""``tfx open --model NAME``: the model screen (issue 8's explorer screen).

One transformer preset on many devices: the physical layout of the shards,
suggested parallelism, memory per device, per-stage latency, saved
configurations side by side and the hardware co-design sweep, all over
``tfx.model`` (``latency``, ``suggest``, ``hw_sweep``, ``compare_results``).

``tfx.tui.model.core`` is plain Python (jobs, the worker function, every row
and line the tabs show) and is tested without a screen; ``app``, ``panes`` and
``commands`` import Textual.
"""
