"""Run every benchmark and print one JSON line per result (never run by the tests)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import bench_count  # noqa: E402
import bench_memory  # noqa: E402
import bench_startup  # noqa: E402
import bench_ttok  # noqa: E402
import bench_relevance  # noqa: E402
import bench_compact  # noqa: E402
import bench_prompt  # noqa: E402
import bench_semantic  # noqa: E402
import bench_streaming  # noqa: E402
import bench_crash  # noqa: E402
import bench_defaults  # noqa: E402
import bench_hooks  # noqa: E402
import bench_drop_sets  # noqa: E402
import bench_redact  # noqa: E402
import bench_install  # noqa: E402

if __name__ == "__main__":
    only = set(sys.argv[1:])
    for mod in (bench_startup, bench_memory, bench_count, bench_ttok, bench_prompt, bench_semantic, bench_compact,
                bench_relevance, bench_streaming, bench_defaults, bench_crash, bench_hooks, bench_drop_sets,
                bench_redact, bench_install):
        name = mod.__name__.replace("bench_", "")
        if not only or name in only:
            mod.main()
