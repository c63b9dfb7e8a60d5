"""The windows: editor, history, settings (Qt widgets over the service layer)."""
