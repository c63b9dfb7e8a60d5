"""The layer behind every front door, with no Qt: wire shapes and limits, the service, the JSON-RPC
protocol, and the runtime that claims fires and runs actions."""
