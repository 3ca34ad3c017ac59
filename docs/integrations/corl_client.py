"""A small client for `corl serve`, using only the Python standard library.

Shared by the trainer integrations beside it (trl_reward.py, verl_reward_manager.py) and usable on
its own. Routes and fields: docs/guide/serve.md.

    from corl_client import CorlClient
    client = CorlClient("http://127.0.0.1:8470")
    answer = client.post_groups(agent="a", step=0, groups=[
        {"id": "p17", "prompt": "What is 2+2?", "completions": ["... \\boxed{4}", "... \\boxed{5}"]},
    ])
    answer["groups"][0]["rewards"]   # [1, 0] under a ring once the peer posted p17 at step 0

Retries: connection failures and the answers a retry can fix (503 while the service restarts, 504
when the supervisors did not arrive and the fallback is "error") are retried with a fixed
exponential backoff (no jitter: retries are idempotent, so their timing does not matter). Any other
error answer is raised at once as a CorlServeError carrying the service's code.
"""

import hashlib
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "CLIENT_CODE",
    "CorlClient",
    "CorlServeError",
    "completion_text",
    "prompt_text",
    "stable_id",
]

#: The code every client-side failure carries (docs/reference/errors.md).
CLIENT_CODE = "CORL_ERR_SERVE_CLIENT"

#: HTTP statuses worth retrying: the service is restarting (503) or a peer is late (504).
RETRY_STATUSES = (503, 504)


class CorlServeError(Exception):
    """`corl serve` answered with an error, or did not answer, after the client's retries.

    code        always CORL_ERR_SERVE_CLIENT
    status      the HTTP status of the last answer (None: no answer at all)
    server_code the code the service answered with (e.g. CORL_ERR_SERVE_CONFLICT), None without an answer
    where       the request field the service blamed, when it named one
    """

    def __init__(self, message, status=None, server_code=None, where=None, hint=None):
        super().__init__("%s: %s" % (CLIENT_CODE, message))
        self.code = CLIENT_CODE
        self.status = status
        self.server_code = server_code
        self.where = where
        self.hint = hint


class CorlClient:
    """Talks to one `corl serve` process.

    url      base URL, e.g. "http://127.0.0.1:8470" (default: $CORL_SERVE_URL, else that)
    token    this agent's token (default: $CORL_SERVE_TOKEN); sent on every request. With agent
             tokens (serve.tokens) each agent's trainer has its own and posts only as that agent
    timeout  seconds one HTTP request may take; keep it above serve.exchange.wait
    retries  extra attempts after a connection failure, a 503 or a 504
    backoff  seconds before the first retry, doubled after each (capped at 30)
    """

    def __init__(self, url=None, token=None, timeout=900.0, retries=5, backoff=0.5):
        self.url = (url or os.environ.get("CORL_SERVE_URL") or "http://127.0.0.1:8470").rstrip("/")
        self.token = token if token is not None else (os.environ.get("CORL_SERVE_TOKEN") or None)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self._health = None

    # -- routes ---------------------------------------------------------------------------------

    def health(self, refresh=False):
        """GET /health (cached after the first call unless refresh)."""
        if self._health is None or refresh:
            self._health = self.request("GET", "/health")
        return self._health

    def supervised(self):
        """Whether the served reward reads ground truth (requests must then carry references)."""
        return bool(self.health().get("supervised"))

    def post_groups(self, agent, step, groups, wait=None, retries=None):
        """POST /v1/groups: one agent's groups for one step; returns the decoded answer.

        groups: [{"id", "prompt", "completions": [str | {"text", "length"?, "finishReason"?}],
                  "reference"?}]. wait: seconds this request waits for supervisors at most
        (capped by serve.exchange.wait).
        """
        body = {"agent": agent, "step": int(step), "groups": list(groups)}
        if wait is not None:
            body["wait"] = float(wait)
        return self.request("POST", "/v1/groups", body, retries=retries)

    def get_reward(self, query, prompts=None, labels=None, agent=None, retries=None):
        """POST /get_reward (the OpenRLHF route): {"rewards", "scores", "extra_logs"}."""
        body = {"query": list(query)}
        if prompts is not None:
            body["prompts"] = list(prompts)
        if labels is not None:
            body["labels"] = list(labels)
        path = "/get_reward"
        if agent is not None:
            path += "?" + urllib.parse.urlencode({"agent": str(agent)})
        return self.request("POST", path, body, retries=retries)

    def metrics(self):
        """GET /metrics as Prometheus text."""
        return self.request("GET", "/metrics", raw=True)

    # -- transport ------------------------------------------------------------------------------

    def request(self, method, path, body=None, retries=None, raw=False):
        """One route, with retries; returns decoded JSON (or text when raw)."""
        attempts = 1 + (self.retries if retries is None else int(retries))
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = "Bearer " + self.token
        delay = self.backoff
        last = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    text = res.read().decode("utf-8")
                    return text if raw else json.loads(text)
            except urllib.error.HTTPError as e:
                last = _answer_error(method, self.url + path, e)
                if e.code not in RETRY_STATUSES:
                    raise last
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as e:
                reason = getattr(e, "reason", e)
                last = CorlServeError("expected an answer from %s %s, got %s" % (method, self.url + path, reason))
        raise last


def _answer_error(method, url, e):
    try:
        err = json.loads(e.read().decode("utf-8")).get("error") or {}
    except (ValueError, AttributeError):
        err = {}
    code = err.get("code")
    return CorlServeError(
        "expected a successful answer from %s %s, got HTTP %d%s%s" % (
            method, url, e.code, " " + code if code else "", ": " + err["message"] if err.get("message") else ""),
        status=e.code, server_code=code, where=err.get("where"), hint=err.get("hint"))


# -- helpers shared by the trainer integrations ---------------------------------------------------

def completion_text(completion):
    """The text of a completion as trainers hand it over: a string, or chat messages (the last
    message's content; list-of-parts contents are joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return _content(completion.get("content", ""))
    if isinstance(completion, (list, tuple)) and completion:
        return _content(completion[-1].get("content", "")) if isinstance(completion[-1], dict) else str(completion[-1])
    return "" if completion is None else str(completion)


def prompt_text(prompt):
    """A prompt as one string: text as is, chat messages as "role: content" lines."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        return "\n".join("%s: %s" % (m.get("role", ""), _content(m.get("content", ""))) if isinstance(m, dict) else str(m) for m in prompt)
    return "" if prompt is None else str(prompt)


def _content(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def stable_id(text):
    """A group id derived from a prompt's text: the same in every agent's process (unlike Python's
    salted hash()), so that agents shown the same prompt meet in the exchange."""
    return "p-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]

