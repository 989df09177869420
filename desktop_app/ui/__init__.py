"""The Qt user interface: the only package that imports PySide6. Start-up loads Qt through
`qt_loading.load_qt` before any window module (see there why)."""
