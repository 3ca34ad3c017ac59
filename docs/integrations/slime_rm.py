"""slime's group reward backed by `corl serve` (POST /v1/samples). Read at slime v0.3.1.

With `--group-rm`, slime generates a prompt's whole group and then awaits the custom reward on it
(`slime/rollout/sglang_rollout.py` generate_and_rm_group, `slime/rollout/rm_hub` batched_async_rm:
`await custom_rm(args, samples)`), the groups of a rollout concurrently. `corl_group_rm` posts the
group's samples, with their response token counts, and returns one reward per sample:

    --group-rm --custom-rm-path slime_rm.corl_group_rm     # slime_rm.py in a folder on PYTHONPATH

slime loads the function by its import path (import_module), so slime_rm.py must lie in a folder on
the rollout workers' PYTHONPATH; it is self-contained (the client is inlined), so nothing else
needs to be there. Its settings come from the environment:
CORL_AGENT (this job's agent), CORL_SERVE_URL, CORL_SERVE_TOKEN, and CORL_ID_KEY, the key of
`sample.metadata` holding a problem id shared by the agents (default "id"; without it, a hash of
the prompt). No step reaches a reward function, so the service matches groups by problem (rounds
per problem id): agents may sample different orders and subsets (over-sampling); a problem the peer
never samples falls back after exchange.wait.

Intrinsic rewards (RENT; the service's GET /health says tokenStats): slime's rollout asks SGLang for
the sampled tokens' log-probabilities (return_logprob) and keeps them in `sample.rollout_log_probs`,
one per response token; each sample is posted with entropies = -log p(sampled token), a one-sample
estimate of each position's entropy. Intuitor needs the whole distribution: not servable.
"""

# -- corl_client: begin. docs/integrations/corl_client.py is the one source of this block; `npm run gen`
# -- copies it verbatim into each adapter beside it, so that each adapter loads alone (by file path,
# -- with nothing on sys.path). Edit corl_client.py, never a copy: a test fails when they differ.
import asyncio
import hashlib
import json
import math
import os
import socket
import ssl
import time
import uuid
import urllib.error
import urllib.parse
import urllib.request

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

    def reads_ground_truth(self):
        """Whether the served reward reads ground truth (requests must then carry references)."""
        return reads_ground_truth(self.health())

    def post_groups(self, agent, step, groups, wait=None, retries=None):
        """POST /v1/groups: one agent's groups for one step; returns the decoded answer.

        groups: [{"id", "prompt", "completions": [str | {"text", "length"?, "finishReason"?}],
                  "reference"?}]. wait: seconds this request waits for supervisors at most
        (capped by serve.exchange.wait).
        """
        body = {"agent": agent, "step": int(step), "groups": list(groups)}
        if wait is not None:
            body["wait"] = float(wait)
        return self.request("POST", "/v1/groups", body, retries=retries, key=new_key())

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
        return self.request("POST", path, body, retries=retries, key=new_key())

    def post_samples(self, agent, samples, step=None, wait=None, retries=None):
        """POST /v1/samples with a list of samples (see `sample_body`): {"agent", "samples": [answer]}.

        The service forms each group from the samples of every request (this one's and other
        processes') and answers once the group is complete and its supervisors have posted.
        step: the trainer's step, or None to let the service count rounds per group id.
        """
        body = {"agent": agent, "samples": list(samples)}
        if step is not None:
            body["step"] = int(step)
        if wait is not None:
            body["wait"] = float(wait)
        return self.request("POST", "/v1/samples", body, retries=retries, key=new_key())

    def post_sample(self, agent, sample, step=None, wait=None, retries=None):
        """POST /v1/samples with one sample (see `sample_body`); returns its answer."""
        body = dict(sample, agent=agent)
        if step is not None:
            body["step"] = int(step)
        if wait is not None:
            body["wait"] = float(wait)
        return self.request("POST", "/v1/samples", body, retries=retries, key=new_key())

    def metrics(self):
        """GET /metrics as Prometheus text."""
        return self.request("GET", "/metrics", raw=True)

    # -- transport ------------------------------------------------------------------------------

    def request(self, method, path, body=None, retries=None, raw=False, key=None):
        """One route, with retries; returns decoded JSON (or text when raw). key: the
        Idempotency-Key sent with every attempt (the routes above pass a fresh one per call)."""
        attempts = 1 + (self.retries if retries is None else int(retries))
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if key is not None:
            headers["idempotency-key"] = key
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


