// Every message the Python host sends, checked against a schema before corl reads a field of it. The
// pipe is the host's, but the researcher's function runs in that process and can write on it, so a
// line is untrusted input: anything that is not one of the messages below (in the state where it may
// come), or an answer whose shape is not its call's, is a protocol failure with a coded error.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';

/** The kinds of ERROR host.py sends. */
export const HOST_ERROR_KINDS = ['import', 'function', 'withheld', 'call', 'interpreter', 'output', 'raised'] as const;

/** An error as the host reports it (see host.py). */
export interface HostError {
  readonly kind: (typeof HOST_ERROR_KINDS)[number];
  readonly type: string;
  readonly message: string;
  readonly where: string;
  readonly last: string;
}

/** What the host says once the module is imported. */
export interface HostReady {
  /** `module.qualname` of the function. */
  readonly function: string;
  /** Whether it is a coroutine function. */
  readonly async: boolean;
  /** The interpreter's version. */
  readonly python: string;
  /**
   * Whether the function's own code reads what it is handed of its supervisors (TRL: pseudo_label,
   * matches_pseudo_label, supervisor_answer_keys; verl: ground_truth, extra_info): "ignores" when it
   * takes none of them or never reads them (nor a **kwargs), "unknown" where the host cannot see.
   */
  readonly supervision?: 'reads' | 'ignores' | 'unknown';
}

/** One line from the host, as read. */
export type HostMessage =
  | { readonly hello: { readonly python: string; readonly guard?: boolean } }
  | { readonly ready: HostReady }
  | { readonly fatal: HostError }
  | { readonly id: number; readonly results: readonly unknown[] }
  | { readonly id: number; readonly call: number; readonly error: HostError };

/** Longest text field accepted (host.py clips its texts to 2000 characters). */
const MAX_TEXT = 100_000;
const TEXT = { type: 'string', maxLength: MAX_TEXT } as const;
const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

const ERROR = {
  type: 'object',
  required: ['kind', 'type', 'message', 'where', 'last'],
  properties: { kind: { enum: [...HOST_ERROR_KINDS] }, type: TEXT, message: TEXT, where: TEXT, last: TEXT },
  additionalProperties: false,
} as const;

