"""``samples/notebook.ipynb`` runs top to bottom in a real Jupyter kernel (nbclient, ipykernel).

Marked ``slow`` (a kernel start takes a few seconds): CI runs it with ``python -m pytest -m slow``.
Every cell is bounded (60 s), and so is the kernel's start.
"""

from __future__ import annotations

import pathlib
import warnings
from typing import Any

import pytest

pytestmark = pytest.mark.slow

NOTEBOOK = pathlib.Path(__file__).resolve().parent.parent / "samples" / "notebook.ipynb"
CELL_TIMEOUT_S = 60


def _html(cell: Any) -> str:
    return "".join(out.get("data", {}).get("text/html", "") for out in cell.get("outputs", ()))


def _text(cell: Any) -> str:
    parts = []
    for out in cell.get("outputs", ()):
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_the_sample_notebook_runs_and_shows_tables(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (part of the test extra)")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (part of the test extra)")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed (part of the test extra)")
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # the paths Jupyter uses from now on; no warning
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit it without outputs"
    runner = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, startup_timeout=CELL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with warnings.catch_warnings():
        # Jupyter's own libraries warn about their deprecations; ours still fail the test.
        for module in ("jupyter_client", "jupyter_core", "nbclient", "zmq", "traitlets"):
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)
        runner.execute()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert not [out for cell in code for out in cell.outputs if out.output_type == "error"]
    user, guilds, channels, sent, found, history, frame, members, end = (
        code[1], code[2], code[4], code[5], code[6], code[7], code[8], code[9], code[10])
    assert "<table" in _html(user) and "pingbot" in _html(user)
    shown = "".join(str(out) for cell in code for out in cell.outputs)
    assert "token" not in shown.replace("token=[REDACTED]", "")        # no token, not even its name
    assert "Demo Server" in _html(guilds)
    assert "general" in _html(channels) and "random" in _html(channels)
    assert "Hello from a notebook: &lt;3 &amp; thanks" in _html(sent)      # decoded, then escaped once
    assert "the notebook works" in _text(found) and "lunch" not in _text(found)
    assert "lunch at noon?" in _html(history) and "History of channel" in _html(history)   # the iterator itself
    assert "lunch at noon?" in _html(frame) and "created_at" in _html(frame)      # a pandas DataFrame
    assert "pingbot" in _html(members) and "alice" in _html(members)              # the demo bot lists members
    assert "DESTROYED" in _text(end)

