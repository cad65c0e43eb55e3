"""``python -m tfx``: the ``tfx`` command where its script is not on PATH (a venv not
activated over SSH, ``pip install --user``): the same entry, output and exit status."""

from tfx.cli.process_end import entry

entry()
