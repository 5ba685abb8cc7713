"""Runs made by asking a retriever: a Python callable, a command, or an HTTP endpoint.

A retriever is asked once per query and answers with ``(doc_id, score)`` pairs. The
answers become a TREC run (``qid Q0 doc rank score name``), kept with its provenance (what
was asked, when, by which rankscope) and the time each query took.

Conventions
-----------
- Order: the hits of a query are ranked by score descending, ties by doc id descending as
  UTF-8 bytes: trec_eval's order, the one ``ranking`` gives any TREC file. The written
  ranks therefore agree with what any reader of the file computes, and the lane
  :meth:`RetrievedRun.raw_lane` hands to an evaluation is read back from that very text
  (``readers.read_lane_text``), so it cannot differ from the file.
- ``k``: the first ``k`` hits in that order are kept (as trec_eval's ``-M`` cuts a ranking
  after ordering it).
- Scores are written with Python's shortest round-trip representation (``repr`` of a
  float), so reading the file gives back the same doubles.
- Latency: wall-clock seconds (``time.perf_counter``) from just before the retriever is
  asked until its whole answer is read (a command's process start and exit included; an
  HTTP request's connection included). It is not a relevance measure and carries no
  interval; ``instruments.evaluate`` reports its mean, median and 95th percentile.

A command is split once with ``shlex.split`` and run without a shell: ``{query}`` and
``{qid}`` are replaced inside the split words, so a query's text is always one argument
and never reaches a shell. A URL gets the values percent-encoded (RFC 3986, nothing left
unescaped) and may only name this machine unless the caller allows other hosts.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import numbers
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import InputError
from .files import read_text
from .readers import read_lane_text
from .rows import RawLane, check_lane_name
from .sidecar import SIDECAR_SCHEMA

#: The placeholders a command or URL template may hold.
PLACEHOLDERS = ("{query}", "{qid}")
_PLACEHOLDER = re.compile(r"\{(query|qid)\}")
#: Host names that are this machine (an address is checked with ``ipaddress.is_loopback``).
LOCAL_NAMES = ("localhost",)

#: a retriever as asked here: one query -> its (doc, score) pairs
Ask = Callable[["Query"], Iterable[Any]]


@dataclass(frozen=True)
class Query:
    """One query to ask: its id, its text, and where it was read (``line`` 0: not from a file)."""

    qid: str
    text: str
    source: str = ""
    line: int = 0


@dataclass(frozen=True)
class Answer:
    """One query's answer: its hits in rank order (cut at ``k``) and the seconds it took."""

    qid: str
    hits: tuple[tuple[str, float], ...]
    seconds: float


@dataclass(frozen=True)
class RetrievedRun:
    """A run made by asking a retriever (see the module docstring for the conventions).

    ``retriever`` names what was asked (a callable's qualified name, the command or URL
    template); ``kind`` is ``callable``, ``command`` or ``url``; ``started`` the UTC time
    the first query was asked (ISO 8601); ``version`` rankscope's."""

    name: str
    answers: tuple[Answer, ...]
    retriever: str
    kind: str
    started: str
    version: str
    k: int

    @property
    def latency(self) -> dict[str, float]:
        """Seconds per query id, in the order the queries were asked."""
        return {a.qid: a.seconds for a in self.answers}

    def trec_lines(self) -> list[str]:
        """The run as TREC lines (``qid Q0 doc rank score name``), queries in the order asked."""
        out = []
        for a in self.answers:
            for rank, (doc, score) in enumerate(a.hits, start=1):
                out.append(f"{a.qid} Q0 {doc} {rank} {score!r} {self.name}\n")
        return out

    def trec_text(self) -> str:
        return "".join(self.trec_lines())

    def provenance(self) -> dict[str, Any]:
        """The sidecar's content: what made the run, and the seconds per query (a column of
        ``[qid, seconds]`` rows, in the order asked)."""
        return {
            "schema": SIDECAR_SCHEMA,
            "run": self.name,
            "retriever": self.retriever,
            "kind": self.kind,
            "started": self.started,
            "rankscope_version": self.version,
            "k": self.k,
            "run_sha256": hashlib.sha256(self.trec_text().encode("utf-8")).hexdigest(),
            "queries": len(self.answers),
            "latency_columns": ["query_id", "seconds"],
            "latency": [[a.qid, a.seconds] for a in self.answers],
        }

    def raw_lane(self, name: str | None = None) -> RawLane:
        """The run as the readers' lane, read from :meth:`trec_text` exactly as a file of
        those bytes is read, with the latency attached. Errors name ``<run NAME>``."""
        lane_name = name or self.name
        text = self.trec_text()
        if not text:
            raise InputError("the retriever returned no hit for any query", f"<run {lane_name}>")
        lane = read_lane_text(text, f"<run {lane_name}>", lane_name)
        lane.latency = self.latency
        return lane


