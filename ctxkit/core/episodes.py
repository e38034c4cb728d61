"""The span as episodes, in order (pure, deterministic, no model).

An episode is one stretch of work: it opens with a user request or with the claim of a work
item (`bd update ID --status in_progress`, a TodoWrite / update_plan step put in progress) and
closes with a commit. For each: the request, the files changed and which definitions the edit
and write calls added or changed, notable commands, the check runs (tests, linters, builds)
as a history ("2 failures -> 0 failures"), the errors hit and what resolved them, the commit,
the work items closed. Everything comes from tool calls and their results, never from what the
agent said about them.

`core.focus` reads the same episodes for where the work stands at the cut.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import wraps
from typing import Sequence

from .artifacts import _args
from .distill import AIDER_COMMIT, COMMIT_MSG, COMMIT_OUT, TEST_CMD
from .shorten import unemphasize
from .requests import brief, request_text

# a work item id: spotter-fum.3, proj-a0y, ABC-123 (letters, a dash, then letters/digits, dotted parts)
ITEM_ID = r"[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9]+(?:\.\d+)*"
CLAIM = re.compile(rf"\b(?:bd|br|beads)\s+(?:update|start|claim)\s+({ITEM_ID})\b[^\n|;&]*?"
                   rf"(?:--status[= ]?[\"']?in[_-]progress|$)")
CLOSE = re.compile(rf"\b(?:bd|br|beads)\s+(?:close|done)\s+((?:{ITEM_ID}\s*)+)")
STATUS_DONE = re.compile(rf"\b(?:bd|br)\s+update\s+({ITEM_ID})\b[^\n|;&]*--status[= ]?[\"']?(?:closed|done)")
ITEM_TITLE = re.compile(rf"(?m)(?:^|[\s○●✓◐]\s?)({ITEM_ID})(?:\s+\[[A-Z]+\])?(?::| ·)\s+(.+?)(?:\s+\[●|\s+●|\s*$)")
CHECK_CMD = re.compile(r"\b(mix (?:compile|credo|format|dialyzer)|ruff|mypy|pyright|flake8|eslint|tsc|cargo "
                       r"(?:build|check|clippy)|go (?:build|vet)|npm run (?:build|lint|typecheck)|make\b|"
                       r"gradle build|mvn (?:compile|package))")
INSTALL_CMD = re.compile(r"\b(npm (?:install|i|add)|yarn add|pnpm add|pip install|uv (?:add|pip install)|"
                         r"poetry add|cargo add|mix deps\.get|go get|gem install|bundle add)\b(.*)")
# a generator: a command that writes new files from a template or a schema diff (migrations, scaffolds)
GENERATE_CMD = re.compile(r"\b(?:mix [\w.]*(?:gen|codegen|generate_migrations)[\w.]*|mix (?:phx|igniter)\.new|"
                          r"rails (?:generate|g|new)\b|(?:bin/)?rake db:migrate|alembic revision|django-admin startapp|"
                          r"manage\.py (?:startapp|makemigrations)|cargo (?:new|init)|dotnet new|ng (?:generate|g)\b|"
                          r"nest (?:generate|g)\b|npx create-[\w-]+|npm init\b)")
GENERATED = re.compile(r"(?m)^\s*\*?\s*(?:creating|create|created)\s+([\w./-]+\.\w+)\s*$")
REJECTED = re.compile(r"The user doesn't want to proceed with this tool use|tool use was rejected", re.I)
# failures of the agent's own tooling, not of the project: a read too large for the tool, an edit whose
# old text was not found, a skill or permission refusal, a malformed call
TOOLING = re.compile(r"exceeds maximum allowed tokens|File has not been read yet|String to replace not found|"
                     r"Found \d+ matches of the string to replace|File does not exist|InputValidationError|"
                     r"Bash command failed for pattern|requested permissions|permission to use|has not been granted|"
                     r"old_string and new_string are exactly the same|File has been modified since read|"
                     r"tool use was rejected|doesn't want to proceed with this tool use|Unknown skill|"
                     r"<tool_use_error>|Sibling tool call errored|: command not found|command not found:", re.I)
LOOK_TOOLS = {"read", "view", "read_file", "glob", "grep", "skill", "webfetch", "websearch", "ls", "list_dir",
              "todowrite", "exitplanmode", "slashcommand", "bashoutput", "killshell"}


def tooling_failure(name: str, out: str) -> bool:
    """A failed call that says something about the agent's tools, not about the project."""
    return (name or "").lower() in LOOK_TOOLS or bool(TOOLING.search(out or ""))


REJECT_REASON = re.compile(r"(?:the user said|reason for the rejection)[:\s]*\n?(.+)", re.I | re.S)
EDIT_TOOLS = {"edit", "multiedit", "write", "notebookedit", "str_replace_based_edit_tool", "apply_patch",
              "create_file", "write_file", "edit_file", "replace"}

# definitions, by language (name group 1); kept conservative so a bullet never names noise
DEFS = [
    re.compile(r"^\s*(?:def|defp|defmacro|defmacrop|defguard|defdelegate)\s+([a-z_][\w?!]*)", re.M),        # Elixir
    re.compile(r"^\s*(?:defmodule|defprotocol|defimpl)\s+([A-Z][\w.]*)", re.M),
    re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.M),                                       # Python
    re.compile(r"^\s*class\s+([A-Za-z_]\w*)", re.M),
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)", re.M),  # JS/TS
    re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\(|function|\{|\[)", re.M),
    re.compile(r"^([A-Z][\w$]*\.[A-Za-z_$][\w$]*)\s*=", re.M),                                              # Hooks.X = {
    re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)", re.M),                    # Rust
    re.compile(r"^\s*(?:pub\s+)?(?:struct|enum|trait)\s+([A-Z]\w*)", re.M),
    re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", re.M),                                          # Go
    re.compile(r"^\s*(?:public|private|protected)\s+(?:static\s+)?[\w<>\[\]]+\s+([a-z]\w*)\s*\(", re.M),    # Java/C#
]
ELIXIR_HANDLER = re.compile(r"^\s*def\s+(handle_event|handle_info|handle_call|handle_cast)\(\s*(\"[^\"]+\"|\{:\w+|:\w+)", re.M)
TEST_DEF = re.compile(r"^\s*(?:test|it)\s*\(?\s*[\"']([^\"']+)[\"']", re.M)
PY_TEST_DEF = re.compile(r"^\s*def\s+(test_\w+)", re.M)
CSS_RULE = re.compile(r"^([.#@]?[A-Za-z:][^{}\n;]*?)\s*\{", re.M)
HTML_ATTR = re.compile(r"\b(phx-hook|phx-update|phx-click|id|data-[\w-]+)=\"([^\"{]*)\"")
CONFIG_KEY = re.compile(r"^\s*\"?([A-Za-z_][\w.-]*)\"?\s*[:=]", re.M)
CONFIG_ENTRY = re.compile(r"^\s*\"?([A-Za-z_][\w.-]*)\"?\s*[:=]\s*(?:[\[{]|$)|^\s*\[+([\w.-]+)\]+\s*$", re.M)
IMPORT = re.compile(r"^\s*(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?[\"']([^\"']+)[\"']|from\s+([\w.]+)\s+import\b|"
                    r"(?:alias|import|use)\s+([A-Z][\w.]+))", re.M)
DYN_ATTR = re.compile(r"\b(data-[\w-]+|phx-[\w-]+)=\{")
TAG = re.compile(r"<([a-z][a-z0-9]*)\b")
ATTRIBUTE = re.compile(r"^\s*(?:attribute|field|belongs_to|has_many|has_one|column)\s+:(\w+)", re.M)
ROUTE = re.compile(r"^\s*(?:get|post|put|patch|delete|live)\s+\"([^\"]+)\"", re.M)
# the key values a new text sets, cheap and exact: module attributes and constants with literal values,
# the topics and events it subscribes to or broadcasts, the message shapes its handlers match,
# the markers it sets on elements
LITERAL = r"(?:-?[\d_.]+(?:\s*\*\s*[\d_.]+)*|\"[^\"\n]{0,60}\"|'[^'\n]{0,60}'|:\w+|true|false|nil|None|True|False)"
VALUE_RXS = [
    re.compile(rf"^\s*(@(?!doc\b|moduledoc\b|impl\b|spec\b|type\b|typep\b|behaviour\b|callback\b|derive\b|tag\b)"
               rf"[a-z_]\w*\s+{LITERAL})\s*$", re.M),                                                 # Elixir @attr
    re.compile(rf"^\s*(?:export\s+)?(?:const\s+|final\s+|static\s+)*([A-Z][A-Z0-9_]{{2,}}\s*(?::\s*\w+\s*)?=\s*{LITERAL})"
               rf"\s*;?\s*(?:#.*|//.*)?$", re.M),                                                      # CONSTANT = 10
]
TOPIC_CALL = re.compile(r"\b(?:subscribe|unsubscribe|broadcast(?:_from)?|local_broadcast|publish|emit|push_event|"
                        r"pushEvent|handleEvent|send_update)\(\s*(?:[\w.@]+\s*,\s*)?(\"[^\"\n]{1,60}\")"
                        r"(?:\s*,\s*(\{:\w+[^\n]{0,90}?\})\s*\))?")
HANDLER_HEAD = re.compile(r"^\s*def\s+(handle_info|handle_cast|handle_call)\((\{:\w+,[^\n]{0,100}?\})\s*,\s*[\w_]+\)?"
                          r"(?:\s*,\s*\w+\))?\s*do\b", re.M)
DEFAULT = re.compile(r"\b([a-z_]\w*)\s*=\s*[\w.\[\]\"'()]{1,60}?\s*(?:\|\||\?\?|\bor\b)\s*(\"[^\"\n]{1,40}\"|'[^'\n]{1,40}')")
MARKER = re.compile(r"\bdataset\.(\w+)\s*=\s*(\"[^\"\n]{0,30}\"|'[^'\n]{0,30}')|"
                    r"setAttribute\(\s*[\"'](data-[\w-]+)[\"']\s*,\s*(\"[^\"\n]{0,30}\"|'[^'\n]{0,30}')")


EX_DEF = re.compile(r"^[ \t]*(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate)\s+([a-z_][\w?!]*)(\(|[ \t]*(?:,|do\b|when\b|$))", re.M)


def _args_of(text: str, start: int) -> tuple[int, int, str]:
    """(arity, defaults, argument text) of the parenthesised list opening at `start` (balanced,
    linear; strings skipped)."""
    depth, k, n, quote = 0, start, len(text), ""
    while k < n and k - start < 2000:
        c = text[k]
        if quote:
            if c == "\\":
                k += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                break
        k += 1
    inner = text[start + 1:k]
    parts, depth, cur = [], 0, ""
    for c in inner:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return len(parts), sum(1 for p in parts if "\\\\" in p), inner


def elixir_functions(text: str) -> list[tuple[str, bool, int]]:
    """(name/arity, private?, defaults) of the functions and macros an Elixir text defines, in
    order, each once (clauses of one function are one)."""
    out, seen = [], set()
    for m in EX_DEF.finditer(text):
        arity, defaults = 0, 0
        if m.group(3) == "(":
            arity, defaults, _ = _args_of(text, m.end() - 1)
        key = f"{m.group(2)}/{arity}"
        if key not in seen:
            seen.add(key)
            out.append((key, m.group(1).endswith("p"), defaults))
    return out


def _arity_covers(name: str, names: list, text: str) -> bool:
    """`render/1` still exists when `render/2` has a default argument."""
    m = re.match(r"^([\w?!]+)/(\d+)$", name)
    if not m:
        return False
    for f, _, defaults in elixir_functions(text):
        fm = re.match(r"^([\w?!]+)/(\d+)$", f)
        if fm and fm.group(1) == m.group(1) and int(fm.group(2)) - defaults <= int(m.group(2)) <= int(fm.group(2)):
            return True
    return False


# the shapes a new text introduces: map and struct keys, options read, CSS variables, test groups
MAP_OPEN = re.compile(r"%(?:[A-Z][\w.]*)?\{|defstruct\s*\[?")
MAP_KEY = re.compile(r"(?<![\w:])([a-z_]\w*):\s")
PUT_KEY = re.compile(r"\bMap\.put(?:_new)?\(\s*[\w@.\[\]]*\s*,\s*:(\w+)")
OPT_KEY = re.compile(r"\b(?:Keyword\.(?:get|fetch!?|pop|has_key\?)\(\s*opts\s*,\s*:(\w+)|opts\[:(\w+)\]|"
                     r"(?:kwargs|options|opts)\.(?:get|pop)\(\s*[\"'](\w+)[\"'])")
