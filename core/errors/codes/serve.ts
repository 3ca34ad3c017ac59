import { defineCodes } from './spec';

/** Errors of `corl serve`. Request errors are answered as JSON `{error: {code, message, where, hint}}` with the HTTP status in the docs. */
export const SERVE_CODES = defineCodes({
  CORL_ERR_SERVE_BAD_JSON: {
    cause: 'A request body is not valid JSON (HTTP 400).',
    fix: 'send a UTF-8 JSON object with `Content-Type: application/json`',
  },
  CORL_ERR_SERVE_BAD_REQUEST: {
    cause: 'A request field is missing or has the wrong type (HTTP 400); the message names the field.',
    fix: 'fix the named field; docs/guide/serve.md lists every field of every route',
  },
  CORL_ERR_SERVE_TOO_LARGE: {
    cause: 'A request body is larger than `serve.maxBodyBytes` (HTTP 413).',
    fix: 'send fewer groups per request, or raise `serve.maxBodyBytes` in the serve config',
  },
  CORL_ERR_SERVE_UNAUTHORIZED: {
    cause: 'The service was started with a bearer token and the request carried none or a different one (HTTP 401).',
    fix: 'send `Authorization: Bearer <token>` with the token given to `corl serve` (`--token-file` or CORL_SERVE_TOKEN)',
  },
  CORL_ERR_SERVE_NOT_FOUND: {
    cause: 'No route has this path, or the method is not the one the route takes (HTTP 404 or 405).',
    fix: 'use POST /get_reward, POST /v1/groups, GET /health or GET /metrics',
  },
  CORL_ERR_SERVE_UNKNOWN_AGENT: {
    cause: 'A request names an agent that the serve config does not list (HTTP 422).',
    fix: 'use one of the names in the config\'s `agents` (GET /health lists them)',
  },
  CORL_ERR_SERVE_GROUP_SIZE: {
    cause: 'A group has a number of completions other than `serve.groupSize`, or a request\'s lists have different lengths (HTTP 422).',
    fix: 'send every group with exactly the configured number of completions (the GRPO group size K), or set `serve.groupSize` to 0 to accept any size',
  },
  CORL_ERR_SERVE_CONFLICT: {
    cause: 'An agent posted a group (same agent, step and group id) again with different completions (HTTP 409). Retries must repeat the original request.',
    fix: 'retry with the identical completions, or use a new step or group id for new samples',
  },
  CORL_ERR_SERVE_PEER_TIMEOUT: {
    cause: 'The supervisors\' answers for a group did not arrive within the wait limit and `serve.exchange.fallback` is "error" (HTTP 504). The posted answers are kept.',
    fix: 'retry the same request later (it is idempotent), check that every agent of the cohort is running, or choose the "self" or "zero" fallback',
  },
  CORL_ERR_SERVE_STEP_EXPIRED: {
    cause: 'A group was posted for a step older than the service still keeps (`serve.exchange.keepSteps` behind the newest step) (HTTP 410).',
    fix: 'post current steps; raise `serve.exchange.keepSteps` if agents legitimately lag that far behind each other',
  },
  CORL_ERR_SERVE_REWARD_FAILED: {
    cause: 'The configured reward source (or answer extraction) threw while scoring a request (HTTP 500). The service keeps running.',
    fix: 'read the message for the plugin\'s error; fix the plugin or its options and restart the service',
  },
  CORL_ERR_SERVE_UNAVAILABLE: {
    cause: 'The service is shutting down; requests still waiting are answered with HTTP 503 (their posted answers are journaled).',
    fix: 'retry against the restarted service: retries are idempotent and the journal restores every label',
  },
  CORL_ERR_SERVE_INTERNAL: {
    cause: 'An unexpected failure while handling one request (HTTP 500). The service keeps running.',
    fix: 'please report it with the message; the request can be retried',
  },
  CORL_ERR_SERVE_JOURNAL: {
    cause: 'The label journal cannot be replayed at start: a line in the middle is corrupt, or the journal was written for another cohort (different agents, topology or reward).',
    fix: 'point `--journal` at the right file, or move the file away to start an empty exchange; a torn last line alone is skipped automatically',
  },
  CORL_ERR_SERVE_BIND: {
    cause: 'The service cannot listen: the port is taken, the address is not local to this machine, or a non-loopback address was asked for without a bearer token.',
    fix: 'pick another `--port`, or give a token (`--token-file`/CORL_SERVE_TOKEN) before binding beyond 127.0.0.1',
  },
  CORL_ERR_SERVE_CLIENT: {
    cause: 'The client library of a trainer integration got an error answer, or no answer at all, from `corl serve` after its retries.',
    fix: 'check that `corl serve` is running at the URL given, and read the error code it returned',
  },
});
