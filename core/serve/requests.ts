// Request bodies of the service, checked field by field (every problem names its field).
import type { FinishReason } from '../contracts/completion';
import { CorlError } from '../errors';
import { MAX_GROUP_ID } from './restore';
import type { PostedCompletion, PostedGroup } from './scorer';
import { mapPacked } from '../util/arrays';

/** POST /v1/groups. */
export interface GroupsRequest {
  /** Agent name (or index). */
  readonly agent: string | number;
  /** Updates the posting agent completed (TRL's `state.global_step`; all agents count alike); a safe integer >= 0. */
  readonly step: number;
  readonly groups: readonly PostedGroup[];
  /**
   * Per group, `train` as posted (TTRL's vote-on-more split): all its M completions vote, only the
   * first N (in posted order) are rewarded in the reply; undefined: all. Absent when no group has one.
   */
  readonly train?: readonly (number | undefined)[];
  /** Longest wait for supervisors in seconds (capped by serve.exchange.wait). */
  readonly wait?: number;
}

/** POST /get_reward (OpenRLHF remote reward URL). */
export interface GetRewardRequest {
  /** Prompt + response, one per sample. */
  readonly query: readonly string[];
  /** The prompt of each sample, when sent. */
  readonly prompts?: readonly string[];
  /** The dataset label of each sample, when sent (reference answer, or a problem id for the exchange). */
  readonly labels?: readonly (string | null)[];
  /** Per sample, whether the trainer trains on it (false: it only votes with its group; TTRL's vote-on-more). */
  readonly train?: readonly boolean[];
}

export function bad(where: string, expected: string, got: unknown): CorlError {
  return new CorlError('CORL_ERR_SERVE_BAD_REQUEST', `expected ${where} to be ${expected}, got ${show(got)}`, {
    where,
  });
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 40)}...` : v}"`;
  return `${typeof v} ${String(v)}`;
}

export function object(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(where, 'a JSON object', v);
  return v as Record<string, unknown>;
}

function stringArray(v: unknown, where: string, nullable = false): (string | null)[] {
  if (!Array.isArray(v)) throw bad(where, 'an array of strings', v);
  v.forEach((s, i) => {
    if (typeof s !== 'string' && !(nullable && (s === null || s === undefined)))
      throw bad(`${where}[${i}]`, nullable ? 'a string or null' : 'a string', s);
  });
  return v as (string | null)[];
}

const FINISH: readonly FinishReason[] = ['stop', 'length', 'error'];

function tokenValues(v: unknown, where: string): number[] {
  if (!Array.isArray(v)) throw bad(where, 'an array of finite numbers, one per generated token', v);
  v.forEach((x, t) => {
    if (typeof x !== 'number' || !Number.isFinite(x)) throw bad(`${where}[${t}]`, 'a finite number', x);
  });
  return v as number[];
}

/**
 * One posted completion: a string, or `{text, length?, finishReason?, entropies?, meanLogprobs?}`.
 * `length` counts generated tokens; per-token statistics have one value per token, so without a
 * `length` their count is the length, and with one they must agree with it.
 */
export function parseCompletion(v: unknown, where: string): PostedCompletion {
  if (typeof v === 'string') return { text: v };
  const o = object(v, where);
  if (typeof o.text !== 'string') throw bad(`${where}.text`, 'a string', o.text);
  if (o.length !== undefined && (!Number.isSafeInteger(o.length) || (o.length as number) < 0))
    throw bad(`${where}.length`, 'a token count (integer >= 0)', o.length);
  if (o.finishReason !== undefined && !FINISH.includes(o.finishReason as FinishReason))
    throw bad(`${where}.finishReason`, '"stop", "length" or "error"', o.finishReason);
  let length = o.length as number | undefined;
  const stats: { entropies?: number[]; meanLogprobs?: number[] } = {};
  for (const field of ['entropies', 'meanLogprobs'] as const) {
    if (o[field] === undefined || o[field] === null) continue;
    const values = tokenValues(o[field], `${where}.${field}`);
    if (length === undefined) length = values.length;
    else if (values.length !== length)
      throw bad(`${where}.${field}`, `${length} values (one per generated token, as length says)`, values);
    stats[field] = values;
  }
  return {
    text: o.text,
    ...(length !== undefined ? { length } : {}),
    ...(o.finishReason !== undefined ? { finishReason: o.finishReason as FinishReason } : {}),
    ...stats,
  };
}