CSS_VAR = re.compile(r"(?m)^\s*(--[\w-]+)\s*:")
DESCRIBE = re.compile(r"^\s*describe\s*\(?\s*[\"'`]([^\"'`\n]{1,80})[\"'`]", re.M)


def _map_keys(text: str) -> list[str]:
    """The keys of Elixir map and struct literals (`%{kind: :x}`, `defstruct [:a, b: 1]`) and of
    `Map.put(m, :key, …)`, in order."""
    out = []
    text = re.sub(r"(?m)^[ \t]*defp?\s.*$", "", text)  # a function head's pattern matches a shape, it makes none
    for m in MAP_OPEN.finditer(text):
        depth, k, body = 0, m.end() - 1, []
        if text[k] not in "{[":
            continue
        start = k
        while k < len(text) and k - start < 1500:
            c = text[k]
            if c in "{[(":
                depth += 1
            elif c in "}])":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1:
                body.append(c)
            else:
                body.append(" ")
            k += 1
        if re.match(r"\s*(?:->|<-|=(?![=>~]))", text[k + 1:k + 8]):
            continue  # a pattern it matches (`%{status: :ok} ->`), not a shape it makes
        inner = "".join(body)
        out += MAP_KEY.findall(inner)
        if m.group(0).startswith("defstruct"):
            out += re.findall(r"(?<![\w:]):(\w+)", inner)
    out += PUT_KEY.findall(text)
    return _uniq(out)


ASSIGN_ONE = re.compile(r"\b(?:assign|assign_new|update)\(\s*[\w.]+\s*,\s*:(\w+)")
ASSIGN_KW = re.compile(r"\bassign\(\s*[\w.]+\s*,\s*((?:[a-z_]\w*:\s*[^,\n)]+,?\s*)+)")


def _assigns(text: str) -> list[str]:
    out = ASSIGN_ONE.findall(text)
    for m in ASSIGN_KW.finditer(text):
        out += re.findall(r"([a-z_]\w*):\s", m.group(1))
    return _uniq(out)


def shapes(new: str, old: str, path: str) -> list[str]:
    """What a change introduces besides definitions, each a short label: `keys a, b`, `options
    :x`, `CSS variables --a`, `describe "x"` (not in the old text)."""
    out = []
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    test = bool(re.search(r"(?:^|/)tests?/|_test\.\w+$|(?:^|/)test_[^/]*$|\.(?:spec|test)\.\w+$", path))
    if ext in ("ex", "exs", "heex") and not test:  # a test's maps are fixtures
        was = set(_map_keys(old))
        out += [f"key {k}" for k in _map_keys(new) if k not in was and k not in ("do", "else", "into", "when")]
    if ext in ("ex", "exs") and not test:  # LiveView / Plug assigns: the state a view keeps
        was = set(_assigns(old))
        out += [f"assign {k}" for k in _assigns(new) if k not in was]
    was = {a or b or c for a, b, c in OPT_KEY.findall(old)}
    out += [f"option {a or b or c}" for a, b, c in OPT_KEY.findall(new) if (a or b or c) not in was]
    if ext in ("css", "scss", "less"):
        was = set(CSS_VAR.findall(old))
        out += [f"var {v}" for v in CSS_VAR.findall(new) if v not in was]
    was = set(DESCRIBE.findall(old))
    out += [f"describe {d}" for d in DESCRIBE.findall(new) if d not in was]
    return _uniq(out)


def _by_content(fn, max_text: int = 1 << 16, max_chars: int = 1 << 25):
    """`fn(text, path)` answered once per (text, path): the same edit is read by every pass over
    the span. Texts up to `max_text` characters are remembered, up to `max_chars` in all (first
    come, never evicted: a pass over more texts than fit does not push out what the next pass
    will ask again); each caller gets its own copy of the list."""
    memo: dict = {}
    held = [0]

    @wraps(fn)
    def cached(text: str, path: str = "") -> list:
        hit = memo.get((text, path))
        if hit is None:
            hit = tuple(fn(text, path))
            if len(text) <= max_text and held[0] < max_chars:
                memo[(text, path)] = hit
                held[0] += len(text) + len(path)
        return list(hit)
    return cached


@_by_content
def key_values(text: str, path: str = "") -> list[str]:
    """The values worth knowing in a new text, in order, each short (see VALUE_RXS). Not for
    shell scripts (their variables are plumbing) nor tests (their values are fixtures)."""
    out: list[str] = []
    if re.search(r"\.(?:sh|bash|zsh|fish)$|(?:^|/)tests?/|_test\.\w+$|(?:^|/)test_[^/]*$", path):
        return out
    for rx in VALUE_RXS:
        out += [" ".join(m.group(1).split()) for m in rx.finditer(text)]
    for m in TOPIC_CALL.finditer(text):  # described as topics, with the message sent on them
        pay = re.sub(r"\b([a-z_]\w*): \1\b", r"\1", " ".join(m.group(2).split())) if m.group(2) else ""
        verb = re.match(r"\w+", m.group(0)).group(0)
        out.append(f"{'subscribe' if verb == 'subscribe' else 'topic'} {m.group(1)}" + (f" ← {pay}" if pay else ""))
    for m in HANDLER_HEAD.finditer(text):
        pat = re.sub(r"\b([a-z_]\w*): \1\b", r"\1", " ".join(m.group(2).split()))  # %{id: id} -> %{id}
        out.append(f"{m.group(1)}({pat})")
    out += [f"default {m.group(1)} {m.group(2)}" for m in DEFAULT.finditer(text)]
    for m in MARKER.finditer(text):
        out.append(f'data-{m.group(1)}={m.group(2)}' if m.group(1) else f"{m.group(3)}={m.group(4)}")
    return _uniq(o for o in out if len(o) <= 130)


# a script the agent wrote to reproduce or check the bug: running it is a check
REPRO = re.compile(r"(?:python3?|node|ruby|bash|sh)\s+(?:\S*/)?(?:repro\w*|reproduce\w*|test_\w+|check_\w+|verify\w*)\.\w+\b")
CANCELLED = re.compile(r"^\W*(?:<tool_use_error>)?\s*(?:Sibling tool call errored|Cancelled: parallel tool call)", re.I)
BACKGROUND = re.compile(r"running in background with ID: (\w+)\.?\s*Output is being written to: (\S+)")
IGNORED = re.compile(r"ignored by one of your \.gitignore|paths are ignored", re.I)
FORCED = re.compile(r"\bgit\s+add\s+(?:[^`;&|]*\s)?(?:-f|--force)\b")
ANSWER = re.compile(r"\"([^\"\n]{3,300})\"=\"([^\"\n]{1,400})\"")
PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)

READ_LINE = re.compile(r"(?m)^\s*\d+\u2192")
TEMP_PATH = re.compile(r"(^/tmp/|/tasks/[\w-]+\.output$|^/var/folders/|/\.claude/(?:plans|todos|projects)/)")


@dataclass
class FileChange:
    path: str
    action: str = "modified"           # created | rewritten | modified | deleted
    added: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    tests_added: int = 0
    edits: int = 0
    plus: int = 0                      # lines added / removed by the edits (no definition named)
    minus: int = 0
    sample: str = ""                   # the one short line added, when that is all
    fate: str = ""                     # what happened to it later in the span (moved, deleted)
    purpose: str = ""                  # what a new file is for, in its own header doc or the agent's report
    texts: list = field(default_factory=list)    # the new texts this step's edits wrote into it
    ranges: list = field(default_factory=list)   # line ranges replaced (SWE-agent's `edit N:M`)
    values: list = field(default_factory=list)   # key values the new text sets (key_values)
    swaps: list = field(default_factory=list)    # (old line, new line) of one-line replacements
    private: set = field(default_factory=set)    # the names defined private (`defp`)
    defaults: dict = field(default_factory=dict)  # name/arity -> how many arguments have defaults
    shapes: list = field(default_factory=list)   # keys, options, CSS variables, test groups (shapes())
    samples: list = field(default_factory=list)  # the short lines the edits added, while they are few
    twins: dict = field(default_factory=dict)    # (anchor, added line) -> [places the anchor has, places changed]
    anchor: str = ""                   # the line right before the one short line added (`sample`)
    tests_total: int = 0               # a rewritten test file: how many tests it holds now


    def describe(self, cap: int = 8, prefer=()) -> str:
        """What changed in the file, in a few clauses. A list longer than `cap` names its first
        items and says how many there are in words ("9 public functions, including `a`, `b`"),
        never "and N more"; the module a file is named for is the file itself, not a definition."""
        parts = []
        own = self._own_modules()
        for label, names in (("added", self.added), ("changed", self.changed), ("removed", self.removed)):
            names = [n for n in names if not (label == "changed" and (n in self.added or n in self.removed))]
            imports = [n[7:] for n in names if n.startswith("import ")]
            names = [n for n in names if not n.startswith("import ") and n not in own]
            if self.tests_added and self._tests(self.path):  # a test file: its tests say it, not its helpers
                names = [n for n in names if not re.match(r"^[\w?!]+/\d+$", n)]
            if label == "added":
                names = [n for n in names if not any(n.endswith("…})") and v.startswith(n.split("…")[0])
                                                     for v in self.values)]
            if imports and label == "added":
                parts.append("imported " + _imports(imports))
            css = bool(re.search(r"\.(?:css|scss|less)$", self.path))
            if names and css:
                cap = min(cap, 8)  # selectors: the first few say what the stylesheet covers
            if names and css and len(names) > cap:  # many rules: the parts of the page they style
                parts.append(f"{label} {len(names)} CSS rules, for " + ", ".join(f"`{g}" + ("" if g.endswith(")") else "`")
                                                                    for g in _css_groups(names)[:8]))
                continue
            if names:
                noun = "CSS rules" if css else _noun(names)
                # when a list is cut, the module's own API comes first (a framework's callbacks last),
                # and of those the names the agent itself talks about
                names = sorted(names, key=lambda n: (bool(CALLBACK.match(n)), re.sub(r"/\d+$", "", n) not in prefer))
                markup = [n for n in names if MARKUP.match(n)]  # template attributes and tags, not functions
                code = [n for n in names if n not in markup]
                pub = [n for n in code if n not in self.private]
                priv = [n for n in code if n in self.private]
                if label == "added" and pub and priv:  # the API first, then the helpers
                    parts.append(f"added {self._names(pub, cap, 'public ' + _noun(pub), 'public ')}; "
                                 f"{self._names(priv, max(2, min(cap // 2, 6)), 'private helpers', 'private ')}" +
                                 (f"; markup {self._names(markup, cap, 'attributes and tags')}" if markup else ""))
                else:
                    parts.append(f"{label} {self._names(names, cap, noun)}")
        if own and not parts and not self._tests(self.path) and self.action == "created":
            parts.append("defines " + ", ".join(f"`{m}`" for m in sorted(own)[:2]))
        # each shape said as what the code does with it: "its maps carry `kind`", "takes options `:cwd`"
        for kind, verb, noun in (("key", "its maps carry", "keys"), ("assign", "assigns", "values"),
                                 ("option", "takes options", "options"), ("var", "defines CSS variables", "CSS variables")):
            got = [v.split(" ", 1)[1] for v in self.shapes if v.startswith(kind + " ")]
            if kind == "key" and len(got) > 12:
                continue  # a change that builds that many keys is moving data around, not defining a shape
            if got:
                fmt = (lambda x: f"`:{x}`") if kind in ("option", "assign") else (lambda x: f"`{x}`")
                said = _some([fmt(x) for x in got], min(cap, 10), noun)
                parts.append(f"{verb} {said}" if said.startswith("`") else f"{verb.rsplit(' ', 1)[0]} {said}"
                             if kind in ("option", "var") else f"{verb} {said}")
        groups = [v[9:] for v in self.shapes if v.startswith("describe ")]
        if self.tests_added:
            n = self.tests_added
            # a rewritten file: the tests it holds now first, or "8 added" reads as all it has
            total = f"now {self.tests_total} tests in all, " if self.action == "rewritten" and self.tests_total > n else ""
            parts.append(f"{total}{n} test{'s' if n != 1 else ''} added" +
                         (f" in {len(groups)} new describe group{'s' if len(groups) != 1 else ''}" if groups and total else
                          f" in {len(groups)} describe group{'s' if len(groups) != 1 else ''}" if groups else ""))
        if groups:
            k = max(2, min(cap, 8))
            names = ", ".join(f"\"{g}\"" for g in groups[:k])
            if self.tests_added:  # "17 tests added in 6 describe groups: "a", "b""
                parts[-1] += (": " if len(groups) <= k else ", among them ") + names
            else:
                parts.append(("describe " if len(groups) <= k else "describe groups, among them ") + names)
        if self.ranges and self.action != "created":  # a file the span created has no earlier lines to replace
            parts.append("replaced lines " + ", ".join(self.ranges[:4]))
        if not parts and self.action not in ("created", "deleted") and (self.plus or self.minus):
            if self.sample and self.plus == 1:
                parts.append(f"added {_one_line(self.sample, self.anchor)}" + (f", {self.minus} removed" if self.minus else ""))
            elif 1 < self.plus <= 4 and len(self.samples) == self.plus:
                parts.append("added " + _lines_said(self.samples) +
                             (f"; {self.minus} line{'s' if self.minus != 1 else ''} removed" if self.minus else ""))
            else:
                # declarations a DSL block adds (`create :upsert`, `identity :unique_session_uuid`, `field :x`)
                decl = _uniq([m.group(1) for x in self.samples if (m := DSL_ENTRY.match(x))])
                parts.append((("added " + ", ".join(f"`{x}`" for x in decl[:cap]) + "; ") if decl else "") +
                             f"{self.plus} line{'s' if self.plus != 1 else ''} added, {self.minus} removed")
        topics = [v[6:] for v in self.values if v.startswith("topic ")]
        subs = [v[10:] for v in self.values if v.startswith("subscribe ")]
        heads = [v for v in self.values if re.match(r"handle_\w+\(\{", v)]
        defaults: "OrderedDict[str, list]" = OrderedDict()
        for v in self.values:
            if v.startswith("default "):
                name, _, val = v[8:].partition(" ")
                defaults.setdefault(name, []).append(f"`{val}`")
        sets = [v for v in self.values if v not in heads and not v.startswith(("topic ", "default ", "subscribe "))]
        if heads:
            parts.append("handles " + ", ".join(f"`{v}`" for v in heads[:4]))
        if subs:
            parts.append("subscribes to " + ", ".join(f"`{v}`" for v in subs[:4]))
        sent = [t.split(" ← ", 1) for t in topics if " ← " in t]
        if sent:
            parts.append("broadcasts " + ", ".join(f"`{p}` on `{t}`" for t, p in sent[:3]))
        other = [t for t in topics if " ← " not in t and t not in subs and not any(t == x for x, _ in sent)]
        if other:
            parts.append("uses topics " + ", ".join(f"`{v}`" for v in other[:4]))
        if defaults:
            parts.append("fallbacks: " + ", ".join(f"`{n}` defaults to " + " or ".join(vs[:3])
                                                   for n, vs in list(defaults.items())[:3]))
        if sets:
            parts.append("sets " + ", ".join(f"`{v}`" for v in sets[:cap]))
        if self.swaps and not (self.added or self.changed or self.removed):
            parts.append("replaced " + "; ".join(f"`{a}` with `{b}`" for a, b in self.swaps[:3]))
        for anchor, line, done, places, where in self.twin_gaps()[:2]:  # the same insertion may be due there
            parts.append(f"`{line}` added after `{anchor}`, not yet at the same spot {where}" if where else
                         f"`{line}` added after `{anchor}` at {done} of the {places} places the file has that line")
        if self.fate:
            parts.append(self.fate)
        return "; ".join(parts)

    def twin_gaps(self) -> list:
        """(anchor, added line, places done, places, "under `X`" for the places not done or "") of each
        insertion made at fewer places than the file has its anchor followed alike (_twins)."""
        out = []
        for (anchor, line), (places, done, *rest) in self.twins.items():
            if done >= places:
                continue
            names = [f"`{n}`" for _, n in (rest[0] if rest else []) if n]
            where = ("under " + " and ".join(names)) if names and len(names) == places - done else ""
            out.append((anchor, line, done, places, where))
        return out

    @staticmethod
    def _tests(path: str) -> bool:
        return bool(TEST_PATH.search(path))

    def _own_modules(self) -> set:
        """The modules named for the file (`ActiveSessionRegistryTest` in `active_session_registry_test.exs`,
        a migration's module in its migration file): the path already says them."""
        if not re.search(r"\.exs?$", self.path):
            return set()
        base = self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        base = re.sub(r"^\d+_", "", base).replace("_", "").lower()  # a migration's timestamp
        return {n for n in self.added + self.changed + self.removed
                if re.match(r"^[A-Z][\w]*(?:\.[A-Z]\w*)*$", n) and n.rsplit(".", 1)[-1].lower() == base}

    def _names(self, names: list, cap: int, noun: str = "", prefix: str = "") -> str:
        """`a/2` (1 default arg), `b/1`; past `cap`: "9 public functions, including `a/2`, `b/1`"."""
        def one(n: str) -> str:
            k = self.defaults.get(n)
            return f"`{n}`" + (f" ({k} default arg{'s' if k != 1 else ''})" if k else "")
        return _some([one(n) for n in names], cap, noun, prefix)


