"""verl's reward loop backed by `corl serve` (POST /v1/samples). For verl 0.7.1 and later; read at v0.9.0.

verl scores one sample at a time: a reward worker runs `run_single` once per sample, all samples of
its chunk as concurrent asyncio tasks, and the agent loop sends each finished rollout to a random
reward worker. A group reward (a vote, a peer's vote) needs the K samples of a prompt, so each
sample is posted with its group id and the group size, and `corl serve` forms the group; each
`run_single` returns once its group is complete and its supervisors have posted. The samples a
worker has in flight share its requests (`AsyncCorlClient.score_sample`: deferred posts and one
wait for all of them), so a worker holds two connections to the service, not one per sample.

Select the manager by module path (nothing to register or import in your entry script):

    reward.reward_manager.source=importlib
    reward.reward_manager.name=CorlRewardManager
    reward.reward_manager.module.path=/abs/path/docs/integrations/verl_reward_loop.py
    +reward.reward_kwargs.corl.agent=agent-0
    +reward.reward_kwargs.corl.url=http://127.0.0.1:8470

The file is self-contained (the client is inlined): verl loads it by path in each reward worker
with nothing on sys.path. Settings under reward.reward_kwargs.corl, else the
environment: agent (CORL_AGENT), url (CORL_SERVE_URL), token (CORL_SERVE_TOKEN), wait,
group_size (default actor_rollout_ref.rollout.n), id_key (default "index"), validation_splits,
timeout (seconds per HTTP request, default 900) and retries (default 5).

- Group id: the problem's id from the data, never verl's uid (minted per process, different in
  every agent): extra_info[id_key] prefixed by extra_info["split"] when present (verl's example
  preprocessing writes both), else a hash of the raw prompt. The uid goes along as the rollout
  tag, so the K samples of one rollout form one group even when two epochs of a problem overlap.
- Step: run_single sees no step (the agent loop passes none), so the service matches groups by
  problem (rounds per group id): agents may train on different orders and subsets of the data; a
  problem the peer never samples falls back after exchange.wait (corl_fallback 1).
- Lengths: the valid response token count is sent, so length-aware rewards read tokens, as in
  training. Validation samples (extra_info["split"] in validation_splits, default test/val/
  validation) never reach the exchange: they are scored by verl's compute_score (ground truth),
  as NaiveRewardManager would.

Intrinsic rewards (RENT; the service's GET /health says tokenStats): a sample that carries verl's
rollout log-probabilities (batch["rollout_log_probs"], with actor_rollout_ref.rollout.calculate_log_probs)
is posted with entropies = -log p(sampled token), a one-sample estimate of each position's entropy.
verl v0.9.0's streaming reward loop (the default with a rule-based reward: agent_loop.py
_compute_score) builds the one-sample batch of prompts, responses and masks alone, so there a
sample carries none and run_single says so; the batch verl scores after generation (compute_rm_score,
when a reward model shares the actor's GPUs) carries them. Intuitor needs the whole distribution,
which no verl batch holds: not servable.

`compute_score` below is the lighter route (reward.custom_reward_function): verl hands it the
decoded text only, so lengths are characters (flagged by the service) and samples are grouped by
problem id alone; enough for a pointwise reward (a verifier).
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

import asyncio
import inspect


try:  # verl >= 0.7.1
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
except Exception:  # noqa: BLE001 - no verl here (docs, tests): the same constructor contract

    class RewardManagerBase:
        def __init__(self, config, tokenizer, compute_score):
            self.config = config
            self.tokenizer = tokenizer
            self.compute_score = compute_score


__all__ = ["CorlRewardManager", "compute_score", "group_id"]

VALIDATION_SPLITS = ("test", "val", "validation")


def _get(obj, key, default=None):
    """A field of a DictConfig, a dict or an object, else the default."""
    if obj is None:
        return default
    if hasattr(obj, "get"):
        value = obj.get(key, default)
    else:
        value = getattr(obj, key, default)
    return default if value is None else value


def group_id(non_tensor, id_key="index"):
    """The exchange id of a sample's problem: "split/index" from extra_info, else a prompt hash."""
    extra = non_tensor.get("extra_info")
    extra = extra if isinstance(extra, dict) else {}
    if extra.get(id_key) is not None:
        split = extra.get("split")
        return "%s/%s" % (split, extra[id_key]) if split else str(extra[id_key])
    raw = non_tensor.get("raw_prompt")
    if raw is None:
        raise ValueError(
            "expected extra_info[%r] or raw_prompt in the sample to identify its problem across agents, got neither: "
            "add an id column to extra_info (verl's example preprocessing writes extra_info.index) or keep "
            "data.return_raw_chat=True" % (id_key,))
    return stable_id(prompt_text(list(raw) if not isinstance(raw, str) else raw))


