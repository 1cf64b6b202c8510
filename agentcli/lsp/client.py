"""One running language server: its process (a group of its own, known to the reaper, in the Bash sandbox when one is
on), pygls' `LanguageClient` over its stdio, the documents it has open and what it last published for each.

pygls and lsprotocol are imported here only, and this module only when a server is first needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient

from agentcli.tools import MARK_VARIABLE, reaper, stop_process_group

if TYPE_CHECKING:
    from agentcli.lsp.specs import ServerSpec
    from agentcli.tools import Sandbox

log = logging.getLogger(__name__)
_WIRE = logging.getLogger("pygls.wire")  # each message's length at debug: below the pygls level set here
if logging.getLogger("pygls").level == logging.NOTSET:
    logging.getLogger("pygls").setLevel(logging.WARNING)  # it logs each feature it registers at INFO
T = TypeVar("T")
_SHUTDOWN_SECONDS = 2.0  # a server that does not answer `shutdown` within this is stopped by signal
_STDERR_LINE = 2000
MAX_OPEN = 200  # documents kept open in one server  # characters of one stderr line kept in the log


def _ignore(params: Any) -> None:
    """A server's notification agentcli has no use for (pygls would log each as unknown)."""


def path_uri(path: Path) -> str:
    """The `file://` URI of an absolute path."""
    return path.as_uri()


