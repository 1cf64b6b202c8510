"""The context window asked of an OpenAI-compatible server: each server's shape, a silent one, a slow one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from agentcli.agent.compaction import Compactor, ContextPolicy
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.llm.server_window import ServerWindow, choose, discover, server_root
from tests.local_http import serving_app

Routes = dict[tuple[str, str], Any]  # (method, path) -> JSON answer

# Shapes as the servers' sources write them (llama.cpp tools/server/server.cpp handle_props / handle_models,
# vLLM's ModelCard, LM Studio's REST API v0, Ollama's ShowResponse and ProcessResponse).
LLAMACPP: Routes = {
    ("GET", "/props"): {"default_generation_settings": {"n_ctx": 8192, "params": {}}, "total_slots": 1,
                        "model_path": "/models/smollm2.gguf", "build_info": "b6000"},
    ("GET", "/v1/models"): {"object": "list", "models": [{"name": "smol", "model": "smol"}],
                            "data": [{"id": "smol", "object": "model", "owned_by": "llamacpp",
                                      "meta": {"n_ctx_train": 8192 * 4, "n_vocab": 49152}}]},
}
VLLM: Routes = {
    ("GET", "/v1/models"): {"object": "list", "data": [
        {"id": "other", "object": "model", "max_model_len": 4096},
        {"id": "smol", "object": "model", "owned_by": "vllm", "root": "HuggingFaceTB/SmolLM2", "max_model_len": 16384},
    ]},
}
LMSTUDIO: Routes = {
    ("GET", "/api/v0/models"): {"object": "list", "data": [
        {"id": "smol", "object": "model", "type": "llm", "state": "loaded", "max_context_length": 131072,
         "loaded_context_length": 12000},
        {"id": "embed", "object": "model", "type": "embeddings", "state": "not-loaded", "max_context_length": 2048},
    ]},
    ("GET", "/v1/models"): {"object": "list", "data": [{"id": "smol", "object": "model"}]},
}
OLLAMA: Routes = {
    ("POST", "/api/show"): {"modelfile": "FROM smol", "parameters": "num_ctx       6144"
                            + '\nstop "<|im_end|>"',
                            "details": {"family": "llama"},
                            "model_info": {"general.architecture": "llama", "llama.context_length": 8192}},
    ("GET", "/v1/models"): {"object": "list", "data": [{"id": "smol:latest", "object": "model"}]},
}
OLLAMA_DEFAULTS: Routes = {  # no num_ctx in the Modelfile: the running model's window from /api/ps
    ("POST", "/api/show"): {"parameters": 'stop "<|im_end|>"', "model_info": {"qwen2.context_length": 32768}},
    ("GET", "/api/ps"): {"models": [{"name": "smol:latest", "model": "smol:latest", "context_length": 4096}]},
}
TRAINING_ONLY: Routes = {  # only a training maximum, below the default: an upper bound worth using
    ("POST", "/api/show"): {"parameters": "", "model_info": {"llama.context_length": 8192}},
}


@asynccontextmanager
async def _serve(routes: Routes, slow: bool = False) -> AsyncIterator[tuple[str, list[str]]]:
    seen: list[str] = []
    release = asyncio.Event()  # a slow server answers only once the test is over

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(f"{request.method} {request.path}")
        if slow:
            await release.wait()
        answer = routes.get((request.method, request.path))
        return web.json_response(answer) if answer is not None else web.Response(status=404, text="not found")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    async with serving_app(app) as base:
        try:
            yield f"{base}/v1", seen
        finally:
            release.set()  # before the server's clean-up, which waits for the slow answers


@pytest.mark.parametrize(("routes", "tokens", "source"), [
    (LLAMACPP, 8192, "llama.cpp /props"),
    (VLLM, 16384, "vLLM /v1/models max_model_len"),
    (LMSTUDIO, 12000, "LM Studio /api/v0/models loaded_context_length"),
    (OLLAMA, 6144, "Ollama /api/show num_ctx"),
    (OLLAMA_DEFAULTS, 4096, "Ollama /api/ps context_length"),
    (TRAINING_ONLY, 8192, "Ollama /api/show llama.context_length"),
], ids=["llama.cpp", "vllm", "lmstudio", "ollama", "ollama-ps", "training-max"])
async def test_each_server_shape_gives_its_loaded_window(routes: Routes, tokens: int, source: str) -> None:
    async with _serve(routes) as (url, seen):
        found = await discover(url, "smol", "not-needed", timeout=5, default=128_000)
        assert found is not None and (found.tokens, found.source) == (tokens, source)
        assert seen[0] == "GET /props"  # asked in order, until a window the server runs with


async def test_a_training_maximum_above_the_default_is_not_a_window() -> None:
    routes: Routes = {("GET", "/v1/models"): {"data": [{"id": "smol", "meta": {"n_ctx_train": 1_000_000}}]}}
    async with _serve(routes) as (url, _):
        assert await discover(url, "smol", "", timeout=5, default=128_000) is None


async def test_a_server_that_answers_nothing_useful_keeps_the_default() -> None:
    routes: Routes = {("GET", "/v1/models"): {"object": "list", "data": [{"id": "smol", "object": "model"}]},
                      ("GET", "/props"): {"default_generation_settings": {"n_ctx": "big"}}}
    async with _serve(routes) as (url, seen):
        assert await discover(url, "smol", "", timeout=5, default=128_000) is None
        assert len(seen) == 5


async def test_a_slow_server_times_out_quickly() -> None:
    async with _serve(LLAMACPP, slow=True) as (url, seen):
        assert await discover(url, "smol", "", timeout=0.2, default=128_000) is None
        assert seen  # it was asked; the answer never came in time


async def test_nothing_listening_is_no_answer() -> None:
    assert await discover("http://127.0.0.1:9/v1", "smol", "", timeout=2, default=128_000) is None


def test_shapes_pick_the_loaded_window_over_the_training_maximum() -> None:
    training, loaded = ServerWindow(32768, "t", loaded=False), ServerWindow(4096, "l")
    assert choose([training, loaded], 128_000) == loaded
    assert choose([training], 16_000) is None and choose([training], 128_000) == training
    assert server_root("http://h:1/v1/") == "http://h:1" and server_root("http://h:1/api") == "http://h:1/api"


def _model(url: str, **kw: Any) -> ResolvedModel:
    return ResolvedModel("main", "openai-compatible", "smol", url, "not-needed", 8192, **kw)


async def test_the_pool_asks_each_server_once_per_session() -> None:
    async with _serve(LLAMACPP) as (url, seen):
        pool = ProviderPool(RetryPolicy())
        first, second = await asyncio.gather(
            pool.server_window(_model(url), timeout=5, default=128_000),
            pool.server_window(_model(url), timeout=5, default=128_000))
        again = await pool.server_window(_model(url), timeout=5, default=128_000)
        assert first == second == again and first is not None and first.tokens == 8192
        assert seen.count("GET /props") == 1
        await pool.aclose()


async def test_the_compactor_keeps_the_context_in_the_servers_window() -> None:
    async with _serve(LLAMACPP) as (url, _):
        pool = ProviderPool(RetryPolicy())

        async def ask() -> tuple[int, str] | None:
            found = await pool.server_window(_model(url), timeout=5, default=128_000)
            return (found.tokens, f"server: {found.source}") if found else None

        compactor = Compactor(ContextPolicy(window=128_000), discover=ask)
        assert compactor.window == 128_000 and compactor.window_source == "default"
        assert await compactor.fit([], 0) == []
        assert compactor.window == 8192 and compactor.window_source == "server: llama.cpp /props"
        await pool.aclose()
