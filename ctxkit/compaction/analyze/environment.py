"""Where the work happens and how the project works: directory, branch, model, languages, the commands
it checks with, what the agent ran before each commit (the project's finish)."""
from __future__ import annotations

from collections import Counter

from ..model import Branch, CheckRun, Command, Commit, Environment, Item, Place, Push, Stage
from ..registry import language_for
from .changes import Changes
from .errors import missing_tool


def plain(command: str) -> str:
    """A check's command without the filters its output went through (`| tail -5`); a `|` inside quotes
    (`-run 'TestA|TestB'`) is part of the command."""
    quote = ""
    for k, ch in enumerate(command):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "|":
            return command[:k].strip()
    return command.strip()


def environment(evs: list, changes: Changes) -> Environment:
    cwd = branch = model = ""
    for e in evs:
        if isinstance(e, Place):
            cwd = e.cwd or cwd
            branch = e.branch or branch
            model = e.model or model
        elif isinstance(e, Branch):
            branch = e.name
    langs = Counter()
    for _, p in changes.events:
        lang = language_for(p)
        if lang is not None:
            langs[lang.name] += 1
    commands = Counter(plain(e.command) for e in evs if isinstance(e, CheckRun))
    finish: list[str] = []
    commits = [e for e in evs if isinstance(e, Commit) and e.ok]
    if commits:
        last_commit = commits[-1].at
        prev = max([c.at for c in commits[:-1]], default=-1)
        for e in evs:
            if isinstance(e, CheckRun) and prev < e.at < last_commit and e.passed and plain(e.command) not in finish:
                finish.append(plain(e.command))
    closes = False
    for c in commits:
        closes = closes or any(isinstance(e, Item) and e.action == "close" and c.at - 40 < e.at <= c.at + 2 for e in evs)
    forced = tuple(dict.fromkeys(changes.paths.rel(p) for e in evs if isinstance(e, Stage) and e.force for p in e.paths))
    pushes = any(isinstance(e, Push) and e.ok for e in evs)
    lacks = tuple(dict.fromkeys(t for e in evs if isinstance(e, Command) and e.failed for t in [missing_tool(e)] if t))
    ran_in = next((e.cwd for e in reversed(evs) if isinstance(e, Command) and e.cwd.startswith("/")), "")
    return Environment(cwd=cwd, branch=branch, model=model, ran_in=ran_in, languages=tuple(n for n, _ in langs.most_common()),
                       check_commands=tuple(c for c, _ in commands.most_common(4)), finish=tuple(finish[-4:]),
                       commits=bool(commits), closes_items=closes, forced=forced, pushes=pushes,
                       lacks=lacks)
