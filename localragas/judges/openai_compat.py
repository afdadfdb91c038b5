"""A judge behind any OpenAI-compatible server (vLLM, llama.cpp's llama-server, llama-cpp-python's server, Ollama…).

Standard library only (urllib + json). Decoding is constrained to the output's JSON schema by the server, in the
form the server understands (`structured`): OpenAI's `response_format` json_schema (vLLM, llama-server, Ollama,
OpenAI), llama-cpp-python's `response_format` json_object + schema, TGI's json_object + value, llama-server's
top-level `json_schema`, or a GBNF `grammar` built here from the schema. `timeout` is a deadline for one whole request
(connect, send, wait and read: a server that trickles its reply a byte at a time is cut off when it passes, as is one
that goes silent). Connection errors, timeouts (and HTTP 408), 429 and 5xx are retried with exponential backoff
(honouring Retry-After), rotating over the given URLs; when the retries run out, the call raises JudgeError and the
metric is unscored with that reason. Other 4xx replies fail at once, quoting the server.
"""
from __future__ import annotations

import email.utils
import hashlib
import http.client
import io
import itertools
import json
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..core.errors import ConfigError, JudgeError, MissingDependencyError
from ..core.number_text import given_text, seconds_text
from ..core.reply_schemas import Output, schema_text
from ..prompts import Prompt
from .base import Completion, Judge, NextTokens
from .yes_no import TOP_TOKENS

MAX_WAIT = 60.0  # longest single wait between two attempts, whatever Retry-After says
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_OWN_FIELDS = {"model", "messages", "temperature", "seed", "max_tokens", "stream", "response_format", "json_schema",
               "grammar"}


