"""Test runners: pytest, unittest, go test, cargo test, jest, vitest, bun test, deno test, mix test,
rspec, dotnet test, flutter/dart test, phpunit. Each reads its own output: counts, failing tests,
the result line; a run is passed or failed by that and by the exit status, never by a guess."""
from __future__ import annotations

import re

from ..model import TEST, CheckRun, Verdict


def _counts(pairs) -> tuple:
    return tuple((k, int(v)) for k, v in pairs)


def _first(words, *names) -> bool:
    return bool(words) and words[0] in names


def _last_match(pattern: re.Pattern, text: str):
    m = None
    for m in pattern.finditer(text):
        pass
    return m


class Runner:
    kind = TEST
    name = ""

    def match(self, argv) -> bool:
        raise NotImplementedError

    def verdict(self, output: str) -> Verdict | None:
        raise NotImplementedError

    def read(self, argv, command, seg) -> list:
        v = self.verdict(command.output or "") or Verdict(None)
        scope = " ".join(a for a in argv[self.skip:] if not a.startswith("-"))[:200]
        return [CheckRun(command.at, command=seg.text, kind=self.kind, runner=self.name, passed=v.passed,
                         counts=v.counts, failures=v.failures, errors=v.errors, scope=scope, summary=v.summary,
                         ts=command.ts)]

    skip = 1


PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|"
                            r"rerun)(?:, )?)+)(?: in [\d.]+s)?.*?=*\s*$", re.M)
PYTEST_PAIR = re.compile(r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed|deselected)")
PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)(?: - (.*))?$", re.M)


class Pytest(Runner):
    name = "pytest"

    def match(self, argv):
        return _first(argv, "pytest", "py.test") or argv[:2] in (("-m", "pytest"),)

    def verdict(self, output):
        m = _last_match(PYTEST_SUMMARY, output)
        failed = PYTEST_FAILED.findall(output)
        if not m and not failed:
            if re.search(r"^no tests ran", output, re.M):
                return Verdict(False, summary="no tests ran", kind=TEST, runner=self.name)
            return None
        counts = dict((k.rstrip("s") if k.startswith("error") else k, int(v)) for v, k in PYTEST_PAIR.findall(m.group(1))) if m else {}
        bad = counts.get("failed", 0) + counts.get("error", 0) or len(failed)
        return Verdict(not bad, counts=_counts(counts.items()), failures=tuple(f for f, _ in failed)[:20],
                       errors=tuple(f"{f}: {e}" for f, e in failed if e)[:10],
                       summary=m.group(0).strip("= ").strip() if m else "", kind=TEST, runner=self.name)


UNITTEST = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*\n\s*\n(OK|FAILED)(?: \(([^)]*)\))?", re.M)
UNITTEST_FAIL = re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)", re.M)


class Unittest(Runner):
    name = "unittest"

    def match(self, argv):
        return tuple(argv[:1]) == ("unittest",) or tuple(argv[:2]) == ("manage.py", "test")

    def verdict(self, output):
        m = _last_match(UNITTEST, output)
        if not m:
            return None
        counts = [("tests", int(m.group(1)))] + [(k.strip(), int(v)) for k, v in re.findall(r"(\w+)=(\d+)", m.group(3) or "")]
        return Verdict(m.group(2) == "OK", counts=tuple(counts),
                       failures=tuple(f"{c}.{t}" for t, c in UNITTEST_FAIL.findall(output))[:20],
                       summary=" ".join(x for x in m.group(0).split() if x)[:120], kind=TEST, runner=self.name)


GO_FAIL_TEST = re.compile(r"^\s*--- FAIL: (\S+)", re.M)
GO_PKG = re.compile(r"^(ok|FAIL|---|\?)\s+(\S+)\s+(\S+)?.*$", re.M)
GO_PKG_FAIL = re.compile(r"^FAIL\s+(\S+)\s+(?:\[(build failed|setup failed)\]|[\d.]+s)", re.M)
GO_PKG_OK = re.compile(r"^ok\s+(\S+)\s+(?:[\d.]+s|\(cached\))", re.M)
GO_COMPILE = re.compile(r"^(\S+\.go:\d+:\d+: .+)$", re.M)
GO_PANIC = re.compile(r"^panic: (.+)$", re.M)


