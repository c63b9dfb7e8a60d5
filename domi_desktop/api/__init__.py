"""What the running app and its clients agree on: the JSON-RPC protocol over the local socket."""
