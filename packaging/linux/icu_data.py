"""A smaller ``libicudata.so.73`` for the Linux bundle: ICU's data without what Qt never reads.

    python packaging/linux/icu_data.py SRC/libicudata.so.73 OUT_DIR    # prints OUT_DIR/libicudata...

PySide6's wheel carries ICU 73 for Qt6Core, whose data library is 32 MB of the bundle. Qt6Core
calls only three ICU services (``nm -D libQt6Core.so.6``): ``ucol_*`` (QCollator and
``localeAwareCompare``), ``ucnv_*`` (QStringConverter for legacy encodings by name) and
``ucal_*`` (QTimeZone's ICU backend, unused on Linux, where Qt reads the zone files); the other Qt
libraries call none. So kept are: the collation data of the root locale and of the app's two
languages (coll/root, coll/ucadata.icu, coll/en*, coll/zh*, coll/res_index), the converter alias
table (cnvalias.icu: UTF-8, UTF-16 and Latin-1 are built into libicuuc's code), the shared
tables at the top level (supplementalData, likelySubtags, pool, zoneinfo64...) with the root, en
and zh locales' own data, and the normalization data. Left out: the display names (lang/,
region/, curr/, unit/, zone/), break iterators, transliterators, number spelling (rbnf/), the
table converters (*.cnv: GB18030, Shift-JIS..., which the app never asks Qt for: it decodes job
output in Python), the other locales' data, StringPrep profiles and character names.

Made with Debian's ``icu-devtools`` (``icupkg`` removes items from ICU's common data file,
``genccode`` writes it back as assembly) and ``gcc``: the same library name and its one exported
symbol, ``icudt73_dat``, unversioned as in the wheel. Without those tools the build keeps the
original (and says so): the bundle is then larger, not broken.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
from pathlib import Path

KEEP = (
    "*.res",  # top level: the shared tables, root, en, zh (LOCALE_RES filters the other locales)
    "*.nrm",
    "*.icu",
    "coll/root.res",
    "coll/ucadata.icu",
    "coll/res_index.res",
    "coll/en*.res",
    "coll/zh*.res",
)
DROP_TOP_LEVEL = ("unames.icu", "uemoji.icu", "ulayout.icu")  # character names, emoji, layout


def tools() -> list[str]:
    return [tool for tool in ("icupkg", "genccode", "gcc", "readelf") if shutil.which(tool) is None]


def _extract(library: Path, out: Path) -> tuple[Path, str]:
    """The common data file inside the library: the bytes of its one data symbol."""
    symbols = subprocess.run(["readelf", "-sW", str(library)], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    match = re.search(r"\s([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+OBJECT\s+GLOBAL\s+\S+\s+(\d+)\s+"
                      r"(icudt(\d+)_dat)$", symbols, re.M)  # fmt: skip
    if match is None:
        raise SystemExit(f"icu_data: no icudt*_dat symbol in {library}")
    address, size, section = int(match.group(1), 16), int(match.group(2), 0), int(match.group(3))
    name, major = match.group(4), match.group(5)
    headers = subprocess.run(["readelf", "-SW", str(library)], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    row = re.search(rf"\[\s*{section}\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", headers)
    if row is None:
        raise SystemExit(f"icu_data: no section {section} in {library}")
    offset = int(row.group(2), 16) + address - int(row.group(1), 16)
    with library.open("rb") as file:
        file.seek(offset)
        data = file.read(size)
    dat = out / f"icudt{major}l.dat"
    dat.write_bytes(data)
    return dat, name


# A locale's own data at the top level (nl.res, sr_Latn_BA.res): only ICU's calendar and number
# formatting read it, which Qt never calls; the shared tables (supplementalData, pool...) stay.
LOCALE_RES = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*\.res$")
KEEP_LOCALES = re.compile(r"^(en|zh)(_[A-Za-z0-9]+)*\.res$")


def _kept(item: str) -> bool:
    # `icupkg -l` lists items relative to the package: "coll/zh.res", "cnvalias.icu".
    if "/" not in item and item in DROP_TOP_LEVEL:
        return False
    if "/" not in item and item.endswith((".cnv", ".spp")):
        return False
    if "/" not in item and LOCALE_RES.match(item) and not KEEP_LOCALES.match(item):
        return False
    return any(fnmatch.fnmatchcase(item, pattern) and item.count("/") == pattern.count("/")
               for pattern in KEEP)  # fmt: skip


def slim(library: Path, out: Path) -> Path:
    """Write ``out/<library's name>`` with the kept items only; return its path."""
    out.mkdir(parents=True, exist_ok=True)
    dat, symbol = _extract(library, out)
    items = subprocess.run(["icupkg", "-l", str(dat)], capture_output=True, text=True,
                           check=True).stdout.split()  # fmt: skip
    dropped = [item for item in items if not _kept(item)]
    listing = out / "dropped.txt"
    listing.write_text("\n".join(dropped) + "\n")
    slim_dat = out / "slim" / dat.name
    slim_dat.parent.mkdir(exist_ok=True)
    subprocess.run(["icupkg", "-r", str(listing), str(dat), str(slim_dat)], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    # genccode names the symbol after the file (icudt73l -> icudt73l_dat); -e sets it as in the wheel.
    entry = symbol.removesuffix("_dat")
    subprocess.run(["genccode", "-a", "gcc", "-e", entry, "-d", str(out), str(slim_dat)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    (assembly,) = out.glob("*.S")
    target = out / library.name
    subprocess.run(["gcc", "-shared", "-nostdlib", "-Wl,-soname," + library.name, "-o",
                    str(target), str(assembly)], check=True)  # fmt: skip
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: icu_data.py SRC/libicudata.so.NN OUT_DIR", file=sys.stderr)
        return 2
    missing = tools()
    if missing:
        print(
            f"icu_data: {', '.join(missing)} missing (apt install icu-devtools gcc)",
            file=sys.stderr,
        )
        return 1
    print(slim(Path(argv[0]), Path(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