class GoTest(Runner):
    name = "go test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("go", "test") or _first(argv, "gotestsum")

    def verdict(self, output):
        fails = GO_FAIL_TEST.findall(output)
        pkg_fail = GO_PKG_FAIL.findall(output)
        pkg_ok = GO_PKG_OK.findall(output)
        bare = re.search(r"^(PASS|FAIL)\s*$", output, re.M)
        if not (fails or pkg_fail or pkg_ok or bare):
            return None
        failed = bool(fails or pkg_fail) or (bare is not None and bare.group(1) == "FAIL" and not pkg_ok)
        summary = ""
        m = GO_PKG_FAIL.search(output)
        if m:
            line = output[m.start():].split("\n", 1)[0]
            summary = " ".join(line.split())
        elif pkg_ok:
            summary = f"ok {len(pkg_ok)} package{'s' if len(pkg_ok) != 1 else ''}"
        errors = tuple(GO_COMPILE.findall(output))[:8] + tuple(f"panic: {p}" for p in GO_PANIC.findall(output))[:2]
        counts = (("failed tests", len(set(fails))),) if fails else ()
        top = [f for f in dict.fromkeys(fails) if "/" not in f] or list(dict.fromkeys(fails))
        return Verdict(not failed, counts=counts, failures=tuple(top)[:20], errors=errors, summary=summary,
                       kind=TEST, runner=self.name)


CARGO_RESULT = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed(?:; (\d+) ignored)?", re.M)
CARGO_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED$", re.M)
RUST_ERROR = re.compile(r"^(error(?:\[E\d+\])?: .+)$", re.M)


class CargoTest(Runner):
    name = "cargo test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) in (("cargo", "test"), ("cargo", "nextest"))

    def verdict(self, output):
        results = CARGO_RESULT.findall(output)
        errors = tuple(e for e in RUST_ERROR.findall(output) if "test failed" not in e)
        if not results:
            if re.search(r"could not compile|error: test failed", output):
                return Verdict(False, errors=errors[:8], summary="could not compile", kind=TEST, runner=self.name)
            return None
        passed = sum(int(r[1]) for r in results)
        failed = sum(int(r[2]) for r in results)
        return Verdict(failed == 0 and all(r[0] == "ok" for r in results),
                       counts=(("passed", passed), ("failed", failed)), failures=tuple(CARGO_FAILED.findall(output))[:20],
                       errors=errors[:8], summary=f"{passed} passed; {failed} failed", kind=TEST, runner=self.name)


JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)", re.M)
JEST_SUITE_FAIL = re.compile(r"^FAIL\s+(\S+)", re.M)
JEST_CASE = re.compile(r"^\s*● (.+?)\s*$", re.M)
VITEST_TESTS = re.compile(r"^\s*Tests\s+((?:\d+ \w+ \| )*\d+ \w+)(?: \(\d+\))?", re.M)
VITEST_FAIL = re.compile(r"^\s*(?:FAIL|×|✗)\s+(\S+\.(?:test|spec)\.\w+\S*(?: > .+)?)$", re.M)
PAIR = re.compile(r"(\d+) (failed|passed|skipped|todo|pending|total)")


class Jest(Runner):
    name = "jest"

    def match(self, argv):
        return _first(argv, "jest", "vitest", "mocha", "ava", "tap", "playwright", "cypress") or \
            tuple(argv[:2]) in (("deno", "test"), ("node", "--test"))

    def read(self, argv, command, seg):
        runs = super().read(argv, command, seg)
        return [CheckRun(**{**r.__dict__, "runner": argv[0] if argv[0] != "deno" else "deno test"}) for r in runs]

    def verdict(self, output):
        m = _last_match(JEST_TESTS, output) or _last_match(VITEST_TESTS, output)
        if not m:
            return None
        counts = dict((k, int(v)) for v, k in PAIR.findall(m.group(1)))
        fails = JEST_SUITE_FAIL.findall(output) + VITEST_FAIL.findall(output)
        cases = [c for c in JEST_CASE.findall(output) if "›" in c or ">" in c]
        return Verdict(counts.get("failed", 0) == 0, counts=_counts(counts.items()),
                       failures=tuple(dict.fromkeys(cases or fails))[:20], summary=" ".join(m.group(0).split()),
                       kind=TEST, runner=self.name)


BUN_COUNTS = re.compile(r"^\s*(\d+) (pass|fail|skip|todo)\s*$", re.M)
BUN_FAIL = re.compile(r"^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$", re.M)
BUN_RAN = re.compile(r"^Ran (\d+) tests? across (\d+) files?\.", re.M)


class BunTest(Runner):
    name = "bun test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("bun", "test")

    def verdict(self, output):
        counts = dict((k, int(v)) for v, k in BUN_COUNTS.findall(output))
        fails = BUN_FAIL.findall(output)
        if not counts and not fails:
            return None
        failed = counts.get("fail", 0) or len(fails)
        ran = _last_match(BUN_RAN, output)
        summary = f"{counts.get('pass', 0)} pass, {counts.get('fail', 0)} fail" if counts else ""
        if ran:
            summary += f" ({ran.group(1)} tests across {ran.group(2)} files)"
        return Verdict(not failed and bool(counts), counts=_counts(counts.items()), failures=tuple(fails)[:20],
                       summary=summary.strip(), kind=TEST, runner=self.name)


