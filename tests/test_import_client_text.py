"""The client's own text, one definition (core.client_text): what import marks, what requests
and every other reader of the user's and the agent's words leave out, and what stays."""
import pytest

from ctxkit import records as R
from ctxkit.core import client_text as C
from ctxkit.core.requests import clean_request, request_text

REMINDER = "<system-reminder>\n<total_tokens>14977717 tokens left</total_tokens>\n</system-reminder>"


@pytest.mark.parametrize("text, own", [
    (f"# proj\nhello\n\n{REMINDER}", "# proj\nhello"),                       # Claude Code, after a result
    (f"{REMINDER}\nfix the login", "fix the login"),                           # ... before a prompt
    ("<current_datetime>2026-06-25T03:50:44+02:00</current_datetime>\n\nand fix\n\n<system_reminder>\n"
     "<sql_tables>Available tables: todos</sql_tables>\n</system_reminder>", "and fix"),  # Copilot CLI
    ("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>", ""),    # Codex
    ("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nUse bun.\n</INSTRUCTIONS>", ""),
    ("<session_context>\nThis is the Gemini CLI.\n</session_context>", ""),     # Gemini CLI
    ("<task>\nAdd /health\n</task>\n<environment_details>\n# Files\n</environment_details>", "<task>\nAdd /health\n</task>"),
    ('The command finished: "second\\n\\n<system-reminder>\\n<total_tokens>1 tokens left</total_tokens>\\n'
     '</system-reminder>"', 'The command finished: "second\\n\\n "'),       # quoted by the model, escaped
    ("plain words with <b>tags</b> of their own", "plain words with <b>tags</b> of their own"),
    ("strip the `<system-reminder>` blocks from the facts", "strip the `<system-reminder>` blocks from the facts"),
    ("fix it\n<system-reminder>\nleft open by the client", "fix it"),
])
def test_own_text(text, own):
    assert C.own_text(text) == own


def test_mark_flags_and_keeps_the_text():
    user = R.make("message", id="u", role="user", content=REMINDER)
    assert C.mark(user)["flags"] == ["meta"] and user["content"] == REMINDER
    mixed = C.mark(R.make("message", id="u2", role="user", content=f"fix it\n{REMINDER}"))
    assert mixed["flags"] == ["client_text"] and request_text(mixed) == "fix it"
    tool = C.mark(R.make("message", id="t", role="tool", tool_call_id="c", content=f"ok\n\n{REMINDER}"))
    assert tool["flags"] == ["client_text"] and C.own_words(tool) == "ok"
    system = C.mark(R.make("message", id="s", role="system", content=REMINDER))
    assert "flags" not in system  # a system prompt is the client's anyway
    plain = C.mark(R.make("message", id="a", role="assistant", content="done"))
    assert "flags" not in plain and C.own_words(plain) == "done"


def test_derivation_view_reads_own_words_and_leaves_the_records():
    rec = C.mark(R.make("message", id="t", role="tool", tool_call_id="c", content=f"ok\n\n{REMINDER}"))
    (view,) = C.derivation_view([rec])
    assert view["content"] == "ok" and rec["content"].endswith("</system-reminder>")


def test_requests_use_the_one_definition():
    assert clean_request("<user_instructions>be brief</user_instructions>") is None
    assert clean_request("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>") is None
    assert clean_request("New instructions for task continuation:\n<user_message>\ndocument it\n</user_message>") == \
        "document it"
    assert clean_request("The user provided the following feedback:\n<feedback>\nadd /ready\n</feedback>") == "add /ready"
