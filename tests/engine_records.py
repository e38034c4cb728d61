"""Records as `ctx import` writes them, for the engine's tests: a message, an assistant call with its result
(flagged an error, or as never recorded), a shell command, an edit."""
import json

N = [0]


def rec(role, content="", fmt="claude-code", **kw):
    N[0] += 1
    r = {"v": 1, "kind": "message", "session": "s", "id": f"r{N[0]}", "role": role, "content": content,
         "source": {"format": fmt}}
    r.update(kw)
    return r


def call(name, fmt="claude-code", result="", error=False, text="", missing=False, **args):
    """An assistant record making one call, and its result record (`missing`: none was recorded)."""
    N[0] += 1
    cid = f"c{N[0]}"
    a = rec("assistant", text, fmt=fmt, tool_calls=[{"id": cid, "type": "function",
                                                     "function": {"name": name, "arguments": json.dumps(args)}}])
    flags = (["error"] if error else []) + (["missing_result"] if missing else [])
    r = rec("tool", result, fmt=fmt, tool_call_id=cid, name=name, flags=flags)
    return [a, r]


def bash(cmd, output="", code=0, **kw):
    out = (f"Exit code {code}\n" + output) if code else output
    return call("Bash", result=out, error=bool(code), command=cmd, **kw)


def edit(path, old="a", new="b", **kw):
    return call("Edit", file_path=path, old_string=old, new_string=new, result="The file has been updated.", **kw)


def kinds(evs, cls):
    return [e for e in evs if isinstance(e, cls)]
