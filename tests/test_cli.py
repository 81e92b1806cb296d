"""The command line and the sample bot as real processes.

``python -m service_client emulator`` (URLs and demo tokens printed, served until
Ctrl-C, ``--db`` keeps state across a restart), ``python -m service_client demo
--serve`` (transcript, then served until Ctrl-C) and ``samples/ping_bot.py``
(configured by ``SERVICE_*`` variables, answers ``!ping``, exits 2 without a
token). Every process is bounded: read with timeouts, interrupted with SIGINT and
killed in ``finally`` if it is still alive.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parent.parent
PING_BOT = ROOT / "samples" / "ping_bot.py"
#: Bound on a process start (imports, emulator start, demo conversation), seconds.
START_S = 30.0
#: Bound on the exit after SIGINT, seconds.
EXIT_S = 5.0


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Lines:
    """Reads a process stream on a daemon thread so tests can wait for lines with a bound."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), name="test-cli-reader", daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def until(self, predicate: Any, timeout: float = START_S) -> str:
        """Wait for a line for which ``predicate`` is true; return it (AssertionError at EOF or timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line within {timeout} s; got {self.lines}")
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"stream ended without a matching line; got {self.lines}")
            self.lines.append(line)
            if predicate(line):
                return line

    def rest(self, timeout: float = 2.0) -> list[str]:
        """Drain what is left after the process ended."""
        self._thread.join(timeout)
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return self.lines
            if line is not None:
                self.lines.append(line)


@contextmanager
def _process(args: list[str], env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], _Lines, _Lines]]:
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        yield proc, _Lines(proc.stdout), _Lines(proc.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, float]:
    """SIGINT the process; return (exit code, seconds it took to exit)."""
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(EXIT_S + 5)
    return code, time.monotonic() - started


def _fields(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key.isidentifier():
            out.setdefault(key, value.strip())
    return out


def _serve_emulator(port: int, *extra: str) -> Any:
    return _process([sys.executable, "-m", "service_client", "emulator", "--port", str(port), *extra], _clean_env())


# -- python -m service_client emulator -----------------------------------------------------------


def test_emulator_command_prints_urls_and_tokens_serves_them_and_stops_on_sigint():
    port = _free_port()
    with _serve_emulator(port, "--seed", "demo") as (proc, out, err):
        out.until(lambda line: line.startswith("Serving"))
        fields = _fields(out.lines)
        for key in ("base_url", "socket_url", "control_url", "bot_token", "human_token"):
            assert fields.get(key), (key, out.lines)
        assert fields["base_url"] == f"http://127.0.0.1:{port}/api/v2"
        assert fields["socket_url"] == f"http://127.0.0.1:{port}"
        assert fields["control_url"] == f"http://127.0.0.1:{port}/_emulator"
        assert fields["page_url"] == f"http://127.0.0.1:{port}/"
        me = requests.get(fields["base_url"] + "/auth/me",
                          headers={"Authorization": "Bearer " + fields["bot_token"]}, timeout=5)
        assert me.status_code == 200, me.text
        assert me.json()["user"]["name"] == "pingbot" and me.json()["user"]["isBot"] is True
        human = requests.get(fields["base_url"] + "/auth/me",
                             headers={"Authorization": "Bearer " + fields["human_token"]}, timeout=5)
        assert human.json()["user"]["name"] == "alice"
        # the user ids are printed too, beside the names
        assert fields["bot"] == f"{me.json()['user']['publicId']} (pingbot)"
        assert fields["human"] == f"{human.json()['user']['publicId']} (alice)"
        assert requests.get(fields["base_url"] + "/auth/me", timeout=5).status_code == 401
        code, took = _interrupt(proc)
        assert code == 0, err.rest()  # documented: 0 after Ctrl-C
        assert took < EXIT_S
        assert "Traceback" not in "\n".join(err.rest())


def test_emulator_command_json_prints_one_machine_readable_line_with_urls_users_tokens_and_pid():
    port = _free_port()
    with _serve_emulator(port, "--seed", "demo", "--json") as (proc, out, err):
        line = out.until(lambda line: True)
        described = json.loads(line)
        assert set(described) == {"base_url", "socket_url", "control_url", "page_url", "media_url", "pid", "users",
                                  "server", "channels"}
        assert described["base_url"] == f"http://127.0.0.1:{port}/api/v2"
        assert described["socket_url"] == f"http://127.0.0.1:{port}"
        assert described["control_url"] == f"http://127.0.0.1:{port}/_emulator"
        assert described["page_url"] == f"http://127.0.0.1:{port}/"
        assert described["pid"] == proc.pid
        assert [(u["name"], u["bot"]) for u in described["users"]] == [("pingbot", True), ("alice", False)]
        for user in described["users"]:
            me = requests.get(described["base_url"] + "/auth/me",
                              headers={"Authorization": "Bearer " + user["token"]}, timeout=5)
            assert me.status_code == 200 and me.json()["user"]["publicId"] == user["id"], me.text
        assert described["server"]["name"] == "Demo Server"
        assert set(described["channels"]) == {"general", "random", "dev", "lounge"}
        err.until(lambda line: line.startswith("Serving"))  # the people's line goes to stderr
        code, _ = _interrupt(proc)
        assert code == 0, err.rest()
        assert out.rest() == [line]  # stdout held that one line only


def test_emulator_command_json_without_a_seed_lists_no_users():
    port = _free_port()
    with _serve_emulator(port, "--json") as (proc, out, err):
        described = json.loads(out.until(lambda line: True))
        assert described["users"] == [] and described["server"] is None and described["channels"] == {}
        assert described["pid"] == proc.pid
        assert _interrupt(proc)[0] == 0, err.rest()


def test_emulator_command_db_keeps_state_across_a_restart(tmp_path):
    db = tmp_path / "emulator.sqlite3"
    port = _free_port()
    with _serve_emulator(port, "--db", str(db)) as (proc, out, err):
        out.until(lambda line: line.startswith("Serving"))
        control = _fields(out.lines)["control_url"]
        base = _fields(out.lines)["base_url"]
        created = requests.post(control + "/users", json={"name": "keeper", "bot": True}, timeout=5)
        assert created.status_code in (200, 201), created.text
        token, user_id = created.json()["token"], created.json()["user"]["publicId"]
        assert _interrupt(proc)[0] == 0, err.rest()
    port = _free_port()
    with _serve_emulator(port, "--db", str(db)) as (proc, out, err):
        out.until(lambda line: line.startswith("Serving"))
        base = _fields(out.lines)["base_url"]
        me = requests.get(base + "/auth/me", headers={"Authorization": "Bearer " + token}, timeout=5)
        assert me.status_code == 200, me.text
        assert me.json()["user"]["publicId"] == user_id
        assert _interrupt(proc)[0] == 0, err.rest()
    # without --db the state is in memory: a new process does not know the token
    port = _free_port()
    with _serve_emulator(port) as (proc, out, err):
        out.until(lambda line: line.startswith("Serving"))
        base = _fields(out.lines)["base_url"]
        me = requests.get(base + "/auth/me", headers={"Authorization": "Bearer " + token}, timeout=5)
        assert me.status_code == 401
        assert _interrupt(proc)[0] == 0, err.rest()


# -- python -m service_client demo --serve --------------------------------------------------------


def _run_curl_line(line: str) -> None:
    """Run a printed ``curl ... -X POST URL -H ... -d BODY`` line: with curl when installed, else its
    exact request through requests (same URL, header and body)."""
    argv = shlex.split(line)
    assert argv[0] == "curl" and argv[argv.index("-X") + 1] == "POST", argv
    if shutil.which("curl"):
        done = subprocess.run([*argv, "--max-time", "10", "-f"], capture_output=True, text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        return
    url = next(a for a in argv[1:] if a.startswith("http"))
    header = argv[argv.index("-H") + 1]
    body = argv[argv.index("-d") + 1]
    name, _, value = header.partition(":")
    answer = requests.post(url, data=body, headers={name.strip(): value.strip()}, timeout=10)
    assert answer.status_code == 201, answer.text


def test_demo_serve_prints_the_transcript_then_serves_until_sigint():
    # No PYTHONUNBUFFERED: the command itself must flush, so a pipe shows the lines while it serves
    env = _clean_env()
    with _process([sys.executable, "-m", "service_client", "demo", "--serve"], env) as (proc, out, err):
        out.until(lambda line: line.startswith("serving until Ctrl-C"))
        assert out.lines[:4] == [
            "#general  alice: !ping",
            "#general  pingbot: Pong!",
            "#general  alice: !echo hello world",
            "#general  pingbot: hello world",
        ]
        assert any("all 2 replies arrived" in line for line in out.lines)
        page = out.until(lambda line: line.strip().startswith("page:")).split(":", 1)[1].split()[0]
        control = out.until(lambda line: line.strip().startswith("control:")).split(":", 1)[1].strip()
        assert requests.get(control + "/requests", timeout=5).status_code == 200  # still serving
        shown = requests.get(page, timeout=5)  # the web page where a person chats with the bot
        assert shown.status_code == 200 and shown.headers["content-type"].startswith("text/html")
        users = requests.get(control + "/users", timeout=5).json()["users"]
        assert {u["user"]["name"] for u in users} >= {"alice", "pingbot"}
        human_id = out.until(lambda line: line.strip().startswith("human user id:")).split(":", 1)[1].strip()
        assert requests.get(f"{control}/users/{human_id}/presence", timeout=5).status_code == 200
        curl = out.until(lambda line: line.strip().startswith("post as alice:")).split(":", 1)[1].strip()
        assert human_id in curl
        out.until(lambda line: line.startswith("the conversation goes on below"))
        _run_curl_line(curl)  # posts !ping as alice: the bot answers, and the demo prints both lines
        assert out.until(lambda line: line.startswith("#general")) == "#general  alice: !ping"
        assert out.until(lambda line: line.startswith("#general")) == "#general  pingbot: Pong!"
        assert proc.poll() is None
        code, took = _interrupt(proc)
        # documented: --serve runs until Ctrl-C, then the demo's own status (0: every reply arrived)
        assert code == 0, err.rest()
        assert took < EXIT_S
        assert "Traceback" not in "\n".join(err.rest())


# -- samples/ping_bot.py ---------------------------------------------------------------------------


def _bot_env(emulator: Any, token: str) -> dict[str, str]:
    return _clean_env(SERVICE_TOKEN=token, SERVICE_BASE_URL=emulator.base_url,
                      SERVICE_SOCKET_URL=emulator.socket_url)


def test_ping_bot_sample_answers_ping_against_the_emulator_and_stops_on_sigint(world, emulator):
    channel = world.general["publicId"]
    with _process([sys.executable, str(PING_BOT)], _bot_env(emulator, world.bot_token)) as (proc, out, err):
        def logged_in() -> bool:  # socket connected, and the REST steps of login done at SERVICE_BASE_URL
            paths = {r["path"] for r in emulator.requests() if r["method"] == "GET" and r["status"] == 200}
            return emulator.connection_count() >= 1 and {"/auth/me", "/servers"} <= paths

        deadline = time.monotonic() + START_S
        while not logged_in():
            assert proc.poll() is None, err.rest()
            assert time.monotonic() < deadline, "the sample bot never logged in"
            time.sleep(0.05)
        posted = emulator.post_message(channel, world.human["publicId"], "!ping")["message"]

        def reply() -> dict[str, Any] | None:
            for message in emulator.messages(channel):
                author = message.get("author") or {}
                if author.get("publicId") == world.bot["publicId"]:
                    return message
            return None

        deadline = time.monotonic() + 10
        while reply() is None:
            assert proc.poll() is None, err.rest()
            assert time.monotonic() < deadline, f"no reply: {emulator.messages(channel)}"
            time.sleep(0.05)
        answer = reply()
        assert answer is not None and answer["content"] == "Pong!"
        assert answer.get("replyToId") in (None, posted["publicId"])
        code, took = _interrupt(proc)
        assert code == 0, err.rest()  # Client.run: Ctrl-C destroys the client and returns
        assert took < EXIT_S
        assert emulator.connection_count() == 0
        logs = "\n".join(err.rest())
        assert "Traceback" not in logs
        assert world.bot_token not in logs and world.bot_token not in "\n".join(out.rest())


def test_ping_bot_sample_without_token_exits_2_with_a_message():
    env = _clean_env(SERVICE_BASE_URL="http://127.0.0.1:9/api/v2", SERVICE_SOCKET_URL="http://127.0.0.1:9")
    proc = subprocess.run([sys.executable, str(PING_BOT)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "SERVICE_TOKEN" in proc.stderr


@pytest.mark.parametrize("argv", [["emulator", "--port", "notaport"], ["emulator", "--seed", "nope"]])
def test_emulator_command_rejects_bad_arguments_with_2(argv):
    proc = subprocess.run([sys.executable, "-m", "service_client", *argv], cwd=ROOT, env=_clean_env(),
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


# -- without the emulator extra, and --version -------------------------------------------------------

#: Runs ``python -m service_client ARGS`` with the named top-level modules made unimportable, as when
#: the ``emulator`` extra is not installed.
_WITHOUT_MODULES = """
import importlib.abc, runpy, sys
blocked = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["service_client", *sys.argv[2:]]
runpy.run_module("service_client", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(("argv", "blocked"), [
    (["demo"], "starlette"),
    (["demo", "--serve"], "uvicorn"),
    (["emulator"], "socketio,engineio"),
    (["emulator", "--seed", "demo"], "starlette"),
])
def test_without_the_emulator_extra_one_line_with_the_pip_command_and_exit_2(argv, blocked):
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_MODULES, blocked, *argv], cwd=ROOT, env=_clean_env(),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "pip install 'service_client[emulator]'" in lines[0]
    assert f"python -m service_client {argv[0]}" in lines[0]
    assert repr(blocked.split(",")[0]) in lines[0]  # names the missing module


def test_a_missing_module_of_the_package_itself_is_not_blamed_on_the_extra():
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_MODULES.replace(
        'name.split(".")[0] in blocked', 'name in blocked'), "service_client.emulator.rest_api", "emulator"],
        cwd=ROOT, env=_clean_env(), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert "ModuleNotFoundError" in proc.stderr and "pip install" not in proc.stderr


def test_version_flag_prints_the_package_version():
    import service_client

    for command in ([sys.executable, "-m", "service_client", "--version"],
                    [str(pathlib.Path(sys.executable).with_name("service-client")), "--version"]):
        proc = subprocess.run(command, cwd=ROOT, env=_clean_env(), capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"service_client {service_client.__version__}\n"


def test_demo_help_describes_what_the_demo_does():
    proc = subprocess.run([sys.executable, "-m", "service_client", "demo", "--help"], cwd=ROOT, env=_clean_env(),
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "Start the emulator in this process" in text and "!ping" in text and "alice" in text
    assert "Exits 0 when every reply arrived" in text
    assert "--serve after the demo, keep the emulator and the bot running until Ctrl-C" in text
