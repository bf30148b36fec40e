"""The examples of the package README and of docs/clients/python.md, run as a user would
(``python example.py``, configured only by FLASHBULB_URL / FLASHBULB_API_KEY), each kept
byte-identical to both pages' copies so none can rot; then the same examples again from the built
wheel, installed into a fresh virtual environment."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

from flashbulb import Flashbulb, FlashbulbError

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLES = PACKAGE / "examples"
README = PACKAGE / "README.md"
PAGE = PACKAGE.parents[1] / "docs" / "clients" / "python.md"


def _quickstart(out: list[str], again: bool) -> None:
    # Run again in the same workspace, the first run's memory (revised to coffee) may come first.
    first = ("Alice prefers green tea in the morning", "Alice switched to coffee") if again else ("Alice prefers green tea in the morning",)
    assert out[0].startswith(first) and out[1] == "404 not_found", out


def _conversation(out: list[str], again: bool) -> None:
    # The messages carry ids: run again, the conversation still holds three.
    assert out == ["3 True", "['Caroline', 'Caroline', 'Melanie']"], out


def _langgraph_store(out: list[str], again: bool) -> None:
    assert out == ["['Alice drinks green tea']"], out  # a put on the same key revises: still one item


def _langgraph_async(out: list[str], again: bool) -> None:
    assert out == ["['Bob plays chess on Fridays']"], out


#: What each example prints, checked line by line (``again``: not the first run in its workspace).
EXPECTED: dict[str, Callable[[list[str], bool], None]] = {
    "quickstart.py": _quickstart, "conversation.py": _conversation, "langgraph_store.py": _langgraph_store,
    "langgraph_async.py": _langgraph_async,
}


def run(python: str, example: str, server, workspace: str, cwd: str | None = None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLASHBULB_")}
    env.update({"FLASHBULB_URL": server.url, "FLASHBULB_API_KEY": server.admin_key, "FLASHBULB_WORKSPACE": workspace})
    out = subprocess.run([python, str(EXAMPLES / example)], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.fixture()
def no_agent_memory(admin: Flashbulb) -> None:
    """The LangGraph examples make the workspace they use: start without it."""
    try:
        admin.workspaces_delete("agent-memory")
    except FlashbulbError as err:
        if err.error_code != "not_found":
            raise


def test_every_example_is_checked() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("page", [README, PAGE], ids=["README", "docs page"])
def test_the_pages_show_every_example_verbatim_and_no_other(page: Path) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert blocks == [(EXAMPLES / name).read_text(encoding="utf-8") for name in EXPECTED]


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_the_example_runs_and_runs_again(example: str, server, workspace: str, no_agent_memory: None) -> None:
    for again in (False, True):
        EXPECTED[example](run(sys.executable, example, server, workspace), again)


def test_the_wheel_installs_into_a_fresh_environment_and_runs_every_example(server, workspace: str, no_agent_memory: None) -> None:
    with tempfile.TemporaryDirectory(prefix="flashbulb-wheel-") as tmp:
        build = subprocess.run([sys.executable, "-m", "build", "--outdir", f"{tmp}/dist", str(PACKAGE)],
                               capture_output=True, text=True, timeout=600)
        assert build.returncode == 0, build.stdout + build.stderr
        (wheel,) = Path(tmp, "dist").glob("flashbulb-*-py3-none-any.whl")
        assert list(Path(tmp, "dist").glob("flashbulb-*.tar.gz")), "python -m build makes the sdist too"
        subprocess.run([sys.executable, "-m", "venv", f"{tmp}/venv"], check=True, timeout=120)
        python = f"{tmp}/venv/bin/python"
        install = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[langgraph]"],
                                 capture_output=True, text=True, timeout=600)
        assert install.returncode == 0, install.stdout + install.stderr
        where = subprocess.run([python, "-c", "import flashbulb, pathlib; p = pathlib.Path(flashbulb.__file__).parent; "
                                "print(p, (p / 'py.typed').exists(), (p / 'models.py').exists())"],
                               cwd=tmp, capture_output=True, text=True, check=True).stdout.split()
        assert "site-packages" in where[0] and where[1:] == ["True", "True"], where
        for example in sorted(EXPECTED):
            EXPECTED[example](run(python, example, server, workspace, cwd=tmp), False)
