"""TRL reward functions backed by `corl serve` (POST /v1/samples). Read at TRL v1.9.0.

GRPOTrainer: each process calls its reward functions on its own slice of the generation batch,
and a prompt's num_generations completions may span processes (trl#3896). `CorlReward` posts the
slice's completions as samples, each with its group id, its position in the group and the group
size; `corl serve` forms each group from every process's samples, so the per-device batch size
need not be a multiple of num_generations (TRL checks that the generation batch,
per_device_train_batch_size x processes x steps_per_generation, is).

    from trl import GRPOConfig, GRPOTrainer
    from trl_reward import CorlReward

    reward = CorlReward(agent="agent-0", url="http://127.0.0.1:8470", id_column="id")
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], train_dataset=dataset,
                          args=GRPOConfig(num_generations=8, per_device_train_batch_size=4,
                                          steps_per_generation=2, seed=0))

AsyncGRPOTrainer (trl.experimental.async_grpo) calls each reward function on one whole group, in a
child process (so it must be picklable) and with no trainer state: use
`functools.partial(corl_group_reward, agent=..., id_column=...)`. It scores groups one at a time in
the order they finish, which differs between agents, so under a peer topology each agent would wait
on a group its peer has not reached: corl_group_reward refuses a peer topology unless asked
(`allow_peers=True`, then `wait` bounds each wait and the fallback answers).

Intrinsic rewards (RENT, Intuitor) cannot be served to TRL v1.9.0: its reward functions get prompts,
completions, completion_ids and dataset columns, never log-probabilities, so both functions refuse a
service whose GET /health says tokenStats.

Only the standard library is needed, and nothing beside this file (the client is inlined): copy it
beside your training script. Guide: docs/guide/serve.md.
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


__all__ = ["CorlReward", "corl_group_reward"]


def _ids(values, n, name):
    if values is None:
        return None
    if len(values) != n:
        raise ValueError("expected one %s per completion (%d), got %d" % (name, n, len(values)))
    return [None if v is None else str(v) for v in values]


class CorlReward:
    """GRPOTrainer reward function: posts this process's completions; the service forms the groups.

    agent            this trainer's agent name in the serve config
    url, token       the service (default $CORL_SERVE_URL, $CORL_SERVE_TOKEN)
    id_column        dataset column with a problem id shared by every agent (required when agents
                     see differently phrased prompts); default: a hash of the prompt text
    reference_column dataset column with the reference answer: read by a reward that reads ground
                     truth; under a label-free one graded against only, logged as corl/label_accuracy
                     and corl/reward_accuracy through log_metric
    num_generations  the group size, when the trainer is not reachable through TRL's `log_metric`
                     argument (TRL passes it; the trainer gives num_generations, num_generations_eval,
                     the process index and train/eval mode)
    process_index    this process's index (default: the trainer's, else $RANK, else 0)
    wait             seconds a call waits for peers at most (default: the service's limit)

    Steps are trainer_state.global_step at generation; evaluation groups get ids prefixed "eval/"
    so that they never meet training groups.
    """

    def __init__(self, agent=None, url=None, token=None, id_column=None, reference_column=None,
                 num_generations=None, process_index=None, wait=None, client=None):
        if not agent:
            raise ValueError("expected agent= (an agent name of the serve config), got %r" % (agent,))
        self.agent = agent
        self.client = client or CorlClient(url, token=token)
        self.id_column = id_column
        self.reference_column = reference_column
        self.num_generations = num_generations
        self.process_index = process_index
        self.wait = wait
        # TRL names a reward function by __name__ in its logs.
        self.__name__ = "corl_%s" % (agent,)
        #: The service's answer to the latest call.
        self.last_answer = None

    def __call__(self, prompts, completions, completion_ids=None, trainer_state=None, log_metric=None, **columns):
        columns.pop("log_extra", None)
        columns.pop("environments", None)
        trainer = getattr(log_metric, "__self__", None)
        training = bool(getattr(getattr(trainer, "model", None), "training", True))
        size = self._size(trainer, training)
        index = self._process(trainer)
        if trainer_state is None or getattr(trainer_state, "global_step", None) is None:
            raise ValueError("expected trainer_state.global_step (TRL passes it to reward functions), got none")
        n = len(completions)
        if len(prompts) != n:
            raise ValueError("expected one prompt per completion (%d), got %d" % (n, len(prompts)))
        if completion_ids is not None and len(completion_ids) != n:
            raise ValueError("expected one completion_ids entry per completion (%d), got %d" % (n, len(completion_ids)))
        _refuse_token_stats(self.client.health())
        ids = _ids(columns.get(self.id_column) if self.id_column else None, n, "id (%s)" % self.id_column)
        if self.id_column and ids is None:
            raise ValueError("expected the dataset column %r (id_column) among the reward function's arguments, got %s"
                             % (self.id_column, sorted(columns)))
        refs = _ids(columns.get(self.reference_column) if self.reference_column else None, n, "reference")
        samples = []
        for i in range(n):
            position = index * n + i  # this completion's place in the whole generation batch
            problem = ids[i] if ids is not None else stable_id(prompt_text(prompts[i]))
            samples.append(sample_body(
                problem if training else "eval/%s" % (problem,), size, completion_text(completions[i]),
                tokens=len(completion_ids[i]) if completion_ids is not None else None, sample=position % size,
                prompt=prompt_text(prompts[i]), reference=refs[i] if refs is not None else None))
        answer = self.client.post_samples(self.agent, samples, step=trainer_state.global_step, wait=self.wait)
        self.last_answer = answer
        answers = answer["samples"]
        if log_metric is not None and answers:
            log_metric("corl/labeled_fraction", sum(a.get("label") is not None for a in answers) / len(answers))
            log_metric("corl/fallback_fraction", sum(a["source"] in ("self", "zero") for a in answers) / len(answers))
            _log_grades(log_metric, answers)
        return [float(a["reward"]) for a in answers]

    def _size(self, trainer, training):
        if trainer is not None and getattr(trainer, "num_generations", None):
            k = trainer.num_generations if training else (getattr(trainer, "num_generations_eval", None) or trainer.num_generations)
            return int(k)
        if self.num_generations:
            return int(self.num_generations)
        raise ValueError("expected num_generations= (the group size): this TRL passes no trainer through log_metric")

    def _process(self, trainer):
        if self.process_index is not None:
            return int(self.process_index)
        accelerator = getattr(trainer, "accelerator", None)
        if accelerator is not None:
            return int(accelerator.process_index)
        return int(os.environ.get("RANK", "0"))


def _log_grades(log_metric, answers):
    """TTRL's diagnostics of a label-free reward, where reference_column sent references: the service
    graded each sample's label and reward against it (label/accuracy, reward/accuracy, 1/0 per sample).
    Logged as corl/label_accuracy and corl/reward_accuracy, the mean over the samples that carry them."""
    for name, tag in (("label/accuracy", "corl/label_accuracy"), ("reward/accuracy", "corl/reward_accuracy")):
        graded = [a["metrics"][name] for a in answers if name in (a.get("metrics") or {})]
        if graded:
            log_metric(tag, sum(graded) / len(graded))


def _refuse_token_stats(health):
    if reads_token_stats(health):
        raise ValueError(
            "expected a reward that reads no per-token statistics, got %r (tokenStats): TRL hands a reward function no "
            "log-probabilities, so RENT and Intuitor cannot be served to TRL (docs/guide/serve.md#intrinsic-rewards-per-trainer)"
            % (health.get("reward"),))


_async_clients = {}


async def corl_group_reward(prompts, completions, completion_ids=None, *, agent, url=None, token=None, id_column=None,
                            reference_column=None, wait=None, allow_peers=False, **columns):
    """AsyncGRPOTrainer reward function: one whole group per call (the K completions of one prompt).

    Pass it bound with functools.partial (picklable, and TRL awaits it as a coroutine):
    functools.partial(corl_group_reward, agent="agent-0", url="http://127.0.0.1:8470", id_column="id").
    No step reaches it, so the service matches groups by problem id (rounds per group id).
    """
    key = (url, token)
    client = _async_clients.get(key)
    if client is None:
        client = _async_clients[key] = AsyncCorlClient(url, token=token)
    health = await client.health()
    _refuse_token_stats(health)
    peers = [m for m in (health.get("supervisors") or {}).get(agent, []) if m != agent]
    if peers and not allow_peers:
        raise ValueError(
            "expected a self or pointwise reward for AsyncGRPOTrainer, got agent %r supervised by %s: its scoring loop "
            "takes groups one at a time in finishing order, which differs between agents, so each would wait on a group "
            "its peer has not scored (pass allow_peers=True with a short wait to accept fallbacks)" % (agent, peers))
    n = len(completions)
    ids = _ids(columns.get(id_column) if id_column else None, n, "id (%s)" % id_column)
    if id_column and ids is None:
        raise ValueError("expected the dataset column %r (id_column), got %s" % (id_column, sorted(columns)))
    refs = _ids(columns.get(reference_column) if reference_column else None, n, "reference")
    problem = ids[0] if ids is not None else stable_id(prompt_text(prompts[0]))
    samples = [
        sample_body(problem, n, completion_text(c), tokens=len(completion_ids[i]) if completion_ids is not None else None,
                    sample=i, request_id=new_request_id(), prompt=prompt_text(prompts[i]),
                    reference=refs[i] if refs is not None else None)
        for i, c in enumerate(completions)
    ]
    answer = await client.post_samples(agent, samples, wait=wait)
    return [float(a["reward"]) for a in answer["samples"]]
