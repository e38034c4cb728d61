"""`ctx hook gemini` and `ctx hook copilot`: their payloads, their output shapes, the state handed
back once after the agent's own compaction, a Copilot subagent recorded from its parent's
transcript, and their installer entries (hand-made payloads over transcripts the real clients
wrote: tests/fixtures/gemini-cli_0.61.0_compressed.jsonl is a Gemini CLI 0.61.0 session that
compressed on its own, tests/fixtures/copilot-cli_1.0.102_subagent.jsonl a Copilot CLI 1.0.102
session that ran a subagent, its system prompt cut short; tests/e2e runs the clients
themselves)."""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import FIXTURES, run, session_index, stored_text
from ctxkit.services import agents
from ctxkit.services import hook_install as hi

GEMINI_T = str(FIXTURES / "gemini-cli_0.61.0_compressed.jsonl")
COPILOT_T = str(FIXTURES / "copilot-cli_1.0.102_subagent.jsonl")
COPILOT_SID = "5aa706c7-e189-4642-92f6-7438b894c8d8"
COPILOT_AGENT = "9f30af68-91ca-403d-bd3f-bd3f458ef19d"
RESTORED = "# Context (this session's state, restored after compaction)"
STATE = "# Context (this session's state)"


def hook(agent, event, payload, *args, env=None):
    return run("hook", agent, *([event] if event else []), *args, input=json.dumps(payload), env=env)


def _project(tmp_path, name="p"):
    p = tmp_path / name
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def _state(key: str) -> str:
    """A session's own CONTEXT.md, whichever store keeps it."""
    res = run("context", "show", "--session", key)
    return res.stdout if res.code == 0 else ""


def _context(res, agent: str) -> str | None:
    assert res.code == 0, res.stderr
    if not res.stdout.strip():
        return None
    out = json.loads(res.stdout)
    return (out.get("hookSpecificOutput") or {}).get("additionalContext") if agent == "gemini" else \
        out.get("additionalContext")


# ---- Gemini CLI ----

def test_gemini_events_map_onto_ctxs_lifecycle_and_answers_are_always_json(tmp_path):
    g = agents.get("gemini")
    assert g.lifecycle("BeforeAgent") == ("BeforeAgent", "UserPromptSubmit")
    assert g.lifecycle("after_agent") == ("AfterAgent", "Stop")
    assert g.lifecycle("PreCompress") == ("PreCompress", "PreCompact")
    assert g.lifecycle("BeforeModel") == ("BeforeModel", None)
    res = hook("gemini", "SessionStart", {"source": "startup", "session_id": "g1", "cwd": str(tmp_path)},
               "--workspace", tmp_path)
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "## Time" in out["additionalContext"]
    # an event whose output never reaches the model: `{}`, so the client shows no stderr note to the user
    res = hook("gemini", "AfterAgent", {"session_id": "g1", "cwd": str(tmp_path), "prompt": "x",
                                        "prompt_response": "y"}, "--workspace", tmp_path)
    assert res.code == 0 and res.stdout.strip() == "{}"
    res = hook("gemini", "BeforeModel", {"session_id": "g1", "cwd": str(tmp_path)})
    assert res.code == 0 and res.stdout == ""   # acknowledged


def test_gemini_prompt_without_the_hook_context_the_client_prepended():
    g = agents.get("gemini")
    data = g.normalize({"prompt": "<hook_context># Context (this project)\n## Time\n- now</hook_context>\n\n"
                                  "Fix the parser"})
    assert data["prompt"] == "Fix the parser"


