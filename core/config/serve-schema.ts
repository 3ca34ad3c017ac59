import type { JsonSchema } from '../contracts/plugin';
import { rootSchema } from './root-schema';

/** Tokens that trainers leave at the end of a decoded completion; removed before answer extraction on /get_reward. */
export const DEFAULT_STRIP_TOKENS: readonly string[] = [
  '<|im_end|>',
  '<|endoftext|>',
  '<|eot_id|>',
  '<|end_of_text|>',
  '</s>',
  '<eos>',
  '<end_of_turn>',
];

/**
 * Longest duration in seconds a serve setting may hold: Node's timers hold at most 2^31 - 1 ms
 * (about 24.8 days); a longer setTimeout fires at once.
 */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** The `serve` section of a config: `corl serve`'s settings (docs/guide/serve.md). */
export function serveSection(): JsonSchema {
  return {
    type: 'object',
    description: '`corl serve`: the reward service and the cross-agent label exchange (docs/guide/serve.md)',
    properties: {
      host: {
        type: 'string',
        minLength: 1,
        default: '127.0.0.1',
        description: 'address to bind; anything but loopback needs a bearer token',
      },
      port: {
        type: 'integer',
        minimum: 0,
        maximum: 65535,
        default: 8470,
        description: 'TCP port (0: any free port, printed at start)',
      },
      maxBodyBytes: {
        type: 'integer',
        minimum: 1024,
        default: 16777216,
        description: 'largest accepted request body in bytes (larger: HTTP 413)',
      },
      groupSize: {
        type: 'integer',
        minimum: 0,
        default: 0,
        description: 'completions every group of POST /v1/groups must have (the GRPO K); 0 accepts any size',
      },
      maxCompletions: {
        type: 'integer',
        minimum: 1,
        default: 256,
        description: 'most completions in one group of POST /v1/groups (more: HTTP 413)',
      },
      maxRequestCompletions: {
        type: 'integer',
        minimum: 1,
        default: 16384,
        description:
          'most completions in one request, all groups together (POST /v1/groups; POST /get_reward counts its samples); more: HTTP 413',
      },
      maxTestInputs: {
        type: 'integer',
        minimum: 1,
        default: 64,
        description:
          'most entries of `testInputs` in one group (code rewards run every program on each); more: HTTP 413',
      },
      maxKeyChars: {
        type: 'integer',
        minimum: 64,
        default: 1024,
        description:
          'longest answer key or label kept as it is; a longer one (a program that printed megabytes) is replaced by its SHA-256 digest (`sha256:…`), so two such keys agree exactly when identical and no answer or journal record grows with what a program printed',
      },
      maxConnections: {
        type: 'integer',
        minimum: 1,
        default: 1000,
        description:
          "most open client connections; keep it below the process's open-file limit (ulimit -n); at the cap a connection that sends a request takes the place of the one longest without a request in progress, and gets a coded 503 (CORL_ERR_SERVE_BUSY; GET /health is still answered) only when every one has a request in progress",
      },
      maxConnectionsPerPeer: {
        type: 'integer',
        minimum: 1,
        default: 512,
        description:
          'most open connections from one peer address (every client on one machine is one peer); at either cap a new connection closes the connection that has waited longest without a request in progress, and gets a coded 503 only when every one has a request in progress',
      },
      maxHeldPerAgent: {
        type: 'integer',
        minimum: 1,
        description:
          "most POST requests of one agent in progress at once, each holding its connection (a plain /v1/samples, /v1/groups or /get_reward waiting for its group or supervisors, a /v1/samples/wait); one more of that agent: HTTP 503 CORL_ERR_SERVE_BUSY and its connection closes. Unset: min(maxConnections, maxConnectionsPerPeer) / agents, rounded down (at least 1); agents × it may not pass min(maxConnections, maxConnectionsPerPeer), so every agent's held requests fit one peer's places and one agent at its bound never refuses another",
      },
      timeouts: {
        type: 'object',
        default: {},
        description:
          'how long a client may take to send a request, and how long an idle connection stays open (slow or stuck clients are cut)',
        properties: {
          headers: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 10,
            description: "seconds to receive a request's headers (else HTTP 408 and the connection is closed)",
          },
          body: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 60,
            description:
              'seconds to receive a whole request, headers and body (else HTTP 408 and the connection is closed); the wait for supervisors comes after and is not counted; at least `headers`',
          },
          work: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 300,
            description:
              "seconds each phase of a request's work may take, its groups' answer keys and then their rewards (sandbox runs, symbolic comparisons, queueing for them included; the wait for supervisors is not counted); longer: stopped, HTTP 503 CORL_ERR_SERVE_WORK_TIMEOUT",
          },
          idle: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 65,
            description: 'seconds a keep-alive connection may stay idle between requests before it is closed',
          },
        },
        additionalProperties: false,
      },
      tokens: {
        type: 'string',
        minLength: 1,
        description:
          'agent tokens: a JSON file `{agent: token}` relative to the config file (--tokens-file overrides), one distinct token of at least 16 characters per agent; each agent then posts only with its own token and only as itself (docs/guide/serve.md, Agent identity)',
      },
      keepReplies: {
        type: 'integer',
        minimum: 1,
        default: 65536,
        description:
          'requests sent with an Idempotency-Key remembered per agent (POST /get_reward: with their replies, journaled), counted back from the newest; a retry of an older one is a new request',
      },
      keepReplyBytes: {
        type: 'integer',
        minimum: 1024,
        default: 67108864,
        description:
          'bytes of stored POST /get_reward replies (as JSON) remembered per agent beside keepReplies, counted back from the newest: bounds memory and the journal whatever the replies hold; a retry of a reply let go is a new request',
      },
      journal: {
        anyOf: [{ type: 'string', minLength: 1 }, { enum: [false] }],
        description:
          'label journal (append-only JSONL with checksums, replayed at start), relative to the config file; default <name>.journal.jsonl; false keeps labels in memory only (lost at restart: benchmarks and throwaway runs)',
      },
      journalGrowth: {
        type: 'number',
        exclusiveMinimum: 0,
        default: 64,
        description:
          'MiB the journal may grow beyond twice what its last compaction wrote before the running service compacts it (writes the records it holds, the step window and the keep* limits, to a new generation beside it); so the journal stays within about twice what the service holds plus this, whatever the number of prompts or steps',
      },
      exchange: {
        type: 'object',
        default: {},
        description: "POST /v1/groups under a peer topology: waiting for the supervisors' answers",
        properties: {
          wait: {
            type: 'number',
            minimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 600,
            description: "longest wait in seconds for the supervisors' answers of a group (a request may ask for less)",
          },
          fallback: {
            enum: ['self', 'zero', 'error'],
            default: 'self',
            description:
              "when the wait runs out: self = reward against the agent's own vote (TTRL), zero = every reward 0, error = HTTP 504 (retry later)",
          },
          keepSteps: {
            type: 'integer',
            minimum: 1,
            default: 64,
            description:
              "steps kept in memory and in the compacted journal, counted back from the slowest agent's newest step (a step expires only once every agent has moved this far beyond it)",
          },
          startStep: {
            type: 'integer',
            minimum: 0,
            maximum: 1e15,
            default: 0,
            description:
              'the step of an agent that has posted nothing yet: the first step posted may be at most maxStepsAhead beyond it (set it when trainers resume at a later step against a fresh journal)',
          },
          maxStepsAhead: {
            type: 'integer',
            minimum: 1,
            default: 8,
            description:
              "how far beyond the slowest agent's newest step a post may be (further: HTTP 422, nothing changes): a fast agent runs at most this far ahead of a peer that stopped posting",
          },
          maxGroupsPerStep: {
            type: 'integer',
            minimum: 1,
            default: 4096,
            description:
              'most distinct group ids one agent may post in one step (more: HTTP 422 for the new ids); with keepSteps and maxStepsAhead it bounds the slots held',
          },
          maxHeldKeyChars: {
            type: 'integer',
            minimum: 1024,
            default: 67108864,
            description:
              'most characters of answer keys one agent may hold, all its held steps together, in each of POST /v1/groups and POST /get_reward (more: HTTP 422 CORL_ERR_SERVE_KEYS_FULL, nothing stored); bounds memory and the journal whatever the completions answer (stored answers repeat the keys: about twice this in memory)',
          },
        },
        additionalProperties: false,
      },
      getReward: {
        type: 'object',
        default: {},
        description: 'POST /get_reward (OpenRLHF remote reward URL)',
        properties: {
          agent: {
            type: 'string',
            minLength: 1,
            description: 'agent scored when the URL names none (`?agent=`); default: the first agent',
          },
          groupSize: {
            type: 'integer',
            minimum: 1,
            default: 8,
            description:
              'samples per prompt (n_samples_per_prompt) collected before a group reward source votes; pointwise sources ignore it',
          },
          wait: {
            type: 'number',
            minimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 120,
            description: 'seconds a partial group waits for its remaining samples before it is scored as it is',
          },
          maxPending: {
            type: 'integer',
            minimum: 1,
            default: 65536,
            description:
              "most samples of one agent waiting at the barrier for the rest of their prompt's group at once (a request's samples are taken whole or refused whole; each agent has its own bound: one at it never refuses another; more: HTTP 503 CORL_ERR_SERVE_BUSY, retry later)",
          },
          keepGroups: {
            type: 'integer',
            minimum: 1,
            default: 8192,
            description:
              "groups (prompts or labels) each agent keeps, counted back from the one it posted last; a group leaves memory and the compacted journal, all its rounds, once it is among no agent's newest, so a run over any number of distinct prompts stays bounded",
          },
          keepRounds: {
            type: 'integer',
            minimum: 1,
            default: 4,
            description:
              "rounds (epochs) of each group kept in memory and in the compacted journal, counted back from its newest (each agent's own newest round is always kept)",
          },
          groupBy: {
            enum: ['prompt', 'label'],
            default: 'prompt',
            description:
              'what identifies a group: the prompt text, or the label field (only with a reward that reads ground truth; a label-free reward refuses it, since the label column is usually the answer)',
          },
          stripTokens: {
            type: 'array',
            items: { type: 'string', minLength: 1 },
            default: [...DEFAULT_STRIP_TOKENS],
            description: 'special tokens removed from the end of each response before extraction',
          },
        },
        additionalProperties: false,
      },
      samples: {
        type: 'object',
        default: {},
        description:
          'POST /v1/samples: one completion per request (verl reward loop, TRL per-process slices, OpenRLHF agent executor)',
        properties: {
          wait: {
            type: 'number',
            minimum: 0,
            maximum: MAX_TIMER_SECONDS,
            default: 120,
            description:
              'seconds a group waits for the samples its declared size promises before it is scored with those that came (the wait for supervisors comes after)',
          },
          maxPending: {
            type: 'integer',
            minimum: 1,
            default: 65536,
            description:
              "most samples of one agent waiting for the rest of their group at once, and most deferred answers one agent's collectors have not collected yet (each agent has its own: one at its bound never refuses another; more: HTTP 503 CORL_ERR_SERVE_BUSY, retry later)",
          },
          maxWaits: {
            type: 'integer',
            minimum: 1,
            default: 64,
            description:
              'most POST /v1/samples/wait requests of one agent held open at once (one more of that agent: HTTP 503 CORL_ERR_SERVE_BUSY); all agents together hold at most half of min(maxConnections, maxConnectionsPerPeer), and a wait over that bound takes the place of the oldest wait of the agent holding the most, so one agent never refuses another',
          },
          poll: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: 3600,
            default: 20,
            description:
              'longest time in seconds a POST /v1/samples/wait is held open when none of its samples has an answer yet (it is then answered with none, and the client asks again); keep it below the client timeout',
          },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  };
}

/**
 * The root schema of a serve config: the training root schema, except that a serve-only config
 * needs no task and its agents need no policy (the models live in the external trainers; an agent
 * is a name). The `serve` section is filled with its defaults.
 */
export function serveRootSchema(): JsonSchema {
  const root = structuredClone(rootSchema()) as {
    [key: string]: unknown;
    properties: { [key: string]: unknown; agents: { description?: string; items: { required?: string[] } } };
  };
  root.$id = 'https://corl.dev/schema/corl-serve.schema.json';
  root.title = 'corl serve config';
  root.required = ['agents', 'topology', 'reward'];
  root.properties.agents.items.required = [];
  root.properties.agents.description =
    'the cohort: one entry per agent; an agent is named in requests by its name (policies are optional here: the models train elsewhere)';
  root.properties.serve = { ...serveSection(), default: {} };
  return root;
}
