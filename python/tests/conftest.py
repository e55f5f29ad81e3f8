"""Fixtures of the latte module's tests: the repository, the built module, the shipped pack."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("LATTE_BUILD_DIR", ROOT / "build"))
# The module this build made, ahead of any installed one.
sys.path.insert(0, str(BUILD / "python"))

PACK = ROOT / "data" / "packs" / "xnnpack-1thread-fp32.json.gz"
MODELS = ROOT / "models"


@pytest.fixture(scope="session")
def pack():
    import latte

    return latte.Pack.load(str(PACK))


@pytest.fixture(scope="session")
def model_path():
    return str(MODELS / "face_detection_short_range.tflite")


def run_cli(*args):
    """Runs build/latte; returns (exit code, stdout, stderr)."""
    done = subprocess.run([str(BUILD / "latte"), *args], capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def cli_error(*args):
    """The one line the CLI prints for a refused input, without its 'error: ' (exit code 2 checked)."""
    code, _, err = run_cli(*args)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0][len("error: "):]
