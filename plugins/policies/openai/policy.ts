// `corl:openai`: sampling through an OpenAI-compatible server. Protocol facts it relies on:
// /v1/completions answers choices[].text with logprobs {tokens, token_logprobs}; /v1/chat/completions
// answers choices[].message.content with logprobs {content: [{token, logprob}]}; both carry
// choices[].index and finish_reason. vLLM adds token ids (choices[].token_ids, or "token_id:N"
// tokens under return_tokens_as_token_ids).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Completion, FinishReason } from '../../../core/contracts/completion';
import type {
  Policy,
  PolicyDescription,
  SampleRequest,
  SamplingOptions,
  UpdateResult,
} from '../../../core/contracts/policy';
import { CorlError } from '../../../core/errors';
import { writeJsonAtomic } from '../../../core/util/fs';
import { mixSeed } from '../../../core/util/rng';
import { OpenAIClient, type ClientEffects } from './client';
import { imagePart } from './images';
import type { OpenAIOptions } from './options';
import { NotARegularFile, readUserText } from '../../../core/util/files';

/** Token id of a generated token whose id the server did not report. */
export const UNKNOWN_TOKEN_ID = -1;

const CHECKPOINT_FILE = 'openai.json';

/** OpenAI finish reasons to corl's: a natural end or stop string is `stop`, the token limit `length`, anything else `error`. */
export function finishReason(reason: unknown): FinishReason {
  if (reason === 'stop' || reason === 'eos' || reason === 'tool_calls' || reason === 'function_call') return 'stop';
  if (reason === 'length') return 'length';
  return 'error';
}

interface Choice {
  index?: unknown;
  text?: unknown;
  message?: { content?: unknown };
  finish_reason?: unknown;
  logprobs?: { tokens?: unknown; token_logprobs?: unknown; content?: unknown } | null;
  token_ids?: unknown;
}

/** A policy that samples from a remote server and cannot train. */
export class OpenAIPolicy implements Policy {
  readonly client: OpenAIClient;

  constructor(
    private readonly options: OpenAIOptions,
    seed: number,
    private readonly baseDir: string,
    effects: ClientEffects = {},
  ) {
    this.client = new OpenAIClient(options, mixSeed(seed, 'openai-retry'), effects);
  }

  describe(): PolicyDescription {
    const { baseUrl, model, endpoint } = this.options;
    return { kind: 'corl:openai', family: this.options.family, canTrain: false, details: { baseUrl, model, endpoint } };
  }

