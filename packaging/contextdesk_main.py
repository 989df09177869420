"""The frozen app's entry point (PyInstaller needs a script, not a console_scripts entry)."""

import sys

from desktop_app.app import main

sys.exit(main())