def new_key():
    """A fresh Idempotency-Key: one per call, repeated by that call's retries."""
    return uuid.uuid4().hex


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


class AsyncCorlClient:
    """`CorlClient` for asyncio code: the same routes, retries and errors, as coroutines.

    Each request opens its own connection (HTTP/1.1, closed after the answer). `score_sample`
    shares requests among all the samples waiting at once (two connections per agent and step),
    so thousands can wait without a connection each; `post_sample` holds one connection per
    sample until its group is scored, at most serve.maxHeldPerAgent of them per agent (its share of
    serve.maxConnectionsPerPeer; more get 503 CORL_ERR_SERVE_BUSY, retried).
    """

    def __init__(self, url=None, token=None, timeout=900.0, retries=5, backoff=0.5):
        self.url = (url or os.environ.get("CORL_SERVE_URL") or "http://127.0.0.1:8470").rstrip("/")
        self.token = token if token is not None else (os.environ.get("CORL_SERVE_TOKEN") or None)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL for corl serve, got %r" % (self.url,))
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._base = parts.path.rstrip("/")
        self._netloc = parts.netloc
        self._health = None

    async def health(self, refresh=False):
        """GET /health (cached after the first call unless refresh; concurrent first calls share one request)."""
        if self._health is None or refresh:
            loop = asyncio.get_running_loop()
            pending = self.__dict__.get("_health_pending")
            if pending is None or pending.get_loop() is not loop or (refresh and pending.done()):
                pending = self._health_pending = loop.create_task(self.request("GET", "/health"))
            try:
                self._health = await asyncio.shield(pending)
            finally:
                if pending.done() and self.__dict__.get("_health_pending") is pending:
                    self._health_pending = None
        return self._health

    async def post_samples(self, agent, samples, step=None, wait=None, retries=None):
        """POST /v1/samples (see CorlClient.post_samples)."""
        body = {"agent": agent, "samples": list(samples)}
        if step is not None:
            body["step"] = int(step)
        if wait is not None:
            body["wait"] = float(wait)
        return await self.request("POST", "/v1/samples", body, retries=retries, key=new_key())

    async def post_sample(self, agent, sample, step=None, wait=None, retries=None):
        """POST /v1/samples with one sample (see `sample_body`); returns its answer."""
        body = dict(sample, agent=agent)
        if step is not None:
            body["step"] = int(step)
        if wait is not None:
            body["wait"] = float(wait)
        return await self.request("POST", "/v1/samples", body, retries=retries, key=new_key())

    async def score_sample(self, agent, sample, step=None, wait=None):
        """One sample's answer (see `sample_body`), over a few shared requests: the way to post
        thousands of samples at once (verl's reward loop runs up to 1000 `run_single` per worker).

        Samples handed over while a post is under way go together in the next one, as
        POST /v1/samples with `defer: true` (answered at once; the samples wait in the service), and
        one POST /v1/samples/wait at a time collects the answers of all this client's waiting
        samples of the agent, returning as soon as any has its answer. So a client holds at most
        two connections per agent and step, whatever the number of samples it waits for, and each
        sample returns as soon as its own group is scored. Retries: a post or wait that fails (no
        answer, 503, 504) is sent again, `retries` times with the backoff; a sample the service
        answers 503 or 504 for, or no longer knows (a restart), is posted again with its request id,
        which gets the stored answer or joins its group where it waits. Any other error answer
        raises CorlServeError for that sample alone.
        """
        body = dict(sample)
        if body.get("requestId") is None:
            body["requestId"] = new_request_id()
        loop = asyncio.get_running_loop()
        lanes = self.__dict__.setdefault("_lanes", {})
        key = (id(loop), agent, None if step is None else int(step), None if wait is None else float(wait))
        lane = lanes.get(key)
        if lane is None or lane.loop is not loop or lane.loop.is_closed():
            lane = lanes[key] = _Lane(self, loop, agent, key[2], key[3])
        return await lane.add(body)

    async def request(self, method, path, body=None, retries=None, key=None):
        """One route, with retries; returns the decoded JSON answer. key: the Idempotency-Key sent
        with every attempt (the routes above pass a fresh one per call)."""
        attempts = 1 + (self.retries if retries is None else int(retries))
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        url = self.url + path
        delay = self.backoff
        last = None
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
            try:
                status, text = await asyncio.wait_for(self._exchange(method, path, data, key), self.timeout)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as e:
                last = CorlServeError("expected an answer from %s %s, got %s" % (method, url, e or type(e).__name__))
                continue
            if status == 200:
                return json.loads(text)
            last = _error_from(method, url, status, text)
            if status not in RETRY_STATUSES:
                raise last
        raise last

    async def _exchange(self, method, path, data, key=None):
        ctx = ssl.create_default_context() if self._tls else None
        reader, writer = await asyncio.open_connection(self._host, self._port, ssl=ctx)
        try:
            head = ["%s %s%s HTTP/1.1" % (method, self._base, path), "Host: " + self._netloc,
                    "Accept: application/json", "Connection: close", "Content-Length: %d" % len(data)]
            if data:
                head.append("Content-Type: application/json")
            if key is not None:
                head.append("Idempotency-Key: " + key)
            if self.token:
                head.append("Authorization: Bearer " + self.token)
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
            await writer.drain()
            status_line = await reader.readline()
            parts = status_line.decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                raise ValueError("a malformed status line %r" % (status_line[:80],))
            length = None
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            raw = await (reader.readexactly(length) if length is not None else reader.read())
            return int(parts[1]), raw.decode("utf-8")
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass


