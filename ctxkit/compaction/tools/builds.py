"""Builds and compiles: go build, cargo build/check, mix compile, gradle, maven, dotnet build, swift build,
cmake, vite/next/webpack/esbuild, docker build. A compiler's diagnostics are the errors; its own
success line, or silence with exit status 0 where the tool is silent on success, is a pass."""
from __future__ import annotations

import re

from ..model import BUILD, CheckRun, Verdict

DIAG = re.compile(r"^(\S+?\.\w{1,6}[:(]\d+(?:[:,]\d+)?\)?:? (?:error|fatal)?.*)$", re.M)
RUST = re.compile(r"^(error(?:\[E\d+\])?: .+)$", re.M)


class Build:
    name = ""
    kind = BUILD
    distinct = False        # its failure marks are too generic to judge another tool's output by
    silent_ok = False
    ok_marks: tuple = ()
    fail_marks: tuple = ()

    def match(self, argv) -> bool:
        raise NotImplementedError

    def verdict(self, output: str) -> Verdict | None:
        for pat in self.fail_marks:
            m = re.search(pat, output, re.M)
            if m:
                errs = tuple(dict.fromkeys(RUST.findall(output) + DIAG.findall(output)))[:8]
                return Verdict(False, errors=errs or (m.group(0).strip()[:200],), summary=m.group(0).strip()[:160],
                               kind=self.kind, runner=self.name)
        for pat in self.ok_marks:
            m = None
            for m in re.finditer(pat, output, re.M):
                pass
            if m:
                return Verdict(True, summary=m.group(0).strip()[:160], kind=self.kind, runner=self.name)
        return None

    def read(self, argv, command, seg):
        out = command.output or ""
        v = self.verdict(out)
        if v is None and self.silent_ok and command.exit in (0, None) and not command.failed and not out.strip():
            v = Verdict(True, summary="no output", kind=self.kind, runner=self.name)
        if v is None and command.exit not in (None, 0):
            errs = tuple(dict.fromkeys(DIAG.findall(out)))[:8]
            v = Verdict(False, errors=errs, kind=self.kind, runner=self.name)
        v = v or Verdict(None)
        return [CheckRun(command.at, command=seg.text, kind=self.kind, runner=self.name, passed=v.passed,
                         errors=v.errors, summary=v.summary, ts=command.ts)]


class GoBuild(Build):
    name = "go build"
    silent_ok = True
    fail_marks = (r"^\S+\.go:\d+:\d+: .+$",)

    def match(self, argv):
        return tuple(argv[:2]) in (("go", "build"), ("go", "install"), ("go", "generate"))


class Cargo(Build):
    name = "cargo build"
    fail_marks = (r"could not compile", r"^error(?:\[E\d+\])?: ")
    ok_marks = (r"^\s*Finished .+$",)

    def match(self, argv):
        return tuple(argv[:2]) in (("cargo", "build"), ("cargo", "check"), ("cargo", "run"))


class MixCompile(Build):
    name = "mix compile"
    silent_ok = True
    fail_marks = (r"== Compilation error", r"^\*\* \(\w+Error\) .+$", r"^error: .+$")
    ok_marks = (r"^Generated \S+ app", r"^Compiling \d+ files? \(\.ex\)")

    def match(self, argv):
        return tuple(argv[:2]) in (("mix", "compile"),)


class Jvm(Build):
    name = "gradle"
    fail_marks = (r"^BUILD FAILED", r"^\[ERROR\] .+$")
    ok_marks = (r"^BUILD SUCCESS(?:FUL)?",)

    def match(self, argv):
        return bool(argv) and argv[0] in ("gradle", "./gradlew", "gradlew", "mvn", "./mvnw", "mvnw", "sbt", "bazel")


class Dotnet(Build):
    name = "dotnet build"
    fail_marks = (r"^Build FAILED\.", r": error [A-Z]+\d+:")
    ok_marks = (r"^Build succeeded\.",)

    def match(self, argv):
        return tuple(argv[:2]) in (("dotnet", "build"), ("dotnet", "publish"), ("msbuild",))


class Swift(Build):
    name = "swift build"
    fail_marks = (r"error: .+$",)
    ok_marks = (r"^Build complete!", r"^Compiling .+$")

    def match(self, argv):
        return tuple(argv[:2]) in (("swift", "build"), ("xcodebuild",)) or bool(argv) and argv[0] == "xcodebuild"


class Native(Build):
    name = "cmake"
    fail_marks = (r"^\S+:\d+:\d+: (?:fatal )?error: .+$", r"^make(?:\[\d+\])?: \*\*\* .+$", r"^ninja: build stopped")
    ok_marks = (r"^\[100%\] Built target", r"^ninja: no work to do")

    def match(self, argv):
        return bool(argv) and argv[0] in ("cmake", "ninja", "gcc", "g++", "clang", "clang++", "cc", "zig")


class WebBuild(Build):
    name = "vite build"
    fail_marks = (r"^error during build:", r"Failed to compile", r"^Build failed", r"^✘ \[ERROR\] .+$",
                  r"^ERROR in .+$")
    ok_marks = (r"^✓ built in .+$", r"Compiled successfully", r"^\s*⚡️? ?Done in .+$", r"Build success in .+$",
                r"^Route \(app\)")

    def match(self, argv):
        return bool(argv) and (argv[0] in ("webpack", "esbuild", "tsup", "rollup", "parcel", "turbo", "nx") or
                               tuple(argv[:2]) in (("vite", "build"), ("next", "build"), ("nuxt", "build"),
                                                   ("astro", "build"), ("svelte-kit", "build")))


class Docker(Build):
    name = "docker build"
    fail_marks = (r"^ERROR: failed to solve.+$", r"^ERROR \[.+$")
    ok_marks = (r"Successfully built \w+", r"naming to .+ done", r"^#\d+ DONE")

    def match(self, argv):
        return tuple(argv[:2]) in (("docker", "build"), ("podman", "build"), ("docker", "buildx")) or \
            tuple(argv[:2]) == ("docker", "compose") and "build" in argv


ENTRIES = [GoBuild(), Cargo(), MixCompile(), Jvm(), Dotnet(), Swift(), Native(), WebBuild(), Docker()]
