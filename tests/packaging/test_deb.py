"""The .deb, installed with apt from its signed repository into a clean Debian 12 root.

Slow, so only with ``PACKAGE_TEST=1`` (``make package-test``), like the bundle's tests; Linux and
root only (mmdebstrap, overlay mounts, chroot). The root is ``packaging/linux/debroot.py``'s:
Debian 12 with apt and the packages the .deb's ``Depends`` names, cached in ``.deb-root/``. Each
step runs in its own mount and PID namespace (``unshare``) over an overlay of that cache: the
cache is never written, and the mounts and every process started inside (the app among them) end
with the step, also when a test fails. The repository is signed here with a throw-away key
(``apt_repo.py``); apt checks it (``signed-by=``), and refuses one signed by another key.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
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
USER = "alice"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("PACKAGE_TEST") != "1",
        reason="builds the bundle and the .deb: set PACKAGE_TEST=1 (make package-test)",
    ),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Debian package"),
    pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() != 0, reason="needs root (chroot)"),
]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / f"packaging/linux/{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_deb = _load("build_deb")
apt_repo = _load("apt_repo")
debroot = _load("debroot")


def _field(deb: Path, name: str) -> str:
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), name], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def deb(linux_dist: tuple[Path, float | None], figures: list[str]) -> Path:
    dist, _ = linux_dist
    (found,) = dist.glob(f"domi-desktop_{__version__}-1_*.deb")
    bundle = dist / "domi-desktop"
    figures.append(
        f".deb {found.name}: {found.stat().st_size / 1e6:.1f} MB "
        f"({_field(found, 'Installed-Size')} KiB installed); bundle {bundle_mb(bundle):.1f} MB"
    )
    return found


def bundle_mb(bundle: Path) -> float:
    files = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files) / 1e6


@dataclass
class Root:
    """An overlay of the cached root; ``run`` runs a shell script in it as root or as ``user``."""

    lower: Path
    work: Path
    repo: Path

    def run(self, script: str, *, user: str | None = None, timeout: float = 600) -> str:
        upper, scratch, merged = self.work / "upper", self.work / "scratch", self.work / "merged"
        for folder in (upper, scratch, merged):
            folder.mkdir(exist_ok=True)
        if user is not None:
            # A login-like empty environment, as a desktop session would start the command.
            script = (
                f"exec runuser -u {user} -- env -i HOME=/home/{user} USER={user} "
                f"PATH=/usr/local/bin:/usr/bin:/bin sh -c {shell_quote(script)}"
            )
        outer = (
            "set -e\n"
            f"mount -t overlay overlay -o lowerdir={self.lower},upperdir={upper},"
            f"workdir={scratch} {merged}\n"
            f"mount --rbind /dev {merged}/dev\n"
            f"mount -t proc proc {merged}/proc\n"
            f"mount -t tmpfs tmpfs {merged}/tmp\n"
            f"mount -t tmpfs tmpfs {merged}/run\n"
            f"mkdir -p {merged}/srv/repo\n"
            f"mount --bind {self.repo} {merged}/srv/repo\n"
            f'exec chroot {merged} /bin/sh -ec "$1"\n'
        )
        # PID namespace: when the script ends, the kernel ends whatever it left running.
        done = subprocess.run(
            ["unshare", "--mount", "--pid", "--fork", "--kill-child", "sh", "-ec", outer, "sh",
             script],
            capture_output=True, text=True, timeout=timeout, check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8"},
        )  # fmt: skip
        if done.returncode != 0:
            raise AssertionError(
                f"exit {done.returncode} in the root:\n{script}\n--- stdout\n{done.stdout[-6000:]}"
                f"\n--- stderr\n{done.stderr[-6000:]}"
            )
        return done.stdout


def shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@pytest.fixture(scope="module")
def root(deb: Path, tmp_path_factory: pytest.TempPathFactory, figures: list[str]) -> Iterator[Root]:
    for tool in ("mmdebstrap", "unshare", "apt-ftparchive", "gpg"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing (make system-deps)")
    depends = [part.split()[0] for part in _field(deb, "Depends").split(", ")]
    lower = debroot.cached_root(depends)
    work = tmp_path_factory.mktemp("debroot")
    # World-readable: apt's download sandbox user (_apt) reads the file:/ repository.
    work.chmod(0o755)
    repo = work / "repo"
    home = work / "gnupg"
    apt_repo.build(repo, [deb], home, apt_repo.throwaway_key(home))
    yield Root(lower, work, repo)
    # Nothing is mounted any more (each run's namespace is gone); the upper layer goes now, as it
    # holds a whole installed package.
    shutil.rmtree(work / "upper", ignore_errors=True)


def test_the_package_declares_its_dependencies_and_ships_the_desktop_files(deb: Path) -> None:
    depends = _field(deb, "Depends")
    for needed in ("libc6 (>= 2.", "libxcb1", "libgl1", "libegl1", "zlib1g", "libfreetype6"):
        assert needed in depends, depends
    listing = subprocess.run(
        ["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True, check=True
    ).stdout
    for path in (
        "./usr/lib/domi-desktop/domi-desktop",
        "./usr/bin/domi-desktop -> ../lib/domi-desktop/domi-desktop",
        "./usr/share/applications/domi-desktop.desktop",
        "./usr/share/icons/hicolor/scalable/apps/domi-desktop.svg",
        "./usr/share/icons/hicolor/48x48/apps/domi-desktop.png",
        "./usr/share/doc/domi-desktop/copyright",
    ):
        assert path in listing, path
    # The login entry is the app's own, per user (build_deb.py says why): none for all users.
    assert "etc/xdg/autostart" not in listing
    assert "libz.so.1" not in listing  # Debian's zlib1g serves it (Depends)


def test_lintian_finds_no_error(deb: Path) -> None:
    done = subprocess.run(
        ["lintian", "--no-tag-display-limit", str(deb)], capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    errors = [line for line in done.stdout.splitlines() if line.startswith("E:")]
    assert errors == [], done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


APT_SOURCE = (
    "rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*\n"
    "install -m 0644 /srv/repo/domi-desktop-archive-keyring.gpg /usr/share/keyrings/\n"
    "echo 'deb [signed-by=/usr/share/keyrings/domi-desktop-archive-keyring.gpg] file:/srv/repo ./'"
    " >/etc/apt/sources.list.d/domi-desktop.list\n"
)
APT = "DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0"

# As the user: the headless app started, found by status, a job run, the app stopped by quit.
HEADLESS_AND_A_JOB = """
domi-desktop --headless 2>"$HOME/headless.log" &
app=$!
tries=0
until domi-desktop status >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ $tries -gt 600 ]; then echo "the app never answered"; cat "$HOME/headless.log"; exit 1; fi
  kill -0 $app || { echo "the app exited"; cat "$HOME/headless.log"; exit 1; }
  sleep 0.1
