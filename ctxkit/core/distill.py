"""Distill a span into typed facts before anything is written (pure, deterministic, no model).

Every fact keeps the ids of the records it came from (`refs`), so a summary bullet can be
traced back. The kinds:

- requests   every real user request (core.requests is the one definition); the first is the
             task, the last is what to continue
- plan       the latest TodoWrite / update_plan state, else the latest checklist in assistant text
- progress   commits, test runs with their counts, plan steps that are done
- errors     one per distinct failure: its key line, where it came from, whether it was resolved
- decisions  assistant sentences with a choice cue, rewritten without first-person narration
- constraints user directives ("use X", "don't Y", "always Z")
- findings   assistant sentences ranked by salience (idf, recurring identifiers, position,
             narration and hedging penalties), selected with diversity (MMR)
- entities   identifiers that recur across assistant messages
- files      the artifact trail, with how often each path was touched
"""
from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Sequence

from .. import records as R
from .artifacts import _args, call_actions, combine, swe_action
from .hygiene import clean, is_narration
from .shorten import unemphasize
from .requests import brief, request_text

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*])|\n+")
STOP = set("""the and for that this with from have has had was were are is be been being not but you your our
they them their its it's into onto than then there here what when where which while who why how all any can
could would should will shall may might must just also only very more most some such each other same so too
use used using let lets get got make made need needs want wants like one two now new file files line lines
code test tests run runs see look check""".split())

# identifiers worth remembering (seed 004's key entities)
IDENT_RX = [
    re.compile(r"^(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)$"),   # CamelCase / camelCase
    re.compile(r"^_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+_*[?!]?$"),                       # snake_case
    re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+$"),                                    # dotted.name
    re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?:\.\d+)*$"),                       # ticket-12 ids
    re.compile(r"^v?\d+(?:\.\d+)+$"),                                                        # versions
]
FILE_EXT = set("ex exs py ts tsx js jsx json md sh yml yaml toml txt lock cfg ini html css rb go rs java c h cpp hpp "
               "log csv xml sql heex eex svg png jpg traj jsonl mjs cjs".split())
RAW_TOKEN = re.compile(r"[A-Za-z0-9_:.\-]+[?!]?")

CHOICE = re.compile(r"\b(instead|rather than|approach|prefer|so that|to avoid|better|simpler|cleaner|safer|"
                    r"trade-?off|alternative)\b", re.I)
DECISION_CUE = re.compile(
    r"\b(decided|decision|chose|choose|chosen|going with|go with|settled on|opted|switch(?:ed)? to|instead of|"
    r"rather than|prefer|the approach|the fix is|the solution is|will use|'ll use|we use|use \S+ (?:for|to|so)|"
    r"better to|approach:)\b", re.I)
REASON_CUE = re.compile(r"\b(because|so that|since|instead of|rather than|to avoid|to keep|to ensure|to make|"
                        r"which means|otherwise|as it|as this)\b", re.I)
DIRECTIVE = re.compile(r"^(?:please\s+)?(use|don'?t|do not|never|always|make sure|must|avoid|prefer|only|keep|"
                       r"no more|stop)\b", re.I)
FILLER = re.compile(r"^(?:(?:good|great|perfect|ok|okay|excellent|alright|done|right|yes|nice|interesting|hmm)"
                    r"\s*[,.!:—-]+\s*)+", re.I)
IMPERATIVE = re.compile(r"^(?:add|update|fix|create|run|check|use|make|wire|put|remove|write|implement|replace|"
                        r"move|rename|delete|try|verify|test|build|install|open|read|look|see|start|refactor|"
                        r"change|set|call|keep|commit|push|extract|pass|rebuild|reload|restart|edit|apply)\b", re.I)
HEDGE = re.compile(r"\b(maybe|perhaps|probably|might|possibly|i think|i guess|seems to|it seems|not sure|"
                   r"could be|likely|it appears|appears to|the next step|a good starting point)\b", re.I)
PROSE_START = re.compile(r"^[A-Za-z`\"'(]")  # not a code line (//, @param, #, *) shown in a reply
REPORT_CUE = re.compile(r"\b(added|created|implemented|fixed|updated|removed|renamed|moved|refactored|replaced|"
                        r"changed|now|passes|passing|all \d+|committed|pushed|root cause|the cause|the bug|"
                        r"because|returns|uses|requires|is configured|defaults to|contains)\b", re.I)