class CorlRewardManager(RewardManagerBase):
    """A reward-loop manager posting each sample to `corl serve` for this trainer's agent.

    Constructed by verl as cls(config=, tokenizer=, compute_score=, reward_router_address=,
    reward_model_tokenizer=); the corl settings come from config.reward.reward_kwargs.corl.
    """

    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None,
                 reward_model_tokenizer=None, client=None, **_ignored):
        super().__init__(config, tokenizer, compute_score)
        import os

        corl = _get(_get(_get(config, "reward"), "reward_kwargs"), "corl", {})
        rollout = _get(_get(config, "actor_rollout_ref"), "rollout")
        self.agent = _get(corl, "agent") or os.environ.get("CORL_AGENT")
        if not self.agent:
            raise ValueError("expected the agent name (+reward.reward_kwargs.corl.agent=..., or $CORL_AGENT), got none")
        self.group_size = int(_get(corl, "group_size") or _get(rollout, "n", 0))
        if self.group_size < 1:
            raise ValueError("expected the group size (actor_rollout_ref.rollout.n or reward_kwargs.corl.group_size), got none")
        self.max_response_length = _get(rollout, "response_length")
        self.id_key = _get(corl, "id_key", "index")
        self.wait = _get(corl, "wait")
        self.validation_splits = tuple(_get(corl, "validation_splits", VALIDATION_SPLITS))
        self.client = client or AsyncCorlClient(_get(corl, "url"), token=_get(corl, "token"),
                                                timeout=float(_get(corl, "timeout", 900.0)),
                                                retries=int(_get(corl, "retries", 5)))
        self._reads_ground_truth = None
        self._token_stats = False

    async def run_single(self, data):
        data = data[-1:]  # a multi-turn sample: the reward is on its last sequence, as verl's own managers do
        item = data[0]
        responses = item.batch["responses"]
        width = responses.shape[-1]
        valid = int(item.batch["attention_mask"][-width:].sum())
        ids = responses[:valid]
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(None, lambda: self.tokenizer.decode(ids, skip_special_tokens=True))
        nt = item.non_tensor_batch
        extra = nt.get("extra_info")
        if isinstance(extra, dict) and extra.get("split") in self.validation_splits:
            return await self._validation(nt, text)
        if self._reads_ground_truth is None:
            health = await self.client.health()
            self._reads_ground_truth = reads_ground_truth(health)
            self._token_stats = reads_token_stats(health)
        entropies = self._entropies(item, valid) if self._token_stats else None
        reference = (nt.get("reward_model") or {}).get("ground_truth")
        if not self._reads_ground_truth and not isinstance(reference, str):
            reference = None  # label-free: sent for the service's diagnostics only, when it is text
        truncated = self.max_response_length is not None and valid >= int(self.max_response_length)
        raw = nt.get("raw_prompt")
        body = sample_body(
            group_id(nt, self.id_key), self.group_size, text, tokens=valid,
            finish_reason="length" if truncated else "stop", rollout=nt.get("uid"), request_id=new_request_id(),
            prompt=prompt_text(list(raw)) if raw is not None and not isinstance(raw, str) else raw,
            reference=reference, entropies=entropies)
        # Shared requests: a worker's 1000 concurrent samples wait in the service, not on 1000 sockets.
        answer = await self.client.score_sample(self.agent, body, wait=self.wait)
        return {
            "reward_score": float(answer["reward"]),
            # verl stacks these per key across the batch: every sample carries the same keys.
            "reward_extra_info": {
                "corl_labeled": 1.0 if answer.get("label") is not None else 0.0,
                "corl_fallback": 1.0 if answer.get("source") in ("self", "zero") else 0.0,
            },
        }

    @staticmethod
    def _entropies(item, valid):
        """-log p of each valid response token from the batch's rollout log-probabilities."""
        batch = item.batch
        if "rollout_log_probs" not in batch.keys():
            raise ValueError(
                "expected rollout_log_probs in the sample (the served reward reads per-token statistics), got only %s: "
                "verl v0.9.0's streaming reward loop sends a reward worker prompts, responses and masks alone; set "
                "actor_rollout_ref.rollout.calculate_log_probs=True and score the generated batch "
                "(docs/guide/serve.md#intrinsic-rewards-per-trainer)" % (sorted(batch.keys()),))
        logprobs = batch["rollout_log_probs"]
        logprobs = logprobs.tolist() if hasattr(logprobs, "tolist") else list(logprobs)
        return sampled_entropies(logprobs[:valid])

    async def _validation(self, nt, text):
        """A validation sample: verl's compute_score against the ground truth, never the exchange."""
        if self.compute_score is None:
            raise ValueError("expected verl's compute_score for validation samples, got none")
        kwargs = dict(data_source=nt.get("data_source"), solution_str=text,
                      ground_truth=(nt.get("reward_model") or {}).get("ground_truth"), extra_info=nt.get("extra_info"))
        if inspect.iscoroutinefunction(self.compute_score):
            result = await self.compute_score(**kwargs)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, lambda: self.compute_score(**kwargs))
        score = float(result["score"] if isinstance(result, dict) else result)
        return {"reward_score": score, "reward_extra_info": {"acc": score}}