MIX_RESULT = re.compile(r"^((?:\d+ (?:doctests?|propert(?:y|ies)|tests?), )*\d+ (?:tests?|doctests?|propert(?:y|ies)), "
                        r"(\d+) failures?(?:, \d+ (?:excluded|skipped|invalid))*)", re.M)
MIX_FAIL = re.compile(r"^\s+\d+\) (?:test|doctest|property) (.+?) \(([\w.]+)\)$", re.M)


class MixTest(Runner):
    name = "mix test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("mix", "test")

    def verdict(self, output):
        m = _last_match(MIX_RESULT, output)
        if not m:
            if re.search(r"\*\* \((\w+Error)\)|== Compilation error", output):
                return Verdict(False, errors=tuple(re.findall(r"^\*\* \(.+$", output, re.M))[:4],
                               summary="compilation error", kind=TEST, runner=self.name)
            return None
        counts = tuple((k.rstrip("s"), int(v)) for v, k in re.findall(r"(\d+) (doctests?|tests?|failures?|propert\w+)",
                                                                      m.group(1)))
        return Verdict(int(m.group(2)) == 0, counts=counts,
                       failures=tuple(f"{t} ({mod})" for t, mod in MIX_FAIL.findall(output))[:20],
                       summary=m.group(1), kind=TEST, runner=self.name)


RSPEC = re.compile(r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?", re.M)
RSPEC_FAIL = re.compile(r"^rspec (\S+:\d+) # (.+)$", re.M)


class Rspec(Runner):
    name = "rspec"

    def match(self, argv):
        return _first(argv, "rspec") or tuple(argv[:2]) in (("rails", "test"), ("rake", "test"), ("rake", "spec"))

    def verdict(self, output):
        m = _last_match(RSPEC, output)
        if not m:
            m2 = _last_match(re.compile(r"^(\d+) runs, (\d+) assertions, (\d+) failures, (\d+) errors", re.M), output)
            if not m2:
                return None
            bad = int(m2.group(3)) + int(m2.group(4))
            return Verdict(bad == 0, counts=(("runs", int(m2.group(1))), ("failures", int(m2.group(3))),
                                             ("errors", int(m2.group(4)))), summary=m2.group(0), kind=TEST,
                           runner="minitest")
        return Verdict(int(m.group(2)) == 0, counts=(("examples", int(m.group(1))), ("failures", int(m.group(2)))),
                       failures=tuple(f"{loc} {d}" for loc, d in RSPEC_FAIL.findall(output))[:20], summary=m.group(0),
                       kind=TEST, runner=self.name)


DOTNET = re.compile(r"^(Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+(\d+), Total:\s+(\d+)", re.M)
DOTNET_FAIL = re.compile(r"^\s*Failed (\S+) \[", re.M)


class DotnetTest(Runner):
    name = "dotnet test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) == ("dotnet", "test")

    def verdict(self, output):
        ms = DOTNET.findall(output)
        if not ms:
            return None
        failed = sum(int(m[1]) for m in ms)
        passed = sum(int(m[2]) for m in ms)
        return Verdict(failed == 0, counts=(("passed", passed), ("failed", failed)),
                       failures=tuple(DOTNET_FAIL.findall(output))[:20], summary=f"Failed: {failed}, Passed: {passed}",
                       kind=TEST, runner=self.name)


DART = re.compile(r"^\d\d:\d\d \+(\d+)(?: ~(\d+))?(?: -(\d+))?: (All tests passed!|Some tests failed\.)", re.M)


class DartTest(Runner):
    name = "dart test"
    skip = 2

    def match(self, argv):
        return tuple(argv[:2]) in (("dart", "test"), ("flutter", "test"))

    def verdict(self, output):
        m = _last_match(DART, output)
        if not m:
            return None
        return Verdict(m.group(4).startswith("All"), counts=(("passed", int(m.group(1))), ("failed", int(m.group(3) or 0))),
                       summary=m.group(0)[6:], kind=TEST, runner=self.name)


PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, (\d+) assertions?\)", re.M)
PHPUNIT_BAD = re.compile(r"^Tests: (\d+), Assertions: (\d+)(?:, (?:Failures|Errors): (\d+))+", re.M)


class Phpunit(Runner):
    name = "phpunit"

    def match(self, argv):
        return _first(argv, "phpunit", "pest") or tuple(argv[:2]) == ("artisan", "test")

    def verdict(self, output):
        m = _last_match(PHPUNIT_OK, output)
        if m:
            return Verdict(True, counts=(("tests", int(m.group(1))),), summary=m.group(0), kind=TEST, runner=self.name)
        m = _last_match(PHPUNIT_BAD, output)
        if m:
            return Verdict(False, counts=(("tests", int(m.group(1))),), summary=m.group(0), kind=TEST, runner=self.name)
        return None


ENTRIES = [Pytest(), Unittest(), GoTest(), CargoTest(), Jest(), BunTest(), MixTest(), Rspec(), DotnetTest(),
           DartTest(), Phpunit()]