class OpenAISettings(BaseModel):
    """Options of the openai backend (`--judge-option KEY=VALUE`)."""

    model_config = ConfigDict(extra="forbid")

    base_url: list[str] = Field(description="server URL(s) up to /v1, e.g. http://127.0.0.1:8080/v1; several "
                                "(comma-separated or a list) are used round-robin")
    api_key_env: str | None = Field(None, description="NAME of the environment variable holding the API key "
                                    "(sent as a Bearer token); never the key itself")
    timeout: float = Field(120.0, gt=0, description="seconds for one whole request: connect, send, wait and read")
    retries: int = Field(4, ge=0, description="further attempts after a connection error, timeout, 429 or 5xx")
    backoff: float = Field(1.0, ge=0, description="seconds before the first retry; doubled at each retry, with "
                           "seeded jitter; a longer Retry-After from the server wins (each wait <= 60 s)")
    temperature: float = Field(0.0, ge=0.0, description="0 = greedy, deterministic")
    seed: int = 42
    max_tokens: int = Field(1024, ge=16, description="cap on generated tokens per call (the bounded schemas "
                            "close well within it)")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="further request fields the server "
                                       "understands, e.g. {\"repeat_penalty\": 1.0} for llama-cpp-python's server "
                                       "(whose default is 1.1); part of the fingerprint")
    structured: Literal["json_schema", "json_object", "tgi", "llamacpp", "grammar"] = Field(
        "json_schema", description="how the schema is sent: json_schema = response_format json_schema (OpenAI, "
        "vLLM, llama-server, Ollama); json_object = response_format json_object + schema (llama-cpp-python's "
        "server); tgi = response_format json_object + value (text-generation-inference); llamacpp = top-level "
        "json_schema (llama-server); grammar = GBNF in `grammar` (llama-server, llama-cpp-python's server; needs "
        "llama-cpp-python here to build it)")

    @field_validator("base_url", mode="before")
    @classmethod
    def _split_urls(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [u for u in (p.strip() for p in v.split(",")) if u]
        return v

    @field_validator("base_url")
    @classmethod
    def _check_urls(cls, urls: list[str]) -> list[str]:
        if not urls:
            raise ValueError("give at least one URL")
        out = []
        for u in urls:
            parts = urllib.parse.urlsplit(u)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"'{_redact(u)}' is not an http(s) URL")
            out.append(u.rstrip("/"))
        return out

    @field_validator("extra_body")
    @classmethod
    def _check_extra(cls, v: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(set(v) & _OWN_FIELDS)
        if taken:
            raise ValueError(f"{', '.join(taken)} set by localragas itself (use the options of the same name, or "
                             "`structured`)")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError("takes the NAME of an environment variable holding the key, not the key itself")
        return v


def _redact(url: str) -> str:
    """The URL without user:password@ and without a query string (either may carry a secret)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIJudge(Judge):
    def __init__(self, model: str, settings: OpenAISettings):
        super().__init__()
        if not model:
            raise ConfigError("the openai judge needs a model name: --judge openai:MODEL (the name the server serves)")
        self.model = model
        self.settings = s = settings
        self._api_key: str | None = None
        if s.api_key_env:
            self._api_key = os.environ.get(s.api_key_env)
            if not self._api_key:
                raise ConfigError(f"api_key_env={s.api_key_env}: that environment variable is not set or empty")
        self._urls = itertools.cycle(s.base_url)
        self._url_lock = threading.Lock()
        self._rng = random.Random(s.seed)  # jitter of the backoff: seeded, so a run's waits are reproducible
        self._grammars: dict[str, str] = {}
        self._to_gbnf = _gbnf_builder() if s.structured == "grammar" else None
        self._sleep = time.sleep  # tests replace it
        # `timeout` bounds each whole request (_DEADLINE_HANDLERS); loopback never via a proxy; elsewhere the
        # environment's proxy settings, as curl does
        self._direct = urllib.request.build_opener(urllib.request.ProxyHandler({}), *_DEADLINE_HANDLERS)
        self._proxied = urllib.request.build_opener(*_DEADLINE_HANDLERS)
        self.name = f"openai/{model}"
        decoding = json.dumps(s.model_dump(include={"temperature", "seed", "max_tokens", "structured", "extra_body"}),
                              sort_keys=True)
        self.fingerprint = f"openai:{model}:{hashlib.sha256(decoding.encode()).hexdigest()[:16]}"

    # --- one call ----------------------------------------------------------------------------------------------

    def complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        reply, url = self._send(json.dumps(self._body(prompt, schema, output)).encode("utf-8"))
        return self._parse(reply, url)

    def _send(self, body: bytes) -> tuple[dict[str, Any], str]:
        """POST with retries over the servers; (decoded reply, the server's URL)."""
        attempts = self.settings.retries + 1
        last = ""
        for attempt in range(attempts):
            url = self._next_url()
            try:
                return self._post(url, body), url
            except _Retryable as e:
                last = f"{_redact(url)}: {e}"
                if attempt + 1 < attempts:
                    self._sleep(self._wait(attempt, e.retry_after))
        raise JudgeError(f"server unreachable after {attempts} attempts: {last}")

    def next_tokens(self, prompt: Prompt, words: tuple[str, ...]) -> NextTokens:
        """One unconstrained token with its top log-probabilities (the OpenAI `logprobs` / `top_logprobs` fields;
        llama.cpp's llama-server returns them, and so does llama-cpp-python's server while its logits_all setting is on,
        its default)."""
        s = self.settings
        body = {**s.extra_body, "model": self.model, "messages": prompt.messages(), "temperature": 0.0,
                "seed": s.seed, "max_tokens": 1, "stream": False, "logprobs": True, "top_logprobs": TOP_TOKENS}
        reply, url = self._send(json.dumps(body).encode("utf-8"))
        done = self._parse(reply, url)
        try:
            first = reply["choices"][0]["logprobs"]["content"][0]
            candidates = [(c["token"], float(c["logprob"])) for c in first.get("top_logprobs") or []]
        except (KeyError, IndexError, TypeError, ValueError):
            raise JudgeError(f"{_redact(url)} sent no token log-probabilities (the `logprobs` field) for "
                             f"{prompt.name}: graded verdicts need them; use --metric-option METRIC.verdicts=json, "
                             "or a server that returns them") from None
        return NextTokens(candidates, done.prompt_tokens, done.cached_tokens)

    def _body(self, prompt: Prompt, schema: dict, output: type[Output]) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {**s.extra_body, "model": self.model, "messages": prompt.messages(),
                                "temperature": s.temperature, "seed": s.seed, "max_tokens": s.max_tokens,
                                "stream": False}
        if s.structured == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": output.__name__, "schema": schema, "strict": True}}
        elif s.structured == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        elif s.structured == "tgi":
            body["response_format"] = {"type": "json_object", "value": schema}
        elif s.structured == "llamacpp":
            body["json_schema"] = schema
        else:
            body["grammar"] = self._grammar(output)
        return body

    def _grammar(self, output: type[Output]) -> str:
        key = schema_text(output)
        if key not in self._grammars:
            self._grammars[key] = self._to_gbnf(key)  # fails loudly on a schema it cannot express
        return self._grammars[key]

    def _next_url(self) -> str:
        with self._url_lock:
            return next(self._urls)

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        with self._url_lock:
            jitter = 1.0 + 0.25 * self._rng.random()
        wait = self.settings.backoff * (2 ** attempt) * jitter
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, MAX_WAIT)

    def _post(self, base_url: str, body: bytes) -> dict[str, Any]:
        """POST to {base_url}/chat/completions; the decoded JSON reply. Raises _Retryable or JudgeError."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        url = f"{base_url}/chat/completions"
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        host = urllib.parse.urlsplit(url).hostname or ""
        opener = self._direct if host in _LOOPBACK else self._proxied
        try:
            with opener.open(req, timeout=self.settings.timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            message = _error_message(e)
            if e.code in (408, 429) or e.code >= 500:  # request timeout, rate limit, server-side failure
                raise _Retryable(f"HTTP {e.code}: {message}", _retry_after(e.headers.get("Retry-After"))) from None
            raise JudgeError(f"HTTP {e.code} from {_redact(base_url)}: {message}") from None
        except urllib.error.URLError as e:  # connection refused, unknown host, TLS failure, timeout while connecting
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(self._timed_out()) from None
            raise _Retryable(f"{type(e.reason).__name__}: {e.reason}") from None
        except TimeoutError:  # silent too long, or the whole request past its deadline
            raise _Retryable(self._timed_out()) from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:  # reset, closed mid-reply…
            raise _Retryable(f"{type(e).__name__}: {e}") from None
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise JudgeError(f"{_redact(base_url)} answered with something that is not JSON: {raw[:200]!r}") from None

    def _timed_out(self) -> str:
        t = self.settings.timeout
        return f"no complete reply within {seconds_text(t, digits=None)} (timeout={given_text(t)}: one whole request)"

    def _parse(self, reply: dict[str, Any], url: str) -> Completion:
        try:
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise JudgeError(f"{_redact(url)} sent no chat completion: {json.dumps(reply)[:200]}") from None
        usage = reply.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cached_tokens=int(details.get("cached_tokens") or 0),
            truncated=choice.get("finish_reason") == "length",
        )

    def describe(self) -> dict:
        s = self.settings
        return {**super().describe(), "model": self.model, "base_url": [_redact(u) for u in s.base_url],
                "settings": s.model_dump(exclude={"base_url"})}  # api_key_env is a variable's name, not the key


# --- the deadline of one request ----------------------------------------------------------------------------------
# urllib's timeout applies to each socket operation: a server that sends a byte every few seconds never trips it. These
# connection classes turn it into a deadline for the whole request: connect and send get the time left, and every
# read of the status line, headers and body sets the socket's timeout to the time left first, and fails at once
# (TimeoutError) when none is.


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left


class _DeadlineReader(io.RawIOBase):
    """The socket's reader, each read bounded by the time left before the deadline."""

    def __init__(self, raw: io.RawIOBase, sock: socket.socket, deadline: float):
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int | None:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(b)

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock, *args, deadline: float, **kwargs):
        super().__init__(sock, *args, **kwargs)
        raw = self.fp.detach()  # nothing read yet: the buffered reader's raw socket reader, kept open
        self.fp = io.BufferedReader(_DeadlineReader(raw, sock, deadline))


