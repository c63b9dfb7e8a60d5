"""The front door, with no Qt but in its socket server: the service behind the CLI and the running
app, the JSON shapes of its values, export documents, the app's settings, and the JSON-RPC
transport (``rpc``)."""