TEST_CMD = re.compile(r"\b(pytest|py\.test|mix test|npm (?:run )?test|yarn test|pnpm test|go test|cargo test|jest|"
                      r"vitest|rspec|phpunit|tox|make test|unittest|bun test|dotnet test|gradle test|mvn test)\b")
COMMIT_MSG = re.compile(r"""git\s+commit\b[^\n]*?-\w*m\s*(?:"((?:[^"\\]|\\.)+)"|'([^']+)'|\$\(cat\s*<<-?\s*'?(\w+)'?\s*\n(.*?)\n\s*\3)""",
                        re.S)
COMMIT_OUT = re.compile(r"^\[([\w./-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
AIDER_COMMIT = re.compile(r"^>?[ \t]*Commit ([0-9a-f]{7,40}) (.+)$", re.M)
CHECKBOX = re.compile(r"^[ \t]*[-*][ \t]+\[( |x|X)\][ \t]+(.+)$", re.M)

EXC_LINE = re.compile(r"^(?:E\s+|\W{0,4})\(?((?:\w+\.)*[A-Z]\w*(?:Error|Exception|Exit|Failure))\)?(?::|\)|\s+[A-Za-z'\"(])")
DIAG_LINE = re.compile(r"^[\w./-]+\.\w+:\d+(?::\d+)?:?\s*(.*)$")
LINT_LINE = re.compile(r"^\W*\[[A-Z]\]\s*\W\s*(.+)$")
ERRWORD = re.compile(r"\b(error|errors|failed|failure|fatal|denied|not found|no such|cannot|could not|unable|"
                     r"undefined|invalid|refused|timed out|panic)\b", re.I)
STRONG = re.compile(r"FAILED|Traceback|^error(?:\[\w+\])?:|^Error:|^ERROR\b|^fatal:|npm ERR!|command not found|"
                    r"No such file or directory|Permission denied|^panic:|exit code [1-9]|Exit code [1-9]", re.M)
TRIVIAL = re.compile(r"^(exit code \d+|<tool_use_error>|</tool_use_error>|error|errors?:)$", re.I)
READ_PREFIX = re.compile(r"^\s*\d+\u2192")  # Claude Code Read output


@dataclass
class Fact:
    kind: str
    text: str
    refs: list = field(default_factory=list)
    status: str | None = None          # plan: pending|in_progress|completed; error: resolved|open
    weight: float = 0.0
    source: str | None = None          # error: the command or tool it came from


@dataclass
class Distilled:
    requests: list = field(default_factory=list)     # Fact(kind="request")
    plan: list = field(default_factory=list)
    progress: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    decisions: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    entities: list = field(default_factory=list)
    files: "OrderedDict[str, tuple[str, int]]" = field(default_factory=OrderedDict)  # path -> (action, touches)
    cwd: str | None = None
    story: object = None               # core.episodes.Story: the span as episodes, in order
    focus: object = None               # core.focus.Focus: where the work stands at the end
    prior_steps: list = field(default_factory=list)  # (heading, items) of an earlier summary's steps
    task_line: str = ""                # the task as core.requests.task_statement reads it, when set

    @property
    def task(self) -> str:
        return self.task_line or (self.requests[0].text if self.requests else "")

    @property
    def latest(self) -> str:
        return self.requests[-1].text if self.requests else ""


# ---------------------------------------------------------------------------------------------
# helpers

def _is_text_record(r: dict) -> bool:
    return r.get("kind") in ("message", "summary") and not {"thinking", "reasoning"} & set(R.flags(r))


def sentences(text: str, cap: int = 320) -> list[str]:
    """Prose sentences of a message: code blocks, tables and headings left out; whole sentences
    only (a sentence longer than `cap` is skipped, never cut)."""
    text = re.sub(r"```.*?```", "\n", text or "", flags=re.S)
    out = []
    for s in SENT_SPLIT.split(text):
        st = s.strip()
        if not st or st.startswith(("|", "#", "```")):
            continue
        st = re.sub(r"^(?:>\s*)+", "", st)  # quoted lines (plans shown in a reply)
        st = re.sub(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", st)
        if st.startswith(("GIVEN ", "WHEN ", "THEN ")) or not st:
            continue
        st = unemphasize(st).strip()
        if 20 <= len(st) <= cap and len(st.split()) >= 4:
            out.append(st)
    return out


def first_person(s: str) -> bool:
    return bool(re.search(r"\b(I|I'm|I've|I'll|I'd|me|my|mine|myself|let me|let's)\b", s))


def denarrate(s: str) -> str | None:
    """A decision without its narrator: "I'll use X because Y" -> "Use X because Y". None when
    the sentence is narration that no rewrite saves."""
    t = re.sub(r"^\s*(?:now|so|ok|okay|alright|great|good|perfect|right)[,.!:]?\s+", "", s, flags=re.I)
    t = re.sub(r"^(?:I|we)(?:'ll| will| have| had|'ve)?\s+(?:decided|chosen|chose|opted|settled)(?: on| for)?\s+(?:to\s+)?",
               "", t, flags=re.I)
    t = re.sub(r"^(?:actually,?\s+)?(?:I|we)(?:'ll| will| am going to| are going to| should| need to| can| could)"
               r"(?: just| also| instead)?\s+", "", t, flags=re.I)
    t = re.sub(r"^(?:let'?s|let me|let us)(?: just| also| instead)?\s+", "", t, flags=re.I)
    t = t.strip()
    if not t or first_person(t) or is_narration(t):
        return None
    return t[0].upper() + t[1:]


URL = re.compile(r"https?://\S+")
_IDENT_OF: dict = {}  # raw token -> the identifier it is, or None (a token's verdict depends on it alone)


def identifiers(text: str) -> set[str]:
    found = set()
    known = _IDENT_OF
    if len(known) > 1 << 18:
        known.clear()
    for tok in RAW_TOKEN.findall(URL.sub(" ", text)):
        t = known.get(tok, 0)
        if t == 0:
            t = known[tok] = _identifier(tok)
        if t is not None:
            found.add(t)
    return found


def _identifier(tok: str) -> str | None:
    t = tok.strip(".:,;-?!")
    if not t or len(t) < 3 or "/" in t:
        return None
    t = t.lstrip(":")
    for i, rx in enumerate(IDENT_RX):
        if rx.match(t):
            if i == 2 and t.rsplit(".", 1)[-1].lower() in FILE_EXT:
                return None
            if i == 3 and not re.search(r"\d", t):
                return None
            return t
    return None


def _norm_cmd(cmd: str) -> str:
    return re.sub(r"\s+", " ", cmd.strip())[:200]


def call_command(call: dict) -> tuple[str, str]:
    """(tool name, the command or path it acted on)."""
    fn = call.get("function") or {}
    name = fn.get("name") or ""
    args = _args(call)
    if isinstance(args, dict):
        for k in ("command", "cmd"):
            v = args.get(k)
            if isinstance(v, list):
                v = v[-1] if v and v[0] in ("bash", "sh", "zsh", "powershell", "pwsh") else " ".join(map(str, v))
            if isinstance(v, str) and v.strip():
                return name, v.strip()
        for k in ("file_path", "path", "notebook_path", "pattern", "query", "url"):
            v = args.get(k)
            if isinstance(v, str) and v.strip():
                return name, v.strip()
        return name, ""
    return name, str(args)[:200]


def key_error_line(text: str, flagged: bool) -> str | None:
    """The most telling line of a failed result: the exception line, else a diagnostic, else
    a line with an error word, else (when the tool said it failed) the first contentful line."""
    text = text.replace("\\n", "\n")
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    raw = text.splitlines()
    if not flagged:
        raw = [ln for ln in raw if not READ_PREFIX.match(ln)]
    lines = []
    for ln in raw:
        ln = re.sub(r"\s+", " ", ln.replace("<tool_use_error>", "").replace("</tool_use_error>", "")).strip()
        if ln and not TRIVIAL.match(ln) and not re.fullmatch(r"[│|\s\d^~-]+", ln):
            lines.append(ln)
    if not lines:
        return None
    exc = [ln for ln in lines if EXC_LINE.match(ln) and not ln.startswith("Traceback")]
    if exc:
        return exc[-1]
    if not flagged and not STRONG.search("\n".join(lines)):
        return None
    if flagged:  # a tool's own error line (esbuild `✘ [ERROR] …`, rustc/clang `error[E0425]: …`) before its stack
        tagged = next((ln for ln in lines if re.match(r"^(?:✘\s*)?\[ERROR\]\s+\S|^error(?:\[\w+\])?:\s+\w", ln)), None)
        if tagged and len(re.findall(r"\w+", tagged)) >= 3:
            return tagged
    for i, ln in enumerate(lines):
        m = LINT_LINE.match(ln)
        if m and len(WORD.findall(m.group(1))) >= 2:
            return m.group(1)
        m = DIAG_LINE.match(ln)
        if m and flagged:
            if len(re.findall(r"\w+", m.group(1))) < 3 and i + 1 < len(lines):
                return ln + " " + lines[i + 1]
            return ln
    for ln in lines:
        if (ERRWORD.search(ln) or STRONG.search(ln)) and len(re.findall(r"\w+", ln)) >= 3 and not ln.endswith(":"):
            return ln
    if flagged:
        for i, ln in enumerate(lines[:-1]):  # "The following paths are ignored …:" + the path
            if ln.endswith(":") and len(re.findall(r"\w+", ln)) >= 4 and not lines[i + 1].startswith("hint:"):
                return ln + " " + lines[i + 1]
        for ln in lines:
            if len(re.findall(r"\w+", ln)) >= 3 and not ln.endswith(":"):
                return ln
        return lines[0]
    return None


def _cap(text: str, n: int = 220) -> str:
    return brief(text, n)


def result_failed(r: dict) -> bool:
    """A tool result that reports a failure: flagged by the source, or (for formats that do not
    flag) an error marker in its first lines."""
    if "error" in R.flags(r):
        return True
    if "missing_result" in R.flags(r):
        return False
    fmt = (r.get("source") or {}).get("format")
    if fmt == "claude-code":
        return False  # Claude Code marks failures (is_error); a file that mentions "error" is not one
    head = "\n".join((r.get("content") or "").splitlines()[:12])
    return bool(re.search(r"Traceback \(most recent|^\w*Error:|^ERROR\b|FAILED|^fatal:|Exception:|exit code [1-9]|"
                          r"Exit code:? [1-9]|command not found|No such file or directory", head, re.M))


# ---------------------------------------------------------------------------------------------
# the distiller

def distill(span: Sequence[dict], context: Sequence[dict] | None = None, story: bool = True) -> Distilled:
    """Typed facts of `span`. Requests come from `context` (the whole stream) when given, so the
    task is the session's first request even when only a later span is summarized. With
    `story`, also the span's episodes and where the work stands at its end (core.focus)."""
    recs = [r for r in span if isinstance(r, dict)]
    d = _read_before(recs, context) or _facts(recs, context)
    if story:
        from .focus import for_span

        set_story(d, *for_span(recs))
    return d


_LAST: list = []  # (records, context, a copy of their facts) of the last distill: compaction reads a span twice


def _read_before(recs: list[dict], context) -> Distilled | None:
    """The facts of the same records (the very same objects; ctx's passes never change a record)
    distilled by the call before, once; None when these are new."""
    if not _LAST:
        return None
    seen, ctx_seen, facts = _LAST.pop()

    def same(a, b) -> bool:
        return a is b or (a is not None and b is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b)))
    return facts if same(recs, seen) and same(context, ctx_seen) else None