class _DeadlineConnection:
    """Mixed into http.client's connection classes; `timeout` (urllib passes the judge's) becomes the deadline."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limit = self.timeout if isinstance(self.timeout, (int, float)) else float("inf")
        self._deadline = time.monotonic() + limit
        self.response_class = _deadline_response(self._deadline)

    def connect(self) -> None:
        self.timeout = _time_left(self._deadline)
        super().connect()

    def send(self, data) -> None:
        if self.sock is None and self.auto_open:
            self.connect()
        if self.sock is not None:
            self.sock.settimeout(_time_left(self._deadline))  # sendall: the timeout bounds the whole send
        super().send(data)


def _deadline_response(deadline: float):
    def make(sock, *args, **kwargs) -> _DeadlineResponse:
        return _DeadlineResponse(sock, *args, deadline=deadline, **kwargs)
    return make


class _DeadlineHTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_DeadlineHTTPConnection, req)


_DEADLINE_HANDLERS: tuple[type, ...] = (_DeadlineHTTPHandler,)
if hasattr(http.client, "HTTPSConnection"):  # Python built with ssl
    class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
        pass

    class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):  # the default TLS context, as urllib's own handler without a context
            return self.do_open(_DeadlineHTTPSConnection, req)

    _DEADLINE_HANDLERS += (_DeadlineHTTPSHandler,)


def _gbnf_builder():
    """llama-cpp-python's JSON-schema-to-GBNF converter (pure Python; no model is loaded)."""
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf  # noqa: PLC0415 - optional, heavy
    except ImportError as e:
        raise MissingDependencyError(
            "structured=grammar builds the GBNF with llama-cpp-python: pip install 'localragas[llamacpp]', "
            f"or use structured=json_schema, json_object or llamacpp [{e}]"
        ) from None
    return json_schema_to_gbnf


def _error_message(e: urllib.error.HTTPError) -> str:
    """The server's own words: OpenAI's {"error": {"message"}}, FastAPI's {"detail"}, or the start of the body."""
    try:
        raw = e.read()
    except (OSError, http.client.HTTPException):
        raw = b""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text[:300] or (e.reason or "")
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        for key in ("error", "detail", "message"):
            if data.get(key):
                value = data[key]
                return (value if isinstance(value, str) else json.dumps(value))[:300]
    return text[:300]


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds, from either of its forms (seconds, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
