"""`msgbench serve`: the results page and its small JSON API, on the standard library.

    GET  /                  the page (static/page.html)
    GET  /static/<file>     its scripts and styles (plot.js is the report's own)
    GET  /api/runs          the runs in the store:
                            [{"id", "created_at", "command", "suite", "status"}]
    GET  /api/runs/<id>     one stored run, shaped for the page
    POST /api/parse         {"text", "name"} -> the shaped source, or 400 with
                            {"error": {"message", "line", "column", "format"}}

The page is served with a Content-Security-Policy that allows only its own scripts,
so pasted text could not run even if it ever reached the page as markup (it does
not: the page writes text with textContent). Requests naming another host are
refused when the server listens on loopback, which keeps other web sites out
through DNS rebinding.
"""

import ipaddress
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import unquote, urlsplit

from msgbench.core import jsonio
from msgbench.views.web import shape

# The page's bounds (docs/decisions.md): a paste of at most MAX_BODY_BYTES, shaped by at
# most PARSES_AT_ONCE requests at a time (others are told to retry), into an answer of at
# most MAX_ANSWER_BYTES; shape.MAX_SERIES and MAX_POINTS bound the work in between. The
# server's memory is then bounded whatever is pasted, or how often.
MAX_BODY_BYTES = 8 * 2**20
MAX_ANSWER_BYTES = 32 * 2**20
PARSES_AT_ONCE = 2
_PARSING = threading.BoundedSemaphore(PARSES_AT_ONCE)
_REPORT_STATIC = resources.files("msgbench.views.report") / "static"
_WEB_STATIC = resources.files("msgbench.views.web") / "static"
STATIC_FILES = {
    "page.js": (_WEB_STATIC, "text/javascript"),
    "page.css": (_WEB_STATIC, "text/css"),
    "plot.js": (_REPORT_STATIC, "text/javascript"),
    "plot.css": (_REPORT_STATIC, "text/css"),
}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class StoreUnusable(RuntimeError):
    """The store cannot be opened or read (damaged, not a store, gone): a fault of the
    server's, said as such, never as 404 "no such run"."""


def make_server(host: str, port: int, list_runs: Callable[[], list[dict]],
                load_run: Callable[[str], dict]) -> ThreadingHTTPServer:
    """A server ready to serve_forever(); port 0 picks a free port (server.server_port)."""
    handler = type("ResultsPageHandler", (_Handler,), {
        "list_runs": staticmethod(list_runs), "load_run": staticmethod(load_run),
        "loopback": _is_loopback(host)})
    server = _Server((host, port), handler)
    server.daemon_threads = True
    return server


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """One line, never a traceback: a client that hung up is no error of ours."""
        kind, value = sys.exc_info()[:2]
        if kind is not None and issubclass(kind, (ConnectionError, TimeoutError)):
            return
        print(f"msgbench serve: a request from {client_address[0]} failed: {kind.__name__}: {value}",
              file=sys.stderr)


