"""An OpenRLHF agent executor that scores each sample with `corl serve` (POST /v1/samples). Read at v0.11.0.

OpenRLHF's remote reward URL (POST /get_reward) sends text only, so corl can only count characters
for a length-aware reward. This executor generates exactly as OpenRLHF's single-turn executor does
and then posts the sample itself, with its generated token count, its finish reason, its group id
and the group size; `corl serve` forms the group of the prompt's samples (OpenRLHF generates them
concurrently) and answers each with its reward.

    python -m openrlhf.cli.train_ppo_ray ... --rollout.n_samples_per_prompt 8 --data.label_key answer \\
        --train.agent_func_path /abs/path/docs/integrations/openrlhf_agent.py

OpenRLHF loads this file in each vLLM actor and builds `AgentExecutor()` with no arguments, so the
settings come from the environment of the Ray workers (ray job submit --runtime-env-json
'{"env_vars": {...}}', or exported before `ray start`): CORL_AGENT (this job's agent),
CORL_GROUP_SIZE (= --rollout.n_samples_per_prompt), CORL_SERVE_URL, CORL_SERVE_TOKEN, and
CORL_GROUP_BY: "prompt" (default: a group is a hash of the prompt text, and the --data.label_key
column is the reference answer, sent as the sample's reference: a reward that reads ground truth
scores with it, and a label-free service keeps it from every plugin and only grades its
pseudo-labels with it) or "id" (the label column is a problem id shared by the agents, for agents
that see different phrasings: it is the group id, and no reference is sent; never name the answer
column so). The file is self-contained (the client is inlined), as
OpenRLHF loads it by path with nothing on sys.path.

Evaluation goes through the same executor: keep --eval.n_samples_per_prompt equal to
--rollout.n_samples_per_prompt and give evaluation rows ids of their own.

Intrinsic rewards (RENT, Intuitor: the service's GET /health says tokenStats): this executor calls
vLLM itself, so it asks it for log-probabilities (SamplingParams.logprobs) and posts per-token
statistics with each sample. CORL_TOKEN_STATS picks how: "top-k" (default) asks for the top
CORL_TOP_LOGPROBS (default 20, vLLM's default max_logprobs) at each position and sends entropies and
mean log-probabilities with the rest of the vocabulary (CORL_VOCAB_SIZE, default len(tokenizer);
set it to the model's logits width when that is larger) spread evenly over what the top-k leave
(top_logprob_stats: an upper bound of the entropy, exact when k covers the vocabulary); "sampled"
asks for the sampled token's alone and sends -log p(sampled) as a one-sample entropy estimate
(RENT only; with --algo.advantage.is_correction_enable OpenRLHF builds the engine with
max_logprobs=1, so use it there). The statistics are of the distribution vLLM reports: before
temperature by default (vLLM's raw logprobs), after it with OpenRLHF's processed logprobs; the two
agree at temperature 1. OpenRLHF still gets rollout_log_probs only when it asked for them.

TTRL's vote-on-more split (vote over M samples per prompt, train on N): set CORL_VOTE_SAMPLES=M, a
multiple of CORL_GROUP_SIZE=N (= --rollout.n_samples_per_prompt). Each execute then generates its
own sample and M/N - 1 more of the same prompt (separate engine calls; a seeded SamplingParams gets
seed + 1, + 2, ... for them), posts them as vote-only samples (train: false) of the prompt's group of
M, and returns only its own to OpenRLHF, rewarded against the vote over all M: OpenRLHF trains on N.
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
from copy import deepcopy


try:  # OpenRLHF >= 0.10.2
    from openrlhf.utils.agent import AgentExecutorBase
except Exception:  # noqa: BLE001 - no OpenRLHF here (docs, tests): the same interface

    class AgentExecutorBase:
        pass


__all__ = ["AgentExecutor"]


class AgentExecutor(AgentExecutorBase):
    """Single-turn generation, then one POST /v1/samples per sample for this job's agent."""

    def __init__(self, client=None):
        self.agent = os.environ.get("CORL_AGENT")
        self.group_size = int(os.environ.get("CORL_GROUP_SIZE") or 0)
        self.group_by = os.environ.get("CORL_GROUP_BY") or "prompt"
        if not self.agent or self.group_size < 1:
            raise ValueError("expected CORL_AGENT and CORL_GROUP_SIZE (= --rollout.n_samples_per_prompt) in the "
                             "environment of the Ray workers, got %r and %r"
                             % (self.agent, os.environ.get("CORL_GROUP_SIZE")))
        if self.group_by not in ("prompt", "id"):
            raise ValueError('expected CORL_GROUP_BY to be "prompt" (the label column is the reference answer) or '
                             '"id" (the label column is a problem id), got %r' % (self.group_by,))
        self.token_stats = os.environ.get("CORL_TOKEN_STATS") or "top-k"
        if self.token_stats not in ("top-k", "sampled"):
            raise ValueError('expected CORL_TOKEN_STATS to be "top-k" or "sampled", got %r' % (self.token_stats,))
        self.top_logprobs = int(os.environ.get("CORL_TOP_LOGPROBS") or 20)
        self.vocab_size = int(os.environ.get("CORL_VOCAB_SIZE") or 0)
        if self.top_logprobs < 1 or self.vocab_size < 0:
            raise ValueError("expected CORL_TOP_LOGPROBS >= 1 and CORL_VOCAB_SIZE >= 0, got %r and %r"
                             % (os.environ.get("CORL_TOP_LOGPROBS"), os.environ.get("CORL_VOCAB_SIZE")))
        self.vote_samples = int(os.environ.get("CORL_VOTE_SAMPLES") or self.group_size)
        if self.vote_samples < self.group_size or self.vote_samples % self.group_size:
            raise ValueError("expected CORL_VOTE_SAMPLES (the samples voted over per prompt) to be a multiple of "
                             "CORL_GROUP_SIZE (%d, the samples trained on), got %r"
                             % (self.group_size, os.environ.get("CORL_VOTE_SAMPLES")))
        self.client = client or AsyncCorlClient()
        self._health = None

    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        if images:
            raise ValueError("expected a text prompt (this executor does not handle images), got %d image(s)" % len(images))
        prompt_ids = hf_tokenizer(text=prompt, add_special_tokens=False, return_tensors="pt")["input_ids"][0].tolist()
        health = await self._service()
        stats = reads_token_stats(health)
        params = deepcopy(sampling_params)
        if sampling_params.max_tokens is None:
            params.max_tokens = max(1, max_length - len(prompt_ids))
        if stats:  # vLLM returns the sampled token's log-probability beside the top `logprobs`
            wanted = self.top_logprobs if self.token_stats == "top-k" else 0
            params.logprobs = max(sampling_params.logprobs or 0, wanted)
        room = max_length - params.max_tokens
        if len(prompt_ids) > room:
            prompt_ids = prompt_ids[-room:]
        # Vote-only samples (CORL_VOTE_SAMPLES): asked of the engine together with this execute's own.
        extra = self.vote_samples // self.group_size - 1
        runs = [deepcopy(params) for _ in range(1 + extra)]
        for k, extra_params in enumerate(runs[1:]):
            if getattr(extra_params, "seed", None) is not None:
                extra_params.seed = extra_params.seed + 1 + k
        outputs = [r.outputs[0] for r in await asyncio.gather(
            *[llm_engine.generate(prompt_ids, p, multi_modal_data=None) for p in runs])]
        output = outputs[0]
        action = list(output.token_ids)
        log_probs = None
        if sampling_params.logprobs is not None and output.logprobs is not None:
            log_probs = [0.0] * len(prompt_ids)
            for token, candidates in zip(action, output.logprobs):
                chosen = candidates.get(token)
                log_probs.append(chosen.logprob if chosen is not None else 0.0)
        text = hf_tokenizer.decode(action, skip_special_tokens=True)
        token_stats = self._token_stats(action, output.logprobs, hf_tokenizer) if stats else {}
        votes = []
        for o in outputs[1:]:
            ids = list(o.token_ids)
            votes.append((hf_tokenizer.decode(ids, skip_special_tokens=True), len(ids), o.finish_reason,
                          self._token_stats(ids, o.logprobs, hf_tokenizer) if stats else {}))
        answer = await self._score(prompt, label, text, len(action), output.finish_reason, votes=votes, **token_stats)
        reward = float(answer["reward"])
        return {
            "prompt": prompt,
            "label": label,
            "images": images,
            "mm_train_inputs": None,
            "observation_tokens": prompt_ids + action,
            "action_ranges": [(len(prompt_ids), len(prompt_ids) + len(action))],
            "rollout_log_probs": log_probs,
            "truncated": output.finish_reason == "length",
            "reward": reward,
            "scores": min(1.0, max(0.0, reward)),
            "extra_logs": _extra_logs(answer),
        }

    async def _service(self):
        if self._health is None:
            self._health = await self.client.health()
        return self._health

    def _token_stats(self, action, logprobs, hf_tokenizer):
        """Per-token statistics of the generated tokens from vLLM's log-probabilities (see the module doc)."""
        if logprobs is None or len(logprobs) != len(action):
            raise ValueError("expected vLLM to return log-probabilities for each of the %d generated tokens (the served "
                             "reward reads per-token statistics), got %s"
                             % (len(action), "none" if logprobs is None else len(logprobs)))
        sampled = []
        for token, candidates in zip(action, logprobs):
            chosen = candidates.get(token)
            if chosen is None:
                raise ValueError("expected the sampled token %r among vLLM's log-probabilities, got %s"
                                 % (token, sorted(candidates)))
            sampled.append(chosen.logprob)
        if self.token_stats == "sampled":
            return {"entropies": sampled_entropies(sampled)}
        vocab = self.vocab_size or len(hf_tokenizer)
        pairs = [top_logprob_stats([c.logprob for c in candidates.values()], vocab) for candidates in logprobs]
        return {"entropies": [h for h, _ in pairs], "mean_logprobs": [m for _, m in pairs]}

    async def _score(self, prompt, label, text, tokens, finish_reason, entropies=None, mean_logprobs=None, votes=()):
        reads = reads_ground_truth(await self._service())
        if self.group_by == "id":
            if label is None:
                raise ValueError("expected a label (--data.label_key naming a problem id column) to group samples by, "
                                 "got none; or leave CORL_GROUP_BY unset to group by prompt")
            group, reference = str(label), None
        else:
            group, reference = stable_id(prompt), (str(label) if label is not None else None)
        if reads and reference is None:
            raise ValueError("expected --data.label_key naming the reference-answer column, because the served reward "
                             "reads ground truth; got %s" % ("CORL_GROUP_BY=id" if self.group_by == "id" else "no label"))
        body = sample_body(group, self.vote_samples, text, tokens=tokens,
                           finish_reason=finish_reason if finish_reason in ("stop", "length") else None,
                           request_id=new_request_id(), prompt=prompt, reference=reference,
                           entropies=entropies, mean_logprobs=mean_logprobs)
        if not votes:
            return await self.client.post_sample(self.agent, body)
        bodies = [body] + [
            sample_body(group, self.vote_samples, t, tokens=n,
                        finish_reason=f if f in ("stop", "length") else None, request_id=new_request_id(),
                        prompt=prompt, reference=reference, entropies=st.get("entropies"),
                        mean_logprobs=st.get("mean_logprobs"), train=False)
            for t, n, f, st in votes]
        return (await self.client.post_samples(self.agent, bodies))["samples"][0]


def _extra_logs(answer):
    """What OpenRLHF logs of a sample (its extra_logs, averaged per key over the batch): whether it had a
    label, whether it fell back, and, when the label column is the reference under a label-free reward,
    the service's grades of it: corl/label_accuracy (the group's label is the reference, 1/0) and
    corl/reward_accuracy (its reward is the one ground truth gives, 1/0; 0/1 rewards only)."""
    logs = {
        "corl/labeled": 1.0 if answer.get("label") is not None else 0.0,
        "corl/fallback": 1.0 if answer.get("source") in ("self", "zero") else 0.0,
    }
    metrics = answer.get("metrics") or {}
    for name, tag in (("label/accuracy", "corl/label_accuracy"), ("reward/accuracy", "corl/reward_accuracy")):
        if name in metrics:
            logs[tag] = float(metrics[name])
    return logs