class _Lane:
    """The deferred samples of one AsyncCorlClient for one agent, step and wait, on one event loop:
    one task posts what is queued (in chunks), another keeps one wait open for everything accepted."""

    #: Most samples, and bytes of their JSON, in one deferred post.
    CHUNK_SAMPLES = 1024
    CHUNK_BYTES = 4 << 20
    #: Seconds a lane's tasks stay alive with nothing to do.
    IDLE = 30.0

    def __init__(self, client, loop, agent, step, wait):
        self.client, self.loop, self.agent, self.step, self.wait = client, loop, agent, step, wait
        self.queue = []  # (body, future, attempts) to post
        self.waiting = {}  # requestId -> (body, future, attempts), accepted by the service
        self.queued = asyncio.Event()
        self.accepted = asyncio.Event()
        self.poster = self.collector = None
        self.received = []  # ids whose answers the last wait brought: the next wait acknowledges them

    def add(self, body):
        fut = self.loop.create_future()
        self._queue(body, fut, 0)
        return fut

    def _queue(self, body, fut, attempts):
        self.queue.append((body, fut, attempts))
        self.queued.set()
        if self.poster is None or self.poster.done():
            self.poster = self.loop.create_task(self._posting())
        if self.collector is None or self.collector.done():
            self.collector = self.loop.create_task(self._collecting())

    def _again(self, body, fut, attempts, error):
        """Post a sample again (a retryable answer: error; one the service does not hold: None)."""
        if fut.done():
            return
        if error is not None and attempts >= self.client.retries:
            return fut.set_exception(error)
        if error is None:
            return self._queue(body, fut, attempts)
        delay = min(self.client.backoff * 2 ** attempts, 30.0)
        self.loop.call_later(delay, self._queue, body, fut, attempts + 1)

    async def _posting(self):
        while True:
            if not self.queue:
                self.queued.clear()
                try:
                    await asyncio.wait_for(self.queued.wait(), self.IDLE)
                except asyncio.TimeoutError:
                    if not self.queue:
                        return
                continue
            chunk, size = [], 0
            while self.queue and len(chunk) < self.CHUNK_SAMPLES:
                n = len(json.dumps(self.queue[0][0]))
                if chunk and size + n > self.CHUNK_BYTES:
                    break
                entry = self.queue.pop(0)
                if not entry[1].done():
                    chunk.append(entry)
                    size += n
            if chunk:
                await self._post(chunk)

    async def _post(self, chunk):
        body = {"agent": self.agent, "defer": True, "samples": [b for b, _, _ in chunk]}
        if self.step is not None:
            body["step"] = self.step
        if self.wait is not None:
            body["wait"] = self.wait
        try:
            answer = await self.client.request("POST", "/v1/samples", body, key=new_key())
        except CorlServeError as e:
            for _, fut, _ in chunk:
                if not fut.done():
                    fut.set_exception(e)
            return
        url = self.client.url + "/v1/samples"
        for (b, fut, attempts), status in zip(chunk, answer.get("samples") or []):
            err = status.get("error")
            if err is None:
                self.waiting[b["requestId"]] = (b, fut, attempts)
            elif err.get("status") in RETRY_STATUSES:
                self._again(b, fut, attempts, _sample_error(url, b, err))
            elif not fut.done():
                fut.set_exception(_sample_error(url, b, err))
        self.accepted.set()

    async def _collecting(self):
        failures, delay = 0, self.client.backoff
        while True:
            for rid in [r for r, (_, fut, _) in self.waiting.items() if fut.done()]:
                del self.waiting[rid]  # its caller gave up (cancelled)
            if not self.waiting and self.received:
                try:  # acknowledge the last answers, so the service holds nothing for this client
                    await self._wait([])
                except CorlServeError:
                    self.received = []  # the service lets them go at its bound
                continue
            if not self.waiting:
                self.accepted.clear()
                try:
                    await asyncio.wait_for(self.accepted.wait(), self.IDLE)
                except asyncio.TimeoutError:
                    if not self.waiting:
                        return
                continue
            self.accepted.clear()
            poll = self.loop.create_task(self._wait(list(self.waiting)))
            more = self.loop.create_task(self.accepted.wait())
            done, _ = await asyncio.wait([poll, more], return_when=asyncio.FIRST_COMPLETED)
            more.cancel()
            if poll not in done:
                # More samples were accepted: ask again for all of them (a wait closed early takes
                # nothing; an answer lost in between names its samples unknown next time).
                poll.cancel()
                try:
                    await poll
                except (asyncio.CancelledError, CorlServeError):
                    pass
                continue
            try:
                answer = poll.result()
            except CorlServeError as e:
                failures += 1
                if failures > self.client.retries:
                    for _, fut, _ in self.waiting.values():
                        if not fut.done():
                            fut.set_exception(e)
                    self.waiting.clear()
                    failures, delay = 0, self.client.backoff
                else:
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 30.0)
                continue
            failures, delay = 0, self.client.backoff
            self._deliver(answer)

    async def _wait(self, ids):
        body = {"agent": self.agent, "requestIds": ids, "received": self.received,
                "wait": max(0.0, min(20.0, self.client.timeout / 2))}
        answer = await self.client.request("POST", "/v1/samples/wait", body, retries=0)
        self.received = []  # acknowledged: the service has forgotten them
        return answer

    def _deliver(self, answer):
        url = self.client.url + "/v1/samples/wait"
        self.received = [a.get("requestId") for a in answer.get("samples") or []] + [
            e.get("requestId") for e in answer.get("errors") or []]
        for a in answer.get("samples") or []:
            entry = self.waiting.pop(a.get("requestId"), None)
            if entry and not entry[1].done():
                entry[1].set_result(a)
        for e in answer.get("errors") or []:
            entry = self.waiting.pop(e.get("requestId"), None)
            if not entry:
                continue
            err = e.get("error") or {}
            if err.get("status") in RETRY_STATUSES:
                self._again(entry[0], entry[1], entry[2], _sample_error(url, entry[0], err))
            elif not entry[1].done():
                entry[1].set_exception(_sample_error(url, entry[0], err))
        for rid in answer.get("unknown") or []:
            entry = self.waiting.pop(rid, None)
            if entry:
                self._again(entry[0], entry[1], entry[2], None)