TEST_PATH = re.compile(r"(?:^|/)tests?/|_test\.\w+$|(?:^|/)test_[^/]*$|\.(?:spec|test)\.\w+$")


MARKUP = re.compile(r"^<\w+>$|^[\w-]+=(?:\"|\{)")
# the callbacks a framework calls (OTP, LiveView, Python's dunders, test set-up): plumbing, not the API
CALLBACK = re.compile(r"^(?:handle_\w+[/(]|init/1$|start_link/1$|terminate/2$|code_change/3$|child_spec/1$|mount/3$|"
                      r"render/1$|update/2$|format_status/[12]$|__\w+__$|setUp$|tearDown$|connectedCallback$|"
                      r"componentDidMount$)")


def header_doc(text: str, path: str) -> str:
    """What a new file says it is for, in its first sentence: an Elixir `@moduledoc`, a Python
    module docstring, a leading `/** … */` or `//`/`#` comment block (after a shebang); "" when it
    has none (`@moduledoc false`) or the sentence is too short to say anything."""
    head = text.lstrip()[:1500]
    m = re.search(r'@moduledoc\s+(?:"""\s*\n?(.*?)"""|"([^"\n]+)")', head, re.S) or \
        re.match(r'(?:#![^\n]*\n\s*)?(?:[rRuU]?"""(.*?)"""|\'\'\'(.*?)\'\'\')', head, re.S) or \
        re.match(r"(?:#![^\n]*\n\s*)?/\*\*?(.*?)\*/", head, re.S)
    if m:
        body = next((g for g in m.groups() if g), "")
        body = "\n".join(re.sub(r"^\s*\*\s?", "", ln) for ln in body.splitlines())
    else:
        lines = head.splitlines()
        if lines and lines[0].startswith("#!"):
            lines = lines[1:]
        block = []
        for ln in lines:
            t = ln.strip()
            c = re.match(r"^(?:#|//|--|;;)\s?(.*)$", t)
            if not c or t.startswith(("#include", "#define", "#[", "#{")):
                break
            block.append(c.group(1))
        body = "\n".join(block)
    text = " ".join(body.split())
    first = re.split(r"(?<=[.!])\s+", text)[0] if text else ""
    if len(first) < 20 or len(first.split()) < 5 or \
            re.match(r"(?:-\*-|eslint|noqa|type:|@ts-|SPDX|Copyright|\(c\))", first, re.I):
        return ""
    return brief(first, 160)


def _noun(names: list) -> str:
    """What a list of definitions is, in a word: functions when they all are."""
    if all(re.match(r"^[\w?!]+/\d+$|^handle_\w+\(", n) for n in names):
        return "functions"
    return "definitions"


def _some(items: list, cap: int, noun: str, prefix: str = "") -> str:
    """`prefix` and the items when they are few; else their number in words and the first few:
    "27 CSS rules, including `:root`, `.hljs`" (never "and N more")."""
    if len(items) <= cap + 2:  # two more names cost less than a count and read better
        return prefix + ", ".join(items)
    k = max(1, min(cap, 6))
    return f"{len(items)} {noun}, including " + ", ".join(items[:k])


def _css_groups(selectors: list) -> list:
    """The parts of a page a list of CSS rules styles: each rule by its leading selector
    (`.transcript-row` for `.transcript-row pre.row-text code`) with the modifier classes it takes
    (`.transcript-row` (`.is-user`, `.is-code`)); past eight, a family sharing a prefix as one (`.hljs-*`)."""
    heads: "OrderedDict[str, list]" = OrderedDict()
    for x in selectors:
        m = re.match(r"([.#:]?[A-Za-z][\w-]*)((?:\.[A-Za-z][\w-]*)*)", x.strip())
        if m:
            mods = heads.setdefault(m.group(1), [])
            mods += [f".{c}" for c in m.group(2).split(".")[1:] if f".{c}" not in mods]
    names = list(heads)
    if len(names) > 8:
        fam: dict = {}
        for h in names:
            fam.setdefault(h.split("-", 1)[0], []).append(h)
        names = _uniq(h.split("-", 1)[0] + "-*" if len(fam[h.split("-", 1)[0]]) >= 3 else h for h in names)
    return [f"{h}` (" + ", ".join(f"`{c}`" for c in heads[h][:8]) + ")" if heads.get(h) else h
            for h in names]


def _one_line(line: str, anchor: str = "") -> str:
    """One added line in a few words: a list entry (`Foo.Bar,`) by its name and its neighbour,
    anything else as the line itself."""
    x = line.strip().rstrip(",;")
    a = anchor.strip().rstrip(",;")
    if re.match(r"^[A-Z][\w.]*$", x) and line.strip().endswith(","):
        return f"`{x}` to the list" + (f" after `{a}`" if re.match(r"^[A-Z][\w.]*$", a) else "")
    return f"the line `{x}`"


CALL_LINE = re.compile(r"^([\w.!?]+\((?:[^(),]+,\s*)*)([^(),]+)\)$")
ALIAS_LINE = re.compile(r"^(?:alias|import|require|use)\s+([A-Z][\w.]*)$")


def _lines_said(lines: list) -> str:
    """A few added lines, backticked: calls of one function that differ in their last argument said
    once (`ActiveSessionRegistry.touch(session_id, …)` with `:commit_event`, `:tool_call`), and an
    alias left out when the calls it serves are named."""
    xs = [x.strip().rstrip(",;") for x in lines]
    heads: "OrderedDict[str, list]" = OrderedDict()
    for x in xs:
        m = CALL_LINE.match(x)
        if m:
            heads.setdefault(m.group(1), []).append(m.group(2).strip())
    out, said = [], set()
    for x in xs:
        a = ALIAS_LINE.match(x)
        if a and any(h.startswith(a.group(1).rsplit(".", 1)[-1] + ".") for h in heads):
            continue
        m = CALL_LINE.match(x)
        if m and len(heads.get(m.group(1), ())) > 1:
            if m.group(1) not in said:
                said.add(m.group(1))
                out.append(f"`{m.group(1)}…)` calls with " + ", ".join(f"`{v}`" for v in heads[m.group(1)]))
            continue
        out.append(f"`{x}`")
    return ", ".join(out)


def _imports(mods: list) -> str:
    """`a/b/x`, `a/b/{y, z}`: modules sharing a folder said once."""
    groups: "OrderedDict[str, list]" = OrderedDict()
    for m in mods:
        head, _, tail = m.rpartition("/") if "/" in m else m.rpartition(".")
        groups.setdefault(head, []).append(tail or m)
    out = []
    for head, tails in groups.items():
        sep = "/" if any("/" in m for m in mods if m.startswith(head)) else "."
        if not head:
            out += [f"`{t}`" for t in tails]
            continue
        out.append(f"`{head}{sep}{tails[0]}`" if len(tails) == 1 else f"`{head}{sep}{{{', '.join(tails)}}}`")
    return ", ".join(out[:6]) + (f" and {len(out) - 6} more" if len(out) > 6 else "")


@dataclass
class Check:
    """One check command's runs in an episode, oldest first: (ok, counts) each."""
    command: str
    runs: list = field(default_factory=list)
    last_index: int = 0
    at: list = field(default_factory=list)     # the record index of each run

    def history(self) -> str:
        return history(self.runs)

    @property
    def ok(self) -> bool:
        return bool(self.runs) and self.runs[-1][0]


FAILS = re.compile(r"\b(\d+) (failures?|failed|errors?)\b")


def _state(ok: bool, counts: str) -> str:
    """A run in a word or two: "1 failure", "3 failed", "passed", "failed"."""
    fails = [(int(n), w) for n, w in FAILS.findall(counts or "")]
    bad = [(n, w) for n, w in fails if n]
    if bad:
        return ", ".join(f"{n} {w}" for n, w in bad)
    return "passed" if ok else "failed"