/** One schema per message, chosen by the message's first key (its kind). */
const MESSAGES = {
  hello: {
    type: 'object',
    required: ['hello'],
    properties: {
      hello: {
        type: 'object',
        required: ['python'],
        properties: { python: { type: 'string', maxLength: 64 }, guard: { type: 'boolean' } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
  ready: {
    type: 'object',
    required: ['ready'],
    properties: {
      ready: {
        type: 'object',
        required: ['function', 'async', 'python'],
        properties: {
          function: TEXT,
          async: { type: 'boolean' },
          python: { type: 'string', maxLength: 64 },
          supervision: { enum: ['reads', 'ignores', 'unknown'] },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
  fatal: {
    type: 'object',
    required: ['fatal'],
    properties: { fatal: ERROR },
    additionalProperties: false,
  },
  results: {
    type: 'object',
    required: ['id', 'results'],
    properties: { id: ID, results: { type: 'array' } },
    additionalProperties: false,
  },
  error: {
    type: 'object',
    required: ['id', 'call', 'error'],
    properties: { id: ID, call: { type: 'integer', minimum: 0 }, error: ERROR },
    additionalProperties: false,
  },
} as const;

/** A TRL RESULT and a verl RESULT (their lengths are checked against the call afterwards). */
const RESULTS = {
  trl: {
    type: 'object',
    required: ['rewards', 'metrics', 'extra'],
    properties: {
      rewards: { type: 'array', items: { type: ['number', 'null'] } },
      metrics: { type: 'object', additionalProperties: { type: 'array', items: { type: 'number' } } },
      extra: { type: 'object', additionalProperties: { type: 'array' } },
    },
    additionalProperties: false,
  },
  verl: {
    type: 'object',
    required: ['scores', 'extra'],
    properties: {
      scores: { type: 'array', items: { type: 'number' } },
      extra: { type: 'array', items: { type: 'object', additionalProperties: { type: 'number' } } },
    },
    additionalProperties: false,
  },
} as const;

type Kind = keyof typeof MESSAGES;
let validators: Record<Kind | 'trl' | 'verl', ValidateFunction> | undefined;

function compiled(): Record<Kind | 'trl' | 'verl', ValidateFunction> {
  if (validators) return validators;
  // allowUnionTypes: a TRL reward is a number or null. ajv's "number" refuses Infinity and NaN, which
  // JSON.parse makes of 1e999.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
  validators = {
    hello: ajv.compile(MESSAGES.hello),
    ready: ajv.compile(MESSAGES.ready),
    fatal: ajv.compile(MESSAGES.fatal),
    results: ajv.compile(MESSAGES.results),
    error: ajv.compile(MESSAGES.error),
    trl: ajv.compile(RESULTS.trl),
    verl: ajv.compile(RESULTS.verl),
  };
  return validators;
}

/** The first problem ajv found, as "field /a/b must be …". */
function problemOf(errors: readonly ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'a message of another shape';
  const field = e.instancePath || '/';
  const extra =
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
      : '';
  return `field ${field} ${e.message ?? 'is wrong'}${extra}`;
}

/** Which message a parsed line means to be, by the keys it has. */
function kindOf(msg: Record<string, unknown>): Kind | undefined {
  for (const k of ['hello', 'ready', 'fatal'] as const) if (Object.hasOwn(msg, k)) return k;
  if (Object.hasOwn(msg, 'results')) return 'results';
  if (Object.hasOwn(msg, 'error')) return 'error';
  return undefined;
}

/** A line read as a host message, or what is wrong with it (a string, for the protocol error). */
export function readHostMessage(line: string): HostMessage | string {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return `${JSON.stringify(line.slice(0, 80))} (not JSON)`;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
    return `${JSON.stringify(line.slice(0, 80))} (not a JSON object)`;
  const kind = kindOf(msg as Record<string, unknown>);
  if (!kind) return `${JSON.stringify(line.slice(0, 80))} (no message of corl's protocol)`;
  const check = compiled()[kind];
  if (!check(msg)) return `a "${kind}" message whose ${problemOf(check.errors)}`;
  return msg as HostMessage;
}

/** The number of rewards a call asks for: its samples (verl) or its groups' completions (TRL). */
function wanted(call: Readonly<Record<string, unknown>>): number {
  if (Array.isArray(call.samples)) return call.samples.length;
  return (call.groups as readonly { completions: readonly unknown[] }[]).reduce((s, g) => s + g.completions.length, 0);
}

/**
 * What is wrong with a request's answers (one RESULT per call, one reward per completion, every
 * value a finite number), or undefined when nothing is.
 */
export function resultsProblem(
  results: readonly unknown[],
  calls: readonly Readonly<Record<string, unknown>>[],
): string | undefined {
  if (results.length !== calls.length) return `${results.length} results for ${calls.length} calls`;
  for (const [i, call] of calls.entries()) {
    const verl = Array.isArray(call.samples);
    const check = compiled()[verl ? 'verl' : 'trl'];
    const r = results[i];
    if (!check(r)) return `result ${i} whose ${problemOf(check.errors)}`;
    const got = r as { rewards?: unknown[]; scores?: unknown[]; extra: unknown };
    const n = wanted(call);
    const xs = (verl ? got.scores : got.rewards) ?? [];
    if (xs.length !== n) return `result ${i} with ${xs.length} rewards for ${n} completions`;
    if (verl && (got.extra as unknown[]).length !== n)
      return `result ${i} with ${(got.extra as unknown[]).length} extras for ${n} samples`;
  }
  return undefined;
}
