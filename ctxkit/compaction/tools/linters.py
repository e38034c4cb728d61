"""Linters, formatters and type checkers: ruff, flake8, black, mypy, pyright, eslint, biome, prettier, tsc,
golangci-lint, go vet, staticcheck, gofmt, clippy, cargo fmt, credo, mix format, dart analyze, rubocop,
shellcheck. Each reads its own result line; silence with exit status 0 is a pass where the tool is
silent on success."""
from __future__ import annotations

import re

from ..model import FORMAT, LINT, TYPECHECK, CheckRun, Verdict

DIAG = re.compile(r"^(\S+?\.\w{1,6}:\d+(?::\d+)?:? .+)$", re.M)


def _diags(output: str, n: int = 12) -> tuple:
    return tuple(dict.fromkeys(d.strip() for d in DIAG.findall(output)))[:n]


class Linter:
    name = ""
    kind = LINT
    silent_ok = False       # no output + exit 0 means clean
    skip = 1
    # (pattern, passed) pairs checked in order against the output; the first that matches decides
    marks: tuple = ()

    def match(self, argv) -> bool:
        raise NotImplementedError

    def verdict(self, output: str) -> Verdict | None:
        for pat, ok in self.marks:
            m = None
            for m in re.finditer(pat, output, re.M):
                pass
            if m:
                n = next((int(g) for g in m.groups() if g and g.isdigit()), None)
                passed = ok if not callable(ok) else ok(m)
                counts = (("problems", n),) if n is not None and not passed else ()
                return Verdict(passed, counts=counts, errors=() if passed else _diags(output),
                               summary=" ".join(m.group(0).split())[:160], kind=self.kind, runner=self.name)
        return None

    def read(self, argv, command, seg):
        v = self.verdict(command.output or "")
        if v is None and self.silent_ok and not (command.output or "").strip() and command.exit in (0, None) \
                and not command.failed:
            v = Verdict(True, summary="no output", kind=self.kind, runner=self.name)
        if v is None and _diags(command.output or ""):
            v = Verdict(False, errors=_diags(command.output or ""), kind=self.kind, runner=self.name)
        v = v or Verdict(None)
        scope = " ".join(a for a in argv[self.skip:] if not a.startswith("-"))[:200]
        return [CheckRun(command.at, command=seg.text, kind=self.kind, runner=self.name, passed=v.passed,
                         counts=v.counts, errors=v.errors, scope=scope, summary=v.summary, ts=command.ts)]


def _words(*names):
    return lambda argv: bool(argv) and argv[0] in names


class Ruff(Linter):
    name = "ruff"
    marks = ((r"^All checks passed!", True), (r"^Found (\d+) errors?", False),
             (r"^(\d+) files? (?:would be )?(?:left unchanged|already formatted)", True),
             (r"^Would reformat|^(\d+) files? would be reformatted", False))

    def match(self, argv):
        return bool(argv) and argv[0] == "ruff"


class Flake8(Linter):
    name = "flake8"
    silent_ok = True
    match = staticmethod(_words("flake8", "pylint", "pycodestyle", "pyflakes"))
    marks = ((r"Your code has been rated at (10\.00)/10", True), (r"Your code has been rated at ([\d.]+)/10", False))


class Black(Linter):
    name = "black"
    kind = FORMAT
    match = staticmethod(_words("black", "isort", "autopep8"))
    marks = ((r"^All done! .*\n?(?:.*\n)?.*?(\d+) files? (?:would be )?left unchanged\.?$", True),
             (r"(\d+) files? would be reformatted", False), (r"^would reformat", False),
             (r"^All done!", True))


class Mypy(Linter):
    name = "mypy"
    kind = TYPECHECK
    match = staticmethod(_words("mypy", "dmypy"))
    marks = ((r"^Success: no issues found in (\d+) source files?", True), (r"^Found (\d+) errors? in \d+ files?", False))


class Pyright(Linter):
    name = "pyright"
    kind = TYPECHECK
    match = staticmethod(_words("pyright", "basedpyright", "pyre", "ty"))
    marks = ((r"^\s*0 errors?, \d+ warnings?", True), (r"^\s*(\d+) errors?, \d+ warnings?", False),
             (r"^All checks passed!", True), (r"^Found (\d+) diagnostics?", False))


class Eslint(Linter):
    name = "eslint"
    silent_ok = True
    match = staticmethod(_words("eslint", "next lint", "oxlint", "standard", "xo"))
    marks = ((r"^✖ (\d+) problems?", False), (r"^Found (\d+) warnings? and (\d+) errors?", lambda m: m.group(2) == "0"))


class Biome(Linter):
    name = "biome"
    match = staticmethod(_words("biome", "rome"))
    marks = ((r"^Found (\d+) errors?", False), (r"^Checked (\d+) files? in [\d.]+\w+\. No fixes (?:applied|needed)", True),
             (r"^Checked (\d+) files?", True))


class Prettier(Linter):
    name = "prettier"
    kind = FORMAT
    match = staticmethod(_words("prettier", "dprint"))
    marks = ((r"^All matched files use Prettier code style!", True), (r"Code style issues (?:found|were found)", False))


TS_ERROR = re.compile(r"^(\S+\(\d+,\d+\): error TS\d+: .+|\S+:\d+:\d+ - error TS\d+: .+)$", re.M)


