"""The tool-schema registry: OpenAI function schemas in JSON or YAML."""
from __future__ import annotations

import json
import os

from ..errors import InputError
from ..io.jsonl import loads


def load_registry(path: str) -> list[dict]:
    """A list of tool schemas from a JSON/YAML file (a list, or {"tools": [...]}, or {name: schema})."""
    if not os.path.exists(path):
        raise InputError(path, None, "no such file")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(path, raw.count(b"\n", 0, e.start) + 1, "not UTF-8 text",
                         hint="re-save the file as UTF-8") from None
    if not path.endswith((".yaml", ".yml")):
        data = loads(text, path)  # bad JSON, NaN, nesting too deep: the file and line
    else:
        data = None
    try:
        if path.endswith((".yaml", ".yml")):
            import yaml

            data = yaml.safe_load(text)
    except RecursionError:
        raise InputError(path, None, "invalid YAML: nested too deeply") from None
    except Exception as e:  # yaml errors
        mark = getattr(e, "problem_mark", None)
        raise InputError(path, mark.line + 1 if mark else None, f"invalid YAML: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    elif isinstance(data, dict):
        bad = next((k for k, v in data.items() if v is not None and not isinstance(v, dict)), None)
        if bad is not None:
            raise InputError(path, None, f"tool {bad!r}: expected an object (its schema)")
        data = [{"type": "function", "function": {"name": k, **(v or {})}} for k, v in data.items()]
    if not isinstance(data, list):
        raise InputError(path, None, "expected a list of tool schemas")
    out = []
    for i, t in enumerate(data, 1):
        if not isinstance(t, dict):
            raise InputError(path, None, f"tool {i}: expected an object")
        fn = t.get("function", t)
        if not isinstance(fn, dict) or not fn.get("name"):
            raise InputError(path, None, f"tool {i}: missing name")
        out.append({"type": "function", "function": fn})
    return out


def tool_name(schema: dict) -> str:
    return schema["function"]["name"]


def schema_tokens(tok, tools: list[dict]) -> int:
    return sum(tok.count(json.dumps(t, ensure_ascii=False)) for t in tools)