done
echo "== status"; domi-desktop status --json
id=$(domi-desktop schedule add hello --cron '0 0 1 1 *' --json -- /bin/sh -c 'echo hello from $USER' \
  | sed -n 's/.*"id": *\\([0-9]*\\).*/\\1/p')
echo "== run"; domi-desktop run-now "$id" --json
echo "== quit"; domi-desktop quit
code=0; wait $app || code=$?
echo "== exit"; echo $code
"""


def sections(output: str) -> dict[str, str]:
    parts = re.split(r"^== (\w+)\n", output, flags=re.M)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def test_apt_installs_it_a_user_runs_a_job_it_upgrades_keeping_the_data_and_purges(
    root: Root, linux_dist: tuple[Path, float | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = root.run(
        f"{APT_SOURCE}apt-get -q update\n{APT} install domi-desktop\n"
        f"useradd --create-home --shell /bin/sh {USER}\n"
        "dpkg-query -W -f='${Version}\\n' domi-desktop\n"
        "readlink -f /usr/bin/domi-desktop\n"
    )
    assert f"{__version__}-1\n/usr/lib/domi-desktop/domi-desktop\n" in installed, installed

    ran = sections(root.run(HEADLESS_AND_A_JOB, user=USER))
    status = json.loads(ran["status"])
    assert status["running"] is True, ran
    data_dir = status["data_dir"]
    assert data_dir.startswith(f"/home/{USER}/"), status
    job = json.loads(ran["run"])
    assert job["status"] == "succeeded", job
    assert f"hello from {USER}" in job["output_tail"], job
    assert ran["exit"] == "0", ran

    # A newer build of the same bundle (Debian revision 2), added to the repository and re-signed.
    dist, _ = linux_dist
    monkeypatch.setenv("DOMI_DEB_COMPRESSION", "none")  # only apt reads it: no time compressing
    newer = build_deb.build(dist / "domi-desktop", _icons(dist), root.work / "newer", "2")
    apt_repo.build(root.repo, [newer], root.work / "gnupg", _key(root.work / "gnupg"))
    upgraded = root.run(
        f"apt-get -q update\n{APT} upgrade\ndpkg-query -W -f='${{Version}}\\n' domi-desktop\n"
    )
    assert upgraded.rstrip().endswith(f"{__version__}-2"), upgraded
    kept = sections(
        root.run(
            "echo '== runs'; domi-desktop runs --json\necho '== version'; domi-desktop --version",
            user=USER,
        )
    )
    runs = json.loads(kept["runs"])
    assert [run["status"] for run in runs] == ["succeeded"], runs  # the run before the upgrade
    assert kept["version"] == f"domi-desktop {__version__}"

    purged = sections(
        root.run(
            f"{APT} purge domi-desktop\n"
            "echo '== left'\n"
            "for path in /usr/lib/domi-desktop /usr/bin/domi-desktop /usr/share/applications/"
            "domi-desktop.desktop /usr/share/doc/domi-desktop; do\n"
            '  if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi\n'
            "done\n"
            "echo '== dpkg'\n"
            "dpkg-query -W -f='${db:Status-Status}\\n' domi-desktop 2>&1 || true\n"
            f"echo '== data'\ntest -d '{data_dir}' && echo kept\n"
        )
    )
    assert purged["left"] == "", purged
    assert purged["dpkg"] in (
        "not-installed",
        "dpkg-query: no packages found matching domi-desktop",
    )
    assert purged["data"] == "kept", purged  # purge never touches the users' homes (policy 10.7.3)


def test_apt_refuses_the_repository_signed_by_another_key(root: Root, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    apt_repo.throwaway_key(stranger)
    forged = root.work / "forged"
    shutil.rmtree(forged, ignore_errors=True)
    shutil.copytree(root.repo, forged)
    # Re-signed by a key apt was never told about; the keyring apt trusts stays the real one.
    apt_repo.build(forged, [], stranger, _key(stranger))
    shutil.copy(root.repo / apt_repo.KEYRING, forged / apt_repo.KEYRING)
    forged.chmod(0o755)
    bad = Root(root.lower, root.work / "forged-root", forged)
    bad.work.mkdir(exist_ok=True)
    out = bad.run(f"{APT_SOURCE}apt-get -q update 2>&1 || echo 'update failed'\n")
    assert "NO_PUBKEY" in out or "not signed" in out, out
    assert re.search(r"update failed|is not signed", out), out


def _icons(dist: Path) -> Path:
    # build_linux.sh writes the icons under BUILD_DIR; a test build's is next to its dist folder.
    for candidate in (dist.parent / "build/icons/png", ROOT / "build/icons/png"):
        if (candidate / "domi-desktop-48.png").is_file():
            return candidate
    raise AssertionError("no icons from make_icons.py next to the build")


def _key(home: Path) -> str:
    listing = subprocess.run(
        ["gpg", "--homedir", str(home), "--with-colons", "--list-secret-keys"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