def _sample_error(url, body, err):
    code = err.get("code")
    return CorlServeError(
        "expected an answer for sample %r of group %r from POST %s, got HTTP %s%s%s" % (
            body.get("requestId"), body.get("group"), url, err.get("status"), " " + code if code else "",
            ": " + err["message"] if err.get("message") else ""),
        status=err.get("status"), server_code=code, where=err.get("where"), hint=err.get("hint"))


def _error_from(method, url, status, text):
    try:
        err = json.loads(text).get("error") or {}
    except (ValueError, AttributeError):
        err = {}
    code = err.get("code")
    return CorlServeError(
        "expected a successful answer from %s %s, got HTTP %d%s%s" % (
            method, url, status, " " + code if code else "", ": " + err["message"] if err.get("message") else ""),
        status=status, server_code=code, where=err.get("where"), hint=err.get("hint"))


# -- helpers shared by the trainer integrations ---------------------------------------------------

def reads_ground_truth(health):
    """Whether a GET /health answer says requests must carry references: its readsGroundTruth.

    `supervised` there also covers a reward trained on labels, which reads none; a service older than
    readsGroundTruth sent only `supervised`, which then meant reads ground truth.
    """
    if "readsGroundTruth" in health:
        return bool(health["readsGroundTruth"])
    return bool(health.get("supervised"))


