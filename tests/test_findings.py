"""What a read-only span found (core.findings): the lines that answer a line of enquiry, with file
and line, on codebases of other languages than the corpus's; what one look-around showed, said as
a conclusion; what a web lookup said; the agent's own conclusions."""
import json

from ctxkit.core import findings as F
from ctxkit.core.focus import _entries
from ctxkit.core.kinds import _calls, _failed, read


def numbered(text: str) -> str:
    return "\n".join(f"{k:>6}→{ln}" for k, ln in enumerate(text.split("\n"), 1))


def reads(files: dict, ask: str, words: str = "") -> list[dict]:
    """A span: the request, then one Read per file (numbered as Claude Code numbers them)."""
    recs = [{"v": 1, "kind": "message", "id": "u", "role": "user", "content": ask}]
    for k, (path, text) in enumerate(files.items()):
        recs.append({"v": 1, "kind": "message", "id": f"a{k}", "role": "assistant", "content": words if k == 0 else "",
                     "tool_calls": [{"id": f"c{k}", "type": "function", "function": {
                         "name": "Read", "arguments": json.dumps({"file_path": f"/repo/{path}"})}}]})
        recs.append({"v": 1, "kind": "message", "id": f"t{k}", "role": "tool", "tool_call_id": f"c{k}",
                     "content": numbered(text)})
    return recs


ORDER = '''from billing.discounts import apply_discount


class OrderService:
    """Orders and their totals."""

    def __init__(self, repo):
        self.repo = repo

    def total(self, order_id):
        order = self.repo.get(order_id)
        subtotal = sum(line.price * line.qty for line in order.lines)
        return apply_discount(subtotal, order.customer)

    def _audit(self, order):
        pass'''
DISCOUNTS = '''RATES = {"gold": 0.1, "silver": 0.05}


def apply_discount(amount, customer):
    """Apply the customer's tier rate to an amount."""
    rate = RATES.get(customer.tier, 0)
    return amount * (1 - rate)'''
VIEWS = '''from services.order_service import OrderService


def order_total(request, order_id):
    service = OrderService(request.repo)
    return {"total": service.total(order_id)}'''


def index_of(files: dict) -> F.Index:
    recs = reads(files, "x")
    return F.Index(F.seen_files(_calls(recs), _failed))


def test_the_lines_that_answer_an_enquiry_come_with_their_file_and_line():
    idx = index_of({"services/order_service.py": ORDER, "billing/discounts.py": DISCOUNTS, "api/views.py": VIEWS})
    hits = F.key_lines("Where is `apply_discount` defined and how does `OrderService` use it?", idx, cwd="/repo")
    got = {(h.path, h.line): h.text for h in hits}
    assert got[("/repo/billing/discounts.py", 4)] == "def apply_discount(amount, customer):"  # where it is defined
    assert got[("/repo/services/order_service.py", 13)] == "return apply_discount(subtotal, order.customer)"  # the use
    said = F.said(hits, lambda p: F.rel_path(p, "/repo"))
    assert "`services/order_service.py`: " in said and "(line 13)" in said
    # a call's argument set just before it comes with it: how the call is wired
    hit = next(h for h in hits if h.line == 13)
    assert hit.context == (12, "subtotal = sum(line.price * line.qty for line in order.lines)")


def test_a_public_interface_with_its_docs_and_no_private_names():
    lines = F.numbered_lines(numbered(DISCOUNTS + "\n\n\ndef _round(x):\n    return x"))
    api = F.interface(lines)
    assert api == [(4, "def apply_discount(amount, customer):", "Apply the customer's tier rate to an amount.")]


WIDGET_A = '''export function FooWidget({ items }) {
  const handleClick = (id) => select(id)
  return (
    <div className="foo">
      <ul>
        {items.map((i) => <li key={i.id}>{i.name}</li>)}
      </ul>
      <button onClick={handleClick}>Pick</button>
      <footer>{renderFooter()}</footer>
    </div>
  )
}

function renderFooter() {
  return null
}'''
WIDGET_B = '''export function BarWidget({ items }) {
  const handleClick = (id) => select(id)
  return <span>{items.length}</span>
}'''


def test_two_files_an_enquiry_names_are_compared_and_markup_held_in_code_is_found():
    files = {"/repo/src/FooWidget.tsx": F.numbered_lines(numbered(WIDGET_A)),
             "/repo/src/BarWidget.tsx": F.numbered_lines(numbered(WIDGET_B))}
    common, only = F.compare(files, list(files))
    assert only["/repo/src/FooWidget.tsx"] == ["renderFooter"] and only["/repo/src/BarWidget.tsx"] == []
    assert F.markup_blocks(files["/repo/src/FooWidget.tsx"]) == [(4, 10, 1)]
    assert F.markup_blocks(files["/repo/src/BarWidget.tsx"]) == []  # one line of markup is not a template


def test_an_exploration_without_numbered_questions_answers_the_request_itself():
    span = reads({"services/order_service.py": ORDER, "billing/discounts.py": DISCOUNTS, "api/views.py": VIEWS},
                 "Find out how the order total is computed, discounts included.")
    found = dict((t, lines) for t, lines, _ in read(span))["Findings so far (no report yet)"]
    line = next(x for x in found if x.startswith("For the request: "))
    assert "`/repo/billing/discounts.py`" in line and "`def apply_discount(amount, customer):` (line 4)" in line


