"""JSON-RPC 2.0 over the app's local socket: the protocol, the dispatcher, the server (Qt), the
CLI's client (standard library only), the peer check and where the socket lives."""