def _facts(recs: list[dict], context) -> Distilled:
    import copy

    d = Distilled()
    for r in (context if context is not None else recs):
        if isinstance(r, dict):
            t = request_text(r)
            if t:
                d.requests.append(Fact("request", t, [r.get("id")]))
        if d.cwd is None and isinstance(r, dict):
            d.cwd = (r.get("meta") or {}).get("cwd") if isinstance(r.get("meta"), dict) else None
    results: dict[str, dict] = {}
    for r in recs:
        if r.get("role") == "tool" and r.get("tool_call_id"):
            results[r["tool_call_id"]] = r
    _plan(d, recs)
    _actions_and_errors(d, recs, results)
    _files(d, recs, results)
    _constraints(d)
    _decisions_findings(d, recs)
    _entities(d, recs)
    _LAST[:] = [(recs, context, copy.deepcopy(d))]
    return d


def set_story(d: Distilled, story, focus) -> None:
    """Attach the episodes and focus; what the user said with a rejected tool use is a request."""
    d.story, d.focus = story, focus
    d.story.cwd = d.story.cwd or d.cwd
    for _, words in d.story.rejected:
        if not any(words == f.text for f in d.requests):
            d.requests.append(Fact("request", words))


def _plan(d: Distilled, recs: list[dict]) -> None:
    latest = None
    for r in recs:
        for call in r.get("tool_calls") or ():
            fn = (call.get("function") or {}).get("name", "")
            args = _args(call)
            if not isinstance(args, dict):
                continue
            if fn.lower() in ("todowrite", "todo_write") and isinstance(args.get("todos"), list):
                latest = [(t.get("content") or t.get("activeForm") or "", t.get("status") or "pending", r.get("id"))
                          for t in args["todos"] if isinstance(t, dict)]
            elif fn == "update_plan" and isinstance(args.get("plan"), list):
                latest = [(t.get("step") or "", t.get("status") or "pending", r.get("id"))
                          for t in args["plan"] if isinstance(t, dict)]
    if latest is None:  # a checklist in assistant text
        for r in reversed(recs):
            if r.get("role") == "assistant" and _is_text_record(r):
                boxes = CHECKBOX.findall(r.get("content") or "")
                if len(boxes) >= 2:
                    latest = [(t, "completed" if x.lower() == "x" else "pending", r.get("id")) for x, t in boxes]
                    break
    for text, status, rid in latest or ():
        text = " ".join(str(text).split())
        if not text:
            continue
        f = Fact("plan", text, [rid], status=str(status))
        (d.progress if f.status == "completed" else d.plan).append(f)


