"""Replace secret values with ``***`` in text and in streamed output."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"


class Masker:
    """Masks a fixed set of secret values. Where two values overlap, the longer one wins.

    Every non-empty value is masked, however short: a leaked secret costs more than a log with too
    many stars. The stores refuse values under ``MIN_SECRET_LENGTH`` characters, so a short one can
    only come from a keyring item written by another tool.
    """

    def __init__(self, values: Iterable[str]) -> None:
        # Longest first: re's alternation takes the first alternative that matches at a position.
        kept = sorted({v for v in values if v}, key=len, reverse=True)
        encoded = [v.encode() for v in kept]
        self._text = re.compile("|".join(map(re.escape, kept))) if kept else None
        self._bytes = re.compile(b"|".join(map(re.escape, encoded))) if encoded else None
        self._longest = max((len(e) for e in encoded), default=0)

    def mask(self, text: str) -> str:
        return self._text.sub(MASK, text) if self._text else text

    def stream(self) -> MaskingStream:
        """A masker for output that arrives in chunks (a value may be split across two of them)."""
        return MaskingStream(self._bytes, self._longest)


class MaskingStream:
    """Masks bytes fed in chunks; what ``feed`` and ``flush`` return equals masking it all at once.

    A value can straddle two chunks, so up to ``longest - 1`` trailing bytes are held back until the
    next chunk shows whether they start a value.
    """

    def __init__(self, pattern: re.Pattern[bytes] | None, longest: int) -> None:
        self._pattern = pattern
        self._longest = longest
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        if self._pattern is None:
            return chunk
        data = self._pending + chunk
        # A match starting before `safe` is complete: even the longest value fits in `data`.
        safe = len(data) - (self._longest - 1)
        out: list[bytes] = []
        pos = 0
        for match in self._pattern.finditer(data):
            if match.start() >= safe:
                break
            out += [data[pos : match.start()], MASK.encode()]
            pos = match.end()
        end = max(pos, safe)
        out.append(data[pos:end])
        self._pending = data[end:]
        return b"".join(out)

    def flush(self) -> bytes:
        """The held-back bytes, masked: call once the output has ended."""
        data, self._pending = self._pending, b""
        return self._pattern.sub(MASK.encode(), data) if self._pattern else data


def mask(text: str, values: Iterable[str]) -> str:
    """``text`` with each occurrence of every non-empty value replaced by ``***``."""
    return Masker(values).mask(text)
