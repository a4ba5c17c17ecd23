import os
import sys
from pathlib import Path

# No animations in the TUI tests. A Pilot key press waits for the animations it started (a
# tab's underline slides for a fraction of a second), so with them on most of a TUI test's
# wall time is waiting; the screens they end on are the same. Textual reads TEXTUAL_ANIMATIONS
# once, on import, and a pytest plugin (pytest-textual-snapshot) has imported it already: each
# App takes its animation level from textual.constants when it is made, so set it there too.
os.environ["TEXTUAL_ANIMATIONS"] = "none"
import textual.constants  # noqa: E402

textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]

sys.path.insert(0, str(Path(__file__).resolve().parent))
