"""Check a request body against the official SDKs' request types (anthropic, openai), strictly.

The SDKs' request types are TypedDicts; pydantic validates their `Iterable` fields lazily, so a
body is walked here instead: every TypedDict's required keys present and no key it does not
declare, every Literal matched, every union matched by one member, lists walked to the end.
"""
from __future__ import annotations

import collections.abc
import typing

from typing_extensions import is_typeddict


def conforms(value, tp, path="body") -> list[str]:
    """Problems found (empty when `value` is a valid `tp`)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is typing.Any or tp is object:
        return []
    if origin is typing.Annotated:
        return conforms(value, args[0], path)
    if origin in (typing.Required, typing.NotRequired) or str(origin).endswith(("Required", "NotRequired", "ReadOnly")):
        return conforms(value, args[0], path)
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if origin is typing.Literal:
        return [] if value in args else [f"{path}: {value!r} not one of {args}"]
    if origin is typing.Union or str(type(tp)).endswith("UnionType'>"):
        errs = []
        for a in args:
            e = conforms(value, a, path)
            if not e:
                return []
            errs.append(e)
        best = min(errs, key=len)
        return best if len(best) == 1 else [f"{path}: matches none of {len(args)} alternatives: {best[0]}"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        hints = typing.get_type_hints(tp, include_extras=True)
        out = [f"{path}: unknown key {k!r}" for k in value if k not in hints]
        required = set(tp.__required_keys__) | {k for k, h in hints.items()
                                                  if str(typing.get_origin(h)).endswith(".Required")}
        required -= {k for k, h in hints.items() if str(typing.get_origin(h)).endswith(".NotRequired")}
        out += [f"{path}: missing {k!r}" for k in sorted(required) if k not in value]
        for k, v in value.items():
            if k in hints:
                out += conforms(v, hints[k], f"{path}.{k}")
        return out
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, typing.Iterable):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        out = []
        for i, v in enumerate(value):
            out += conforms(v, args[0] if args else typing.Any, f"{path}[{i}]")
        return out
    if origin in (dict, collections.abc.Mapping) or tp is dict:
        return [] if isinstance(value, dict) else [f"{path}: expected an object"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if tp in (int, float):
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{path}: expected a number"]
    if isinstance(tp, type) and hasattr(tp, "model_validate"):  # an SDK response model
        try:
            tp.model_validate(value)
        except Exception as e:  # noqa: BLE001 - pydantic's ValidationError
            return [f"{path}: {str(e).splitlines()[0]}"]
        return []
    if isinstance(tp, typing.TypeAliasType if hasattr(typing, "TypeAliasType") else ()):
        return conforms(value, tp.__value__, path)
    return []  # a type this walker does not know: not checked here


def anthropic_problems(body: dict) -> list[str]:
    from anthropic.types import MessageCreateParams

    return conforms({"model": "claude-x", "max_tokens": 1024, **body}, MessageCreateParams)


def openai_problems(body: dict) -> list[str]:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return conforms({"model": "gpt-x", **body}, CompletionCreateParamsNonStreaming)
