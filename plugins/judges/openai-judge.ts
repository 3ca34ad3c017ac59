// The chat judge of corl:comas: an LLM behind an OpenAI-compatible server reads a proposal and its
// evaluation and scores the proposal on CoMAS's 1–3 rubric (docs/algorithms/comas.md, "The judge").
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { PluginContext } from '../../core/contracts/plugin';
import type { Judge, JudgeItem, JudgeRequest, JudgeResult } from '../../core/contracts/judge';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { mixSeed } from '../../core/util/rng';
import { OpenAIClient, type ClientEffects } from '../policies/openai/client';

/** The scoring prompt of one item: the problem, the proposal, the evaluation, the rubric and the answer format. */
export function judgePrompt(problem: string, item: JudgeItem): string {
  return [
    `Problem:\n${problem.trim()}`,
    `Proposed solution:\n${item.proposal.text.trim()}`,
    `An evaluation of that solution:\n${item.evaluation.text.trim()}`,
    [
      'Decide which criticisms in the evaluation actually hold, then score the solution:',
      '3 - the solution is correct and none of the criticisms holds;',
      '2 - some criticisms hold but are minor: the final answer is still right;',
      '1 - a criticism holds and is fatal: the final answer is wrong.',
      'Explain your reasons in a few sentences, then give the score as <score>N</score>.',
    ].join('\n'),
  ].join('\n\n');
}

/** The score in the last `<score>N</score>` of a reply, when it is 1, 2 or 3; otherwise null (no verdict). */
export function parseScore(reply: string): number | null {
  const all = [...reply.matchAll(/<\s*score\s*>\s*([0-9]+)\s*<\s*\/\s*score\s*>/gi)];
  if (all.length === 0) return null;
  const v = Number(all[all.length - 1]![1]);
  return v === 1 || v === 2 || v === 3 ? v : null;
}

/** The fields corl sets in every request; `extraBody` may not override them. */
const OWN_FIELDS = ['model', 'messages', 'temperature', 'max_tokens', 'n', 'seed'];

/** A chat-completions judge: one request per item, at most `concurrency` in flight. */
export class OpenAIJudge implements Judge {
  private readonly client: OpenAIClient;

  constructor(
    private readonly options: OpenAIJudgeOptions,
    private readonly seed: number,
    effects: ClientEffects = {},
  ) {
    const clash = Object.keys(options.extraBody).find((k) => OWN_FIELDS.includes(k));
    if (clash !== undefined)
      throw new CorlError(
        'CORL_ERR_JUDGE_OPTIONS',
        `expected extraBody to leave the fields corl sets (${OWN_FIELDS.join(', ')}) alone, got "${clash}"`,
        { where: 'options.extraBody', hint: `set ${clash} through its own option, or drop it from extraBody` },
      );
    this.client = new OpenAIClient({ ...options, apiKeyEnv: options.apiKeyEnv }, mixSeed(seed, 'judge-retry'), effects);
  }

  /** The request body for item `j` of a request. */
  body(req: Pick<JudgeRequest, 'prompt' | 'problem' | 'step'>, item: JudgeItem, j: number): Record<string, unknown> {
    const o = this.options;
    return {
      ...o.extraBody,
      model: o.model,
      messages: [
        ...(o.systemPrompt !== undefined ? [{ role: 'system', content: o.systemPrompt }] : []),
        { role: 'user', content: judgePrompt(req.prompt, item) },
      ],
      temperature: o.temperature,
      max_tokens: o.maxTokens,
      n: 1,
      ...(o.sendSeed ? { seed: mixSeed(this.seed, 'judge', req.step, req.problem, j) } : {}),
    };
  }

  async score(req: JudgeRequest): Promise<JudgeResult> {
    const scores = await Promise.all(
      req.items.map(async (item, j) => {
        const res = (await this.client.post('/chat/completions', this.body(req, item, j))) as {
          choices?: { message?: { content?: unknown } }[];
        };
        const content = res?.choices?.[0]?.message?.content;
        if (typeof content !== 'string')
          throw new CorlError(
            'CORL_ERR_BACKEND_RESPONSE',
            `expected choices[0].message.content to be a string in the judge's answer, got ${JSON.stringify(res)?.slice(0, 120)}`,
            { where: this.options.baseUrl },
          );
        return parseScore(content);
      }),
    );
    return { scores, calls: req.items.length, samples: req.items.length };
  }
}

/** The options schema of this plugin. */
const OPENAI_JUDGE_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['model'],
  properties: {
    baseUrl: {
      type: 'string',
      pattern: '^https?://',
      default: 'http://127.0.0.1:8000/v1',
      description: 'server URL up to and including /v1 (vLLM, SGLang, llama.cpp server, a hosted API)',
    },
    model: { type: 'string', minLength: 1, description: 'the judge model the server serves' },
    apiKeyEnv: {
      type: 'string',
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description: 'name of the environment variable holding the API key (the key never goes in a config)',
    },
    systemPrompt: { type: 'string', description: 'a system message sent before each scoring prompt' },
    temperature: { type: 'number', minimum: 0, maximum: 2, default: 0, description: 'judge sampling temperature' },
    maxTokens: {
      type: 'integer',
      minimum: 1,
      default: 512,
      description: 'most tokens of each judgement (reasons, then <score>N</score>)',
    },
    timeoutSeconds: { type: 'number', exclusiveMinimum: 0, default: 600, description: 'per-attempt timeout' },
    retries: { type: 'integer', minimum: 0, default: 4, description: 'retries after a 429, a 5xx or a timeout' },
    backoffSeconds: { type: 'number', minimum: 0, default: 0.5, description: 'first retry delay (doubles)' },
    maxBackoffSeconds: { type: 'number', minimum: 0, default: 30, description: 'cap of the retry delay' },
    concurrency: { type: 'integer', minimum: 1, default: 8, description: 'most requests in flight at once' },
    sendSeed: { type: 'boolean', default: true, description: 'send a per-request seed (step, problem, item)' },
    extraBody: {
      type: 'object',
      default: {},
      description: 'extra request fields merged into every body (cannot override the fields corl sets)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of `corl:openai-judge`, derived from its schema. */
export type OpenAIJudgeOptions = FromSchema<typeof OPENAI_JUDGE_OPTIONS_SCHEMA>;

/** `corl:openai-judge`: CoMAS's LLM-as-a-judge through an OpenAI-compatible chat server. */
export const openaiJudge = definePlugin({
  manifest: {
    name: 'corl:openai-judge',
    kind: 'judge',
    description:
      'LLM judge through an OpenAI-compatible /v1/chat/completions server: scores each proposal 1-3 from its evaluation (<score>N</score>)',
    corl: '^0.1.0',
    options: OPENAI_JUDGE_OPTIONS_SCHEMA,
  },
  create(options: OpenAIJudgeOptions, ctx: PluginContext): Judge {
    return new OpenAIJudge(options, ctx.seed);
  },
});
