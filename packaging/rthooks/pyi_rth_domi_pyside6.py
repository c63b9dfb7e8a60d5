"""Run-time hook: PyInstaller's ``pyi_rth_pyside6``, without importing Qt before the app asks for it.

The stock hook imports ``PySide6.QtCore`` at start-up to register an embedded ``qt.conf`` (the Qt
prefix); that costs ~70 ms (shiboken's signature machinery) on every command, also ``--version``
and ``preview``, which never touch Qt. This hook sets the same environment at once and registers
the ``qt.conf`` right after the app's first import of ``PySide6.QtCore``, before any Qt object
exists. The spec replaces the stock hook with this one. (PySide6's wheels register their own
``qt.conf`` when QtCore loads, so the step is normally a no-op kept for safety.) No QML is bundled,
so ``QML2_IMPORT_PATH`` is not set.
"""


def _pyi_rthook() -> None:
    import os
    import sys
    from importlib.abc import MetaPathFinder
    from importlib.machinery import ModuleSpec
    from importlib.util import find_spec
    from types import ModuleType

    from _pyi_rth_utils import is_macos_app_bundle, prepend_path_to_environment_variable
    from _pyi_rth_utils import qt as qt_rth_utils

    meipass: str = sys._MEIPASS  # type: ignore[attr-defined]
    qt_rth_utils.ensure_single_qt_bindings_package("PySide6")
    if sys.platform.startswith("win"):
        qt_path = os.path.join(meipass, "PySide6")
        prepend_path_to_environment_variable(meipass, "PATH")  # QtNetwork's OpenSSL DLLs
    else:
        qt_path = os.path.join(meipass, "PySide6", "Qt")
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt_path, "plugins")
    if sys.platform == "darwin" and not is_macos_app_bundle:
        prepend_path_to_environment_variable(meipass, "DYLD_LIBRARY_PATH")

    class AfterQtCore(MetaPathFinder):
        """Finds nothing itself; wraps the loader of ``PySide6.QtCore`` once, then steps aside."""

        def find_spec(
            self, fullname: str, path: object = None, target: object = None
        ) -> ModuleSpec | None:
            if fullname != "PySide6.QtCore":
                return None
            sys.meta_path.remove(self)
            spec = find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_then_register(module: ModuleType) -> None:
                exec_module(module)
                qt_rth_utils.create_embedded_qt_conf("PySide6", qt_path)

            spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, AfterQtCore())


_pyi_rthook()
del _pyi_rthook
