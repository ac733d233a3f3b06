"""The results page: paste, drop or pick results of several runs and draw them together.

    serve(host, port, list_runs, load_run)   blocks until Ctrl-C
    make_server(...)                         the same server, not yet serving (tests)

list_runs() returns [{"id", "created_at", "command", "suite", "status"}] and
load_run(id) a results document (docs/results-format.md) for that run.
"""

from msgbench.views.web.server import make_server, serve

__all__ = ["make_server", "serve"]