def history(runs) -> str:
    """Runs of one check, in words: "passed (49 tests, 0 failures)", "13 tests, 1 failure →
    passed (last run: 14 doctests, 379 tests, 0 failures)" (repeats collapsed, counts parsed)."""
    if not runs:
        return ""
    states: list = []   # [state, counts of its first run, counts of its last run]
    for ok, counts in runs:
        st = _state(ok, counts)
        if states and states[-1][0] == st:
            states[-1][2] = counts or states[-1][2]
        else:
            states.append([st, counts, counts])
    if len(states) > 4:
        states = states[:1] + [["…", "", ""]] + states[-2:]
    if len(states) == 1:
        st, first, last = states[0]
        if st != "passed":
            return last or st
        if not last:
            return "passed"
        return f"passed ({first} → {last})" if first and first != last else f"passed ({last})"
    head = states[0][1] or states[0][0]
    st, _, last = states[-1]
    return " → ".join([head] + [x[0] for x in states[1:-1]] +
                      [st + (f" (last run: {last})" if last and last != st else "")])


def checks_by_kind(checks, last_edit: int = -1) -> list[tuple[str, str]]:
    """(command, history) per kind of check (`mix credo`, `mix test`, …), runs in order: the
    variants of one command (other files, other flags) are one history. A kind last run before
    `last_edit` (the step's last edit) says so: its result is no longer the state."""
    groups: "OrderedDict[str, list]" = OrderedDict()
    for c in sorted(checks, key=lambda c: c.at[0] if c.at else c.last_index):
        fam = _families(c.command)[-1] if "&&" in c.command else _families(c.command)[0]
        groups.setdefault(fam, []).append(c)
    out = []
    for fam, cs in groups.items():
        runs = sorted(((k, r) for c in cs for k, r in zip(c.at or [c.last_index] * len(c.runs), c.runs)),
                      key=lambda t: t[0])
        names = {c.command for c in cs}
        cmd = cs[0].command if len(names) == 1 else min(names, key=len)
        if len(names) > 1:
            words = cmd.split()
            kept = [w for w in words if not ("/" in w or re.search(r"\.\w{1,5}$", w))]
            cmd = " ".join(kept) + (" <files>" if len(kept) < len(words) else "")
        stale = bool(runs) and runs[-1][0] < last_edit
        out.append((cmd, history([r for _, r in runs]) + (" (before the last edits; not run since)" if stale else "")))
    return out


@dataclass
class Error:
    text: str
    source: str
    index: int
    key: str
    fix: str | None = None            # how it was resolved, when it was
    resolved: bool = False
    fix_files: list = field(default_factory=list)   # files edited after it, before it was resolved
    fix_cmds: list = field(default_factory=list)    # checks that passed after it, before it was resolved
    kind: str = "command"             # check (test, build, lint) | git | command (exploring) | tool
    commands: list = field(default_factory=list)    # the command lines that failed with it
    frozen: bool = False              # another check ran after its fixing edits: later edits are other work
    said: list = field(default_factory=list)        # the agent's words while it was open, oldest first
    said_at: list = field(default_factory=list)     # the record each of them was said in
    changes: list = field(default_factory=list)     # (path, lines gone, lines come) of the small edits after it
    fix_said: list | None = None      # the words its fix may be announced in, when not all of `said`

    def why(self) -> str:
        """The agent's explanation of the cause or the way out, in its words (see reason())."""
        return reason(self.said)

    def change(self) -> str:
        """What the last small edits after it changed, in a few words: only when every line is a
        whole statement (a line cut from a larger expression, `messages =`, says nothing alone)."""
        gist = edit_gist(self.changes)
        lines = re.findall(r"`([^`]+)`", gist)
        return gist if lines and all(_whole(x) for x in lines) else ""

    def remedy(self) -> str:
        """The fix the agent announced while it was open, in its words (remedy())."""
        if self.fix_said is not None:
            return remedy(self.fix_said)
        # the way out announced after its last failure: an earlier announcement is a way that failed
        return remedy([t for t, k in zip(self.said, self.said_at) if k > self.index])


# a sentence that explains: a cause, a conflict, what a tool wants, the way chosen
CAUSE = re.compile(r"\b(?:because|caus(?:e|es|ed|ing)|known|conflict|the (?:issue|problem|reason|fix) is|due to|"
                   r"wants?|expects?|requires?|instead|workaround|levels? deep|\d+\s*>\s*(?:max\s*)?\d+)\b|—", re.I)
HEDGE = re.compile(r"\?|\b(?:might|may|maybe|perhaps|possibly|probably|likely|appears?|looks like|odd|confusing|wait|"
                   r"not sure|I think|try again|"
                   r"seems?|let me (?:check|look|see|re-?read|verify))\b", re.I)
DECIDE = re.compile(r"^(?:I'll|I will|So I'll|Instead,? I'll|The (?:simplest|fix|way)\b|Using\b|Use\b)", re.I)


def _sentences(text: str) -> list[str]:
    text = re.sub(r"```.*?```", " ", text or "", flags=re.S)
    text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(?:>|\d+[.)]\s|#|\|)", ln))
    return [x.strip() for x in re.split(r"(?<=[.!])\s+|\n+", text) if 12 <= len(x.strip()) <= 260]


def reason(said: list) -> str:
    """Of the agent's words while an error was open, the last sentence that explains it (a cause,
    a conflict, what the tool wants, no hedging), with the decision sentence that follows it."""
    for text in reversed(said):
        sents = _sentences(text)
        for k in range(len(sents) - 1, -1, -1):
            x = sents[k]
            if CAUSE.search(x) and not HEDGE.search(x) and not re.match(r"(?:Let me|Let's|Now|Good|Great|Perfect)\b", x):
                nxt = sents[k + 1] if k + 1 < len(sents) else ""
                if nxt and DECIDE.match(nxt) and not HEDGE.search(nxt):
                    x += " " + nxt
                return brief(x, 300)
    return ""


# the agent announcing what it changes to get past an error ("Let me fix the test helper to include UUIDs.")
FIX_INTENT = re.compile(r"^(?:(?:so|instead|now|ok|okay|actually|then)[,:]?\s+)?(?:let me|let's|I'll|I will|I need to|"
                        r"I should|we need to|we should)\s+(?:just\s+|instead\s+|simply\s+|\w+ly\s+)?([a-z][\w-]*)", re.I)
LOOK_VERBS = frozenset("""check look read re-read reread run rerun re-run verify see wait search investigate compile
recompile test retest confirm understand explore find grep examine inspect review view start continue close commit push
try retry know think be trace debug figure go get consider also double-check make keep proceed move ensure submit
resubmit issue redo reapply""".split())
ANAPHORIC = re.compile(r"\b(?:it|this|that|the same|them|these|those)\b\W*$|\bthe same\b", re.I)


def remedy(said: list) -> str:
    """Of the agent's words while an error was open, the last sentence announcing a change that
    gets past it ("Let me fix the test helper to include UUIDs.", "I'll use the full path and
    suppress the credo warning inline."), unhedged; a follow-up ("… too", "Also …") only when nothing
    else was announced. A sentence that only points back ("Let me extract it.") comes with the one
    before it."""
    found, extra = "", ""
    for text in reversed(said):
        sents = _sentences(text)
        for k in range(len(sents) - 1, -1, -1):
            x = sents[k]
            m = FIX_INTENT.match(x)
            if not m or m.group(1).lower() in LOOK_VERBS or HEDGE.search(x) or x.rstrip().endswith("?"):
                continue
            if re.search(r"\btoo\b|\balso\b|^also\b", x, re.I):
                extra = extra or x
                continue
            if ANAPHORIC.search(x):
                if k == 0:
                    continue  # "Let me extract it." with nothing before it says what
                x = sents[k - 1] + " " + x
            elif len(x.split()) < 6 and "`" not in x:
                continue  # "Let me fix the assertion.": the edit says as much
            found = x
            break
        if found:
            break
    return brief(found or extra, 240)


def _whole(line: str) -> bool:
    """A line that reads as a statement of its own: brackets balanced, not the start or the end of
    a longer expression (`messages =`, `|> Ash.Query.filter(…)`, `"uuid" => x,`)."""
    x = line.strip()
    if not x or re.search(r"(?:[=,(\[{]|->|\bdo|\|\|?|&&)$", x) or re.match(r"^(?:\|>|\.|[)\]}]|end\b|else\b)", x):
        return False
    return all(x.count(a) == x.count(b) for a, b in ("()", "[]", "{}"))


def edit_gist(changes: list) -> str:
    """`removed `a`; added `b``: the lines the last small edits took out and put in (at most two
    edits, short lines only)."""
    gone, came = [], []
    for _, g, c in changes[-2:]:  # netted: a line one edit added and the next removed is neither
        for x in g:
            came.remove(x) if x in came else gone.append(x)
        for x in c:
            gone.remove(x) if x in gone else came.append(x)
    gone, came = _uniq(gone)[:3], _uniq(came)[:3]
    return "; ".join(([f"removed {', '.join(f'`{x}`' for x in gone)}"] if gone else []) +
                     ([f"added {', '.join(f'`{x}`' for x in came)}"] if came else []))


def _small_edit(old: str, new: str):
    """(lines gone, lines come) of an edit that touched at most three lines each way, else None."""
    olds = [ln.strip() for ln in old.splitlines() if ln.strip()]
    news = [ln.strip() for ln in new.splitlines() if ln.strip()]
    gone = [ln for ln in olds if ln not in news]
    came = [ln for ln in news if ln not in olds]
    if not (gone or came) or len(gone) > 3 or len(came) > 3 or any(len(x) > 90 or "`" in x for x in gone + came):
        return None
    return gone, came


@dataclass
class Episode:
    index: int = 0
    start: int = 0
    end: int = 0
    requests: list = field(default_factory=list)
    item: str | None = None           # the work item claimed
    plan_step: str | None = None      # the TodoWrite / update_plan step in progress
    files: "OrderedDict[str, FileChange]" = field(default_factory=OrderedDict)
    commands: list = field(default_factory=list)
    checks: "OrderedDict[str, Check]" = field(default_factory=OrderedDict)
    errors: list = field(default_factory=list)
    commits: list = field(default_factory=list)   # (hash or "", message)
    closed: list = field(default_factory=list)
    last_edit: int = -1
    first_edit: int = -1
    plans: list = field(default_factory=list)     # plans the user approved (ExitPlanMode): their gist
    pushed: bool = False
    created: list = field(default_factory=list)   # work items created: (id, title)
    plan_parts: list = field(default_factory=list)  # the parts the approved plan names
    said_first: list = field(default_factory=list)  # the agent's words right before the step's first edit
    accounts: list = field(default_factory=list)    # (source, text): the agent's own account of the step
                                                    # (a close reason, a commit message's body)
    generated: dict = field(default_factory=dict)   # generator command -> the files it said it created
    talk: list = field(default_factory=list)        # (record index, text, thinking?, carried out?): the agent's words
                                                    # in the step; carried out: the same message's calls all succeeded

    def busy(self) -> bool:
        return bool(self.files or self.commits or self.closed or self.checks or self.commands or self.plans
                    or self.created)


@dataclass
class Story:
    episodes: list = field(default_factory=list)
    titles: dict = field(default_factory=dict)         # work item id -> title
    item_status: dict = field(default_factory=dict)    # id -> in_progress | closed (as the span left it)
    listed: list = field(default_factory=list)         # (id, done?) from the last listing that showed children
    plan: list = field(default_factory=list)           # (step, status) of the latest TodoWrite / update_plan
    cwd: str | None = None
    last_text: str = ""                                # the agent's last words
    last_text_index: int = -1                          # the record they were said in
    last_commit_index: int = -1
    rejected: list = field(default_factory=list)       # (index, the user's words given with a rejection)
    descriptions: dict = field(default_factory=dict)   # item id -> (description's opening, output files, done-when list)
    whys: dict = field(default_factory=dict)           # item id -> its description's "why" section, when it has one
    specs: dict = field(default_factory=dict)          # item id -> the lines of its spec (spec_lines())
    parent: str | None = None                          # the item whose children were listed (an epic)
    step_of: dict = field(default_factory=dict)        # record id -> the episode it belongs to
    texts: dict = field(default_factory=dict)          # path -> the new texts the span's edits wrote into it
    answers: list = field(default_factory=list)        # (question, answer) the user gave to the agent's questions
    paths_seen: list = field(default_factory=list)     # every file the span read or wrote, in first-seen order
    installs: bool = False                             # an install command ran (it changes the manifests)
    memo: dict = field(default_factory=dict)           # answers computed once per story (writeup's name index)


def _name(call: dict) -> str:
    return ((call.get("function") or {}).get("name") or "").strip()


