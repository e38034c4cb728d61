"""Seed 002's Environment layer: working directory, OS (WSL and distro aware), terminal, mode.

Read from the machine (platform, /proc/version, /etc/os-release, TERM_PROGRAM, TERM); no
subprocess, nothing slow. Static while the machine and directory are, so it sits in the
prompt's cache-friendly prefix.
"""
from __future__ import annotations

import os
import platform
import sys

MODES = {"auto", "interactive", "pipeline", "hook", "server"}
MODE_TEXT = {"interactive": "Interactive terminal", "pipeline": "Non-interactive (pipeline or cron)",
             "hook": "Agent hook", "server": "Server"}


def _read(path: str, limit: int = 4096) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


def os_release(text: str) -> str | None:
    """PRETTY_NAME (or NAME VERSION_ID) from /etc/os-release text."""
    kv = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            kv[k.strip()] = v.strip().strip('"').strip("'")
    return kv.get("PRETTY_NAME") or (" ".join(x for x in (kv.get("NAME"), kv.get("VERSION_ID")) if x) or None)


def describe_os(system: str, release: str, proc_version: str, os_release_text: str, mac_ver: str = "",
                wsl_env: bool = False) -> str:
    """`Linux (Ubuntu 24.04 LTS, WSL2 on Windows)`, `macOS 14.5`, `Windows 11`, …"""
    if system == "Darwin":
        return f"macOS {mac_ver}".strip() if mac_ver else "macOS"
    if system == "Windows":
        return f"Windows {release}".strip()
    if system == "Linux":
        distro = os_release(os_release_text)
        low = (proc_version + " " + release).lower()
        wsl = None
        if "microsoft" in low or wsl_env:
            wsl = "WSL2 on Windows" if ("wsl2" in low or "microsoft-standard" in low) else "WSL on Windows"
        extra = ", ".join(x for x in (distro, wsl) if x)
        return f"Linux ({extra})" if extra else "Linux"
    return system or "unknown"


def terminal() -> str | None:
    prog, term = os.environ.get("TERM_PROGRAM"), os.environ.get("TERM")
    if os.environ.get("TMUX") and not prog:
        prog = "tmux"
    if prog and term:
        return f"{prog} ({term})"
    return prog or term


def detect_mode(mode: str = "auto") -> str:
    if mode != "auto":
        return mode
    return "interactive" if sys.stdin.isatty() and sys.stdout.isatty() else "pipeline"


def environment_lines(cwd: str, mode: str = "auto") -> list[str]:
    """The Environment section's lines; the terminal only in interactive mode (as in seed 002)."""
    mode = detect_mode(mode)
    osname = describe_os(platform.system(), platform.release(), _read("/proc/version"),
                         _read("/etc/os-release") or _read("/usr/lib/os-release"),
                         platform.mac_ver()[0] if platform.system() == "Darwin" else "",
                         bool(os.environ.get("WSL_DISTRO_NAME")))
    lines = [f"Working directory: {cwd}", f"Operating system: {osname}"]
    term = terminal() if mode == "interactive" else None
    if term:
        lines.append(f"Terminal: {term}")
    lines.append(f"Mode: {MODE_TEXT.get(mode, mode)}")
    return lines
