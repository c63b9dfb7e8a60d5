"""The monitor's spool drained: --pings pings (10,000: 3.5 days offline at one job a minute),
spooled while the monitor was away, then delivered to a stand-in server on 127.0.0.1 (its own
process, so the figures are the app's alone).

  pings/s          deliveries per second while draining (the first --limit seconds)
  bytes written    what the draining process wrote to files (/proc/self/io wchar: the spool's
                   appends and rewrites; socket writes are not counted there)
  disk writes      what reached the block layer (write_bytes; 0 on a tmpfs)
  RSS              before the drain (imports made) and the peak during it

The same run can measure another tree of the package (``--tree DIR``, e.g. an earlier commit
unpacked with ``git archive``) for a before/after in one sitting:

  python bench/monitor_spool_bench.py [--pings 10000] [--limit 120] [--tree DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("READY", flush=True)
server.serve_forever()
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _io() -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path("/proc/self/io").read_text().splitlines():
        key, _, value = line.partition(":")
        values[key] = int(value)
    return values


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fill(data: Path, url: str, pings: int) -> None:
    """The spool as a monitor away for days leaves it (nothing listens at ``url``)."""
    from domi_desktop.monitor.intents import Intent, Kind
    from domi_desktop.monitor.spool import SPOOL_FILENAME, Spool
    from domi_desktop.monitor.worker import Worker
    from domi_desktop.secrets import MemorySecretStore

    worker = Worker(data, MemorySecretStore({}), lambda _run: None)
    worker.start()
    intents = [
        Intent(Kind.ping, "start" if n % 2 else "0", url=url, rid=f"run-{n // 2}", what="bench")
        for n in range(pings)
    ]
    worker.submit(intents)
    deadline = time.monotonic() + 600
    while len(Spool(data / SPOOL_FILENAME).items) < pings and time.monotonic() < deadline:
        time.sleep(0.2)
    worker.stop()


def drain(data: Path, pings: int, limit: float) -> dict[str, Any]:
    from domi_desktop.monitor.worker import Worker
    from domi_desktop.secrets import MemorySecretStore

    before_rss = _rss_kib()
    before = _io()
    worker = Worker(data, MemorySecretStore({}), lambda _run: None)
    started = time.perf_counter()
    worker.start()
    deadline = time.monotonic() + limit
    while worker.delivered < pings and time.monotonic() < deadline:
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    delivered = worker.delivered
    worker.stop()
    after = _io()
    return {
        "delivered": delivered,
        "seconds": round(elapsed, 2),
        "pings_per_s": round(delivered / elapsed, 1),
        "bytes_written": after["wchar"] - before["wchar"],
        "disk_bytes_written": after["write_bytes"] - before["write_bytes"],
        "bytes_per_ping": round((after["wchar"] - before["wchar"]) / max(delivered, 1)),
        "rss_before_mib": round(before_rss / 1024, 1),
        "rss_peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _child(args: argparse.Namespace) -> None:
    data = Path(args.data)
    if args.child == "fill":
        fill(data, args.url, args.pings)
    else:
        print(json.dumps(drain(data, args.pings, args.limit)))


def measure(tree: Path, pings: int, limit: float) -> dict[str, Any]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/ping/bench"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    me = [sys.executable, str(Path(__file__).resolve())]
    with tempfile.TemporaryDirectory(prefix="domi-spool-bench-") as folder:
        common = ["--data", folder, "--pings", str(pings), "--limit", str(limit)]
        subprocess.run([*me, "--child", "fill", "--url", url, *common], env=env, check=True)
        server = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(port)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "READY"
            done = subprocess.run(
                [*me, "--child", "drain", *common],
                env=env, check=True, capture_output=True, text=True,
            )  # fmt: skip
        finally:
            server.terminate()
            server.wait(10)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["tree"] = str(tree)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pings", type=int, default=10_000)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds of drain measured")
    parser.add_argument("--tree", action="append", type=Path, help="a package tree to measure")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=("fill", "drain"), help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    results = [measure(tree, args.pings, args.limit) for tree in args.tree or [ROOT]]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        print(f"{r['tree']}: {r['delivered']:,} of {args.pings:,} pings in {r['seconds']} s, "
              f"{r['pings_per_s']} pings/s; written {r['bytes_written']:,} bytes "
              f"({r['bytes_per_ping']:,} a ping), to disk {r['disk_bytes_written']:,}; "
              f"RSS {r['rss_before_mib']} MiB before, peak {r['rss_peak_mib']} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
