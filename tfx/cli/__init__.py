"""Command-line interface: one module per ``tfx`` subcommand (``cmd_<name>.py``)."""
