"""The explorer's panes, one module per area of the screen (Posting's layout)."""