def serve(host: str, port: int, list_runs: Callable[[], list[dict]],
          load_run: Callable[[str], dict]) -> None:
    """Serve the results page until interrupted (Ctrl-C)."""
    server = make_server(host, port, list_runs, load_run)
    shown = f"[{host}]" if ":" in host else host
    print(f"msgbench results page: http://{shown}:{server.server_port}/  (Ctrl-C to stop)",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    server_version = "msgbench"
    list_runs: Callable[[], list[dict]]
    load_run: Callable[[str], dict]
    loopback: bool

    def log_message(self, format, *args):  # the base class names the argument "format"
        pass  # the terminal stays quiet; errors reach the page as JSON

    # ------------------------------------------------------------ routing

    def do_GET(self):
        if not self._host_allowed():
            return
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, "text/html; charset=utf-8",
                       (_WEB_STATIC / "page.html").read_bytes())
        elif path.startswith("/static/") and path[len("/static/"):] in STATIC_FILES:
            folder, kind = STATIC_FILES[path[len("/static/"):]]
            self._send(HTTPStatus.OK, f"{kind}; charset=utf-8",
                       (folder / path[len("/static/"):]).read_bytes())
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, "image/x-icon", b"")
        elif path == "/api/runs":
            self._api(lambda: [_run_row(r) for r in self.list_runs()])
        elif path.startswith("/api/runs/"):
            run_id = unquote(path[len("/api/runs/"):])
            self._api(lambda: shape.from_document(self.load_run(run_id), run_id))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no such page: {path}"}})

    def do_POST(self):
        if not self._host_allowed():
            return
        if urlsplit(self.path).path != "/api/parse":
            self._json(HTTPStatus.NOT_FOUND, {"error": {"message": "no such endpoint"}})
            return
        length = self._body_length()
        if length is None:
            return
        if not _PARSING.acquire(timeout=30):
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": {
                "message": f"the server is shaping {PARSES_AT_ONCE} other inputs; try again in a moment"}})
            return
        try:
            self._parse(length)
        finally:
            _PARSING.release()

    def _parse(self, length: int) -> None:
        raw = self.rfile.read(length).decode("utf-8", errors="replace")
        text, name = raw, "pasted text"
        if "application/json" in (self.headers.get("Content-Type") or ""):
            try:
                request = jsonio.loads(raw)
            except jsonio.JSONError as err:
                self._bad_request(f"the request is {err}")
                return
            if not isinstance(request, dict) or not isinstance(request.get("text"), str) \
                    or not isinstance(request.get("name", ""), (str, type(None))):
                self._bad_request('expected {"text": "...", "name": "..."} (text and name strings)')
                return
            text, name = request["text"], request.get("name") or name
        try:
            source = shape.parse_text(text, name)
        except shape.InputError as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": err.as_json()})
            return
        except Exception as err:  # an input the shaping code did not foresee: still the page's to show
            self._bad_request(f"cannot read {name}: {type(err).__name__}: {err}")
            return
        answer = jsonio.dumps(source, default=str).encode("utf-8")
        del source
        if len(answer) > MAX_ANSWER_BYTES:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": {
                "message": f"{name} would be drawn as {len(answer) / 2**20:,.0f} MiB of graphs, more than the "
                           f"page takes ({MAX_ANSWER_BYTES // 2**20} MiB); paste fewer runs at a time"}})
            return
        self._send(HTTPStatus.OK, "application/json; charset=utf-8", answer)

    def _body_length(self) -> int | None:
        """The request's Content-Length, checked before a byte is read; None after an error reply."""
        header = self.headers.get("Content-Length")
        if header is None:
            self._json(HTTPStatus.LENGTH_REQUIRED, {"error": {"message": "the request has no Content-Length"}})
            return None
        if not header.strip().isdigit():  # "-1" would read to the end of the stream, past any limit
            self._bad_request(f"Content-Length {header[:40]!r} is not a byte count (0 or more)")
            return None
        if int(header) > MAX_BODY_BYTES:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": {
                "message": f"the input is larger than {MAX_BODY_BYTES // 2**20} MiB"}})
            return None
        return int(header)

    def _bad_request(self, message: str) -> None:
        self._json(HTTPStatus.BAD_REQUEST, {"error": {"message": message}})

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request line, bad headers) as JSON too."""
        self.close_connection = True
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self._json(status, {"error": {"message": message or status.phrase}})

    # ------------------------------------------------------------ helpers

    def _host_allowed(self) -> bool:
        host = _host_name(self.headers.get("Host") or "")
        if not self.loopback or _is_loopback(host):
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": {"message": f"host {host!r} refused"}})
        return False

    def _api(self, produce: Callable[[], object]) -> None:
        try:
            body = produce()
        except StoreUnusable as err:
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": {"message": str(err)}})
            return
        except (KeyError, LookupError, FileNotFoundError) as err:
            self._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no such run: {err}"}})
            return
        except Exception as err:  # whatever the store raised: the page shows it
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": {"message": str(err)}})
            return
        self._json(HTTPStatus.OK, body)

    def _json(self, status: HTTPStatus, body: object) -> None:
        self._send(status, "application/json; charset=utf-8",
                   jsonio.dumps(body, default=str).encode("utf-8"))

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def _host_name(header: str) -> str:
    """The host of a Host header without its port: "[::1]:8765" -> "::1"."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _run_row(run: dict) -> dict:
    return {k: run.get(k) for k in ("id", "created_at", "command", "suite", "status")}