def uri_path(uri: str) -> Path | None:
    """The path of a `file://` URI; None for any other scheme."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


@dataclass(slots=True)
class Published:
    """What a server said of one document last: for `version` (None when it did not say), the `seq`-th publish."""

    version: int | None
    seq: int
    diagnostics: list[types.Diagnostic]


class ServerConnection:
    """A started server for one (spec, root). `start` spawns and initializes it; the rest speaks to it."""

    def __init__(self, spec: ServerSpec, root: Path, argv: list[str], env: Mapping[str, str],
                 sandbox: Sandbox | None = None) -> None:
        self.spec, self.root, self.argv, self.sandbox = spec, root, argv, sandbox
        self.env = dict(env)
        self.client = LanguageClient("agentcli", "1")
        self.ready = asyncio.Event()
        self.exit_code: int | None = None
        self.dead = False
        self.capabilities: types.ServerCapabilities | None = None
        self.documents: dict[str, tuple[int, str]] = {}  # uri → (version, text) as last sent
        self.published: dict[str, Published] = {}
        self.seq = 0  # publishes so far (any document)
        self.pull_failed = False  # it refused a diagnostics request: its publishes are waited for instead
        self._news = asyncio.Event()
        self._pgid: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._exit: asyncio.Future[int] | None = None
        self._stop = threading.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._register()

    def _register(self) -> None:
        """What the server may send: pygls marks each handler, so each is a function of its own."""
        feature = self.client.feature

        def publish(params: types.PublishDiagnosticsParams) -> None:
            self._on_publish(params)

        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return self._on_configuration(params)

        def log_message(params: types.LogMessageParams) -> None:
            log.debug("%s: %s", self.name, params.message[:_STDERR_LINE])

        def show_message(params: types.ShowMessageParams) -> None:
            log.debug("%s: %s", self.name, params.message[:_STDERR_LINE])

        feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(publish)
        feature(types.WORKSPACE_CONFIGURATION)(configuration)
        feature(types.WINDOW_LOG_MESSAGE)(log_message)
        feature(types.WINDOW_SHOW_MESSAGE)(show_message)
        feature("$/typescriptVersion")(_ignore)  # typescript-language-server's own notice of the tsserver it runs
        for method in (types.CLIENT_REGISTER_CAPABILITY, types.CLIENT_UNREGISTER_CAPABILITY,
                       types.WINDOW_WORK_DONE_PROGRESS_CREATE):
            feature(method)(_accept)

    @property
    def name(self) -> str:
        return self.spec.name

    # ---- the process -------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn the server and initialize it; raises OSError (cannot start) or what the handshake raised."""
        guard = reaper()
        env = {**self.env, MARK_VARIABLE: guard.new_mark()}  # its descendants are found by the mark, too
        hook = guard.spawn_hook()
        argv = self.argv
        if self.sandbox is not None and self._sandboxed():
            env = self.sandbox.environment(env)
            hook = self.sandbox.child_hook(hook)
            argv = self.sandbox.argv(argv)
        self._proc = proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(self.root), env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, preexec_fn=hook, close_fds=True,
        )
        self._pgid = proc.pid  # start_new_session: the group is the server's pid
        guard.track(proc.pid)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.client.protocol.set_writer(proc.stdin)
        self._exit = asyncio.ensure_future(self._watch(proc))
        self._tasks += [asyncio.create_task(run_async(stop_event=self._stop, reader=proc.stdout,
                                                      protocol=self.client.protocol, logger=_WIRE)),
                        asyncio.create_task(self._drain(proc.stderr))]
        result = await self.request(self.client.initialize_async(self._initialize_params()), None)
        self.capabilities = result.capabilities
        self.client.initialized(types.InitializedParams())
        self.ready.set()

    def _initialize_params(self) -> types.InitializeParams:
        root = path_uri(self.root)
        caps = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
                hover=types.HoverClientCapabilities(
                    content_format=[types.MarkupKind.PlainText, types.MarkupKind.Markdown]),
                definition=types.DefinitionClientCapabilities(link_support=False),
                references=types.ReferenceClientCapabilities(),
                document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            ),
            workspace=types.WorkspaceClientCapabilities(
                configuration=True, workspace_folders=True, symbol=types.WorkspaceSymbolClientCapabilities()),
        )
        return types.InitializeParams(
            # A sandboxed server may not signal agentcli (Landlock's signal scope), and servers on vscode-languageserver
            # take a failed `kill(processId, 0)` for agentcli's death and exit: there the reaper alone watches.
            capabilities=caps, process_id=None if self._sandboxed() else os.getpid(),
            root_uri=root, root_path=str(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=root, name=self.root.name or "root")],
            initialization_options=dict(self.spec.initialization_options) or None,
            client_info=types.ClientInfo(name="agentcli"),
        )

    @property
    def pid(self) -> int | None:
        """The server's process id (its process group's too), once started."""
        return self._proc.pid if self._proc is not None else None

    async def wait_exit(self) -> int | None:
        """Wait until the server process has exited; its exit code."""
        if self._exit is not None:
            await asyncio.wait({self._exit})
        return self.exit_code

    def _sandboxed(self) -> bool:
        return self.sandbox is not None and self.sandbox.active

    async def _watch(self, proc: asyncio.subprocess.Process) -> int:
        code = await proc.wait()
        self.dead, self.exit_code = True, code
        self._stop.set()
        log.info("language server %s (%s) exited with %s", self.name, self.root, code)
        self._wake()
        return code

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        """The server's stderr, a line at a time, to the log (never the terminal)."""
        with contextlib.suppress(Exception):
            while line := await stream.readline():
                text = line.decode("utf-8", errors="replace").rstrip()[:_STDERR_LINE]
                log.debug("%s stderr: %s", self.name, text)

    async def close(self) -> None:
        """`shutdown` and `exit` (bounded), then the process group stopped and the reading tasks ended."""
        proc, exited = self._proc, self._exit
        if proc is not None and exited is not None and self.ready.is_set() and not self.dead:
            with contextlib.suppress(Exception):
                await self.request(self.client.shutdown_async(None), _SHUTDOWN_SECONDS)
                self.client.protocol.notify(types.EXIT, None)
                await asyncio.wait({exited}, timeout=_SHUTDOWN_SECONDS)
        if self._pgid is not None and exited is not None:
            await stop_process_group(self._pgid, exited)
            reaper().untrack(self._pgid)
            self._pgid = None
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        self.dead = True
        self._wake()

    # ---- what it sends -----------------------------------------------------------------------------------------

    def _on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.seq += 1
        self.published[params.uri] = Published(params.version, self.seq, list(params.diagnostics))
        self._wake()

    def _on_configuration(self, params: types.ConfigurationParams) -> list[Any]:
        options = self.spec.initialization_options
        return [options.get(item.section) if item.section else dict(options) or None for item in params.items]

    def _wake(self) -> None:
        news, self._news = self._news, asyncio.Event()
        news.set()

    async def changed(self, timeout: float) -> bool:
        """Wait until the server publishes (or exits), at most `timeout` seconds; whether it did."""
        news = self._news
        try:
            await asyncio.wait_for(news.wait(), max(timeout, 0))
        except TimeoutError:
            return False
        return True

    # ---- documents ---------------------------------------------------------------------------------------------

    def sync(self, path: Path, text: str) -> tuple[int, int]:
        """Send `text` as `path`'s content (didOpen the first time, didChange when it differs): (its version, the
        publish count before it was sent, -1 when it was sent before)."""
        uri = path_uri(path)
        seen = self.seq
        known = self.documents.pop(uri, None)  # put back last: the least recently synced are closed first
        if known is None:
            self._close_oldest()
            self.documents[uri] = (1, text)
            self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
                uri=uri, language_id=language_id(path, self.spec.language, self.spec.language_ids), version=1,
                text=text)))
            return 1, seen
        version, old = known
        if old == text:  # what it published last (if anything) is about this text
            self.documents[uri] = known
            return version, -1
        version += 1
        self.documents[uri] = (version, text)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return version, seen

    def _close_oldest(self) -> None:
        """didClose the least recently synced documents beyond `MAX_OPEN` (a server keeps each open one in memory)."""
        while len(self.documents) >= MAX_OPEN:
            uri = next(iter(self.documents))
            del self.documents[uri]
            self.published.pop(uri, None)
            self.client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))

    def save(self, path: Path, text: str) -> None:
        """didSave, with the text when the server asked for it."""
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=path_uri(path)), text=text))

    def current(self, path: Path, version: int, seen: int) -> Published | None:
        """What the server published of `path` for `version` (or, when it gives no versions, after publish `seen`)."""
        found = self.published.get(path_uri(path))
        if found is None:
            return None
        if found.version is not None:
            return found if found.version == version else None
        return found if found.seq > seen else None

    async def request(self, call: Awaitable[T], timeout: float | None) -> T:
        """A request's answer within `timeout` (TimeoutError), or what the server's error raised; ConnectionError
        when the server exits first."""
        job = asyncio.ensure_future(call)
        waits: set[asyncio.Future[Any]] = {job} if self._exit is None else {job, self._exit}
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not job.done():
                job.cancel()
        if job.done() and not job.cancelled():
            return job.result()
        if self.dead:
            raise ConnectionError(f"{self.name} exited (code {self.exit_code})")
        raise TimeoutError


def _accept(params: Any) -> None:
    """A server request that needs only a reply (capability registrations, progress tokens)."""


def language_id(path: Path, language: str, by_extension: Mapping[str, str] | None = None) -> str:
    """The LSP language id of a file: a plugin's `extensionToLanguage` for it, else the usual one."""
    for extension, given in (by_extension or {}).items():
        if path.name.endswith(extension):
            return given
    suffix = path.suffix.lower()
    return {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
            ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
            ".py": "python", ".pyi": "python", ".go": "go", ".rs": "rust"}.get(suffix, language)