# --------------------------------------------------------------------------- queries


def read_queries(path: str) -> tuple[Query, ...]:
    """``qid<TAB>text`` per line (blank lines and ``#`` comments skipped), as ``--queries``
    files elsewhere in rankscope; a line without a tab, or a qid given twice, is an error."""
    out: list[Query] = []
    first: dict[str, int] = {}
    for i, raw in enumerate(read_text(path).split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" not in line:
            raise InputError("expected 'qid<TAB>query text' (no tab on this line)", path, i)
        qid, text = line.split("\t", 1)
        qid = qid.strip()
        _check_qid(qid, path, i)
        if qid in first:
            raise InputError(f"query id {qid!r} is given twice (first at line {first[qid]})", path, i)
        first[qid] = i
        out.append(Query(qid, text, path, i))
    if not out:
        raise InputError("no query in the file", path)
    return tuple(out)


def as_queries(queries: Any) -> tuple[Query, ...]:
    """``queries`` as :class:`Query` rows: a path to a ``qid<TAB>text`` file, a ``{qid: text}``
    dict, or an iterable of ``(qid, text)`` pairs."""
    if isinstance(queries, (str, bytes)) or hasattr(queries, "__fspath__"):
        return read_queries(os.fsdecode(queries))
    items = queries.items() if isinstance(queries, Mapping) else queries
    out: list[Query] = []
    seen: set[str] = set()
    try:
        pairs = list(items)
    except TypeError:
        raise InputError(f"queries must be a path, a {{qid: text}} dict or (qid, text) pairs, not "
                         f"{type(queries).__name__}", "queries") from None
    for i, pair in enumerate(pairs, start=1):
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise InputError(f"query {i} must be a (qid, text) pair, not {_shown(pair)}"[:200], "queries")
        qid, text = pair
        if isinstance(qid, numbers.Integral) and not isinstance(qid, bool):
            qid = str(int(qid))
        if not isinstance(qid, str) or not isinstance(text, str):
            raise InputError(f"query {i}: the id and the text must be strings, not {_shown(pair)}"[:200], "queries")
        _check_qid(qid, "queries", None)
        if qid in seen:
            raise InputError(f"query id {qid!r} is given twice", "queries")
        seen.add(qid)
        out.append(Query(qid, text))
    if not out:
        raise InputError("no query given", "queries")
    return tuple(out)


def _shown(value: Any) -> str:
    """A value of the caller's as an error shows it: its repr, with Python's and JSON's
    words for a missing or undefined value said in words (no ``None``, ``nan`` or ``null``
    in text a person reads)."""
    return re.sub(r"\b(None|nan|NaN|null)\b", "(no value)", repr(value))


def _check_qid(qid: str, where: str, line: int | None) -> None:
    # a TREC line's fields are split on whitespace: an id with a space would read as two fields
    if not qid or any(c.isspace() or not c.isprintable() for c in qid):
        raise InputError(f"query id {qid!r} must be non-empty, without whitespace or control characters"[:200],
                         where, line)


# --------------------------------------------------------------------------- one answer


def _where(q: Query) -> tuple[str | None, int | None]:
    return (q.source or None, q.line or None)


def fail(q: Query, problem: str) -> InputError:
    """The one-line error for query ``q``: its file and line when read from one, its id always."""
    path, line = _where(q)
    return InputError(f"query {q.qid!r}: {problem}"[:400], path, line)


def rank_hits(q: Query, hits: Iterable[Any], k: int) -> tuple[tuple[str, float], ...]:
    """Check a retriever's ``(doc_id, score)`` pairs and rank them (score descending, ties by
    doc id descending as UTF-8 bytes: trec_eval's order), keeping the first ``k``."""
    pairs: list[tuple[str, float]] = []
    seen: set[str] = set()
    for i, hit in enumerate(hits, start=1):
        try:
            doc, score = hit
        except (TypeError, ValueError):
            raise fail(q, f"hit {i} is not a (doc_id, score) pair: {_shown(hit)}"[:200]) from None
        if isinstance(doc, numbers.Integral) and not isinstance(doc, bool):
            doc = str(int(doc))
        if not isinstance(doc, str) or not doc or any(c.isspace() or not c.isprintable() for c in doc):
            raise fail(q, f"hit {i}: the doc id {_shown(doc)} must be a non-empty string without whitespace"[:200])
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise fail(q, f"hit {i}: the score of {doc!r} is not a number: {_shown(score)}"[:200])
        value = float(score)
        if not math.isfinite(value):
            raise fail(q, f"hit {i}: the score of {doc!r} is not a finite number")
        if doc in seen:
            raise fail(q, f"hit {i}: the doc id {doc!r} is returned twice")
        seen.add(doc)
        pairs.append((doc, value))
    pairs.sort(key=lambda p: (p[1], p[0].encode("utf-8")), reverse=True)
    return tuple(pairs[:k])


def retrieve(ask: Ask, queries: tuple[Query, ...], k: int, name: str, retriever: str, kind: str,
             version: str) -> RetrievedRun:
    """Ask ``ask(query)`` for every query in order and keep the ranked answers and their
    seconds. A retriever's own exception becomes an :class:`InputError` naming the query
    (chained to the original, which stays readable as ``__cause__``)."""
    check_lane_name(name, "name", "give a name without '.', '=', '+' or whitespace")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"must be a whole number of at least 1, not {_shown(k)}", "k")
    started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    answers = []
    for q in queries:
        t0 = time.perf_counter()
        try:
            answer = ask(q)
            if answer is None or isinstance(answer, (str, bytes)):
                what = "nothing" if answer is None else f"a {type(answer).__name__}"
                raise fail(q, f"the retriever returned {what}, not (doc_id, score) pairs")
            got = list(answer)  # the answer is read in full inside the timing
        except InputError:
            raise
        except Exception as exc:
            raise fail(q, f"the retriever raised {type(exc).__name__}: {exc}") from exc
        seconds = time.perf_counter() - t0
        answers.append(Answer(q.qid, rank_hits(q, got, k), seconds))
    return RetrievedRun(name, tuple(answers), retriever, kind, started, version, k)