def reads_token_stats(health):
    """Whether a GET /health answer says every completion must carry per-token statistics (its
    tokenStats: the served reward is RENT or Intuitor, `corl:intrinsic`)."""
    return bool(health.get("tokenStats"))


#: The tail mass assumed beyond the reported log-probabilities when they seem to cover everything.
TAIL_FLOOR = 1e-12


def top_logprob_stats(logprobs, vocab_size):
    """(entropy, mean log-probability) of one position from the log-probabilities reported for it.

    logprobs: the natural-log probabilities of the n tokens reported at this position (vLLM's top-k and
    the sampled token); vocab_size: V. What they leave, 1 - sum(p) (at least TAIL_FLOOR), is spread
    evenly over the V - n tokens not reported: the maximum-entropy completion of the distribution.
    So the entropy (RENT) is an upper bound of the true entropy, and the mean over the vocabulary of
    the log-probabilities, (1/V) sum_v log p(v) (Intuitor), an upper bound of the true mean (so the
    self-certainty -log V - mean is a lower bound); both are exact when n = V. Entries of -inf (a token
    masked by the sampler) have p = 0 and are left out of both sums.
    """
    if vocab_size < 1:
        raise ValueError("expected the vocabulary size (>= 1), got %r" % (vocab_size,))
    reported = [float(x) for x in logprobs]
    if len(reported) > vocab_size:
        raise ValueError("expected at most %d log-probabilities (the vocabulary), got %d" % (vocab_size, len(reported)))
    finite = [x for x in reported if math.isfinite(x)]
    if any(x > 1e-6 for x in finite) or any(math.isnan(x) for x in reported):
        raise ValueError("expected log-probabilities (<= 0), got %r" % (reported,))
    entropy = -sum(math.exp(x) * x for x in finite) + 0.0  # never -0.0
    total = sum(finite)
    unreported = vocab_size - len(reported)
    if unreported > 0:
        tail = max(1.0 - sum(math.exp(x) for x in finite), TAIL_FLOOR)
        each = math.log(tail / unreported)
        entropy -= tail * each
        total += unreported * each
    return entropy, total / vocab_size


def sampled_entropies(logprobs):
    """One-sample estimates of each position's entropy: -log p(sampled token), whose expectation over
    the sampling is the entropy H(p_t) (unbiased, one draw per position: noisy per token)."""
    out = []
    for x in logprobs:
        x = float(x)
        if not math.isfinite(x) or x > 1e-6:
            raise ValueError("expected the sampled tokens' log-probabilities (finite, <= 0), got %r" % (x,))
        out.append(-x if x < 0 else 0.0)
    return out


