"""Task runners that wrap the real checks: make, just, mise, task, npm/yarn/pnpm/bun scripts, nx, turbo,
tox, nox, poe, rake, composer scripts and project scripts such as `./scripts/test.sh`. What a target
checks comes from its name (test, lint, typecheck, build, fmt, check/ci); whether it passed comes from
the wrapped tools' own output and the exit status (extract judges the output with every tool's
markers, `judge_by_output`)."""
from __future__ import annotations

import re

from ..model import BUILD, FORMAT, LINT, TEST, TYPECHECK, CheckRun

KINDS = [
    (FORMAT, re.compile(r"(?:^|[:_-])(?:fmt|format|prettier|gofmt)(?:$|[:_-])|^fmt|^format", re.I)),
    (TYPECHECK, re.compile(r"typecheck|type-check|types?$|tsc|mypy|pyright|check-types|dialyzer", re.I)),
    (LINT, re.compile(r"lint|clippy|vet|credo|style|eslint|biome|ruff|static", re.I)),
    (TEST, re.compile(r"test|spec|e2e|unit|integration|ci$|^ci|verify|check-all|precommit|pre-commit|validate|^all$|^check$", re.I)),
    (BUILD, re.compile(r"build|compile|dist|bundle|package", re.I)),
]
SCRIPT_RUNNERS = {"npm", "yarn", "pnpm", "bun", "deno"}
BUILTINS = {"install", "i", "add", "remove", "rm", "ci", "init", "create", "publish", "link", "x", "exec", "dlx",
            "outdated", "update", "upgrade", "audit", "why", "view", "info", "pack", "version", "login", "list", "ls"}


def kind_of(target: str) -> str | None:
    for kind, pat in KINDS:
        if pat.search(target):
            return kind
    return None


def target_of(argv) -> tuple[str, str] | None:
    """(the wrapper as written, the target) when argv runs a named task, else None."""
    if not argv:
        return None
    prog = argv[0]
    rest = [a for a in argv[1:] if not a.startswith("-")]
    if prog in ("make", "gmake", "just", "task", "rake", "tox", "nox", "poe", "invoke", "inv", "cargo-make", "moon"):
        if prog == "tox":
            env = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-e"), "test")
            return "tox", env
        return (prog, rest[0]) if rest else ((prog, "all") if prog in ("make", "just", "rake") else None)
    if prog == "mise":
        if rest[:1] == ["run"] and len(rest) > 1:
            return "mise run", rest[1]
        if rest[:1] in (["r"], ["run"]) and len(rest) > 1:
            return "mise run", rest[1]
        if rest and rest[0] not in ("install", "use", "exec", "x", "trust", "ls", "set", "env", "where", "which",
                                    "plugins", "upgrade", "self-update", "doctor", "tasks", "run"):
            return "mise", rest[0]
        return None
    if prog in ("nx", "turbo") and rest[:1] == ["run"] and len(rest) > 1:
        return f"{prog} run", rest[1]
    if prog in ("cargo",) and rest[:1] == ["make"] and len(rest) > 1:
        return "cargo make", rest[1]
    if prog == "composer" and rest[:1] == ["run"] and len(rest) > 1:
        return "composer run", rest[1]
    if prog in SCRIPT_RUNNERS:
        if rest[:1] == ["run"] and len(rest) > 1:
            return f"{prog} run", rest[1]
        if rest[:1] == ["test"] and prog != "bun":
            return prog, "test"
        if prog in ("yarn", "pnpm") and rest and rest[0] not in BUILTINS:
            return prog, rest[0]
        if prog == "deno" and rest[:1] == ["task"] and len(rest) > 1:
            return "deno task", rest[1]
        return None
    if (prog.startswith("./") or prog.startswith("scripts/") or prog.startswith("bin/")) and "/" in prog:
        return prog, prog.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if prog in ("bash", "sh", "zsh") and rest and rest[0].endswith(".sh"):
        return f"{prog} {rest[0]}", rest[0].rsplit("/", 1)[-1][:-3]
    return None


# the runner's own report that the task it ran failed: says less than the wrapped tool's lines above it
REPORTS = re.compile(
    r"^\s*(?:error: script \"[^\"]+\" exited with code \d+|"                # bun
    r"npm (?:ERR!|error)\b.*|"                                                 # npm
    r"(?:\S+ )?ELIFECYCLE\b.*|ERR_PNPM_\w+.*|"                                  # pnpm
    r"error Command failed with exit code \d+\.?|"                             # yarn
    r"make(?:\[\d+\])?: \*\*\* .*Error \d+.*|"                                 # make
    r"error: Recipe `[^`]+` failed .*|"                                        # just
    r"(?:\[[\w:-]+\] )?(?:mise )?ERROR task failed.*|"                           # mise
    r"task: Failed to run task .*|"                                            # task
    r"Exit code \d+|Process completed with exit code \d+\.?)\s*$")


class Wrapper:
    name = "task runner"
    kind = TEST
    judge_by_output = True
    reports = REPORTS

    def match(self, argv):
        t = target_of(argv)
        return t is not None and kind_of(t[1]) is not None

    def read(self, argv, command, seg):
        prog, target = target_of(argv)
        return [CheckRun(command.at, command=seg.text, kind=kind_of(target), runner=f"{prog} {target}",
                         scope=target, ts=command.ts, script=echoed(command.output))]


# the command a runner says it runs before its output: bun, yarn and pnpm print `$ cmd`, npm `> cmd` under
# `> pkg@1.0.0 script`, make the recipe's lines as they are (not read: indistinguishable from output)
ECHO = re.compile(r"^(?:\$ |> (?![\w@/.-]+@\S+ \S+$))(\S.{2,200})$", re.M)


def echoed(output: str) -> str:
    """The first command the runner echoed in `output`, "" when it echoed none."""
    m = ECHO.search((output or "")[:4000])
    return m.group(1).strip() if m else ""


ENTRIES = [Wrapper()]