def qualified_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a callable (a bound method's, a partial's function's), else its type's."""
    target = getattr(fn, "func", fn)  # functools.partial
    module = getattr(target, "__module__", None) or type(target).__module__
    qual = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}.{qual}"


# --------------------------------------------------------------------------- answers as text


def parse_pairs_json(q: Query, data: Any, what: str) -> list[tuple[Any, Any]]:
    """The two accepted JSON shapes: ``[[doc, score], ...]`` and
    ``{"hits": [{"id": doc, "score": score}, ...]}``."""
    if isinstance(data, dict) and isinstance(data.get("hits"), list):
        out = []
        for i, h in enumerate(data["hits"], start=1):
            if not isinstance(h, dict) or "id" not in h or "score" not in h:
                raise fail(q, f"{what}: hit {i} is not an object with 'id' and 'score': {_shown(h)}"[:200])
            out.append((h["id"], h["score"]))
        return out
    if isinstance(data, list):
        for i, h in enumerate(data, start=1):
            if not isinstance(h, list) or len(h) != 2:
                raise fail(q, f"{what}: item {i} is not a [doc, score] pair: {_shown(h)}"[:200])
        return [(h[0], h[1]) for h in data]
    raise fail(q, f"{what}: expected [[doc, score], ...] or {{\"hits\": [{{\"id\": ..., \"score\": ...}}]}}, "
                  f"got {type(data).__name__}")


def _strict_json(q: Query, text: str, what: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        raise fail(q, f"{what} is not valid JSON ({exc})"[:300]) from None


def parse_output(q: Query, out: bytes, what: str) -> list[tuple[Any, Any]]:
    """A command's standard output: JSON in the URL shapes when it starts with ``[`` or ``{``,
    else one ``DOC SCORE`` pair per non-blank line (whitespace-separated)."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(q, f"{what} is not UTF-8 text (byte {exc.start})") from None
    if text.lstrip().startswith(("[", "{")):
        return parse_pairs_json(q, _strict_json(q, text, what), what)
    pairs: list[tuple[Any, Any]] = []
    for i, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise fail(q, f"{what} line {i}: expected 'DOC SCORE', got {line.strip()!r}"[:200])
        try:
            score = float(fields[1])
        except ValueError:
            raise fail(q, f"{what} line {i}: the score {fields[1]!r} is not a number"[:200]) from None
        pairs.append((fields[0], score))
    return pairs


def substitute(word: str, q: Query, encode: Callable[[str], str] = str) -> str:
    """``word`` with ``{query}`` and ``{qid}`` replaced in one pass (a query's text holding
    ``{qid}`` stays as written)."""
    values = {"query": encode(q.text), "qid": encode(q.qid)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], word)


