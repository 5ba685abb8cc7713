"""`rankscope tui --serve [HOST:]PORT`: the same dashboard in a browser, through textual-serve.

The server runs the `rankscope tui` command line it was given once per browser that
connects, in a child process with Textual's web driver (textual-serve starts it and relays
the terminal over a websocket); the child knows it is the served dashboard by
:data:`SERVED_ENV` and opens the app instead of serving again. Exports then reach the
browser as downloads (``RankscopeApp.export``).

Where it listens: 127.0.0.1 unless a host is given. A host that is not a loopback address
(or a name that resolves to one that is not) is refused without ``--allow-remote``: anyone
who reaches the port drives a dashboard that can open and export files as the user who
started it, and textual-serve has no authentication of its own.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import socket
import sys

from .options import PROG, CliError

#: The host when ``--serve`` names only a port: this machine only.
DEFAULT_HOST = "127.0.0.1"
#: Set in the environment of the processes the server starts: they open the dashboard.
SERVED_ENV = "RANKSCOPE_SERVED"


def serve_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as (host, port): ``8000``, ``localhost:8000``, ``0.0.0.0:8000``,
    ``[::1]:8000`` (an IPv6 address in brackets, as in a URL). The argparse type of ``--serve``."""
    host, sep, port = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{text!r}: write an IPv6 address in brackets, as [{host}]:{port}")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: give [HOST:]PORT with a port from 1 to 65535")
    if sep and not host:
        raise argparse.ArgumentTypeError(f"{text!r}: empty host (give PORT alone for {DEFAULT_HOST})")
    return (host or DEFAULT_HOST), int(port)


def addresses(host: str) -> list[str]:
    """The IP addresses ``host`` stands for (itself when it is one; a name resolved)."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise CliError(f"--serve: cannot resolve host {host!r}: {exc.strerror or exc}") from None
    return sorted({str(info[4][0]).split("%", 1)[0] for info in infos})


def check_host(host: str, allow_remote: bool) -> bool:
    """Whether ``host`` is reachable from this machine only (every address it stands for is
    a loopback one). A host that is not is refused unless ``allow_remote``."""
    found = addresses(host)
    local = all(ipaddress.ip_address(a).is_loopback for a in found)
    if not local and not allow_remote:
        raise CliError(f"--serve {host}: not a loopback address ({', '.join(found)}); the dashboard would be reachable "
                       "from other machines, with no password, and can read and export files as you: give --allow-remote "
                       f"to serve it there anyway, or PORT alone for {DEFAULT_HOST}")
    return local


def url(host: str, port: int) -> str:
    """The address a browser opens (an IPv6 host in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def check_port_free(host: str, port: int) -> None:
    """Refuse, as one line, a port something else listens on (before the server's banner)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as exc:
        raise CliError(f"--serve: cannot listen on {url(host, port)}: {exc.strerror or exc}") from None


def child_command(words: list[str]) -> str:
    """The shell command textual-serve runs per browser: this `rankscope tui` command line again."""
    return shlex.join([sys.executable, "-m", "rankscope_tui.cli", "tui", *words])


def serve(args: argparse.Namespace) -> int:
    """Listen on ``args.serve`` until Ctrl+C (or SIGTERM); status 0 then."""
    host, port = args.serve
    local = check_host(host, args.allow_remote)
    try:
        from textual_serve.server import Server
    except ImportError:
        raise CliError("--serve needs textual-serve: pip install 'rankscope[web]'") from None
    check_port_free(host, port)

    address = url(host, port)
    reach = "this machine only" if local else "reachable from other machines (--allow-remote)"

    class _Server(Server):
        async def on_startup(self, app) -> None:  # our one line in place of textual-serve's banner
            print(f"{PROG}: serving the dashboard on {address} ({reach}); Ctrl+C stops", flush=True)

    os.environ[SERVED_ENV] = "1"  # inherited by the processes the server starts (it copies os.environ)
    server = _Server(child_command(args.serve_words), host=host, port=port, title="rankscope", public_url=address)
    try:
        server.serve()
    except OSError as exc:  # the port was taken between the check and the bind
        raise CliError(f"--serve: cannot listen on {address}: {exc.strerror or exc}") from None
    finally:
        os.environ.pop(SERVED_ENV, None)
    return 0