def _actions_and_errors(d: Distilled, recs: list[dict], results: dict) -> None:
    errors: "OrderedDict[str, Fact]" = OrderedDict()
    last_ok: dict[str, int] = {}   # normalized command -> index of its last success
    first_fail: dict[str, list[Fact]] = {}
    for i, r in enumerate(recs):
        for call in r.get("tool_calls") or ():
            name, cmd = call_command(call)
            res = results.get(call.get("id"))
            out = (res or {}).get("content") or ""
            failed = res is not None and result_failed(res)
            key = _norm_cmd(f"{name} {cmd}")
            if cmd and COMMIT_MSG.search(cmd) and not failed:
                m = COMMIT_OUT.search(out)
                mm = COMMIT_MSG.search(cmd)
                msg = (mm.group(1) or mm.group(2) or mm.group(4) or "").strip().splitlines()[0] if mm else ""
                if m:
                    d.progress.append(Fact("commit", f"Committed {m.group(2)[:7]} on {m.group(1)}: {_cap(m.group(3), 120)}",
                                           [r.get("id")]))
                elif msg:
                    d.progress.append(Fact("commit", f"Committed: {_cap(msg, 120)}", [r.get("id")]))
            if cmd and TEST_CMD.search(cmd) and res is not None:
                counts = _test_counts(out)
                verdict = "failed" if failed or re.search(r"\b[1-9]\d* (failed|failures?)\b", counts) else "passed"
                if counts or failed:
                    d.progress.append(Fact("test", f"`{_cap(cmd, 80)}`: {counts or verdict}", [r.get("id")],
                                           status=verdict))
            if failed and not _tooling(name, out):
                line = key_error_line(out, True)
                if line:
                    k = re.sub(r"\d+", "#", line.lower())[:160]
                    src = f"`{_cap(cmd, 70)}`" if cmd else name
                    if k not in errors:
                        errors[k] = Fact("error", _cap(line, 200), [r.get("id"), (res or {}).get("id")],
                                         status="open", source=f"{name}: {src}" if cmd else name)
                        first_fail.setdefault(key, []).append(errors[k])
                    else:
                        errors[k].refs.append((res or {}).get("id"))
                        errors[k].status = "open"
                        first_fail.setdefault(key, []).append(errors[k])
            elif res is not None:
                last_ok[key] = i
                for f in first_fail.pop(key, []):
                    f.status = "resolved"
                if cmd and TEST_CMD.search(cmd):  # a passing test run resolves the failures before it
                    for f in errors.values():
                        if f.status == "open" and f.source and TEST_CMD.search(f.source):
                            f.status = "resolved"
        # commits and errors that arrive as text (aider's console, SWE-agent observations)
        if r.get("role") in ("tool", "user") and not r.get("tool_call_id"):
            for m in AIDER_COMMIT.finditer(r.get("content") or ""):
                d.progress.append(Fact("commit", f"Committed {m.group(1)[:7]}: {_cap(m.group(2), 120)}", [r.get("id")]))
    d.errors = list(errors.values())


