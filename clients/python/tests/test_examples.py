"""The package README's examples, run as a user would (``python example.py``), and kept
byte-identical to the README's copies so neither can rot."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flashbulb import Flashbulb

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
README = Path(__file__).resolve().parents[1] / "README.md"


def run(example: str, server, workspace: str) -> str:
    env = {**os.environ, "FLASHBULB_URL": server.url, "FLASHBULB_API_KEY": server.admin_key, "FLASHBULB_WORKSPACE": workspace}
    out = subprocess.run([sys.executable, str(EXAMPLES / example)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_the_readme_shows_the_example_verbatim(example: str) -> None:
    assert (EXAMPLES / example).read_text(encoding="utf-8") in README.read_text(encoding="utf-8")


def test_quickstart(server, admin: Flashbulb) -> None:
    out = run("quickstart.py", server, "default").splitlines()
    assert out[0].startswith("Alice prefers green tea in the morning") and out[1] == "404 not_found"


def test_langgraph_store_example(server, workspace: str) -> None:
    assert run("langgraph_store.py", server, workspace).strip() == "['Alice drinks green tea']"