def command_of(call: dict) -> str:
    args = _args(call)
    if isinstance(args, dict):
        v = args.get("command") or args.get("cmd")
        if isinstance(v, list):
            v = v[-1] if v and v[0] in ("bash", "sh", "zsh") else " ".join(map(str, v))
        if isinstance(v, str):
            return v.strip()
    return ""


def norm_command(cmd: str) -> str:
    """A command as a person would name it: no `cd X &&`, no `2>&1`, no `| tail -5`."""
    c = re.sub(r"^\s*cd\s+\S+\s*&&\s*", "", cmd.strip())
    c = re.sub(r"\s*2>&1", "", c)
    c = re.sub(r"\s*\|\s*(?:tail|head|grep|cat|tee|less)\b.*$", "", c, flags=re.S)
    c = re.sub(r"\s+", " ", c).strip()
    return c[:160]


def short_path(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def result_text(res: dict | None) -> str:
    return ((res or {}).get("content") or "").replace("\\n", "\n")


def test_counts(out: str) -> str:
    """The summary counts of a test run's output ("49 tests, 0 failures", "3 failed, 12 passed")."""
    tail = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(out.splitlines()[-40:]))
    m = None
    for m in re.finditer(r"(?m)^\s*(?:\d+ (?:doctests?|properties), )*(\d+) tests?, (\d+) failures?(?:.*)$", tail):
        pass
    if m:
        return re.sub(r"\s*\(.*$", "", m.group(0).strip())
    for m in re.finditer(r"(?m)^=+ (.*?\b(?:passed|failed|error)\b.*?) in [\d.]+s", tail):
        pass
    if m:
        return m.group(1)
    m = re.search(r"test result: (\w+)\. (\d+) passed; (\d+) failed", tail)
    if m:
        return f"{m.group(2)} passed, {m.group(3)} failed"
    m = re.search(r"Tests?:\s+(.*?\d+ total)", tail)
    if m:
        return m.group(1)
    found = []
    for m in re.finditer(r"(?<![\w:.\-/])(\d+) (passed|failed|errors?|failures?|skipped)\b", tail):
        s = f"{m.group(1)} {m.group(2)}"
        if s not in found:
            found.append(s)
    return ", ".join(found[:3])


def check_failed(out: str, flagged: bool, counts: str) -> bool:
    if re.search(r"\b[1-9]\d* (failed|failures?|errors?)\b", counts):
        return True
    if counts:
        return False
    if flagged:
        return True
    return bool(re.search(r"(?m)^\s*(?:\*\* \(\w+Error\)|error(?:\[\w+\])?:|Error:|FAILED|.*\bfound [1-9]\d* "
                          r"(?:issues?|warnings?|errors?))", out)) and not re.search(r"found no issues", out)


@_by_content
def definitions(text: str, path: str) -> list[str]:
    """The names a piece of code defines, in order (functions, modules, classes, hooks, CSS rules,
    config keys, attributes, routes, test names)."""
    out: list[str] = []
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if ext in ("css", "scss", "less"):
        for m in CSS_RULE.finditer(text):
            sel = m.group(1).strip()
            if not sel.startswith(("from", "to")) and not re.match(r"^\d", sel):
                out.append(sel.split(",")[0].strip())
        return _uniq(out)
    if ext in ("json", "yaml", "yml", "toml", "ini", "cfg"):
        # the entries, not every key: a key that opens an object, a list or a table (`"Stop": [`, `[tool.x]`)
        return _uniq(m.group(1) or m.group(2) for m in CONFIG_ENTRY.finditer(text))[:20]
    for m in ELIXIR_HANDLER.finditer(text):
        arg = m.group(2)
        out.append(f"{m.group(1)}({arg}, …}})" if arg.startswith("{") else f"{m.group(1)}({arg})")
    elixir = ext in ("ex", "exs")
    if elixir:  # functions with their arity: `render/2`
        handlers = bool(out)
        out += [n for n, _, _ in elixir_functions(text)
                if not (handlers and n.split("/")[0] in ("handle_event", "handle_info", "handle_call", "handle_cast"))]
    for rx in DEFS[1:2] if elixir else DEFS:
        for m in rx.finditer(text):
            n = m.group(1)
            if n in ("handle_event", "handle_info", "handle_call", "handle_cast") and out:
                continue
            out.append(n)
    if ext in ("js", "mjs", "cjs", "ts", "tsx", "jsx", "py"):
        out += [f"import {m.group(1) or m.group(2)}" for m in IMPORT.finditer(text) if m.group(1) or m.group(2)]
    out += [f"attribute :{m.group(1)}" for m in ATTRIBUTE.finditer(text)]
    out += [f"route {m.group(1)}" for m in ROUTE.finditer(text)]
    if ext in ("heex", "html", "eex", "vue", "svelte", "jsx", "tsx", "ex"):
        out += [f'{m.group(1)}="{m.group(2)}"' for m in HTML_ATTR.finditer(text)
                if m.group(1) in ("phx-hook", "phx-update") or m.group(1).startswith("data-")]
        out += [f"{m.group(1)}={{…}}" for m in DYN_ATTR.finditer(text)]
        out += [f"<{t}>" for t in _uniq(TAG.findall(text)) if t in ("pre", "code", "table", "form", "button", "th",
                                                                    "select", "textarea", "dialog", "details")]
    return _uniq(out)


def _def_key(name: str) -> str:
    """What a definition's header line contains: `handle_info(:tick` for `handle_info(:tick)`,
    the bare name for a plain function."""
    name = re.sub(r"/\d+$", "", name)
    if "(" in name and not name.endswith("()"):
        head = name.split("…", 1)[0].rstrip(" ,)")
        if re.match(r"^[\w.!?]+\([:{\"']", head):
            return head
    return re.sub(r"\(.*$", "", name)


DEF_PREFIX = re.compile(r"^\s*(?:(?:export|default|async|pub(?:\([\w:]+\))?|static|public|private|protected|final|def|defp|"
                        r"defmacrop?|defguardp?|defdelegate|defmodule|defprotocol|defimpl|function\*?|class|fn|func|"
                        r"const|let|var|struct|enum|trait|interface|type|module)\s+)+$")


def _body(text: str, name: str, names: list) -> str:
    """The text from the line that defines `name` to the next definition (whitespace folded);
    a CSS rule to its closing brace."""
    lines = text.splitlines()
    key = _def_key(name)
    named = re.compile(rf"(?<![\w.]){re.escape(key)}(?![\w])")
    starts = [(k, m.start()) for k, ln in enumerate(lines) if (m := named.search(ln))]
    if not starts:
        return ""
    # the line that defines it (`defp load_transcript(id) do`), not a line that calls it: an edit that
    # inserts a caller above a definition's head leaves the definition as it was
    k = next((k for k, at in starts if DEF_PREFIX.match(lines[k][:at])), None)
    if k is None:
        k = next((k for k, at in starts if not lines[k][:at].strip()), starts[0][0])
    if name.startswith((".", "#", ":", "@")) or re.match(r"^[a-z][\w-]*(?:\s|$)", name) and "{" in lines[k]:
        end = next((j + 1 for j in range(k, len(lines)) if "}" in lines[j]), len(lines))
        return " ".join(" ".join(lines[k:end]).split())
    others = [re.compile(rf"\s*(?:\S+\s+)?{re.escape(_def_key(n))}(?![\w])") for n in names if n != name]
    end = next((j for j in range(k + 1, len(lines)) if any(o.match(lines[j]) for o in others)), len(lines))
    return " ".join(" ".join(lines[k:end]).split())


def _outermost(text: str, path: str, names: list) -> list:
    """Of the config entries an edit added, the outermost ones (a new `Stop` entry, not the
    `hooks` list nested in it); other files' names as they are."""
    if not re.search(r"\.(?:json|ya?ml|toml)$", path) or len(names) < 2:
        return names
    depth = {}
    for n in names:
        m = re.search(rf"(?m)^([ \t]*)\"?{re.escape(n)}\"?\s*[:=]", text)
        depth[n] = len(m.group(1).expandtabs(4)) if m else 0
    top = min(depth.values())
    return [n for n in names if depth[n] == top]


def _drop_plan_files(story: Story, recs: Sequence[dict], known: dict) -> None:
    """The agent's plan file is not project work (never uncommitted, never to test or commit): a
    file whose text is the plan ExitPlanMode presented, or the markdown file written last before
    an ExitPlanMode that carried no plan of its own (the plan-mode file)."""
    plans, marked, last_md = [], set(), None
    for r in recs:
        for call in r.get("tool_calls") or ():
            if _name(call) == "ExitPlanMode":
                args = _args(call)
                plan = " ".join(str((args if isinstance(args, dict) else {}).get("plan") or "").split())
                if len(plan) >= 80:
                    plans.append(plan)
                elif last_md:
                    marked.add(last_md)
                continue
            for path, *_ in file_edits(call):
                last_md = path if path.lower().endswith(".md") else None
    plan_file: dict = {}  # path -> is it the plan's (decided once a path, not once a step)
    for ep in story.episodes:
        for path in list(ep.files):
            if path not in plan_file:
                text = " ".join((known.get(path) or "").split())
                plan_file[path] = path in marked or (len(text) >= 80 and any(text[:200] in p or p[:200] in text
                                                                             for p in plans))
            if plan_file[path]:
                del ep.files[path]


def _uniq(items) -> list:
    seen, out = set(), []
    for x in items:
        if x and x not in seen:
            seen.add(x)
            out.append(x)
    return out


def _tests_in(text: str) -> int:
    return len(TEST_DEF.findall(text)) + len(PY_TEST_DEF.findall(text))


def file_edits(call: dict) -> list[tuple[str, str, str, str]]:
    """(path, action, old text, new text) for each file an edit/write call changed."""
    name = _name(call).lower()
    args = _args(call)
    if name == "apply_patch" or (isinstance(args, str) and "*** Begin Patch" in args) or \
            (isinstance(args, dict) and "*** Begin Patch" in str(args.get("input") or args.get("patch") or "")):
        body = args if isinstance(args, str) else str(args.get("input") or args.get("patch") or "")
        out = []
        parts = re.split(r"(?m)^(?=\*\*\* (?:Add|Update|Delete) File: )", body)
        for p in parts:
            m = PATCH_FILE.match(p)
            if not m:
                continue
            old = "\n".join(ln[1:] for ln in p.splitlines() if ln.startswith("-"))
            new = "\n".join(ln[1:] for ln in p.splitlines() if ln.startswith("+"))
            act = {"Add": "created", "Update": "modified", "Delete": "deleted"}[m.group(1)]
            out.append((m.group(2).strip(), act, old, new))
        return out
    if not isinstance(args, dict):
        return []
    path = args.get("file_path") or args.get("path") or args.get("notebook_path") or args.get("filename")
    if not isinstance(path, str) or not path:
        return []
    if name in ("write", "create_file", "write_file") or (name == "str_replace_based_edit_tool" and args.get("command") == "create"):
        return [(path, "created", "", str(args.get("content") or args.get("file_text") or ""))]
    if name == "multiedit" and isinstance(args.get("edits"), list):
        olds = "\n".join(str(e.get("old_string") or "") for e in args["edits"] if isinstance(e, dict))
        news = "\n".join(str(e.get("new_string") or "") for e in args["edits"] if isinstance(e, dict))
        return [(path, "modified", olds, news)]
    if name in EDIT_TOOLS or "old_string" in args or "new_string" in args or "old_str" in args:
        old = str(args.get("old_string") or args.get("old_str") or "")
        new = str(args.get("new_string") or args.get("new_str") or args.get("new_source") or "")
        if name == "str_replace_based_edit_tool" and args.get("command") not in ("str_replace", "insert", None):
            return []
        return [(path, "modified", old, new)]
    return []


def _claims(cmd: str) -> list[str]:
    out = []
    for part in re.split(r"&&|;|\n", cmd):
        m = CLAIM.search(part)
        if m and re.search(r"in[_-]progress", part):
            out.append(m.group(1))
    return out


CLOSE_REASON = re.compile(r"""(?:--reason|-r)[= ]\s*(?:"((?:[^"\\]|\\.){8,600})"|'([^']{8,600})')""")


def commit_body(msg: str) -> str:
    """A commit message's first paragraph after its subject line (no trailers), folded to one line."""
    msg = msg.replace("\\n", "\n")
    m = re.match(r"\s*\$\(cat\s*<<-?\s*'?(\w+)'?\s*\n(.*?)\n\s*\1", msg, re.S)
    lines = (m.group(2) if m else msg).strip().splitlines()[1:]
    para: list = []
    for ln in lines:
        t = ln.strip()
        if re.match(r"^(?:Co-Authored-By|Signed-off-by|Generated with|🤖)", t, re.I):
            break
        if not t:
            if para:
                break
            continue
        para.append(t)
    return " ".join(para)