def _tooling(name: str, out: str) -> bool:
    from .episodes import tooling_failure  # the one rule for what is the agent's tooling, not the project

    return tooling_failure(name, out)


def _test_counts(out: str) -> str:
    from .episodes import test_counts  # the one parser of a test run's counts

    return test_counts(out.replace("\\n", "\n"))


def _files(d: Distilled, recs: list[dict], results: dict) -> None:
    touches: Counter = Counter()
    trail: "OrderedDict[str, str]" = OrderedDict()
    current = None
    for r in recs:
        acts = []
        for call in r.get("tool_calls") or ():
            res = results.get(call.get("id"))
            acts += call_actions(call, (res or {}).get("content"))
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if r.get("role") == "assistant" and isinstance(meta.get("action"), str):
            swe, current = swe_action(meta["action"], current)  # tracks the open file for `edit`
            acts = acts or swe
        for action, path in acts:
            path = path.strip()
            if path:
                trail[path] = combine(trail.pop(path, None), action)
                touches[path] += 1
    for p, a in trail.items():
        d.files[p] = (a, touches[p])


def _constraints(d: Distilled) -> None:
    seen = set()
    for f in d.requests:
        for s in sentences(f.text) or [f.text]:
            s = s.strip()
            if DIRECTIVE.match(s) and 3 <= len(s.split()) <= 40 and s.lower() not in seen:
                seen.add(s.lower())
                d.constraints.append(Fact("constraint", _cap(s, 200), f.refs))