def test_gemini_hands_the_state_back_once_after_it_compressed(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    base = {"session_id": "gem-1", "transcript_path": GEMINI_T, "cwd": str(proj)}
    first = _context(hook("gemini", "BeforeAgent", {**base, "prompt": "Which step is next"}), "gemini")
    assert first and RESTORED in first and "Build the alpha exporter" in first
    again = _context(hook("gemini", "BeforeAgent", {**base, "prompt": "Which step is next"}), "gemini")
    assert not again or RESTORED not in again   # once per compression


def test_a_resumed_session_gets_the_state_from_session_start_and_not_again_at_the_prompt(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    base = {"session_id": "gem-2", "transcript_path": GEMINI_T, "cwd": str(proj)}
    assert hook("gemini", "AfterAgent", base).code == 0
    start = _context(hook("gemini", "SessionStart", {**base, "source": "resume"}), "gemini")
    assert STATE in start and "alpha exporter" in start
    prompt = _context(hook("gemini", "BeforeAgent", {**base, "prompt": "Which step is next"}), "gemini")
    assert not prompt or RESTORED not in prompt


def test_a_start_that_sees_the_transcript_mid_rewrite_still_covers_the_compression(tmp_path, monkeypatch):
    """Gemini CLI resets the transcript as it starts (a `$set` of its first message alone) before it
    loads the resumed conversation: SessionStart may see no compression where the prompt hook,
    a moment later, sees one. The start hands the state over all the same; not again."""
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    lines = open(GEMINI_T).read().splitlines()
    reset = tmp_path / "session-reset.jsonl"
    reset.write_text(lines[0] + "\n" + lines[1] + "\n")   # the metadata and the session context alone
    base = {"session_id": "gem-4", "cwd": str(proj)}
    assert hook("gemini", "AfterAgent", {**base, "transcript_path": GEMINI_T}).code == 0
    start = _context(hook("gemini", "SessionStart", {**base, "transcript_path": str(reset), "source": "resume"}),
                     "gemini")
    assert STATE in start
    prompt = _context(hook("gemini", "BeforeAgent", {**base, "transcript_path": GEMINI_T, "prompt": "Next"}), "gemini")
    assert not prompt or RESTORED not in prompt


def test_when_the_prompt_hook_handed_the_state_back_the_start_beside_it_leaves_it_out(tmp_path, monkeypatch):
    """Copilot CLI runs SessionStart and UserPromptSubmit at once: whichever claims a compaction
    hands the state back, the other leaves it out (a claim older than a few seconds is another
    start's)."""
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    base = {"session_id": "gem-3", "transcript_path": GEMINI_T, "cwd": str(proj)}
    assert RESTORED in _context(hook("gemini", "BeforeAgent", {**base, "prompt": "Which step is next"}), "gemini")
    start = _context(hook("gemini", "SessionStart", {**base, "source": "resume"}), "gemini")
    assert STATE not in start and "No saved working state" not in start and "## Time" in start
    # later, resuming again: the state is handed over as at every resume
    p = os.path.join(os.environ["CTX_HOME"], "hooks-state.json")
    state = json.load(open(p))
    state["handover:gemini-gem-3"]["at"] -= 120
    json.dump(state, open(p, "w"))
    assert STATE in _context(hook("gemini", "SessionStart", {**base, "source": "resume"}), "gemini")


# ---- GitHub Copilot CLI ----

def test_copilot_answers_flat_additional_context_and_reads_new_as_startup(tmp_path):
    res = hook("copilot", "SessionStart", {"hook_event_name": "SessionStart", "source": "new", "session_id": "c1",
                                           "cwd": str(tmp_path)}, "--workspace", tmp_path)
    assert res.code == 0
    out = json.loads(res.stdout)
    assert set(out) == {"additionalContext"} and "## Time" in out["additionalContext"]
    # Copilot's own camelCase names and payloads are understood too
    c = agents.get("copilot")
    assert c.lifecycle("agentStop") == ("agentStop", "Stop")
    assert c.lifecycle("userPromptSubmitted") == ("userPromptSubmitted", "UserPromptSubmit")
    data = c.normalize({"sessionId": "c1", "transcriptPath": "/t.jsonl", "customInstructions": "x"})
    assert data["session_id"] == "c1" and data["transcript_path"] == "/t.jsonl" and data["custom_instructions"] == "x"


def test_copilot_finds_the_transcript_from_the_session_id(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    chome = tmp_path / "copilot-home"
    (chome / "session-state" / COPILOT_SID).mkdir(parents=True)
    shutil.copy(COPILOT_T, chome / "session-state" / COPILOT_SID / "events.jsonl")
    monkeypatch.setenv("COPILOT_HOME", str(chome))
    c = agents.get("copilot")
    assert c.normalize({"session_id": COPILOT_SID})["transcript_path"].endswith(f"{COPILOT_SID}/events.jsonl")
    assert "transcript_path" not in c.normalize({"session_id": "../../etc"})
    # SessionEnd names no transcript: ctx folds the session from the one it found
    assert hook("copilot", "SessionEnd", {"session_id": COPILOT_SID, "cwd": str(proj), "reason": "user_exit"}).code == 0
    idx = session_index()
    assert idx[f"copilot-{COPILOT_SID}"]["status"] == "ended"
    assert _state(f"copilot-{COPILOT_SID}").split("## Task\n", 1)[1].startswith("Plan the omega importer")


def test_a_copilot_subagent_is_recorded_from_its_parents_transcript_and_its_own_turns_are_left_alone(
        tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    # the subagent's own prompt and stop carry its id as session_id: nothing done, nothing said
    for event in ("UserPromptSubmit", "Stop"):
        res = hook("copilot", event, {"hook_event_name": event, "session_id": COPILOT_AGENT, "agent_id": COPILOT_AGENT,
                                      "parent_agent_id": COPILOT_SID, "transcript_path": COPILOT_T, "cwd": str(proj),
                                      "prompt": "Survey the zeta fixtures"})
        assert res.code == 0 and res.stdout == "" and res.stderr == ""
    assert f"copilot-{COPILOT_AGENT}" not in session_index()
    payload = {"hook_event_name": "SubagentStop", "session_id": COPILOT_SID, "agent_id": COPILOT_AGENT,
               "agent_type": "general-purpose", "parent_agent_id": COPILOT_SID, "transcript_path": COPILOT_T,
               "cwd": str(proj), "last_assistant_message": "The command finished"}
    assert hook("copilot", "SubagentStop", payload).code == 0
    parent = f"copilot-{COPILOT_SID}"
    (agent, info), = session_index()[parent]["subagents"].items()
    assert agent == COPILOT_AGENT and info["records"] > 0
    sub = stored_text(info["state"]) or ""
    if os.environ.get("CTX_TEST_STORE") != "pg":
        assert sub.split("## Task\n", 1)[1].startswith("Survey the zeta fixtures")
    # the parent's Stop still reads the shared transcript, and keeps the parent's own work
    assert hook("copilot", "Stop", {"session_id": COPILOT_SID, "transcript_path": COPILOT_T, "cwd": str(proj)}).code == 0
    mine = _state(parent)
    assert mine.split("## Task\n", 1)[1].startswith("Plan the omega importer")
    assert "## Latest request\nSurvey the zeta" not in mine


def test_copilot_stop_waits_for_a_transcript_written_behind_its_hooks(tmp_path, monkeypatch):
    """Copilot writes events.jsonl behind its hooks: at Stop the file may hold only the session's first
    lines. The hook waits until the file has caught up with the payload's timestamp, and folds the turn."""
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    lines = open(COPILOT_T, encoding="utf-8").read().splitlines(keepends=True)
    path = tmp_path / "events.jsonl"
    path.write_text("".join(lines[:3]), encoding="utf-8")     # the session's start, no prompt yet
    rest = tmp_path / "rest.jsonl"
    rest.write_text("".join(lines[3:]), encoding="utf-8")
    late = subprocess.Popen(["sh", "-c", f"sleep 0.8; cat '{rest}' >> '{path}'"])
    stamp = json.loads(lines[-2])["timestamp"]
    try:
        res = hook("copilot", "Stop", {"hook_event_name": "Stop", "session_id": COPILOT_SID, "timestamp": stamp,
                                       "transcript_path": str(path), "cwd": str(proj)})
    finally:
        late.wait()
    assert res.code == 0, res.stderr
    assert _state(f"copilot-{COPILOT_SID}").split("## Task\n", 1)[1].startswith("Plan the omega importer")
    c = agents.get("copilot")
    assert c.caught_up(str(path), {"timestamp": stamp}) and not c.caught_up(str(path), {"timestamp": 1e15})
    assert c.caught_up(str(path), {})       # no timestamp: nothing to wait for


def test_a_session_that_ends_with_no_state_of_its_own_does_not_archive_another_sessions(tmp_path, monkeypatch):
    """Session B of the same project ends before ctx could read anything of it: its SessionEnd archives
    nothing under its name, and session A's state is left as it was."""
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    assert hook("copilot", "Stop", {"session_id": COPILOT_SID, "transcript_path": COPILOT_T, "cwd": str(proj)}).code == 0
    mine = _state(f"copilot-{COPILOT_SID}")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    other = "0b0b0b0b-1111-2222-3333-444455556666"
    res = hook("copilot", "SessionEnd", {"session_id": other, "transcript_path": str(empty), "cwd": str(proj), "reason": "complete"})
    assert res.code == 0, res.stderr
    got = session_index().get(f"copilot-{other}") or {}
    assert not got.get("archive"), got
    assert _state(f"copilot-{COPILOT_SID}") == mine


def test_copilot_precompact_prints_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    res = hook("copilot", "PreCompact", {"session_id": COPILOT_SID, "transcript_path": COPILOT_T, "cwd": str(proj),
                                         "trigger": "manual", "custom_instructions": ""})
    assert res.code == 0 and res.stdout == ""   # Copilot 1.0.102 takes no instructions from it


# ---- the installers ----

GEMINI_SETTINGS = """{
  "theme": "Default",
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5000}]}
    ]
  }
}
"""


def ctx_in(project, *args):
    old = os.getcwd()
    os.chdir(project)
    try:
        return run("hook", *args)
    finally:
        os.chdir(old)


def test_gemini_install_keeps_the_users_hooks_and_uninstall_restores_the_file_byte_for_byte(tmp_path):
    p = _project(tmp_path)
    (p / ".gemini").mkdir()
    path = p / ".gemini" / "settings.json"
    path.write_text(GEMINI_SETTINGS)
    dry = ctx_in(p, "install", "gemini", "--dry-run")
    assert dry.code == 0 and "+" in dry.stdout and path.read_text() == GEMINI_SETTINGS
    assert ctx_in(p, "install", "gemini").code == 0
    text = path.read_text()
    assert "./check.sh" in text and '"theme": "Default"' in text
    assert ctx_in(p, "install", "gemini").code == 0 and path.read_text() == text   # idempotent
    cmd = hi.ctx_command()
    for event in ("SessionStart", "BeforeAgent", "PreCompress", "AfterAgent", "SessionEnd"):
        assert f'"{cmd} hook gemini {event}"' in text
    assert '"matcher": "manual"' in text   # PreCompress for /compress only
    assert ctx_in(p, "uninstall", "gemini").code == 0
    assert path.read_text() == GEMINI_SETTINGS


def test_gemini_settings_with_comments_are_named_and_left_alone(tmp_path):
    """Gemini CLI reads comments in settings.json; ctx's installer edits JSON only, so it says so
    and changes nothing (wire examples/gemini/settings.json by hand there)."""
    p = _project(tmp_path)
    (p / ".gemini").mkdir()
    path = p / ".gemini" / "settings.json"
    text = '{\n  // mine\n  "theme": "Default"\n}\n'
    path.write_text(text)
    res = ctx_in(p, "install", "gemini")
    assert res.code == 1 and "settings.json" in res.stderr and "not valid JSON" in res.stderr
    assert path.read_text() == text


def test_copilot_install_writes_its_own_hooks_file_and_uninstall_takes_it_away(tmp_path):
    p = _project(tmp_path)
    (p / ".github" / "hooks").mkdir(parents=True)
    team = p / ".github" / "hooks" / "team.json"
    team.write_text('{"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": "./lint.sh"}]}}\n')
    assert ctx_in(p, "install", "copilot").code == 0
    ours = p / ".github" / "hooks" / "ctx.json"
    hooks = json.loads(ours.read_text())["hooks"]
    cmd = hi.ctx_command()
    assert hooks["SessionStart"] == [{"type": "command", "bash": f"{cmd} hook copilot SessionStart", "timeoutSec": 30}]
    assert hooks["SessionEnd"][0]["bash"] == f"set -m; {cmd} hook copilot SessionEnd <&0 &"
    assert hi.installed_by_ctx(hooks["SessionEnd"][0]["bash"], "copilot")
    assert ctx_in(p, "uninstall", "copilot").code == 0
    assert not ours.exists() and team.read_text().startswith('{"version": 1')


def test_copilot_uninstall_after_an_edit_still_finds_the_detached_session_end(tmp_path):
    p = _project(tmp_path)
    assert ctx_in(p, "install", "copilot").code == 0
    ours = p / ".github" / "hooks" / "ctx.json"
    doc = json.loads(ours.read_text())
    doc["hooks"]["ErrorOccurred"] = [{"type": "command", "bash": "./notify.sh"}]
    ours.write_text(json.dumps(doc, indent=2) + "\n")
    assert ctx_in(p, "uninstall", "copilot").code == 0
    left = json.loads(ours.read_text())["hooks"]
    assert left["ErrorOccurred"] and not any(left.get(e) for e in ("SessionStart", "SessionEnd", "Stop"))


def test_user_scope_follows_the_agents_own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cp"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gh"))
    assert hi.settings_path(agents.get("copilot"), "user", str(tmp_path)) == str(tmp_path / "cp" / "hooks" / "ctx.json")
    assert hi.settings_path(agents.get("gemini"), "user", str(tmp_path)) == \
        str(tmp_path / "gh" / ".gemini" / "settings.json")


@pytest.mark.parametrize("agent,name", [("gemini", "settings.json"), ("copilot", "ctx.json")])
def test_the_examples_are_what_the_installer_writes(agent, name, tmp_path):
    from conftest import ROOT

    p = _project(tmp_path)
    assert ctx_in(p, "install", agent).code == 0
    path = agents.get(agent).install.paths("project", str(p))
    got = open(path).read().replace(f"{hi.ctx_command()} hook ", "ctx hook ")
    assert got == open(os.path.join(ROOT, "examples", agent, name)).read()


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
@pytest.mark.parametrize("event", ["SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "UserPromptSubmit",
                                   "Stop", "SubagentStop", "agentStop", "BeforeModel", "NoSuchEvent", "",
                                   "../../etc", "Stop; rm -rf /"])
def test_every_event_name_fails_open(agent, event, tmp_path):
    res = hook(agent, event, {"hook_event_name": event, "session_id": "f1", "cwd": str(tmp_path)},
               "--workspace", tmp_path)
    assert res.code == 0 and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_bad_input_exits_1_never_2(agent):
    for raw in ("not json", "[1, 2]", '{"session_id": 5, "cwd": ["x"]}'):
        res = run("hook", agent, "SessionStart", input=raw)
        assert res.code in (0, 1) and "Traceback" not in res.stderr, (raw, res.stderr)
