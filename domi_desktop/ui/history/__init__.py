"""The History window: the runs table, its model and rows, and a run's log."""
