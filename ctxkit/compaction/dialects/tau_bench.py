"""tau-bench's customer-service tools: every call is a domain action (look up, book, change, cancel),
except thinking, arithmetic and the hand-over to a person."""
from __future__ import annotations

import json

from ..model import Action, Transfer


class TauBench:
    name = "tau-bench"
    formats = ("tau-bench",)

    def read(self, call, memo: dict):
        if call.name in ("think", "calculate"):
            return []
        args = call.args if isinstance(call.args, dict) else {}
        if call.name.startswith("transfer_to_human"):
            return [Transfer(call.at, reason=str(args.get("summary") or ""), ts=call.ts)]
        text = call.args if isinstance(call.args, str) else json.dumps(call.args, ensure_ascii=False)
        result = call.result or ""
        return [Action(call.at, name=call.name, args=text[:2000], result=result[:4000],
                       ok=not (call.error or result.startswith("Error")), ts=call.ts)]


ENTRIES = [TauBench()]