def new_request_id():
    """A fresh idempotency key for one sample: reuse it when retrying that sample, never for another."""
    return uuid.uuid4().hex


def sample_body(group, size, text, tokens=None, finish_reason=None, sample=None, rollout=None, request_id=None,
                prompt=None, reference=None, entropies=None, mean_logprobs=None, train=None):
    """One POST /v1/samples sample.

    group      the problem id, the same in every agent's posts (a dataset id column, not a per-process uid)
    size       how many samples the group has (TRL num_generations, verl rollout.n, OpenRLHF n_samples_per_prompt)
    text       the completion text; tokens: its generated token count (send it: lengths are tokens)
    sample     its position in the group, when known; rollout: the trainer's own id of this group
               instance (verl's uid); request_id: idempotency key (new_request_id())
    entropies / mean_logprobs: per-token statistics, one per generated token (RENT / Intuitor)
    train      False: a vote-only sample (TTRL's vote-on-more split): it votes with its group (size
               counts it) and its answer's reward is None; the trainer does not train on it
    """
    completion = {"text": text}
    if tokens is not None:
        completion["length"] = int(tokens)
    if finish_reason is not None:
        completion["finishReason"] = finish_reason
    if entropies is not None:
        completion["entropies"] = [float(x) for x in entropies]
    if mean_logprobs is not None:
        completion["meanLogprobs"] = [float(x) for x in mean_logprobs]
    body = {"group": str(group), "size": int(size), "completion": completion}
    for key, value in (("sample", sample), ("rollout", rollout), ("requestId", request_id), ("prompt", prompt),
                       ("reference", reference)):
        if value is not None:
            body[key] = int(value) if key == "sample" else str(value)
    if train is False:
        body["train"] = False
    return body



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
# -- corl_client: end.

import os


__all__ = ["corl_group_rm"]

_clients = {}


async def corl_group_rm(args, samples, **_ignored):
    """slime custom reward (--group-rm): the rewards of one prompt's group of samples."""
    agent = os.environ.get("CORL_AGENT")
    if not agent:
        raise ValueError("expected CORL_AGENT (this job's agent in the serve config) in the environment, got none")
    key = (os.environ.get("CORL_SERVE_URL"), os.environ.get("CORL_SERVE_TOKEN"))
    client = _clients.get(key)
    if client is None:
        client = _clients[key] = AsyncCorlClient(*key[:1], token=key[1])
    health = await client.health()
    reads = reads_ground_truth(health)
    stats = reads_token_stats(health)
    id_key = os.environ.get("CORL_ID_KEY") or "id"
    first = samples[0]
    meta = first.metadata if isinstance(first.metadata, dict) else {}
    group = str(meta[id_key]) if meta.get(id_key) is not None else stable_id(prompt_text(first.prompt))
    truncated = getattr(type(first), "Status", None)
    bodies = []
    for i, s in enumerate(samples):
        finish = "length" if truncated is not None and s.status == truncated.TRUNCATED else "stop"
        entropies = None
        if stats:
            logprobs = getattr(s, "rollout_log_probs", None)
            if logprobs is None or len(logprobs) != s.response_length:
                raise ValueError("expected sample.rollout_log_probs, one per response token (%d), for the served "
                                 "reward's per-token statistics, got %s"
                                 % (s.response_length, "none" if logprobs is None else len(logprobs)))
            entropies = sampled_entropies(logprobs)
        bodies.append(sample_body(group, len(samples), s.response, tokens=s.response_length, finish_reason=finish,
                                  sample=i, request_id=new_request_id(), prompt=prompt_text(s.prompt),
                                  reference=s.label if reads and s.label is not None else None, entropies=entropies))
    answer = await client.post_samples(agent, bodies)
    return [float(a["reward"]) for a in answer["samples"]]