# sections of a plan, a spec or an issue body the agent drafts: what is to be done, never a finding
PLANNED_HEAD = re.compile(r"^\s*(?:#{1,6}\s*|\*\*|__)?\s*(?:\d+[.)]\s*)?(?:Definition of Done|Acceptance(?: Tests| Criteria)?|"
                          r"Output files|Steps|Technical specs|Rabbit Holes|No-gos|Edge cases|Source references|"
                          r"Component usage|Verification|Files to (?:modify|create|change)|Implementation(?: steps| plan)?|"
                          r"Tasks?|Proposed Beads|Epic|Task \d+|Plan|Solution|Problem|Changes|Testing)\b[^\n]*$", re.I)
HEADING = re.compile(r"^\s*(?:#{1,6}\s+\S|\*\*[^*\n]{2,80}\*\*:?\s*$|__[^_\n]{2,80}__:?\s*$)")


def unplanned(text: str) -> str:
    """An agent message without what it drafts for later: quoted blocks (`> …`, a bead or plan shown
    for approval) and the sections under headings like Definition of Done, Output files, Steps."""
    out, skip = [], False
    for ln in text.splitlines():
        if HEADING.match(ln) or PLANNED_HEAD.match(ln) and ln.strip().startswith(("#", "**", "__")):
            skip = bool(PLANNED_HEAD.match(ln))
            if skip:
                continue
        if skip or ln.lstrip().startswith(">"):
            continue
        out.append(ln)
    return "\n".join(out)


