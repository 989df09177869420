"""Build the wheel and the sdist and check that they carry the resources (CI runs this).

.venv/bin/python packaging/check_dist.py
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IN_WHEEL = (
    "desktop_app/resources/contextdesk.chat.schema.json",
    "desktop_app/resources/icons/contextdesk.svg",
    "desktop_app/resources/icons/contextdesk-256.png",
    "desktop_app/ui/main_window.py",
    "desktop_app/py.typed",
)
IN_SDIST = (
    "resources/icons/contextdesk.svg",
    "resources/contextdesk.chat.schema.json",
    "packaging/contextdesk.spec",
    "packaging/org.contextdesk.ContextDesk.desktop",
    "packaging/org.contextdesk.ContextDesk.metainfo.xml",
    "README.md",
)


def main() -> int:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, str(ROOT)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wheel = next(Path(out).glob("*.whl"))
        sdist = next(Path(out).glob("*.tar.gz"))
        in_wheel = set(zipfile.ZipFile(wheel).namelist())
        with tarfile.open(sdist) as archive:
            in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = [f"wheel: {n}" for n in IN_WHEEL if n not in in_wheel]
    missing += [f"sdist: {n}" for n in IN_SDIST if n not in in_sdist]
    for line in missing:
        print(f"missing from the {line}", file=sys.stderr)
    print(f"{wheel.name} and {sdist.name}: {'incomplete' if missing else 'complete'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
