"""What a store tells the user on stderr about what it kept aside (never silently)."""
from __future__ import annotations

import os
import sys


def note_archived(n: int, section: str, where: str) -> None:
    if os.environ.get("CTX_QUIET", "") in ("", "0"):
        print(f"ctx: {n} item{'s' if n != 1 else ''} left {section} in CONTEXT.md; kept in {where}", file=sys.stderr)