class Tsc(Linter):
    name = "tsc"
    kind = TYPECHECK
    silent_ok = True
    match = staticmethod(_words("tsc", "vue-tsc", "tsgo"))
    marks = ((r"^Found (\d+) errors?", False), (r"error TS(\d+):", False))

    def verdict(self, output):
        v = super().verdict(output)
        if v is not None and not v.passed:
            return Verdict(False, counts=v.counts, errors=tuple(TS_ERROR.findall(output))[:8] or v.errors,
                           summary=v.summary, kind=self.kind, runner=self.name)
        return v


class GolangciLint(Linter):
    name = "golangci-lint"
    skip = 2
    match = staticmethod(_words("golangci-lint"))
    marks = ((r"^0 issues\.", True), (r"^(\d+) issues?[.:]", False), (r"level=error msg=\"(.{0,120})", False))


class GoVet(Linter):
    name = "go vet"
    silent_ok = True
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) in (("go", "vet"),) or bool(argv) and argv[0] in ("staticcheck", "revive", "errcheck",
                                                                                    "govulncheck")


class Gofmt(Linter):
    name = "gofmt"
    kind = FORMAT

    def match(self, argv):
        return bool(argv) and argv[0] in ("gofmt", "goimports", "gofumpt") and "-l" in argv

    def read(self, argv, command, seg):
        files = [ln for ln in (command.output or "").splitlines() if ln.strip().endswith(".go")]
        return [CheckRun(command.at, command=seg.text, kind=self.kind, runner=self.name, passed=not files,
                         failures=tuple(files)[:20], summary=f"{len(files)} files need formatting" if files else "clean",
                         ts=command.ts)]


RUST_WARN = re.compile(r"^((?:error|warning)(?:\[\w+\])?: .+)$", re.M)


class Clippy(Linter):
    name = "clippy"
    distinct = False
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("cargo", "clippy")

    def verdict(self, output):
        errs = [e for e in RUST_WARN.findall(output) if not e.startswith(("warning: `", "error: could not compile"))]
        if re.search(r"could not compile|^error(\[\w+\])?:", output, re.M):
            return Verdict(False, errors=tuple(errs)[:8], summary="errors", kind=self.kind, runner=self.name)
        if re.search(r"^\s*Finished", output, re.M):
            warns = [e for e in errs if e.startswith("warning")]
            return Verdict(not warns, counts=(("warnings", len(warns)),) if warns else (), errors=tuple(warns)[:8],
                           summary="finished" + (f" with {len(warns)} warnings" if warns else ""), kind=self.kind,
                           runner=self.name)
        return None


class CargoFmt(Linter):
    name = "cargo fmt"
    kind = FORMAT
    silent_ok = True
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("cargo", "fmt") and "--check" in argv


CREDO_ISSUE = re.compile(r"^┃\s+\[\w\]\s+\S\s+(.+?)\s*\n┃\s+(\S+:\d+(?::\d+)?)", re.M)


class Credo(Linter):
    name = "credo"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("mix", "credo")

    def verdict(self, output):
        v = super().verdict(output)
        issues = [f"{loc}: {msg}" for msg, loc in CREDO_ISSUE.findall(output)]
        if v is not None and not v.passed and issues:
            return Verdict(False, counts=(("issues", len(issues)),), errors=tuple(dict.fromkeys(issues))[:10],
                           summary=v.summary, kind=self.kind, runner=self.name)
        return v

    marks = ((r"found no issues", True),
             (r"^\d+ mods?/funs?, found (\d+) .*$", False),
             (r"^\d+ mods?/funs?, found .+$", False))


class MixFormat(Linter):
    name = "mix format"
    kind = FORMAT
    silent_ok = True
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("mix", "format") and "--check-formatted" in argv

    marks = ((r"mix format failed due to --check-formatted", False),)


class Dialyzer(Linter):
    name = "dialyzer"
    kind = TYPECHECK
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("mix", "dialyzer")

    marks = ((r"^done \(passed successfully\)", True), (r"^Total errors: (\d+)", lambda m: m.group(1) == "0"),
             (r"^done \(warnings were emitted\)", False))


class DartAnalyze(Linter):
    name = "dart analyze"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) in (("dart", "analyze"), ("flutter", "analyze"))

    marks = ((r"^No issues found!", True), (r"^(\d+) issues? found\.", False))


class Rubocop(Linter):
    name = "rubocop"
    match = staticmethod(_words("rubocop", "standardrb"))
    marks = ((r"(\d+) files? inspected, no offenses detected", True), (r"\d+ files? inspected, (\d+) offenses?", False))


class Shellcheck(Linter):
    name = "shellcheck"
    silent_ok = True
    match = staticmethod(_words("shellcheck", "hadolint", "yamllint", "markdownlint", "actionlint"))
    marks = ((r"^In \S+ line (\d+):", False),)


ENTRIES = [Ruff(), Flake8(), Black(), Mypy(), Pyright(), Eslint(), Biome(), Prettier(), Tsc(), GolangciLint(),
           GoVet(), Gofmt(), Clippy(), CargoFmt(), Credo(), MixFormat(), Dialyzer(), DartAnalyze(), Rubocop(),
           Shellcheck()]