def _decisions_findings(d: Distilled, recs: list[dict]) -> None:
    texts = [(i, r) for i, r in enumerate(recs) if r.get("role") == "assistant" and _is_text_record(r)
             and (r.get("content") or "").strip()]
    thinking = [(i, r) for i, r in enumerate(recs) if r.get("role") == "assistant" and r.get("kind") == "message"
                and {"thinking", "reasoning"} & set(R.flags(r))]
    seen_dec: set[str] = set()
    n_all = max(1, len(recs))
    for i, r in thinking:  # the reasoning behind choices: decisions only, never findings
        for s in sentences(clean(r.get("content") or "")):
            if s.endswith("?") or not (DECISION_CUE.search(s) or (REASON_CUE.search(s) and CHOICE.search(s))):
                continue
            t = denarrate(s)
            if t and t.lower() not in seen_dec and len(t.split()) >= 6 and not t.endswith(":"):
                seen_dec.add(t.lower())
                d.decisions.append(Fact("decision", t, [r.get("id")], weight=0.8 + 0.3 * i / n_all))
    if not texts:
        d.decisions = mmr(d.decisions, k=15)
        return
    # document frequency of words over assistant messages and identifier recurrence
    df: Counter = Counter()
    ident_msgs: Counter = Counter()
    for _, r in texts:
        c = r.get("content") or ""
        df.update({w.lower() for w in WORD.findall(c)})
        ident_msgs.update(identifiers(c))
    n = len(texts)
    cands: list[Fact] = []
    last_idx = texts[-1][0]
    for pos, (i, r) in enumerate(texts):
        report = not r.get("tool_calls")          # a reply with no tool call is a report or recap
        for s in sentences(clean(unplanned(r.get("content") or ""))):
            if s.endswith((":", "?")):
                continue
            if DECISION_CUE.search(s) or (REASON_CUE.search(s) and CHOICE.search(s)):
                t = denarrate(s)
                if t and t.lower() not in seen_dec and len(t.split()) >= 5:
                    seen_dec.add(t.lower())
                    weight = 1.0 + (0.5 if REASON_CUE.search(t) else 0) + 0.3 * (pos / n)
                    d.decisions.append(Fact("decision", t, [r.get("id")], weight=weight))
                    continue
            s = FILLER.sub("", s)
            if is_narration(s) or first_person(s) or HEDGE.search(s) or len(s.split()) < 6 or IMPERATIVE.match(s) \
                    or not PROSE_START.match(s):
                continue
            s = s[0].upper() + s[1:]
            words = [w.lower() for w in WORD.findall(s)]
            if not words:
                continue
            idf = sum(math.log((n + 1) / (1 + df.get(w, 0))) for w in set(words) if w not in STOP) / \
                math.sqrt(len(set(words)))
            ids = identifiers(s)
            rec_ids = sum(1 for x in ids if ident_msgs[x] >= 2)
            score = idf + 0.6 * rec_ids + (0.8 if report else 0) + (0.5 if REPORT_CUE.search(s) else 0) + \
                0.6 * (pos / n) + (0.3 if i == last_idx else 0)
            if "`" in s:
                score += 0.2
            cands.append(Fact("finding", s, [r.get("id")], weight=score))
    d.findings = mmr(cands, k=40)
    d.decisions = mmr(d.decisions, k=15)


def _bag(s: str) -> set[str]:
    return {w.lower() for w in WORD.findall(s) if w.lower() not in STOP}


def mmr(cands: list[Fact], k: int, lam: float = 0.7) -> list[Fact]:
    """Maximal marginal relevance: the best candidates, each penalized by its overlap with
    those already chosen, so one finding is not said three times."""
    if not cands:
        return []
    top = max(c.weight for c in cands) or 1.0
    bags = [_bag(c.text) for c in cands]
    chosen: list[int] = []
    left = set(range(len(cands)))
    sims = [0.0] * len(cands)  # each candidate's highest overlap with those chosen so far
    while left and len(chosen) < k:
        new = bags[chosen[-1]] if chosen else None  # only the newest choice can raise an overlap
        best, best_s = None, -1e9
        for i in left:
            sim = sims[i]
            if sim >= 0.6:
                continue
            if new is not None:
                both = len(bags[i] & new)
                sim = sims[i] = max(sim, both / ((len(bags[i]) + len(new) - both) or 1))
                if sim >= 0.6:
                    continue
            s = lam * cands[i].weight / top - (1 - lam) * sim
            if s > best_s:
                best, best_s = i, s
        if best is None:
            break
        chosen.append(best)
        left.discard(best)
    return [cands[i] for i in chosen]


def _entities(d: Distilled, recs: list[dict]) -> None:
    msgs: Counter = Counter()
    for r in recs:
        if r.get("role") == "assistant" and r.get("kind") == "message":
            msgs.update(identifiers(r.get("content") or ""))
    file_words = " ".join(d.files)
    ranked = [x for x, c in msgs.most_common() if c >= 2 and x not in file_words]
    d.entities = [Fact("entity", x, weight=float(msgs[x])) for x in ranked[:60]]
