"""Issue 2, the main job: ``python -m service_client demo`` exits 0 and prints the transcript."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_demo_command_prints_the_transcript_and_exits_0():
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    proc = subprocess.run(
        [sys.executable, "-m", "service_client", "demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "#general  alice: !ping",
        "#general  pingbot: Pong!",
        "#general  alice: !echo hello world",
        "#general  pingbot: hello world",
    ]
    assert "all 2 replies arrived" in proc.stdout


def test_demo_reports_a_missing_reply(monkeypatch, capsys):
    from service_client import __main__ as cli

    monkeypatch.setattr(cli, "DEMO_SCRIPT", (("!ping", "Pong!"), ("!nosuchcommand", "anything")))
    monkeypatch.setattr(cli, "DEMO_REPLY_TIMEOUT_S", 1.0)
    assert cli.run_demo() == 1
    err = capsys.readouterr().err
    assert "expected 'anything' in reply to '!nosuchcommand'" in err
