"""The schedule editor: one dialog, its sections and their widgets."""
