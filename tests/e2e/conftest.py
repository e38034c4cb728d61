"""The end-to-end tests print one summary line per real client at the end of the run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_terminal_summary(terminalreporter):
    import clients

    for line in clients.SUMMARIES:
        terminalreporter.write_line(line)
