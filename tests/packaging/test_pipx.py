"""The wheel, installed with ``pipx install`` into a fresh HOME, as a person without the bundle would.

Slow (the wheel is built, then pipx makes a venv and installs PySide6 and the rest from the package
registry) and so only with ``PACKAGE_TEST=1`` (``make package-test``), like the bundle's tests.
The wheel is built with ``pip wheel`` (build isolation: the ``setuptools>=77`` the project names).
Every run of the installed command is in an empty environment plus HOME: it must need nothing from
the shell but its own venv. ``PIP_CACHE_DIR`` points at the host's pip cache when there is one, so
the wheels of the dependencies are not downloaded again on every run: HOME itself stays fresh.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from domi_desktop import __version__

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("PACKAGE_TEST") != "1",
        reason="builds the wheel and installs it with pipx: set PACKAGE_TEST=1 (make package-test)",
    ),
    pytest.mark.skipif(sys.platform == "win32", reason="the pipx venv's layout is POSIX's here"),
]


def _load_smoke_test() -> ModuleType:
    spec = importlib.util.spec_from_file_location("smoke_test", ROOT / "packaging/smoke_test.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _load_smoke_test()


@dataclass(frozen=True)
class Installed:
    home: Path
    exe: Path  # the command pipx put on PIPX_BIN_DIR
    venv: Path  # pipx's venv of the app

    def env(self, **extra: str) -> dict[str, str]:
        return {"HOME": str(self.home), **extra}


def _pipx() -> list[str]:
    if shutil.which("pipx"):
        return ["pipx"]
    if importlib.util.find_spec("pipx") is not None:
        return [sys.executable, "-m", "pipx"]
    pytest.fail("pipx is not installed (make system-deps installs Debian's)")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory, figures: list[str]) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = out.glob(f"domi_desktop-{__version__}-py3-none-any.whl")
    figures.append(f"wheel {built.name}: {built.stat().st_size / 1e6:.2f} MB")
    return built


@pytest.fixture(scope="module")
def installed(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory, figures: list[str]
) -> Iterator[Installed]:
    home = tmp_path_factory.mktemp("pipx-home")
    pipx_home, bin_dir = home / ".local/pipx", home / ".local/bin"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "PIPX_HOME": str(pipx_home),
        "PIPX_BIN_DIR": str(bin_dir),
    }
    cache = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache/pip")
    if cache.is_dir():
        env["PIP_CACHE_DIR"] = str(cache)
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT"):
        if name in os.environ:  # this machine's way to the package registry, if it has one
            env[name] = os.environ[name]
    done = subprocess.run(
        [*_pipx(), "install", str(wheel)], env=env, capture_output=True, text=True,
        timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    exe = bin_dir / "domi-desktop"
    assert exe.exists(), f"pipx put no domi-desktop in {bin_dir}:\n{done.stdout}"
    yield Installed(home, exe, pipx_home / "venvs/domi-desktop")
    # pipx's own uninstall, so the test proves that too; the temp dir goes with pytest's.
    gone = subprocess.run(
        [*_pipx(), "uninstall", "domi-desktop"], env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert gone.returncode == 0, gone.stderr
    assert not exe.exists() and not (pipx_home / "venvs/domi-desktop").exists()


def test_pipx_installs_the_command_and_it_prints_its_version(installed: Installed) -> None:
    assert installed.exe.is_relative_to(installed.home)
    done = smoke.run(installed.exe, "--version", env=installed.env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"domi-desktop {__version__}"


def test_preview_works_with_the_tzdata_package_alone(installed: Installed) -> None:
    # PYTHONTZPATH empty hides the OS's zone files: Asia/Shanghai comes from the tzdata dependency.
    done = smoke.run(installed.exe, *smoke.PREVIEW, env=installed.env(PYTHONTZPATH=""))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["next"] == smoke.PREVIEW_NEXT


def test_headless_starts_answers_status_and_stops_on_quit(
    installed: Installed, tmp_path: Path, figures: list[str]
) -> None:
    data = tmp_path / "data"
    with smoke.Headless(installed.exe, installed.env(), data, stop="quit") as app:
        state = app.cli_json("status")
        assert state["running"] is True, state
        assert state["data_dir"] == str(data), state
    # Headless's exit sent quit over the socket and checked exit 0 and the "stopped" line.
    assert app.process is not None and app.process.returncode == 0
    figures.append(f"pipx --headless: first wake after {app.first_wake_s:.2f} s")


def test_the_data_files_are_installed_where_the_app_looks_for_them(
    installed: Installed, tmp_path: Path
) -> None:
    share = installed.venv / "share"
    shipped = {path.name for path in (ROOT / "resources").glob("*.svg")}
    assert {path.name for path in (share / "domi-desktop/resources").glob("*.svg")} == shipped
    entry = (share / "applications/domi-desktop.desktop").read_text()
    assert "Exec=domi-desktop\n" in entry and "Icon=domi-desktop\n" in entry
    assert (share / "icons/hicolor/scalable/apps/domi-desktop.svg").is_file()
    # The app's own lookup, run by the venv's Python: the icons come from share/, not a checkout.
    # Run in a folder holding a "resources" folder of icons: outside a bundle the working directory
    # must never be taken for one.
    (tmp_path / "resources").mkdir()
    (tmp_path / "resources/domi-idle.svg").write_text("<svg/>")
    python = installed.venv / "bin/python"
    done = subprocess.run(
        [str(python), "-c", "from domi_desktop.ui.icons import resources_dir; print(resources_dir())"],
        env=installed.env(QT_QPA_PLATFORM="offscreen"), cwd=tmp_path, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == share / "domi-desktop/resources"


def test_qt_s_own_chinese_catalog_comes_with_the_pyside6_wheel(installed: Installed) -> None:
    # The UI's translations are Python catalogs; Qt's standard buttons need qtbase_zh_CN.qm.
    (catalog,) = installed.venv.glob(
        "lib/python3*/site-packages/PySide6/Qt/translations/qtbase_zh_CN.qm"
    )
    assert catalog.stat().st_size > 0
