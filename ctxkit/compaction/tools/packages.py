"""Package managers: what was installed or added (npm, yarn, pnpm, bun, pip, uv, poetry, cargo, go, mix,
bundler, gem, dotnet, composer, brew, apt)."""
from __future__ import annotations

from ..model import MODIFY, Change, Install

# the files adding a package changes, by manager (the manifest, then the lock file)
FILES = {"npm": ("package.json", "package-lock.json"), "yarn": ("package.json", "yarn.lock"),
         "pnpm": ("package.json", "pnpm-lock.yaml"), "bun": ("package.json", "bun.lock"),
         "uv": ("pyproject.toml", "uv.lock"), "poetry": ("pyproject.toml", "poetry.lock"),
         "pdm": ("pyproject.toml", "pdm.lock"), "cargo": ("Cargo.toml", "Cargo.lock"), "go": ("go.mod", "go.sum"),
         "bundle": ("Gemfile", "Gemfile.lock"), "composer": ("composer.json", "composer.lock"),
         "deno": ("deno.json", "deno.lock")}

ADD = {
    "npm": ("install", "i", "add"), "yarn": ("add",), "pnpm": ("add", "install", "i"), "bun": ("add", "install", "i"),
    "pip": ("install",), "pip3": ("install",), "uv": ("add", "pip"), "poetry": ("add",), "pdm": ("add",),
    "cargo": ("add", "install"), "go": ("get", "install"), "mix": ("deps.get",), "bundle": ("add", "install"),
    "gem": ("install",), "composer": ("require", "install"), "brew": ("install",), "apt": ("install",),
    "apt-get": ("install",), "dotnet": ("add",), "deno": ("add", "install"), "gh": ("extension",),
}


class Packages:
    name = "packages"
    kind = "package"

    def match(self, argv):
        return len(argv) >= 2 and argv[0] in ADD and argv[1] in ADD[argv[0]] and not \
            (argv[0] == "go" and argv[1] == "install" and not any("@" in a for a in argv[2:]))

    def read(self, argv, command, seg):
        words = [a for a in argv[2:] if not a.startswith("-")]
        if argv[0] == "uv" and argv[1] == "pip":
            words = words[1:] if words[:1] == ["install"] else []
        if argv[0] == "dotnet":
            words = words[1:] if words[:1] == ["package"] else words
        ok = not command.failed and not command.running
        out = [Install(command.at, manager=argv[0], packages=tuple(words)[:20], ok=ok, ts=command.ts)]
        if ok and words and argv[0] in FILES and not (argv[0] == "go" and argv[1] == "install") and \
                not (argv[0] == "cargo" and argv[1] == "install") and "-g" not in argv and "--global" not in argv:
            base = seg.cwd.rstrip("/") + "/" if seg.cwd and seg.cwd not in (".", "./") else ""
            out += [Change(command.at, path=base + f, action=MODIFY, via="shell", ts=command.ts) for f in FILES[argv[0]]]
        return out


ENTRIES = [Packages()]