/** Count limits of one POST /v1/groups request. */
export interface GroupsLimits {
  /** Most groups in the request (`serve.exchange.maxGroupsPerStep`: more could never fit a step). */
  readonly maxGroups: number;
  /** Most completions per group (`serve.maxCompletions`). */
  readonly maxCompletions: number;
  /** Most completions in the request, all groups together (`serve.maxRequestCompletions`). */
  readonly maxRequestCompletions?: number;
  /** Most `testInputs` entries per group (`serve.maxTestInputs`). */
  readonly maxTestInputs?: number;
}

function limit(where: string, expected: string, got: string): CorlError {
  return new CorlError('CORL_ERR_SERVE_LIMIT', `expected ${where} to have ${expected}, got ${got}`, { where });
}

/** Parse and check a POST /v1/groups body. */
export function parseGroupsRequest(
  body: unknown,
  limits: GroupsLimits = { maxGroups: Infinity, maxCompletions: Infinity },
): GroupsRequest {
  const o = object(body, 'the request body');
  if (!(typeof o.agent === 'string' && o.agent.length > 0) && !(Number.isInteger(o.agent) && (o.agent as number) >= 0))
    throw bad('agent', 'an agent name (or index)', o.agent);
  // Safe integers only: 1e21 is an "integer" to JavaScript, but steps past 2^53 stop being exact.
  if (!Number.isSafeInteger(o.step) || (o.step as number) < 0)
    throw bad('step', 'a training step (a safe integer >= 0)', o.step);
  if (o.wait !== undefined && (typeof o.wait !== 'number' || !Number.isFinite(o.wait) || o.wait < 0))
    throw bad('wait', 'a number of seconds >= 0', o.wait);
  if (!Array.isArray(o.groups) || o.groups.length === 0)
    throw bad('groups', 'a non-empty array of {id, prompt, completions}', o.groups);
  if (o.groups.length > limits.maxGroups)
    throw limit(
      'groups',
      `at most ${limits.maxGroups} entries (serve.exchange.maxGroupsPerStep)`,
      String(o.groups.length),
    );
  const seen = new Map<string, number>();
  let total = 0;
  const train: (number | undefined)[] = [];
  const groups = mapPacked(o.groups, (g, i): PostedGroup => {
    const w = `groups[${i}]`;
    const go = object(g, w);
    let id: string;
    if (typeof go.id === 'string' && go.id.length > 0) id = go.id;
    else if (Number.isInteger(go.id)) id = String(go.id);
    else throw bad(`${w}.id`, 'a group id (non-empty string or integer)', go.id);
    if (id.length > MAX_GROUP_ID) throw limit(`${w}.id`, `at most ${MAX_GROUP_ID} characters`, String(id.length));
    const j = seen.get(id);
    if (j !== undefined)
      throw new CorlError(
        'CORL_ERR_SERVE_BAD_REQUEST',
        `expected unique group ids in one request, got "${id}" at groups[${j}] and ${w}`,
        { where: `${w}.id` },
      );
    seen.set(id, i);
    if (go.prompt !== undefined && typeof go.prompt !== 'string') throw bad(`${w}.prompt`, 'a string', go.prompt);
    if (!Array.isArray(go.completions) || go.completions.length === 0)
      throw bad(`${w}.completions`, 'a non-empty array of completion texts', go.completions);
    if (go.completions.length > limits.maxCompletions)
      throw limit(
        `${w}.completions`,
        `at most ${limits.maxCompletions} entries (serve.maxCompletions)`,
        String(go.completions.length),
      );
    total += go.completions.length;
    if (total > (limits.maxRequestCompletions ?? Infinity))
      throw limit(
        `${w}.completions`,
        `at most ${limits.maxRequestCompletions} completions in the whole request (serve.maxRequestCompletions)`,
        `${total} by this group`,
      );
    const completions = mapPacked(go.completions, (c, k) => parseCompletion(c, `${w}.completions[${k}]`));
    if (go.train !== undefined && go.train !== null) {
      const n = go.train;
      if (!Number.isSafeInteger(n) || (n as number) < 2 || (n as number) > completions.length)
        throw new CorlError(
          'CORL_ERR_SERVE_BAD_REQUEST',
          `expected ${w}.train to be how many of the group's ${completions.length} completions are trained (an integer from 2 to ${completions.length}; the first ones as posted, all of them voting), got ${show(n)}`,
          {
            where: `${w}.train`,
            hint: 'omit train to reward every completion, or post more completions than you train on',
          },
        );
      train[i] = n as number;
    }
    if (go.reference !== undefined && go.reference !== null && typeof go.reference !== 'string')
      throw bad(`${w}.reference`, 'a string', go.reference);
    let testInputs: string[][] | undefined;
    if (go.testInputs !== undefined) {
      if (!Array.isArray(go.testInputs)) throw bad(`${w}.testInputs`, 'an array of argument lists', go.testInputs);
      if (go.testInputs.length > (limits.maxTestInputs ?? Infinity))
        throw limit(
          `${w}.testInputs`,
          `at most ${limits.maxTestInputs} entries (serve.maxTestInputs)`,
          String(go.testInputs.length),
        );
      testInputs = go.testInputs.map((t, k) => stringArray(t, `${w}.testInputs[${k}]`) as string[]);
    }
    return {
      id,
      prompt: (go.prompt as string | undefined) ?? '',
      completions,
      ...(typeof go.reference === 'string' ? { reference: go.reference } : {}),
      ...(testInputs ? { testInputs } : {}),
    };
  });
  return {
    agent: o.agent as string | number,
    step: o.step as number,
    groups,
    ...(train.some((n) => n !== undefined) ? { train: Array.from({ length: groups.length }, (_, i) => train[i]) } : {}),
    ...(o.wait !== undefined ? { wait: o.wait as number } : {}),
  };
}