_clients = {}


async def compute_score(data_source, solution_str, ground_truth, extra_info=None, agent=None, url=None, token=None,
                        group_size=None, id_key="index", wait=None, **_ignored):
    """verl custom reward function (reward.custom_reward_function.path=this file, name=compute_score).

    agent, url, group_size: from reward.custom_reward_function.reward_kwargs (verl merges them into
    the call), else $CORL_AGENT, $CORL_SERVE_URL, $CORL_GROUP_SIZE. Returns {"score", "corl_labeled"}.
    """
    import os

    agent = agent or os.environ.get("CORL_AGENT")
    size = int(group_size or os.environ.get("CORL_GROUP_SIZE") or 0)
    if not agent or size < 1:
        raise ValueError("expected reward_kwargs agent= and group_size= (or $CORL_AGENT, $CORL_GROUP_SIZE), got %r, %r"
                         % (agent, group_size))
    client = _clients.get((url, token))
    if client is None:
        client = _clients[(url, token)] = AsyncCorlClient(url, token=token)
    extra = extra_info if isinstance(extra_info, dict) else {}
    if extra.get(id_key) is None:
        raise ValueError("expected extra_info[%r] (a problem id shared by every agent), got none" % (id_key,))
    body = sample_body(group_id({"extra_info": extra}, id_key), size, solution_str, request_id=new_request_id(),
                       reference=None if ground_truth is None else str(ground_truth))
    if not reads_ground_truth(await client.health()):
        body.pop("reference", None)
    answer = await client.post_sample(agent, body, wait=wait)
    return {"score": float(answer["reward"]), "corl_labeled": 1.0 if answer.get("label") is not None else 0.0}
