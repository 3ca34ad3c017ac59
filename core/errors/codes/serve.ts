import { defineCodes } from './spec';

/** Errors of `corl serve`. Request errors are answered as JSON `{error: {code, message, where, hint}}` with the HTTP status in the docs. */
export const SERVE_CODES = defineCodes({
  CORL_ERR_SERVE_BAD_JSON: {
    cause:
      'A request body is not valid JSON, or not valid UTF-8 (HTTP 400): invalid bytes are refused, never replaced, so two different ids or answers cannot decode to one.',
    fix: 'send a UTF-8 JSON object with `Content-Type: application/json`',
  },
  CORL_ERR_SERVE_BAD_REQUEST: {
    cause: 'A request field is missing or has the wrong type (HTTP 400); the message names the field.',
    fix: 'fix the named field; docs/guide/serve.md lists every field of every route',
  },
  CORL_ERR_SERVE_MALFORMED: {
    cause:
      "The bytes on a connection are not an HTTP/1.1 request (HTTP 400, then the connection is closed): a request line or header Node's parser refuses, broken chunked framing, or bytes sent after a request that declared no body (without `Content-Length` or `Transfer-Encoding` a request has none, so whatever follows it is read as the next request).",
    fix: 'send each body with its `Content-Length` (or chunked), also on GET and HEAD, and open a new connection after this answer',
  },
  CORL_ERR_SERVE_HEADERS_TOO_LARGE: {
    cause:
      "A request's line and headers are longer than Node's limit (`--max-http-header-size`, 16 KiB by default) (HTTP 431, then the connection is closed).",
    fix: 'send shorter headers (an Idempotency-Key or a token is a few dozen characters), or start the service with a larger `node --max-http-header-size`',
  },
  CORL_ERR_SERVE_CLIENT_TIMEOUT: {
    cause:
      'A client took longer than `serve.timeouts.headers` seconds to send the headers of a request, or `serve.timeouts.body` seconds for the whole request (HTTP 408, then the connection is closed; the request changes nothing). A body still arriving for a request the service already answered (an unknown path, say) is cut the same way, the connection closed without a second answer.',
    fix: 'send the whole request at once, or raise `serve.timeouts.headers` / `serve.timeouts.body`',
  },
  CORL_ERR_SERVE_TOO_LARGE: {
    cause: 'A request body is larger than `serve.maxBodyBytes` (HTTP 413).',
    fix: 'send fewer groups per request, or raise `serve.maxBodyBytes` in the serve config',
  },
  CORL_ERR_SERVE_UNAUTHORIZED: {
    cause:
      'The service was started with agent tokens or a service token and the request carried none, or one it does not know (HTTP 401).',
    fix: "send `Authorization: Bearer <token>` with the agent's own token (`serve.tokens`), or the service token (`--token-file` or CORL_SERVE_TOKEN) for GET /metrics; POST /get_reward also takes `?token=`",
  },
  CORL_ERR_SERVE_FORBIDDEN: {
    cause:
      "A request posts as an agent other than the one whose token it carries, or posts with the service token (HTTP 403). With agent tokens (`serve.tokens`) each agent's token posts only as that agent; the service token only reads GET /metrics. Nothing is stored.",
    fix: "give each agent's trainer its own token and let it post only as itself (the agent named in the body or ?agent= must be the token's)",
  },
  CORL_ERR_SERVE_TOKENS: {
    cause:
      'The agent tokens file (`serve.tokens` or `--tokens-file`) cannot be read, is not a JSON object `{agent: token}`, names an agent the config does not list, misses an agent, or has a token shorter than 16 characters or shared by two agents (or with the service token). The service does not start.',
    fix: 'write one entry per agent of the config, each a distinct random token (e.g. `openssl rand -hex 24`), and keep the file private (chmod 600)',
  },
  CORL_ERR_SERVE_NOT_FOUND: {
    cause: 'No route has this path, or the method is not the one the route takes (HTTP 404 or 405).',
    fix: 'use POST /get_reward, POST /v1/groups, GET /health or GET /metrics',
  },
  CORL_ERR_SERVE_UNKNOWN_AGENT: {
    cause: 'A request names an agent that the serve config does not list (HTTP 422).',
    fix: "use one of the names in the config's `agents` (GET /health lists them)",
  },
  CORL_ERR_SERVE_GROUP_SIZE: {
    cause:
      "A group has a number of completions other than `serve.groupSize`, a request's lists have different lengths, or a POST /v1/samples sample declares another size than its group's or arrives for a group already scored (HTTP 422). Nothing of the request is stored.",
    fix: 'send every group with exactly the configured number of completions (the GRPO group size K), or set `serve.groupSize` to 0 to accept any size; post each sample of a group once (a retry repeats its request id), with the same size',
  },
  CORL_ERR_SERVE_CONFLICT: {
    cause:
      'An agent posted a group (same agent, step and group id) again with different completions, reused an Idempotency-Key with a different body, or posted a POST /v1/samples sample again (same request id, or position at a step) with a different completion (HTTP 409). Retries must repeat the original request.',
    fix: 'retry with the identical request, and send a new Idempotency-Key (or sample request id) with every new request (only its retries repeat it); use a new step or group id for new samples',
  },
  CORL_ERR_SERVE_PEER_TIMEOUT: {
    cause:
      'The supervisors\' answers for a group did not arrive within the wait limit and `serve.exchange.fallback` is "error" (HTTP 504). The posted answers are kept.',
    fix: 'retry the same request later (it is idempotent), check that every agent of the cohort is running, or choose the "self" or "zero" fallback',
  },
  CORL_ERR_SERVE_STEP_AHEAD: {
    cause:
      "A group was posted for a step more than `serve.exchange.maxStepsAhead` beyond the slowest agent's newest step (HTTP 422). Nothing is stored. The window moves only with the slowest agent, so one agent cannot push the cohort's steps away from the real ones; a fast agent waits here for a peer that stopped posting.",
    fix: "post the trainer's real step and check that every agent of the cohort is running (GET /health lists each agent's step, the message names the slowest); when a cohort resumes at a later step against a fresh journal, set `serve.exchange.startStep` to that step",
  },
  CORL_ERR_SERVE_STEP_FULL: {
    cause:
      'The agent already holds `serve.exchange.maxGroupsPerStep` distinct group ids at this step and the request adds new ones (HTTP 422). Each agent has its own count, so one agent cannot fill a step for the others. Nothing of the request is stored.',
    fix: "use the same group ids in every agent's posts (one per problem), or raise `serve.exchange.maxGroupsPerStep` if a step legitimately has more problems",
  },
  CORL_ERR_SERVE_KEYS_FULL: {
    cause:
      'The answer keys the agent already holds in the exchange (all its held steps together), with those of the request, would pass `serve.exchange.maxHeldKeyChars` characters (HTTP 422). Each agent has its own budget, so one agent cannot fill the memory the others need. Nothing of the request is stored; held keys are let go as their steps leave the window.',
    fix: 'post fewer or shorter distinct answers, or raise `serve.exchange.maxHeldKeyChars` if the steps legitimately hold more',
  },
  CORL_ERR_SERVE_LIMIT: {
    cause:
      'A request alone goes over a count limit (HTTP 413): more completions in a group than `serve.maxCompletions`, more completions in the whole request (or /get_reward samples) than `serve.maxRequestCompletions`, more `testInputs` in a group than `serve.maxTestInputs`, more groups than `serve.exchange.maxGroupsPerStep`, or a group id longer than 1024 characters. The message names the field. Nothing of the request is stored.',
    fix: 'split the request, shorten the ids, or raise the named limit in the serve config',
  },
  CORL_ERR_SERVE_STEP_EXPIRED: {
    cause:
      'A group was posted for a step older than the service still keeps: `serve.exchange.keepSteps` behind the slowest agent of the cohort, so every agent, the poster included, has moved that far beyond it (HTTP 410).',
    fix: 'post current steps; raise `serve.exchange.keepSteps` to keep more history',
  },
  CORL_ERR_SERVE_UNAVAILABLE: {
    cause:
      'The service is shutting down; requests still waiting are answered with HTTP 503 (their posted answers are journaled).',
    fix: 'retry against the restarted service: retries are idempotent and the journal restores every label',
  },
  CORL_ERR_SERVE_BUSY: {
    cause:
      'A connection arrived over `serve.maxConnections` (or `serve.maxConnectionsPerPeer` for its address) while every held connection had a request in progress, so none could give up its place (HTTP 503, then the connection is closed; GET /health is still answered on it), or the posting agent already had `serve.maxHeldPerAgent` POST requests in progress (HTTP 503, then the connection is closed so its place goes to another), or `serve.samples.maxPending` POST /v1/samples samples of the posting agent were already waiting for their groups or held deferred without an answer, or `serve.samples.maxWaits` POST /v1/samples/wait requests of the agent were held open (or, all agents together, half of `serve.maxConnections` or `serve.maxConnectionsPerPeer`, with no agent holding two more than this one) (HTTP 503; each agent has its own bound). Nothing is stored.',
    fix: 'retry after a moment (Retry-After: 1; the requests are idempotent) and reuse keep-alive connections, or raise `serve.maxConnections` (below `ulimit -n`), `serve.maxConnectionsPerPeer` (with `serve.maxHeldPerAgent`), `serve.samples.maxPending` or `serve.samples.maxWaits` (one wait per collector collects for all its samples)',
  },
  CORL_ERR_SERVE_WORK_TIMEOUT: {
    cause:
      "A request's work (the answer keys of its groups, or their rewards) ran longer than `serve.timeouts.work` seconds and was stopped (HTTP 503): sandbox runs and symbolic comparisons done only for it were cancelled. Keys are stored only when every group's keys were computed, so nothing of a request stopped in its keys phase is kept.",
    fix: 'send fewer completions or testInputs per request (a group whose programs all run to their time limit takes completions × testInputs × timeoutMs / concurrency), or raise `serve.timeouts.work`; under load the work of other clients shares the sandbox in turn, so a retry later may fit',
  },
  CORL_ERR_SERVE_CANCELLED: {
    cause:
      'The client closed the connection before its answer was ready (counted as HTTP 499 in the metrics; nobody receives it). Work done only for that request is stopped; a POST /get_reward sample without an Idempotency-Key leaves its barrier, so that a re-sent copy is not counted twice.',
    fix: "keep the client's timeout above the longest wait (serve.exchange.wait, getReward.wait); send an Idempotency-Key (the shipped clients do) so that a retry gets the first attempt's answer",
  },
  CORL_ERR_SERVE_INTERNAL: {
    cause: 'An unexpected failure while handling one request (HTTP 500). The service keeps running.',
    fix: 'please report it with the message; the request can be retried',
  },
  CORL_ERR_SERVE_JOURNAL: {
    cause:
      'The label journal was written for another serve identity (different agents, topology or reward), or its first line is not a journal header.',
    fix: 'point `--journal` at the right file, or move the file away to start an empty exchange',
  },
  CORL_ERR_SERVE_POINTS: {
    cause:
      'The file in which `corl serve` records the points it wrote to its metrics sinks (`<journal>.points.json`, beside the journal) is not JSON of the form the service writes (`{version: 1, agents: {name: {step, groups}}}`), or is there without its journal (moved away to start afresh). Without it a restart could write a point twice, or skip every new one, so the service does not start.',
    fix: "restore the file from a copy; or move it away together with the sinks' folders (corl:tensorboard's event files of the service), which then start anew",
  },
  CORL_ERR_SERVE_JOURNAL_VERSION: {
    cause:
      "The journal's header names a format version this corl does not read (it reads versions 1 and 2 and writes 2).",
    fix: 'run the corl version that wrote the journal, or move the file away to start an empty exchange',
  },
  CORL_ERR_SERVE_JOURNAL_CORRUPT: {
    cause:
      'A journal record before the last line fails its checksum or is not JSON: the file was edited or damaged in the middle. The service refuses to start rather than drop labels.',
    fix: 'restore the journal (and its `.seal` file) from a copy, or move both away to start an empty exchange',
  },
  CORL_ERR_SERVE_JOURNAL_ORDER: {
    cause:
      "The journal's sequence numbers jump or go back: records are missing from the middle, or lines were reordered or copied in from another file. The service refuses to start rather than drop labels.",
    fix: 'restore the journal from a copy, or move the file away to start an empty exchange',
  },
  CORL_ERR_SERVE_JOURNAL_TRUNCATED: {
    cause:
      'The journal holds fewer records than its header (written by the last compaction) or its `.seal` file (updated after every group commit) says were made durable: it was cut short, possibly exactly at a line boundary, or replaced by an older copy.',
    fix: 'restore the complete journal from a copy; when the seal alone says more and the loss is known and accepted, delete the `.seal` file (the start then warns that truncation since the last compaction cannot be checked); else move both away to start an empty exchange',
  },
  CORL_ERR_SERVE_JOURNAL_RECORD: {
    cause:
      'A journal record is well formed (its checksum holds) but means nothing the service could have written: an unknown agent or namespace, a step that is not a safe integer or runs beyond the step window, an answer without its keys or with rewards that do not match them. The message names the line and the field.',
    fix: 'restore the journal (and its `.seal` file) from a copy, or move both away to start an empty exchange; the service never restores a record it cannot vouch for',
  },
  CORL_ERR_SERVE_JOURNAL_FILE: {
    cause:
      'The journal path (or its `.seal` beside it) is not a regular file: a FIFO, a character or block device (`/dev/zero`), a socket, a folder, or a symlink to one of them. The service refuses it at start instead of hanging on it or reading it forever; nothing is written.',
    fix: 'point `serve.journal` (or `--journal`) at a regular file, or at a path where none exists yet; a symlink to a regular file is followed',
  },
  CORL_ERR_SERVE_BIND: {
    cause:
      'The service cannot listen: the port is taken, the address is not local to this machine, or a non-loopback address was asked for without a bearer token.',
    fix: 'pick another `--port`, or give a token (`--token-file`/CORL_SERVE_TOKEN) before binding beyond 127.0.0.1',
  },
  CORL_ERR_SERVE_CLIENT: {
    cause:
      'The client library of a trainer integration got an error answer, or no answer at all, from `corl serve` after its retries.',
    fix: 'check that `corl serve` is running at the URL given, and read the error code it returned',
  },
});