/** Parse and check a POST /get_reward body (OpenRLHF's fields; others are ignored); at most `maxSamples` queries. */
export function parseGetRewardRequest(body: unknown, maxSamples = Infinity): GetRewardRequest {
  const o = object(body, 'the request body');
  if (Array.isArray(o.query) && o.query.length > maxSamples)
    throw limit('query', `at most ${maxSamples} samples (serve.maxRequestCompletions)`, String(o.query.length));
  const query = stringArray(o.query, 'query') as string[];
  if (query.length === 0) throw bad('query', 'a non-empty array of strings', o.query);
  let prompts: string[] | undefined;
  let labels: (string | null)[] | undefined;
  if (o.prompts !== undefined && o.prompts !== null) prompts = stringArray(o.prompts, 'prompts') as string[];
  if (o.labels !== undefined && o.labels !== null) labels = stringArray(o.labels, 'labels', true).map((l) => l ?? null);
  let train: boolean[] | undefined;
  if (o.train !== undefined && o.train !== null) {
    if (!Array.isArray(o.train)) throw bad('train', 'an array of true or false, one per query', o.train);
    o.train.forEach((t, i) => {
      if (typeof t !== 'boolean') throw bad(`train[${i}]`, 'true (trained on) or false (only votes with its group)', t);
    });
    train = o.train as boolean[];
  }
  for (const [name, list] of [
    ['prompts', prompts],
    ['labels', labels],
    ['train', train],
  ] as const) {
    if (list && list.length !== query.length) {
      throw new CorlError(
        'CORL_ERR_SERVE_GROUP_SIZE',
        `expected ${name} to have one entry per query (${query.length}), got ${list.length}`,
        { where: name },
      );
    }
  }
  return { query, ...(prompts ? { prompts } : {}), ...(labels ? { labels } : {}), ...(train ? { train } : {}) };
}