def _closes(cmd: str) -> list[str]:
    out = []
    for part in re.split(r"&&|;|\n", cmd):
        m = CLOSE.search(part)
        if m:
            out += re.findall(ITEM_ID, m.group(1))
        m = STATUS_DONE.search(part)
        if m:
            out.append(m.group(1))
    return out


PLAN_CALLS = frozenset({"todowrite", "todo_write", "update_plan"})


def plan_steps(name: str, args) -> list[tuple[str, str]] | None:
    """The steps of a TodoWrite / update_plan call as (step, status), as episodes.build keeps the
    plan; None for any other call (or arguments of another shape)."""
    if name.lower() not in PLAN_CALLS:
        return None
    steps = (args.get("todos") or args.get("plan")) if isinstance(args, dict) else None
    if not isinstance(steps, list):
        return None
    return [(" ".join(str(s.get("content") or s.get("step") or "").split()), str(s.get("status") or "pending"))
            for s in steps if isinstance(s, dict)]


@_by_content
def _item_titles(head: str, path: str = "") -> list:
    """(item id, title) of each line of a tool output's head that lists work items."""
    return [(m.group(1), m.group(2).strip().rstrip("·").strip()) for m in ITEM_TITLE.finditer(head)]


# the sections of a work item's description that say what the code must do
SPEC_HEAD = re.compile(r"^\s*(?:#+\s*)?(technical specs?|specs?|requirements|acceptance criteria|acceptance tests|edge cases|"
                       r"architecture constraints|constraints|code structure)\s*:?\s*$", re.I)
OTHER_HEAD = re.compile(r"^\s*(?:#+\s*\S.*|[A-Z][\w /&()-]{2,60}:)\s*$")


def spec_lines(body: str) -> list[tuple[str, str]]:
    """The lines of a work item's spec, in order, as (the line with its parent's words, its own
    words): each bullet under a spec heading (Technical specs, Requirements, Acceptance criteria,
    Edge cases, …), a nested one said with its parent ("`SessionLive`: Subscribe to …"); a parent
    that only introduces its children is not a line."""
    out, on, stack = [], False, []  # stack: (indent, text) of the open parent bullets
    for ln in body.splitlines():
        if SPEC_HEAD.match(ln):
            on, stack = True, []
            continue
        if OTHER_HEAD.match(ln) and not re.match(r"^\s*[-*]\s", ln):
            on = False
            continue
        m = re.match(r"^(\s*)[-*]\s+(.+?)\s*$", ln)
        if not on or not m:
            continue
        indent, text = len(m.group(1).expandtabs(4)), m.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if text.endswith(":"):
            stack.append((indent, text.rstrip(":")))
            continue
        head = stack[-1][1] + ": " if stack else ""
        out.append((head + text, text))
    return out[:40]


# a work item's section that says why it exists ("## Why This Task Is Necessary", "## Problem", "## Motivation")
WHY_HEAD = re.compile(r"^(?:why\b|problem\b|motivation\b|rationale\b|background\b|context\b)", re.I)


def _titles(story: Story, out: str) -> None:
    for item, t in _item_titles(out[:20000]):
        if 8 <= len(t) <= 200 and item not in story.titles and not t.startswith(("[", "--")):
            story.titles[item] = t
    m = re.match(rf"^\W{{0,3}}({ITEM_ID})(?:\s+\[[A-Z]+\])? · ", out)
    if m and "\nDESCRIPTION\n" in out and m.group(1) not in story.descriptions:
        body = out.split("\nDESCRIPTION\n", 1)[1]
        para, heads = "", []
        for chunk in body.strip().split("\n\n"):
            heads += [ln.strip("# ").strip() for ln in chunk.splitlines() if ln.lstrip().startswith("#")]
            text = "\n".join(ln for ln in chunk.splitlines() if not ln.lstrip().startswith("#")).strip()
            if text:
                para = text
                break
        specs = spec_lines(body)
        if specs:
            story.specs[m.group(1)] = specs
        if para and heads and WHY_HEAD.match(heads[-1]):  # the item's own reason for being, its first sentence
            story.whys[m.group(1)] = brief(re.split(r"(?<=[.!?])\s+", " ".join(para.split()))[0], 200)
        files = []
        fm = re.search(r"(?mi)^(?:#+\s*)?Output files:?\s*\n((?:\s*-\s+.*\n?)+)", body)
        if fm:
            files = [f for f in re.findall(r"`([^`]+)`", fm.group(1)) if "/" in f or "." in f]
        dm = re.search(r"(?mi)^(?:#+\s*)?Definition of Done:?\s*\n((?:\s*-\s+.*\n?)+)", body)
        dod = [brief(re.sub(r"^\s*-\s+(?:\[[ xX]\]\s+)?", "", ln), 160) for ln in dm.group(1).splitlines()
               if ln.strip().startswith("-")] if dm else []
        story.descriptions[m.group(1)] = (brief(para, 300), files[:20], dod[:8])
    if "CHILDREN" in out or ("↳" in out and re.search(r"(?m)^\s*↳", out)):
        listed = re.findall(rf"(?m)^\s*↳\s*([○●✓◐])\s*({ITEM_ID}):", out)
        if listed:
            story.listed = [(i, mark == "✓") for mark, i in listed]
            head = re.match(rf"^\W{{0,3}}({ITEM_ID})", out)
            if head:
                story.parent = head.group(1)


def key_error(out: str) -> str | None:
    from .distill import key_error_line

    line = key_error_line(out, True)
    return brief(line, 200) if line else None


