"""Packaging: typing seen by a user's mypy, the build without deprecation warnings, the sdist's
contents, and the demo from a wheel installed in a fresh virtual environment.

The typing checks run in the default suite (a few seconds). The build and the fresh environment
need the package registry and take a minute: they are marked ``slow`` (CI runs them with
``-m slow``).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
USER_SCRIPT = ROOT / "tests" / "typecheck" / "user_bot.py"
#: A shared mypy cache, so the second run of the suite takes about a second.
MYPY_CACHE = ROOT / ".mypy_cache" / "user-script"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTHONPATH", "MYPYPATH"))}
    return env


def _mypy(script: pathlib.Path, *extra: str, cache: pathlib.Path = MYPY_CACHE) -> subprocess.CompletedProcess[str]:
    """``mypy --strict script`` run from the script's directory, outside the checkout: mypy can only
    find service_client through the installation."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(cache),
         *extra, script.name],
        cwd=script.parent, env=_env(), capture_output=True, text=True, timeout=300,
    )


def test_mypy_sees_the_installed_package_from_a_user_script(tmp_path):
    script = tmp_path / "user_bot.py"
    shutil.copy(USER_SCRIPT, script)
    done = _mypy(script)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_reports_type_errors_against_the_installed_package(tmp_path):
    # Proves the check above uses the package's real types: wrong uses are reported.
    script = tmp_path / "wrong.py"
    script.write_text(textwrap.dedent("""\
        from service_client import Client, CommandDispatcher

        client = Client()
        uptime: int = client.uptime
        CommandDispatcher(client, prefix=1)
    """))
    done = _mypy(script)
    assert done.returncode == 1
    assert "Cannot find implementation or library stub" not in done.stdout
    assert 'wrong.py:4: error: Incompatible types in assignment (expression has type "int | None"' in done.stdout
    assert "wrong.py:5: error: Argument \"prefix\" to \"CommandDispatcher\"" in done.stdout


# -- build, sdist, wheel in a fresh environment (slow) -------------------------------------------------


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pathlib.Path, str]]:
    """The sdist and the wheel built by ``python -m build`` from a copy of the checkout, and its output."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        env=_env(), capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield out, done.stdout + done.stderr


@pytest.mark.slow
def test_build_gives_no_deprecation_warning_and_spdx_metadata(dist):
    out, log = dist
    assert "deprecat" not in log.lower(), [line for line in log.splitlines() if "eprecat" in line]
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        metadata = next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        names = zf.namelist()
    assert "License-Expression: ISC" in metadata.splitlines()
    # The fast JSON decoder of the socket reader comes with a plain install, where it is built.
    assert 'Requires-Dist: msgspec>=0.18; platform_python_implementation == "CPython"' in metadata.splitlines()
    # redis-py's C reply parser comes with the redis extra (the fleet's throughput depends on it).
    # (The test extra brings it too, so that CI's fleet runs read replies as a user's install does.)
    hiredis = [line for line in metadata.splitlines()
               if line.startswith("Requires-Dist: hiredis") and 'extra == "redis"' in line]
    assert len(hiredis) == 1 and '"CPython"' in hiredis[0], hiredis
    assert not any(line.startswith("Classifier: License ::") for line in metadata.splitlines())
    assert {"Homepage", "Source", "Issues", "Documentation"} <= {
        line.split(": ", 1)[1].split(",")[0] for line in metadata.splitlines() if line.startswith("Project-URL:")}
    assert "service_client/py.typed" in names and "service_client/demo_bot.py" in names
    assert not any(n.startswith(("tests/", "samples/", "benchmarks/")) for n in names)


@pytest.mark.slow
def test_sdist_carries_tests_samples_docs_and_benchmarks(dist):
    out, _ = dist
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    wanted = {path for path in tracked if path.startswith(("tests/", "samples/", "docs/", "benchmarks/"))}
    wanted |= {"LICENSE", "README.rst", "pyproject.toml", "setup.cfg", "setup.py", ".ci/run"}
    assert wanted - names == set()
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)


@pytest.mark.slow
def test_the_demo_runs_from_a_wheel_in_a_fresh_virtual_environment(dist, tmp_path):
    out, _ = dist
    (wheel,) = out.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    work = tmp_path / "elsewhere"  # not the checkout: only the installed package can be imported
    work.mkdir()

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), *args], cwd=work, env=_env(), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    install = run("-m", "pip", "install", "-q", str(wheel), timeout=600)
    assert install.returncode == 0, install.stderr
    where = run("-c", "import service_client; print(service_client.__file__)")
    assert str(venv) in where.stdout, where.stdout + where.stderr
    decoder = run("-c", "from service_client.gateway import decoder; print(decoder.NAME)")
    assert decoder.stdout.strip() == "msgspec", decoder.stdout + decoder.stderr
    without = run("-m", "service_client", "demo")
    assert without.returncode == 2 and without.stdout == ""
    assert len(without.stderr.splitlines()) == 1 and "pip install 'service_client[emulator]'" in without.stderr

    install = run("-m", "pip", "install", "-q", f"service_client[emulator] @ {wheel.as_uri()}", timeout=600)
    assert install.returncode == 0, install.stderr
    demo = run("-m", "service_client", "demo")
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.splitlines()[:4] == [
        "#general  alice: !ping",
        "#general  pingbot: Pong!",
        "#general  alice: !echo hello world",
        "#general  pingbot: hello world",
    ]
    version = run("-m", "service_client", "--version")
    assert version.stdout.startswith("service_client ")

    # mypy, from this interpreter, sees the wheel's package and types in that environment
    script = work / "user_bot.py"
    shutil.copy(USER_SCRIPT, script)
    done = _mypy(script, "--python-executable", str(python), cache=tmp_path / "mypy-cache")
    assert done.returncode == 0, done.stdout + done.stderr
