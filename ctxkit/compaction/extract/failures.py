"""Generic failure reading: whether a tool's output reports a failure, and its key error lines
(the exception line, else compiler/lint diagnostics, else lines with an error word)."""
from __future__ import annotations

import re

EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Failure|Panic))(?::\s*(.*))?$", re.M)
ELIXIR_EXC = re.compile(r"^\s*\*\* \((\w+(?:\.\w+)*)\) (.+)$", re.M)
DIAG = re.compile(r"^\s*(\S+?\.\w{1,6}(?::\d+){1,2}:? (?:error|fatal error|Error)\b.*|[×✖✗] \S.*|"
                  r"\S+?\.\w{1,6}\(\d+,\d+\): error .*|error(?:\[E\d+\])?: .+|\S+\.go:\d+:\d+: .+)$", re.M)
BOX_HEAD = re.compile(r"^\s*(?:at\s+)?(\S+\.\w{1,6}(?::\d+(?::\d+)?)?)\s+([\w/.-]+)(?:\s+[\w/.-]+)*\s*[━─]{3,}", re.M)
ERRWORD = re.compile(r"\b(?:error|Error|ERROR|failed|FAILED|Failed|fatal|FATAL|panic|denied|not found|No such file|"
                     r"cannot|Cannot|undefined|unable to|Unable to|refused|timed out|Traceback)\b")
NOISE = re.compile(r"^\s*(?:at |File \"|\d+\s*\||[-=~^*]{3,}|\$ |>\s*$|warning: `)|0 errors?|no errors?|"
                   r"\b0 failed\b|without errors", re.I)
OK_WORDS = re.compile(r"\b(?:0 (?:errors?|failures?|failed)|no (?:errors?|failures?|issues?)|passed|success(?:ful(?:ly)?)?)\b", re.I)
FAIL_MARK = re.compile(r"(?:^|\n)(?:Traceback \(most recent call last\)|FAIL\b|FAILED\b|Error:|error:|fatal:|panic:|"
                       r"\*\* \(\w+)")
REMINDER = re.compile(r"\n*<system-reminder>.*?(?:</system-reminder>|\Z)\s*", re.S)


def strip_reminders(text: str) -> str:
    """A tool result without the client's own `<system-reminder>` blocks (the client's words, not the tool's)."""
    return REMINDER.sub("\n", text).rstrip() if "<system-reminder>" in text else text


def looks_failed(output: str) -> bool:
    """An output that reports a failure in its own words (used where no exit status is recorded)."""
    return bool(FAIL_MARK.search(output[:20000]))


def key_lines(output: str, limit: int = 4, first_line: bool = True) -> tuple[str, ...]:
    """The lines that say what went wrong, most telling first, each cut to 300 characters."""
    text = output[-40000:] if len(output) > 40000 else output
    out: list[str] = []

    def add(line: str) -> None:
        line = " ".join(line.replace("\\n", " ").split())[:300]
        if line and line not in out:
            out.append(line)

    for m in ELIXIR_EXC.finditer(text):
        add(m.group(0))
    excs = [m for m in EXCEPTION.finditer(text)]
    for m in excs[-2:]:
        add(m.group(0))
    diags = list(DIAG.finditer(text))
    own = [m for m in diags if not _thrown_on_purpose(text, m)]
    for m in own or diags:
        if len(out) >= limit:
            break
        line = m.group(0)
        if line.lstrip()[:1] in "×✖✗":     # a boxed diagnostic: its header above names the file and the rule
            head = list(BOX_HEAD.finditer(text, max(0, m.start() - 600), m.start()))
            if head:
                line = f"{head[-1].group(1)} {head[-1].group(2)}: {line.lstrip()[1:].strip().rstrip(':')}"
        add(line)
    if not out:
        for line in text.splitlines():
            if ERRWORD.search(line) and not NOISE.search(line) and len(line.strip()) > 8:
                add(line)
                if len(out) >= limit:
                    break
    if not out and first_line and len(text.strip().splitlines()) <= 6:
        # a short failure in words of its own ("The following paths are ignored …"): its first line says it
        first = next((ln for ln in text.splitlines() if len(ln.strip()) > 8 and not re.match(r"^\s*(?:Exit code|hint:)", ln)), "")
        if first:
            add(first)
    reports = _reports()
    told = [x for x in out if not any(r.match(x) for r in reports)]
    if told:   # a task runner's "exited with code 1" says less than the tool's own lines above it
        out = told
    return tuple(out[:limit])


def _thrown_on_purpose(text: str, m) -> bool:
    """An `error: MSG` line under a code frame that throws MSG itself (`89 | throw new Error("Item 3 failed")`):
    a test logging the error it provokes, not the failure."""
    msg = re.sub(r"^\s*(?:error|Error)\s*:\s*", "", m.group(0)).strip()
    if len(msg) < 4:
        return False
    frame = text[max(0, m.start() - 800):m.start()].splitlines()[-8:]
    return any(re.match(r"^\s*\d+\s*\|", ln) and re.search(r"\bthrow\b|\breject\(", ln) and
               (f'"{msg}"' in ln or f"'{msg}'" in ln or f"`{msg}`" in ln) for ln in frame)


def _reports() -> list:
    """The tools' patterns for a runner's report that what it ran failed (registry entries' `reports`)."""
    from ..registry import entries

    return [r for r in (getattr(e, "reports", None) for e in entries("tools")) if r is not None]