# --------------------------------------------------------------------------- a command


def command_ask(template: str, timeout: float | None) -> Ask:
    """``ask`` for a command template (see the module docstring). Each query runs the command
    in a new session, so on a timeout the whole process group (a shell's children too) is killed."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise InputError(f"cannot split the command: {exc}", "--command") from None
    if not words:
        raise InputError("the command is empty", "--command")
    if not any(_PLACEHOLDER.search(w) for w in words):
        raise InputError("the command names neither {query} nor {qid}: every query would get the same answer",
                         "--command")

    def ask(q: Query) -> list[tuple[Any, Any]]:
        argv = [substitute(w, q) for w in words]
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as exc:
            raise fail(q, f"cannot run {words[0]!r}: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise fail(q, f"the command gave no answer within {timeout:g} s (--timeout)") from None
        except BaseException:  # an interrupt: the child goes with us
            _kill_group(proc)
            raise
        if proc.returncode != 0:
            last = next((ln.strip() for ln in reversed(err.decode("utf-8", "replace").splitlines()) if ln.strip()), "")
            how = f"was ended by signal {-proc.returncode}" if proc.returncode < 0 else f"exited with status {proc.returncode}"
            raise fail(q, f"the command {how}" + (f": {last}" if last else ""))
        return parse_output(q, out, "the command's output")

    return ask


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.communicate()


# --------------------------------------------------------------------------- a URL


def is_local(host: str) -> bool:
    """Whether ``host`` names this machine: ``localhost`` or a loopback address."""
    host = host.strip("[]").lower()
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_url(url: str, allow_remote: bool, where: str) -> None:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as exc:
        raise InputError(f"not a URL: {exc}", where) from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(f"expected an http:// or https:// URL with a host, got {url[:100]!r}", where)
    if not allow_remote and not is_local(host):
        raise InputError(f"the host {host!r} is not this machine; only localhost and loopback addresses are asked "
                         "unless other hosts are allowed (--allow-remote)", where)


def url_ask(template: str, timeout: float | None, allow_remote: bool = False) -> Ask:
    """``ask`` for a URL template: a GET per query, values percent-encoded, the JSON answer in
    one of the accepted shapes (:func:`parse_pairs_json`). No proxy is used (a local address
    must not be sent elsewhere); ``timeout`` bounds the connection and each read."""
    import urllib.error
    import urllib.request

    if not any(p in template for p in PLACEHOLDERS):
        raise InputError("the URL names neither {query} nor {qid}: every query would get the same answer", "--url")
    _check_url(template.replace("{query}", "q").replace("{qid}", "q"), allow_remote, "--url")

    class _LocalRedirects(urllib.request.HTTPRedirectHandler):
        """A redirect is followed only to where the URL itself may point: a local server
        must not send a query to another host."""

        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            try:
                _check_url(newurl, allow_remote, "--url")
            except InputError:
                raise urllib.error.URLError(f"redirected to {newurl[:100]!r}, not this machine "
                                            "(--allow-remote lets it)") from None
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _LocalRedirects())

    def ask(q: Query) -> list[tuple[Any, Any]]:
        url = substitute(template, q, lambda v: quote(v, safe=""))
        _check_url(url, allow_remote, "--url")
        try:
            with opener.open(url, timeout=timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as exc:
            raise fail(q, f"the server answered HTTP {exc.code} {exc.reason}") from None
        except TimeoutError:
            raise fail(q, f"no answer within {timeout:g} s (--timeout)") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise fail(q, f"no answer within {timeout:g} s (--timeout)") from None
            raise fail(q, f"cannot reach the URL: {reason}") from None
        try:
            text_body = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(q, f"the answer is not UTF-8 text (byte {exc.start})") from None
        return parse_pairs_json(q, _strict_json(q, text_body, "the answer"), "the answer")

    return ask
