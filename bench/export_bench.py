"""Throughput of the systemd export check: (expression, zone) cases per second whose next 50
elapses from ``systemd-analyze calendar`` are compared with domi's next 50 fires.

  zone-less   specs run with TZ=zone (how the 10,000 x 5 test runs)
  named       specs as exported, the zone in the spec (systemd forks a child per elapse)

Usage: python bench/export_bench.py [--count 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "unit" / "export"))

from systemd_calendar import SYSTEMD_ANALYZE, ZONES, cases, compare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="expressions (times 5 zones)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if SYSTEMD_ANALYZE is None:
        print("systemd-analyze is missing (Debian package: systemd)", file=sys.stderr)
        return 2
    results = {}
    for label, named, count in (
        ("zone-less", False, args.count),
        ("named", True, args.count // 10),
    ):
        sample = cases(count, seed=1, named=named)
        start = time.perf_counter()
        checked, failures = compare(sample)
        elapsed = time.perf_counter() - start
        results[label] = {
            "cases": checked,
            "expressions": count,
            "zones": len(ZONES),
            "seconds": round(elapsed, 2),
            "cases_per_second": round(checked / elapsed, 1),
            "failures": len(failures),
        }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for label, row in results.items():
            print(
                f"{label:10} {row['cases']:6} cases in {row['seconds']:6.2f} s:"
                f" {row['cases_per_second']:8.1f} cases/s, {row['failures']} failures"
            )
    return 0 if all(row["failures"] == 0 for row in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