  async sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]> {
    // Images are read and checked before anything is sent, so a bad file costs no server time.
    const bodies = requests.map((r, i) => this.body(r, i, options));
    return Promise.all(
      bodies.map(async ({ body, n }, i) => {
        if (!this.options.splitN || n === 1) return this.choices(await this.client.post(this.route, body), n, i);
        const parts = await Promise.all(
          Array.from({ length: n }, (_, k) =>
            this.client.post(this.route, {
              ...body,
              n: 1,
              ...(this.options.sendSeed ? { seed: requestSeed(options.seed, i, k) } : {}),
            }),
          ),
        );
        return parts.flatMap((p) => this.choices(p, 1, i));
      }),
    );
  }

  private get route(): string {
    return this.options.endpoint === 'chat' ? '/chat/completions' : '/completions';
  }

  private body(
    request: SampleRequest,
    i: number,
    options: SamplingOptions,
  ): { body: Record<string, unknown>; n: number } {
    const o = { ...options, ...request.overrides };
    const who = request.id !== undefined ? `problem "${request.id}"` : `request ${i}`;
    const images = request.images ?? [];
    const body: Record<string, unknown> = { ...this.options.extraBody, model: this.options.model };
    if (this.options.endpoint === 'completions') {
      if (images.length > 0) {
        throw new CorlError(
          'CORL_ERR_BACKEND_UNSUPPORTED',
          `expected a text-only prompt for /v1/completions (option endpoint = "completions"), got ${images.length} image(s) in ${who}`,
          { where: 'options.endpoint' },
        );
      }
      body.prompt = request.prompt;
      if (this.options.logprobs) body.logprobs = 1;
    } else {
      const messages: unknown[] = [];
      if (this.options.systemPrompt !== undefined)
        messages.push({ role: 'system', content: this.options.systemPrompt });
      const content =
        images.length === 0
          ? request.prompt
          : [{ type: 'text', text: request.prompt }, ...images.map((f) => imagePart(f, this.baseDir, who))];
      messages.push({ role: 'user', content });
      body.messages = messages;
      if (this.options.logprobs) body.logprobs = true;
    }
    body.n = o.n;
    body.temperature = o.temperature;
    body.top_p = o.topP;
    body.max_tokens = o.maxTokens;
    if (o.stop && o.stop.length > 0) body.stop = [...o.stop];
    if (this.options.sendSeed) body.seed = requestSeed(o.seed, i, 0);
    if (this.options.vllmTokenIds && this.options.logprobs) body.return_tokens_as_token_ids = true;
    return { body, n: o.n };
  }

  private choices(answer: unknown, n: number, i: number): Completion[] {
    const bad = (what: string, hint?: string): CorlError =>
      new CorlError('CORL_ERR_BACKEND_RESPONSE', `expected ${what} for request ${i}`, {
        where: `${this.options.baseUrl}${this.route}`,
        hint,
      });
    const choices = (answer as { choices?: unknown })?.choices;
    if (!Array.isArray(choices)) throw bad(`a "choices" array, got ${JSON.stringify(answer)?.slice(0, 80)}`);
    if (choices.length !== n) {
      throw bad(
        `n = ${n} choices, got ${choices.length}`,
        'the server ignores `n`: set option splitN to send one request per sample',
      );
    }
    const ordered = [...(choices as Choice[])].sort((a, b) => (Number(a?.index) || 0) - (Number(b?.index) || 0));
    return ordered.map((c, k) => {
      const text = this.options.endpoint === 'chat' ? c?.message?.content : c?.text;
      if (typeof text !== 'string')
        throw bad(
          `choice ${k} to carry ${this.options.endpoint === 'chat' ? 'message.content' : 'text'} as a string, got ${JSON.stringify(c)?.slice(0, 80)}`,
        );
      const finish = finishReason(c.finish_reason);
      if (!this.options.logprobs) return { text, tokenIds: [], logprobs: [], finishReason: finish };
      const { tokens, logprobs } = this.tokenLogprobs(c, k, bad);
      return { text, tokenIds: tokenIds(c.token_ids, tokens), logprobs, finishReason: finish };
    });
  }

  private tokenLogprobs(
    c: Choice,
    k: number,
    bad: (what: string, hint?: string) => CorlError,
  ): { tokens: unknown[]; logprobs: number[] } {
    const hint = 'the server did not return logprobs: set option logprobs to false';
    const lp = c.logprobs;
    let tokens: unknown[];
    let values: unknown[];
    if (this.options.endpoint === 'chat') {
      if (!lp || !Array.isArray(lp.content))
        throw bad(`choice ${k} to carry logprobs.content, got ${JSON.stringify(lp)?.slice(0, 80)}`, hint);
      tokens = lp.content.map((t: { token?: unknown }) => t?.token);
      values = lp.content.map((t: { logprob?: unknown }) => t?.logprob);
    } else {
      if (!lp || !Array.isArray(lp.token_logprobs) || !Array.isArray(lp.tokens))
        throw bad(
          `choice ${k} to carry logprobs.tokens and logprobs.token_logprobs, got ${JSON.stringify(lp)?.slice(0, 80)}`,
          hint,
        );
      tokens = lp.tokens;
      values = lp.token_logprobs;
    }
    if (tokens.length !== values.length)
      throw bad(`as many logprobs as tokens in choice ${k}, got ${values.length} and ${tokens.length}`);
    values.forEach((v, t) => {
      if (typeof v !== 'number' || !Number.isFinite(v) || v > 1e-6)
        throw bad(`a finite logprob <= 0 for token ${t} of choice ${k}, got ${JSON.stringify(v)}`);
    });
    return { tokens, logprobs: values as number[] };
  }

  async update(): Promise<UpdateResult> {
    throw new CorlError(
      'CORL_ERR_POLICY_CANNOT_TRAIN',
      `expected a trainable policy, got corl:openai (${this.options.model} at ${this.options.baseUrl}), which only samples`,
    );
  }

  /** Writes what identifies the backend; there are no weights to save. */
  async save(dir: string): Promise<void> {
    fs.mkdirSync(dir, { recursive: true });
    const { baseUrl, model, endpoint } = this.options;
    await writeJsonAtomic(path.join(dir, CHECKPOINT_FILE), { kind: 'corl:openai', baseUrl, model, endpoint });
  }

  /** Checks that the checkpoint was written by a backend with the same model. */
  async load(dir: string): Promise<void> {
    const file = path.join(dir, CHECKPOINT_FILE);
    let saved: { kind?: unknown; model?: unknown };
    try {
      saved = JSON.parse(readUserText(file));
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected ${CHECKPOINT_FILE} written by corl:openai, got ${e instanceof NotARegularFile ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)}`,
        { where: file },
      );
    }
    if (saved.kind !== 'corl:openai' || saved.model !== this.options.model) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a corl:openai checkpoint of model "${this.options.model}", got ${JSON.stringify(saved.kind)} / ${JSON.stringify(saved.model)}`,
        { where: file },
      );
    }
  }
}

/** The `seed` sent for request `i`, sample split `k`: 31 bits, so every server's integer type holds it. */
export function requestSeed(seed: number, i: number, k: number): number {
  return mixSeed(seed, i, k) >>> 1;
}

/** Token ids from `choices[].token_ids`, or from "token_id:N" tokens; unknown ids are {@link UNKNOWN_TOKEN_ID}. */
export function tokenIds(explicit: unknown, tokens: readonly unknown[]): number[] {
  if (
    Array.isArray(explicit) &&
    explicit.length === tokens.length &&
    explicit.every((x) => Number.isInteger(x) && x >= 0)
  )
    return explicit as number[];
  const ids: number[] = [];
  for (const t of tokens) {
    const m = typeof t === 'string' ? /^token_id:(\d+)$/.exec(t) : null;
    ids.push(m ? Number(m[1]) : UNKNOWN_TOKEN_ID);
  }
  return ids;
}
