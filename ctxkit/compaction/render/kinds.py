"""What a session that is not code work needs at its cut: a dialogue's actions and their results, what an
exploration read and found, what research fetched."""
from __future__ import annotations

from ..model import State
from .phrases import code, cut, quote, unlabelled


def kind_lines(w, st: State) -> None:
    if st.actions:
        runs: list[list] = []   # the same call made again (with the same result) is one line with its count
        for a in st.actions:
            same = next((r for r in runs if r[0] == a), None)
            if same is not None:
                same[1] += 1
            else:
                runs.append([a, 1])
        for k, ((name, args, ok, result), n) in enumerate(runs):
            args = " ".join(args.replace("\\n", " ").split())     # JSON's escaped line breaks read as spaces
            g = f"act{k}"
            times = f" ({n} times)" if n > 1 else ""
            res = f" → failed: {cut(result, 160)}" if not ok else (f" → {cut(result, 100)}" if result else "")
            w.add("Actions and results", f"{k + 1}. {code(name)} {cut(args, 120)}{times}" + (res if not ok else ""), 1, group=g)
            w.add("Actions and results", f"{k + 1}. {code(name)} {cut(args, 400)}{times}{res}", 3, group=g)
    if st.kind == "research":
        for k, (src, text) in enumerate(st.sources[:12]):
            w.add("Sources", f"{code(cut(src, 120))}: {cut(' '.join(text.split()), 200)}", 2, group=f"src{k}")
    if st.kind in ("explore", "research") and st.current.words:
        for k, line in enumerate(st.current.words):     # the heading the point before carried: not again
            w.add("Findings", quote(line if k == 0 else unlabelled(line, st.current.words[k - 1]), 300), 1 if k < 2 else 2)