def probe(name, args, text, failed=False, enquiry=""):
    return F.probe(name, args, text, failed, _entries, enquiry)


def test_a_look_around_is_said_as_what_it_found():
    assert probe("Bash", {"command": "cat ~/.config/tool/settings.toml"},
                 "cat: /home/u/.config/tool/settings.toml: No such file or directory", True) == \
        "`/home/u/.config/tool/settings.toml` does not exist"
    assert probe("Bash", {"command": "jq --version"}, "bash: jq: command not found", True) == \
        "`jq` is not available in this shell"
    assert probe("Bash", {"command": "ls -la build/"},
                 "total 8\ndrwxr-xr-x 2 u u 4096 . \ndrwxr-xr-x 9 u u 4096 ..\n-rw-r--r-- 1 u u 12 app.js\n"
                 "-rw-r--r-- 1 u u 40 app.css") == "`build/` holds `app.js`, `app.css`"
    assert probe("Bash", {"command": "ls -t logs/*.log | head -1"}, "logs/run-0412.log") == \
        "the newest file under `logs/*.log`: `logs/run-0412.log`"
    said = probe("Read", {"file_path": "deploy.sh"},
                 numbered("#!/bin/sh\n# Ship the build to the web root.\nset -e\nmkdir -p /srv/www\ncp -r dist/* /srv/www/"))
    assert said == ("`deploy.sh` (5 lines): \"Ship the build to the web root.\"; what running it does: "
                    "`mkdir -p /srv/www` (line 4), `cp -r dist/* /srv/www/` (line 5)")


def test_a_web_lookup_says_what_it_found_on_its_question():
    text = ("Web search results for query: \"retry policy httpx\"\n\nLinks: [{\"title\": \"x\"}]\n\n"
            "Based on the search results, here's what I found:\n\n## Retries\n\n"
            "httpx has no built-in retry policy for requests. Transports accept `retries=3` for connection errors "
            "only. The weather is nice today in many places. The search results provided comprehensive information "
            "about httpx transports, but limited details about a retry policy.\n\n"
            "REMINDER: You MUST include the sources above.")
    said = F.web_found("retry policy httpx", text)  # not what the results themselves were like
    assert said == ["httpx has no built-in retry policy for requests",
                    "Transports accept `retries=3` for connection errors only"]


def test_a_web_search_says_its_best_sentences_first_and_the_rest_after_every_source():
    from ctxkit.core.focus import research_lines

    text = ("httpx has no built-in retry policy for requests. Transports accept `retries=3` for connection "
            "errors only. A retry policy for status codes needs a custom transport in httpx. The tenacity "
            "library wraps any httpx call in a retry policy.")
    span = [{"role": "user", "content": "look up retries"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "w", "type": "function", "function": {
                "name": "WebSearch", "arguments": json.dumps({"query": "retry policy httpx"})}}]},
            {"role": "tool", "tool_call_id": "w", "content": text}]
    lines = research_lines(span)
    assert len(lines) == 2 and lines[0].startswith('Searched the web for "retry policy httpx": "httpx has no built-in')
    assert lines[1].startswith('More from the search for "retry policy httpx": ')
    # every sentence on the question is said once: the best two first, the rest after every source
    for bit in ("retries=3", "custom transport", "tenacity"):
        assert (bit in lines[0]) != (bit in lines[1]), bit


def test_the_agents_own_conclusions_are_findings_not_intentions():
    span = [{"role": "user", "content": "check the setup"},
            {"role": "assistant", "content": "Let me look at the config.", "tool_calls": [{"id": "c"}]},
            {"role": "tool", "tool_call_id": "c", "content": "..."},
            {"role": "assistant", "content": "The cache is not configured in production, so I'll add it next. "
                                              "Let me read the docker file."}]
    assert F.conclusions(span) == ["The cache is not configured in production"]


def test_files_seen_through_the_shell_and_searches_keep_their_line_numbers():
    def call(i, cmd, out):
        return [{"v": 1, "kind": "message", "id": f"a{i}", "role": "assistant", "content": "",
                 "tool_calls": [{"id": f"c{i}", "type": "function",
                                 "function": {"name": "Bash", "arguments": json.dumps({"command": cmd})}}]},
                {"v": 1, "kind": "message", "id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": out}]
    span = call(0, "sed -n '20,22p' src/app.go", "func main() {\n\tserve(cfg)\n}") + \
        call(1, "grep -rn 'serve(' src", "src/app.go:21:\tserve(cfg)\nsrc/http.go:7:func serve(c Config) error {") + \
        call(2, "cat -n go.mod", "     1\tmodule example.com/app\n     2\tgo 1.22") + \
        call(3, "cat notes.txt | head", "a\nb")   # a pipe: not one file's text
    files = F.seen_files(_calls(span), _failed)
    assert files == {"src/app.go": {20: "func main() {", 21: "\tserve(cfg)", 22: "}"},
                     "src/http.go": {7: "func serve(c Config) error {"},
                     "go.mod": {1: "module example.com/app", 2: "go 1.22"}}
