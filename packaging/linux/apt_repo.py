"""A signed flat apt repository of the .deb files given: ``Packages``, ``Release``, ``InRelease``.

    python packaging/linux/apt_repo.py --repo dist/apt dist/domi-desktop_*.deb \\
        [--gnupghome DIR] [--key KEY-ID]

Layout (a "flat repository", which apt reads as ``deb [signed-by=KEY] URL ./``)::

    REPO/domi-desktop_<version>_<arch>.deb
    REPO/Packages, Packages.gz       apt-ftparchive packages
    REPO/Release                     apt-ftparchive release (the SHA256 of the indexes)
    REPO/InRelease, Release.gpg      signed with gpg: clear-signed and detached
    REPO/domi-desktop-archive-keyring.gpg   the public key, binary, for signed-by=

The key: ``--key`` names a secret key in ``--gnupghome`` (or GNUPGHOME); without ``--key`` a
throw-away Ed25519 key is made in ``--gnupghome``, which must then be given (a fresh, private
folder: ``make package`` uses build/gnupg). A release signs with the project's own key instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

KEYRING = "domi-desktop-archive-keyring.gpg"
THROWAWAY_UID = "domi-desktop throw-away archive key <archive@domi-desktop.invalid>"


def gpg(home: Path, *args: str, input: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["gpg", "--homedir", str(home), "--batch", "--yes", "--quiet", *args],
        input=input, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"gpg {' '.join(args)} failed:\n{done.stderr.decode(errors='replace')}")
    return done.stdout


def throwaway_key(home: Path) -> str:
    """A new Ed25519 signing key without a passphrase in ``home``; its fingerprint."""
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)  # gpg refuses a group- or world-readable home
    gpg(home, "--passphrase", "", "--quick-gen-key", THROWAWAY_UID, "ed25519", "sign", "1d")
    listing = gpg(home, "--with-colons", "--list-secret-keys", THROWAWAY_UID).decode()
    return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))


def build(repo: Path, debs: list[Path], home: Path, key: str) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        if deb.resolve() != (repo / deb.name).resolve():
            shutil.copy2(deb, repo / deb.name)
    # Relative to the repository: Filename: ./name.deb, which apt joins to the repository's URL.
    packages = subprocess.run(
        ["apt-ftparchive", "packages", "."], cwd=repo, capture_output=True, check=True
    ).stdout
    (repo / "Packages").write_bytes(packages)
    subprocess.run(["gzip", "-9nkf", "Packages"], cwd=repo, check=True)
    for stale in ("Release", "InRelease", "Release.gpg"):
        (repo / stale).unlink(missing_ok=True)
    release = subprocess.run(
        ["apt-ftparchive",
         "-o", "APT::FTPArchive::Release::Origin=domi-desktop",
         "-o", "APT::FTPArchive::Release::Label=domi-desktop",
         "-o", "APT::FTPArchive::Release::Suite=stable",
         "-o", "APT::FTPArchive::Release::Codename=stable",
         "release", "."],
        cwd=repo, capture_output=True, check=True,
    ).stdout  # fmt: skip
    (repo / "Release").write_bytes(release)
    signer = ["--local-user", key, "--digest-algo", "SHA512"]
    gpg(home, *signer, "--clearsign", "--output", str(repo / "InRelease"), str(repo / "Release"))
    gpg(
        home, *signer, "--detach-sign", "--output", str(repo / "Release.gpg"), str(repo / "Release")
    )
    (repo / KEYRING).write_bytes(gpg(home, "--export", key))
    return repo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="the repository folder")
    parser.add_argument("--gnupghome", type=Path, help="gpg's home (default $GNUPGHOME)")
    parser.add_argument("--key", help="the signing key (default: make a throw-away one)")
    parser.add_argument("debs", type=Path, nargs="+", help="the .deb files")
    args = parser.parse_args(argv)
    home = args.gnupghome or (Path(os.environ["GNUPGHOME"]) if "GNUPGHOME" in os.environ else None)
    if home is None:
        print("apt_repo: give --gnupghome (or GNUPGHOME)", file=sys.stderr)
        return 2
    if args.key:
        build(args.repo, args.debs, home, args.key)
        key = args.key
    else:
        try:
            key = throwaway_key(home)
            build(args.repo, args.debs, home, key)
        finally:
            # The agent gpg started for the throw-away home would outlive the build (and make test).
            subprocess.run(
                ["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"],
                capture_output=True, check=False,
            )  # fmt: skip
    print(f"{args.repo}: {len(args.debs)} package(s), signed by {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
