"""External changes (seed 000 §6): git state since the last session, and workspace files
modified outside the agent. gitpython is imported only here, only when asked."""
from __future__ import annotations

import os
import re
from datetime import datetime, timezone

from ..core.timeutil import iso

CRED = re.compile(r"(?<!\w)(\w+://)[^/@\s]+@")


def scrub(url: str) -> str:
    """Never print credentials embedded in a remote URL."""
    return CRED.sub(r"\1", url)


def git_changes(repo_dir: str, since: datetime | None, max_commits: int = 20) -> dict:
    try:
        import git
    except ImportError as e:
        import shutil

        if shutil.which("git") is None or "git executable" in str(e).lower():
            return {"repo": None, "note": "the git command is not installed (gitpython needs it): no git changes"}
        return {"repo": None, "note": "gitpython is not installed"}
    try:
        repo = git.Repo(repo_dir, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return {"repo": None, "note": f"{repo_dir} is not in a git repository"}
    out: dict = {"repo": repo.working_tree_dir}
    try:
        out["branch"] = repo.active_branch.name
    except (TypeError, ValueError):
        out["branch"] = "(detached HEAD)"
    out["remotes"] = {r.name: scrub(next(iter(r.urls), "")) for r in repo.remotes}
    changed = []
    if repo.head.is_valid():
        for d in repo.index.diff(None):
            changed.append({"path": d.a_path, "status": "deleted" if d.deleted_file else "modified"})
        for d in repo.index.diff("HEAD"):
            changed.append({"path": d.a_path or d.b_path, "status": "staged"})
    changed += [{"path": p, "status": "untracked"} for p in repo.untracked_files]
    out["changed"] = changed
    commits = []
    if repo.head.is_valid():
        for c in repo.iter_commits(max_count=max_commits):
            when = c.committed_datetime.astimezone(timezone.utc)
            if since and when <= since:
                break
            commits.append({"sha": c.hexsha[:10], "when": iso(when), "author": c.author.name,
                            "subject": c.message.strip().split("\n")[0][:100]})
    out["commits_since"] = commits
    return out


CTX_FILES = {"CONTEXT.md", "MEMORY.md", ".gitignore"}
CTX_DIRS = {"observations", "archive", "sessions"}


def modified_files(workspace: str, since: datetime | None, limit: int = 50) -> list[dict]:
    if not since or not os.path.isdir(workspace):
        return []
    out = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if (not d.startswith(".") or d == ".ctx") and d not in CTX_DIRS]
        for f in files:
            if f in CTX_FILES or f.endswith((".lock", ".tmp")) or f.startswith("."):
                continue  # ctx's own state and bookkeeping are not outside changes
            p = os.path.join(root, f)
            try:
                m = datetime.fromtimestamp(os.path.getmtime(p), timezone.utc)
            except OSError:
                continue
            if m > since:
                out.append({"path": os.path.relpath(p, workspace), "modified": iso(m)})
    return sorted(out, key=lambda x: x["modified"])[-limit:]


def summary_lines(ch: dict, files: list[dict]) -> list[str]:
    if not ch.get("repo"):
        lines = [ch.get("note", "not a git repository")]
    else:
        lines = [f"Branch: {ch.get('branch')}"]
        n = len(ch.get("changed", []))
        lines.append(f"Uncommitted changes: {n} file{'s' if n != 1 else ''}" +
                     (f" ({', '.join(c['path'] for c in ch['changed'][:5])}{', …' if n > 5 else ''})" if n else ""))
        cs = ch.get("commits_since", [])
        lines.append(f"Commits since last session: {len(cs)}" +
                     (f" (latest: {cs[0]['subject']})" if cs else ""))
    if files:
        lines.append(f"Workspace files modified outside the agent: {', '.join(f['path'] for f in files[-5:])}")
    return lines