def build(span: Sequence[dict]) -> Story:
    """The span's episodes, oldest first."""
    from .distill import result_failed

    story = Story()
    recs = [r for r in span if isinstance(r, dict)]
    results = {r["tool_call_id"]: r for r in recs if r.get("role") == "tool" and r.get("tool_call_id")}
    cur = Episode(index=1, start=0)
    story.episodes.append(cur)
    known: dict[str, str] = {}   # path -> the text seen of it (Read results, writes): what a rewrite replaced
    numbered: dict[str, dict] = {}  # path -> {line number: text} from its latest Read results
    swe_file = None              # SWE-agent's open file
    pending_report = None        # a check failure the agent reported in its own words, not yet acted on
    pending_said: list = []      # the agent's words since it reported it
    background: dict = {}        # id or output path of a check run in the background -> its command
    recent_said: list = []       # the agent's last two messages
    recent_at: list = []         # the records they were said in

    def new_episode(i: int) -> Episode:
        nonlocal cur
        cur.end = i - 1
        prev = cur
        cur = Episode(index=len(story.episodes) + 1, start=i)
        story.episodes.append(cur)
        if prev.commits and story.last_commit_index >= prev.start:  # said after the commit: the next step's
            cur.talk = [t for t in prev.talk if t[0] > story.last_commit_index]
            prev.talk = [t for t in prev.talk if t[0] <= story.last_commit_index]
        return cur

    for i, r in enumerate(recs):
        if r.get("id"):
            story.step_of[r["id"]] = cur
        if story.cwd is None and isinstance(r.get("meta"), dict) and r["meta"].get("cwd"):
            story.cwd = r["meta"]["cwd"]
        t = request_text(r)
        if t:
            if cur.busy():
                new_episode(i)
            cur.requests.append(t)
            continue
        if r.get("role") in ("tool", "user") and "Commit " in (r.get("content") or ""):
            for m in AIDER_COMMIT.finditer(r.get("content") or ""):  # aider commits as it edits
                cur.commits.append((m.group(1)[:7], brief(m.group(2), 140)))
                story.last_commit_index = i
        if r.get("role") == "assistant" and r.get("kind") == "message" and (r.get("content") or "").strip():
            live = [e for e in cur.errors if not e.resolved and e.kind in ("check", "git")]
            if live:  # what the agent says while an error is open: its reading of the latest one
                e = max(live, key=lambda e: e.index)
                e.said.append(r["content"])
                e.said_at.append(i)
            if pending_report:
                pending_said.append(r["content"])
            recent_said = (recent_said + [r["content"]])[-2:]
            recent_at = (recent_at + [i])[-2:]
            calls = r.get("tool_calls") or ()
            acted = bool(calls) and not any(results.get(c.get("id")) is None or result_failed(results[c.get("id")])
                                            for c in calls)
            cur.talk.append((i, r["content"], "thinking" in (r.get("flags") or ()), acted))
        if r.get("role") == "assistant" and r.get("kind") == "message" and "thinking" not in (r.get("flags") or ()):
            said = _reported_failure(r.get("content") or "")
            if said:
                if not pending_report:  # its words just before (often its thinking about the complaint) count
                    pending_said = list(recent_said)
                pending_report = said   # the agent read a check's complaint (a hook, a linter) and acts on it
        if r.get("role") == "assistant" and r.get("kind") == "message" and (r.get("content") or "").strip() \
                and "thinking" not in (r.get("flags") or ()):
            story.last_text = r["content"]
            story.last_text_index = i
        for call in r.get("tool_calls") or ():
            name = _name(call)
            res = results.get(call.get("id"))
            out = result_text(res)
            cmd = command_of(call)
            flagged = res is not None and result_failed(res)
            if flagged and CANCELLED.search(out):
                continue  # cancelled because a sibling call failed: it never ran
            # a check run in the background: its result is what a later read of its output shows
            bg = BACKGROUND.search(out) if cmd and is_check(cmd) else None
            if bg:
                background[bg.group(1)] = background[bg.group(2)] = cmd
                continue
            if background:
                args = _args(call)
                key = (args.get("bash_id") or args.get("shell_id") or args.get("task_id") or "") \
                    if isinstance(args, dict) and name.lower() in ("bashoutput", "taskoutput") else \
                    next((p for p in background if "/" in p and p in (cmd or "")), "")
                ran = background.get(key)
                done = bool(test_counts(out)) or bool(re.search(r"<status>(?:completed|failed)</status>|exit.code", out, re.I))
                if ran and out.strip() and (done or not TEST_CMD.search(ran)):
                    for k in [k for k, v in background.items() if v == ran]:
                        del background[k]
                    cmd, name = ran, "Bash"   # the run's own output: count it as that run
                elif ran:
                    continue  # still running: a partial output says nothing yet
            if flagged and REJECTED.search(out):
                m = REJECT_REASON.search(out)
                if m and m.group(1).strip():
                    story.rejected.append((i, brief(m.group(1).strip(), 300)))
                continue  # a rejected tool use is not an error
            if name.lower() in PLAN_CALLS:
                steps = plan_steps(name, _args(call))
                if steps is not None:
                    story.plan = steps
                    active = next((s for s, st in story.plan if st == "in_progress"), None)
                    if active and active != cur.plan_step:
                        if cur.busy() and cur.plan_step:
                            new_episode(i)
                        cur.plan_step = active
                continue
            if out:
                _titles(story, out)
            if name == "AskUserQuestion" and out.startswith("User has answered"):
                story.answers += [(brief(q, 160), brief(a, 200)) for q, a in ANSWER.findall(out)]
            if name == "ExitPlanMode" and not flagged and re.search(r"\bapproved\b", out, re.I):
                text = str((_args(call) or {}).get("plan") or "") if isinstance(_args(call), dict) else ""
                gist = plan_gist(text)
                if gist:
                    cur.plans.append(gist)
                    parts = plan_parts(text)
                    if len(parts) >= 2:
                        cur.plan_parts = parts
            if name == "ExitPlanMode":
                continue
            claims = _claims(cmd) if cmd else []
            for item in claims:
                if cur.busy() and cur.item != item:
                    new_episode(i)
                cur.item = item
                story.item_status[item] = "in_progress"
            if claims:
                continue
            if name.lower() in ("read", "view", "read_file") and out and not flagged:
                target = _target(call)
                if target:
                    known[target] = known.get(target, "") + "\n" + READ_LINE.sub("", out)
                    shown = {int(m.group(1)): m.group(2).strip() for m in NUMBERED_LINE.finditer(out)}
                    if 1 in shown:  # a read from the top is the file as it is now; a part read adds to it
                        numbered[target] = shown
                    else:
                        numbered.setdefault(target, {}).update(shown)
            swe = _swe_edit(name, cmd, swe_file) if cmd else None
            if swe is not None:  # SWE-agent's editor: open/create set the file, edit changes lines of it
                swe_file, edits = swe
                if flagged and edits:
                    line = key_error(out)
                    _add_error(cur, line or "the edit was not applied", "edit", i, f"edit {swe_file}", "tool")
                    continue
                if not edits:
                    continue
            else:
                # an edit with no recorded result never showed it applied (aider proposed it, the run stopped)
                unapplied = res is None or "missing_result" in (res.get("flags") or ())
                edits = file_edits(call) if not flagged and not unapplied else []
            if edits and cur.commits:
                new_episode(i)
            if edits and cur.first_edit < 0:
                cur.first_edit = i
            if edits and not cur.files and not cur.said_first:  # said in this step, not an earlier one
                cur.said_first = [t for t, k in zip(recent_said, recent_at) if k >= cur.start]
            for path, action, old, new in edits:
                fc = cur.files.get(path)
                if action == "created" and path in known:
                    action, old = "rewritten", known[path]
                if fc is None:
                    fc = cur.files[path] = FileChange(path, action)
                elif action == "created" and fc.action != "created":
                    fc.action = "modified"  # rewritten whole
                fc.edits += 1
                if old is None:  # lines replaced in a file whose old text is not known: what they define changed
                    fc.changed += [d for d in definitions(new, path) if d not in fc.changed]
                    m = re.match(r"\s*edit\s+(\d+:\d+)", cmd or "")
                    if m and m.group(1) not in fc.ranges:
                        fc.ranges.append(m.group(1))
                    cur.last_edit = i
                    continue
                before, after = definitions(old, path), definitions(new, path)
                story.texts.setdefault(path, []).append(new)
                fc.texts.append(new)
                if path.endswith((".ex", ".exs")):
                    for n, private, dflt in elixir_functions(new):
                        if private:
                            fc.private.add(n)
                        if dflt:
                            fc.defaults[n] = dflt
                fc.shapes += [x for x in shapes(new, old, path) if x not in fc.shapes]
                was = set(key_values(old, path))
                fc.values += [v for v in key_values(new, path) if v not in was and v not in fc.values]
                if action == "modified":
                    _twins(fc, old, new, numbered.get(path))
                    old_lines, new_lines = set(old.splitlines()), set(new.splitlines())
                    gone = [ln.strip() for ln in old.splitlines() if ln.strip() and ln not in new_lines]
                    came = [ln.strip() for ln in new.splitlines() if ln.strip() and ln not in old_lines]
                    if len(gone) == 1 and len(came) == 1 and max(len(gone[0]), len(came[0])) <= 70 and \
                            "`" not in gone[0] + came[0] and (gone[0], came[0]) not in fc.swaps:
                        fc.swaps.append((gone[0], came[0]))
                known[path] = new if action in ("created", "rewritten") else known.get(path, "") + "\n" + new
                if action == "created" and not fc.purpose:
                    fc.purpose = header_doc(new, path)
                if action == "created":
                    fc.added += [d for d in after if d not in fc.added]
                else:
                    fc.added += [d for d in _outermost(new, path, [d for d in after if d not in before])
                                 if d not in fc.added]
                    fc.removed += [d for d in before if d not in after and d not in fc.removed
                                   and not _arity_covers(d, after, new)
                                   and not any(a.startswith(d + "(") or d.startswith(a + "(") for a in after)]
                    if action != "rewritten":  # a rewrite keeps names; which of them changed is not known
                        fc.changed += [d for d in after if d in before and d not in fc.changed and not d.startswith("<")
                                       and _body(old, d, before + after) != _body(new, d, before + after)]
                if pending_report:
                    gained = [d for d in after if d not in before]
                    how = f"fixed by editing `{path.rsplit('/', 1)[-1]}`" + (
                        f" (added {', '.join(f'`{g}`' for g in gained[:4])})" if gained else "")
                    m = REPORTED.search(pending_report)
                    err = Error(pending_report, f"{m.group(1)} (as the agent reported it)" if m else
                                "a check (as the agent reported it)", i, "reported", fix=how, resolved=True, kind="check")
                    err.said = [re.sub(re.escape(pending_report), "", t) for t in pending_said]
                    # its fix is announced with the report or after it, not in the words before it
                    err.fix_said = err.said[next((k for k, t in enumerate(pending_said) if pending_report in t), 0):]
                    cur.errors.append(err)
                    pending_report, pending_said = None, []
                fc.tests_added += max(0, _tests_in(new) - _tests_in(old))
                if action in ("created", "rewritten"):
                    fc.tests_total = _tests_in(new)
                olds = {ln.strip() for ln in old.splitlines() if ln.strip()}
                news = {ln.strip() for ln in new.splitlines() if ln.strip()}
                fc.plus += len(news - olds)
                fc.minus += len(olds - news)
                added = [ln for ln in news - olds]
                fc.sample = added[0] if len(added) == 1 and len(added[0]) <= 100 and "`" not in added[0] else ""
                nl = [ln.strip() for ln in new.splitlines()]
                at = nl.index(fc.sample) if fc.sample in nl else 0
                fc.anchor = nl[at - 1] if at > 0 and len(nl[at - 1]) <= 90 and "`" not in nl[at - 1] else ""
                fc.samples += [x for x in sorted(added, key=new.find) if len(x) <= 90 and "`" not in x]
                cur.last_edit = i
            if edits:
                _resolve_edit_errors(cur, edits, i)
                continue
            if not cmd:
                if flagged and not tooling_failure(name, out):
                    line = key_error(out)
                    if line:
                        _add_error(cur, line, name, i, f"{name} {_target(call)}", "tool")
                else:
                    _resolve_key(cur, f"{name} {_target(call)}", i, f"a later {name} of it succeeded")
                continue
            ncmd = norm_command(cmd)
            for item in _closes(cmd):
                if not flagged:
                    cur.closed.append(item)
                    story.item_status[item] = "closed"
                    m = CLOSE_REASON.search(cmd)
                    if m and (m.group(1) or m.group(2) or "").strip():
                        cur.accounts.append((f"closing `{item}`", " ".join((m.group(1) or m.group(2)).split())))
            if COMMIT_MSG.search(cmd) or re.search(r"\bgit\s+commit\b", cmd):
                if not flagged:
                    m = COMMIT_OUT.search(out)
                    mm = COMMIT_MSG.search(cmd)
                    msg = (mm.group(1) or mm.group(2) or mm.group(4) or "").strip().splitlines()[0] if mm else ""
                    amended = re.search(r"--amend\b", cmd) and _last_commit(story)
                    if m and amended:  # the amended commit is gone: one commit, the new hash
                        ep_c, k = amended
                        ep_c.commits[k] = (m.group(2)[:7], brief(m.group(3), 140) + f" (amended {ep_c.commits[k][0]})")
                        story.last_commit_index = i
                        for e in cur.errors:  # a forced add then an amend: the ignored file is in the commit
                            if not e.resolved and IGNORED.search(e.text) and FORCED.search(cmd):
                                e.resolved, e.fix = True, f"`{brief(ncmd, 90)}` put it into the commit"
                    elif m:
                        cur.commits.append((m.group(2)[:7], brief(m.group(3), 140)))
                        story.last_commit_index = i
                    if mm and not amended:
                        body = commit_body(mm.group(1) or mm.group(2) or mm.group(4) or "")
                        if body:
                            cur.accounts.append(("in the commit message", body))
                    elif msg and "nothing to commit" not in out:
                        cur.commits.append(("", brief(msg, 140)))
                        story.last_commit_index = i
                    for k in ("git commit", "git add"):
                        _resolve_key(cur, k, i, f"`{brief(ncmd, 90)}` then succeeded")
                else:
                    line = key_error(out)
                    if line:
                        _add_error(cur, line, f"`{brief(ncmd, 60)}`", i, "git commit", "git")
                continue
            if is_check(cmd):
                for e in cur.errors:  # edits after this run belong to what this run shows
                    if not e.resolved and e.fix_files:
                        e.frozen = True
                counts = test_counts(out) if TEST_CMD.search(cmd) else ""
                failed = check_failed(out, flagged, counts)
                chk = cur.checks.get(ncmd)
                if chk is None:
                    chk = cur.checks[ncmd] = Check(ncmd)
                chk.runs.append((not failed, counts))
                chk.at.append(i)
                chk.last_index = i
                if failed:
                    line = key_error(out) or (f"{counts}" if counts else None)
                    if line:
                        _add_error(cur, line, f"`{brief(ncmd, 70)}`", i, _family(ncmd), "check", ncmd)
                else:
                    for fam in _families(ncmd):
                        _resolve_key(cur, fam, i, f"`{brief(ncmd, 70)}` then passed", exact=False, ran=ncmd)
                    for e in cur.errors:  # e.g. `mix format` run before the commit a hook refused
                        if not e.resolved and e.kind == "git" and ncmd not in e.fix_cmds:
                            e.fix_cmds.append(ncmd)
                continue
            if re.match(r"\s*(?:bd|br|beads)\s+create\b", cmd) and not flagged:
                made = re.search(rf"Created issue:?\s*({ITEM_ID})", out)
                title = re.search(r"--title[= ](?:\"([^\"]+)\"|'([^']+)')", cmd)
                if made:
                    t = (title.group(1) or title.group(2)) if title else story.titles.get(made.group(1), "")
                    if t:
                        story.titles.setdefault(made.group(1), t)
                    cur.created.append((made.group(1), brief(t, 80)))
                    continue
            m = INSTALL_CMD.search(cmd)
            if m and not flagged:
                cur.commands.append(brief(norm_command(cmd[m.start():]), 100))
                continue
            m = GENERATE_CMD.search(cmd)
            made = _uniq(short_path(p, story.cwd) for p in GENERATED.findall(out))[:4] if m and not flagged else []
            if made:  # a generator that wrote files: they are the step's work too
                c = brief(norm_command(cmd[m.start():]), 100)
                cur.commands.append(c)
                cur.generated[c] = made
                continue
            if not flagged:
                _fates(story, cmd)
            key = " ".join(ncmd.split()[:2])
            if key == "git push" and not flagged:
                cur.pushed = True
            if flagged:
                line = key_error(out)
                if line:
                    _add_error(cur, line, f"`{brief(ncmd, 70)}`", i, key, "git" if key.startswith("git ") else "command")
            else:
                _resolve_key(cur, key, i, f"`{brief(ncmd, 70)}` then succeeded")
    cur.end = len(recs) - 1
    story.paths_seen = list(known)
    story.installs = any(e.commands and any(INSTALL_CMD.search(c) for c in e.commands) for e in story.episodes)
    _drop_plan_files(story, recs, known)
    story.episodes = [e for e in story.episodes if e.busy() or e.requests or e.item]
    for n, e in enumerate(story.episodes, 1):
        e.index = n
    return story


def plan_gist(plan: str) -> str:
    """A plan's title and its first approach line (the decision that shaped the work)."""
    title = next((ln.lstrip("# ").strip() for ln in plan.splitlines() if ln.startswith("# ")), "")
    title = re.sub(r"^Plan:\s*", "", title)  # the plan "Plan: X" is the plan "X"
    first, why = "", ""
    lines = plan.splitlines()
    for k, ln in enumerate(lines):
        if re.match(r"^#{2,3}\s+(?:Strategy|Approach|Design|Solution)", ln, re.I):
            rest = lines[k + 1:]
            for j, nxt in enumerate(rest):
                t = nxt.strip()
                if t.startswith("#"):
                    if re.match(r"^#{3}\s", t):
                        first = t.lstrip("# ").strip() + ": "
                    continue
                if t:
                    t = unemphasize(t.lstrip("-* "))
                    first += re.split(r"(?<=[.!?])\s+", t)[0].rstrip(":")
                    # the strategy's own reason or trade-off, said in a plain sentence of its section
                    for later in rest[j + 1:]:
                        u = later.strip()
                        if re.match(r"^#{1,3}\s", u) and not re.match(r"^#{3}\s+Strategy", u, re.I):
                            break
                        if u and not u.startswith(("-", "*", "|", "`", "#")) and PLAN_WHY.search(u):
                            why = unemphasize(re.split(r"(?<=[.!?])\s+", u)[0])
                            break
                    break
            break
    if not title and not first:
        return ""
    return brief((f"\"{title}\"" if title else "") + (f" — {first}" if first else "") +
                 (f" ({why.rstrip('.')})" if why else ""), 320)


# a plan sentence that weighs its strategy: a reason, a guarantee, a cost accepted
PLAN_WHY = re.compile(r"\b(?:because|so that|to avoid|ensures?|guarantees?|trade-?off|at the cost|risk|but|since)\b", re.I)


