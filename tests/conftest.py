"""Shared test set-up: the repository root on sys.path, so `import xpbd_addon` is the checkout."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