PLAN_PART = re.compile(r"^(?:#{3,4}\s+(?:\d+[.)]\s*)?(.+?)\s*$|\*\*\d+[.)]\s*(.+?)\*\*\s*$)", re.M)
PLAN_SKIP = re.compile(r"^(?:Context|Approach|Strategy\b.*|Files? to \w+|Verification|Testing|Tests?|Summary|Overview|"
                       r"Notes?|Risks?|Out of scope|Open questions|Goal|Background)$", re.I)


def plan_parts(plan: str) -> list[str]:
    """The parts a plan names (its numbered or third-level headings), in order, without the
    boilerplate ones (Context, Verification, Files to modify), each with the first line under it
    that says how ("Code detection: `classify_text_lines/2` — state machine walking lines")."""
    heads, numbered = [], []
    text = plan or ""
    for m in PLAN_PART.finditer(text):
        t = re.sub(r"\*\*|__", "", (m.group(1) or m.group(2) or "")).strip().rstrip(":")
        if t and not PLAN_SKIP.match(t) and len(t) <= 90:
            (numbered if m.group(2) else heads).append((t, m.end()))
    parts = numbered if len(numbered) >= 2 else heads
    out, seen = [], set()
    for t, end in parts[:12]:
        if t in seen:
            continue
        seen.add(t)
        how = _plan_how(text[end:end + 1500])
        out.append(f"{t}: {how}" if how else t)
    return out


def _plan_how(body: str) -> str:
    """The first line under a plan's heading that says how, in words (not a bare signature, not
    a table): up to the next heading."""
    for ln in body.splitlines():
        t = ln.strip()
        if t.startswith("#") or re.match(r"^\*\*\d+[.)]", t):
            break
        t = unemphasize(re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", t))
        if not t or t.startswith(("|", "```")):
            continue
        prose = re.sub(r"`[^`]*`", "", t)
        if re.search(r"[A-Za-z]{3,}", prose):
            return brief(t.rstrip(":"), 120)
    return ""


REPORTED = re.compile(r"\b(credo|compiler?|compilation|dialyzer|linter|lint|mypy|ruff|eslint|tsc|type ?checker|pyright|"
                      r"clippy|the tests?|test run|warning)\b[^.\n]{0,60}?\b(reports?|reported|complains?|complaining|"
                      r"warns?|flags?|flagging|fails?|failed|failing|errors?)\b", re.I)


# a linter's or compiler's complaint said without naming the tool ("Too many conditionals in one function.")
LINT_PHRASE = re.compile(r"\b(?:too many (?:conditionals|branches|arguments|parameters|lines|clauses|statements)|"
                         r"nest(?:ing|ed)(?: depth)? (?:is )?too deep|too (?:complex|deeply nested)|complexity (?:is )?too high|"
                         r"the nesting (?:comes from|is caused by|is in|is)|the (?:cyclomatic )?complexity (?:comes from|is caused by)|"
                         r"(?:alias|variable|import|function) \S+ is (?:never )?unused|undefined (?:function|variable|module)|"
                         r"is not formatted|line (?:is )?too long)\b", re.I)


def _reported_failure(text: str) -> str | None:
    """The agent's sentence saying a check complained ("Credo reports nesting too deep in X"):
    its own prose, never a quoted line, a list item or a heading (a plan's text)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(?:>|[-*+]\s|\d+[.)]\s|#)", ln))
    for sent in re.split(r"(?<=[.!?])\s+|\n+", text):
        sent = sent.strip()
        if 15 <= len(sent) <= 240 and (REPORTED.search(sent) or (LINT_PHRASE.search(sent) and not re.match(
                r"(?:Let me|Let's|I'll|I will|I need|Now|To avoid)\b", sent))) and not sent.endswith("?") and \
                not re.search(r"\b(no|zero|0|all|pass\w*|clean|fixed|resolved|likely|probably|maybe|might|perhaps|"
                              r"seems?|known|bug|intermediate|stale|was from)\b", sent, re.I):
            return re.sub(r"\s*(?:Let me|Let's|I'll|I will)\b.*$", "", sent).strip()
    return None


MV = re.compile(r"(?:^|&&|;|\n)\s*(?:git\s+)?mv\s+(?:-\w+\s+)*(\S+)\s+(\S+)")
RM = re.compile(r"(?:^|&&|;|\n)\s*(?:git\s+)?rm\s+(?:-\w+\s+)*([^\s;&|]+(?:\s+[^\s;&|-][^\s;&|]*)*)")


def _fates(story: Story, cmd: str) -> None:
    """A file an earlier step changed and a later command moved or removed: said on the change."""
    def mark(path: str, fate: str) -> None:
        path = path.strip("'\"").rstrip("/")
        for ep in story.episodes:
            for fc in ep.files.values():
                if fc.path == path or fc.path.endswith("/" + path):
                    fc.fate = fate
    for m in MV.finditer(cmd):
        mark(m.group(1), f"later moved to `{short_path(m.group(2).strip(chr(39) + chr(34)), story.cwd)}`")
    for m in RM.finditer(cmd):
        for p in m.group(1).split():
            mark(p, "later deleted")


DSL_ENTRY = re.compile(r"^([a-z_]+ :[a-z_][\w?!]*)(?:\s+do\b|,|$)")
NUMBERED_LINE = re.compile(r"(?m)^\s*(\d+)\u2192(.*)$")


def _twins(fc: FileChange, old: str, new: str, lines: dict | None) -> None:
    """An edit that inserts a line or two right after a line the file has in several places (a table
    header with a twin table, a repeated block) changed one place: note the places of the same kind
    (the anchor followed by the same line as where the edit went; a header of another table is not
    one), each named by the nearest line above it that tells it apart from the edited place
    (`<table class="hidden-table">`), and count a later edit that makes the same insertion after
    the same line as another place done."""
    olds = set(old.splitlines())
    nl = new.splitlines()
    ins = [k for k, ln in enumerate(nl) if ln not in olds and ln.strip()]
    if not ins or len(ins) > 2 or ins[0] == 0:
        return
    anchor, line = nl[ins[0] - 1].strip(), nl[ins[0]].strip()
    if len(anchor) < 10 or len(line) > 80 or "`" in anchor + line or not re.search(r"[A-Za-z]{3}", anchor):
        return
    # the line the anchor was followed by: the first one after the insertion that the old text has
    after = next((ln.strip() for ln in nl[ins[0] + 1:] if ln in olds and ln.strip()), "")
    lines = lines or {}
    ol = [ln.strip() for ln in old.splitlines()]
    tail = ol[ol.index(anchor) + 1:] if anchor in ol else []

    def fit(n: int) -> int:  # how far the lines after a place agree with the edit's old text
        k = 0
        while k < len(tail) and lines.get(n + 1 + k) == tail[k]:
            k += 1
        return k
    key = (anchor, line)
    if key in fc.twins:
        tw = fc.twins[key]
        tw[1] += 1
        if tw[2]:  # the place this edit reached is done: the one its old text fits best
            got = max(tw[2], key=lambda p: fit(p[0]))
            tw[2].remove(got)
        return
    places = sorted(n for n, t in lines.items() if t == anchor and (not after or lines.get(n + 1) in (None, after)))
    if not 2 <= len(places) <= 4:
        return
    here = max(places, key=fit)
    others = []
    for n in places:
        if n == here:
            continue
        name = ""
        for j in range(1, 12):  # the nearest line above that differs from the edited place's
            a, b = lines.get(here - j), lines.get(n - j)
            if a is None or b is None:
                break
            if a != b and b and len(b) <= 80 and "`" not in b:
                name = b
                break
        others.append((n, name))
    fc.twins[key] = [len(places), 1, others]


def _swe_edit(name: str, cmd: str, current):
    """(the open file, [(path, action, old, new)]) for a SWE-agent editor command, else None."""
    from .artifacts import swe_action

    first = cmd.split("\n", 1)[0].strip()
    if name not in ("edit", "create", "open") and not re.match(r"^(?:edit \d+:\d+|create \S+|open \S+)", first):
        return None
    acts, current = swe_action(cmd, current)
    if first.startswith("edit") and current:
        body = cmd.split("\n", 1)[1] if "\n" in cmd else ""
        body = body.rsplit("end_of_edit", 1)[0]
        return current, [(current, "modified", None, body)]
    return current, [(p, "created", "", "") for a, p in acts if a == "created"]


def _target(call: dict) -> str:
    args = _args(call)
    if isinstance(args, dict):
        for k in ("file_path", "path", "notebook_path", "pattern", "url", "query"):
            if isinstance(args.get(k), str):
                return args[k]
    return ""


def _family(cmd: str) -> str:
    m = TEST_CMD.search(cmd) or CHECK_CMD.search(cmd)
    return m.group(1) if m else cmd


PREFIX = re.compile(r"^(?:(?:sudo|env|time|nice|command|exec)\s+|timeout\s+\S+\s+|[A-Z_][A-Z0-9_]*=\S*\s+|"
                    r"(?:npx|bunx|pnpm exec|yarn|bundle exec|uv run|poetry run|pipenv run|python3? -m)\s+)*")


def is_check(cmd: str) -> bool:
    """A test, build or lint run: a part of the command line starts with one (words inside a
    quoted argument, a commit message, an issue description, are not runs)."""
    for part in re.split(r"&&|\|\||;|\n|\|", cmd):
        part = PREFIX.sub("", re.sub(r"^\s*cd\s+\S+\s*$", "", part.strip()))
        if part and (TEST_CMD.match(part) or CHECK_CMD.match(part) or REPRO.match(part)):
            return True
    return False


def _families(cmd: str) -> list[str]:
    return _uniq([m.group(1) for rx in (TEST_CMD, CHECK_CMD) for m in rx.finditer(cmd)]) or [cmd]


def _add_error(ep: Episode, line: str, source: str, i: int, key: str, kind: str = "command", command: str = "") -> None:
    for e in ep.errors:
        if e.text == line and not e.resolved:
            e.index, e.key, e.frozen = i, key, False
            e.commands.append(command)
            return
    ep.errors.append(Error(line, source, i, key, kind=kind, commands=[command]))


def _file_args(cmd: str) -> set:
    return {w for w in cmd.split() if "/" in w or re.search(r"\.\w{1,5}(?::\d+)?$", w)}


def _covers(passing: str, failing: list) -> bool:
    """A passing run vouches for a failure when it ran what failed: the same files, or the whole
    suite (no file arguments)."""
    ran = _file_args(passing)
    return not ran or any(c and _file_args(c) and _file_args(c) <= ran for c in failing) or \
        all(not c for c in failing)


def _resolve_key(ep: Episode, key: str, i: int, how: str, exact: bool = True, ran: str = "") -> None:
    for e in ep.errors:
        if e.resolved:
            continue
        if ran and e.kind == "check" and not _covers(ran, e.commands):
            continue  # a pass of other test files says nothing about this failure
        if IGNORED.search(e.text) and not FORCED.search(how):
            continue  # a later `git add` of other files leaves the ignored one out: not a fix
        if e.key == key or (not exact and _family(e.key) == key):
            e.resolved = True
            edited = ", ".join(f"`{p.rsplit('/', 1)[-1]}`" for p in e.fix_files[:3])
            ran = ", ".join(f"`{brief(c, 50)}`" for c in e.fix_cmds[:2])
            e.fix = (f"fixed by editing {edited}; " if edited else "") + (f"fixed by running {ran}; " if ran else "") + how


def _last_commit(story: Story):
    """(episode, index) of the span's last commit with a hash, or None."""
    for ep in reversed(story.episodes):
        for k in range(len(ep.commits) - 1, -1, -1):
            if ep.commits[k][0]:
                return ep, k
    return None


def _resolve_edit_errors(ep: Episode, edits, i: int) -> None:
    for path, _, old, new in edits:
        small = _small_edit(old or "", new or "") if old is not None else None
        live = [e for e in ep.errors if not e.resolved and e.kind in ("check", "git") and not e.frozen]
        if small and live:  # what the small edits after an open error changed: the fix of the latest, as made
            max(live, key=lambda e: e.index).changes.append((path, *small))
        for e in ep.errors:
            if not e.resolved and e.key.endswith(path):
                e.resolved = True
                e.fix = "a later edit of the file applied"
        for e in ep.errors:  # a check failure followed by an edit: remember what was edited
            if not e.resolved and not e.frozen and path not in e.fix_files:
                e.fix_files.append(path)


def carry_errors(story: Story) -> None:
    """An error an episode left open and a later episode's run of the same check resolved."""
    for k, ep in enumerate(story.episodes):
        for e in ep.errors:
            if e.resolved:
                continue
            for later in story.episodes[k + 1:]:
                chk = later.checks.get(e.key)
                if chk is not None and chk.ok:
                    e.resolved, e.fix = True, f"`{brief(chk.command, 70)}` passed later"
                    break
