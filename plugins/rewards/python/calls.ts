// What `corl:python` sends its host for a batch of reward contexts, and how the answers become
// reward results. Everything sent is label-free unless the options declare ground truth: answer keys,
// the supervisors' keys and their plurality label, the problem's prompt, id and metadata; the
// reference only under `groundTruth: true`.
import type { RewardContext, RewardResult } from '../../../core/contracts/reward-source';
import { CorlError } from '../../../core/errors';
import type { WorkOptions } from '../../../core/contracts/work';
import { groupVote } from '../vote';
import { mean } from '../../../core/util/mean';

/** The options the calls depend on (a subset of corl:python's). */
export interface CallOptions {
  readonly signature: 'trl' | 'verl';
  readonly groundTruth: boolean;
  readonly referenceColumn: string;
  readonly batch: 'group' | 'step';
  readonly labelRule: 'pool' | 'teacher' | 'majority';
  readonly labelThreshold: number;
}

/** The names corl passes a TRL-style function itself; a problem metadata key of the same name is not passed. */
export const TRL_RESERVED = [
  'prompts',
  'completions',
  'completion_ids',
  'trainer_state',
  'log_extra',
  'log_metric',
  'corl',
  'problem_id',
  'answer_keys',
  'extracted_answers',
  'finish_reasons',
  'pseudo_label',
  'matches_pseudo_label',
  'supervisor_answer_keys',
] as const;

/** A context with the label-free facts corl adds: the supervisors' plurality label and who matches it. */
export interface Prepared {
  readonly ctx: RewardContext;
  /** The supervisors' plurality label (a key), null when there is none. */
  readonly label: string | null;
  /** The label of the agent's own answers. */
  readonly ownLabel: string | null;
  /** Whether each completion's key is equivalent to `label`. */
  readonly matches: readonly boolean[];
}

/** The label, own label and matches of one context: `corl:vote`'s own vote (`groupVote`), `work` passed on. */
export async function prepare(ctx: RewardContext, o: CallOptions, work?: WorkOptions): Promise<Prepared> {
  const { vote, own, matches } = await groupVote(ctx, { rule: o.labelRule, threshold: o.labelThreshold }, work);
  return { ctx, label: vote.label, ownLabel: own.label, matches };
}

function reference(p: Prepared, o: CallOptions, where: string): string | undefined {
  if (!o.groundTruth) return undefined;
  const ref = p.ctx.reference;
  if (!ref)
    throw new CorlError(
      'CORL_ERR_TASK_DATA',
      `expected a reference answer for problem "${p.ctx.problem.id}" (the Python reward sets groundTruth: true), got none`,
      { where, hint: 'give every problem of the task a reference, or set groundTruth: false (label-free)' },
    );
  return ref.answer;
}

/** The seed of one call: the run's seed, the step, the agent, the round and (per group) the problem. */
function seedOf(seed: number, ctx: RewardContext, perGroup: boolean): string {
  const base = `${seed}:${ctx.step}:${ctx.agent}:${ctx.round ?? 0}`;
  return perGroup ? `${base}:${ctx.problem.id}` : base;
}

/** A TRL group: what the host expands into the per-completion lists of one call. */
function trlGroup(p: Prepared, o: CallOptions, where: string): Record<string, unknown> {
  const { ctx } = p;
  const columns: Record<string, unknown> = {};
  const reserved = new Set<string>([...TRL_RESERVED, o.referenceColumn]);
  for (const [k, v] of Object.entries(ctx.problem.metadata ?? {})) if (!reserved.has(k)) columns[k] = v;
  columns.problem_id = ctx.problem.id;
  columns.pseudo_label = p.label;
  columns.supervisor_answer_keys = ctx.supervisors.map((s) => s.keys);
  const ref = reference(p, o, where);
  if (ref !== undefined) columns[o.referenceColumn] = ref;
  // JSON.stringify reads the frozen arrays as they are: no copies.
  const ids = ctx.completions.every((c) => c.tokenIds) ? ctx.completions.map((c) => c.tokenIds!) : null;
  return {
    prompt: ctx.prompt,
    completions: ctx.completions.map((c) => c.text),
    completion_ids: ids,
    columns,
    per_completion: {
      answer_keys: ctx.completions.map((c) => c.key),
      extracted_answers: ctx.completions.map((c) => c.answer),
      finish_reasons: ctx.completions.map((c) => c.finishReason),
      matches_pseudo_label: p.matches,
    },
  };
}

/** The call-level facts of a TRL call (the `corl` keyword argument and trainer_state). */
function trlCall(seed: string, ctx: RewardContext, groups: Record<string, unknown>[]): Record<string, unknown> {
  return {
    seed,
    state: { global_step: ctx.step, max_steps: ctx.totalSteps ?? null },
    context: {
      agent: ctx.agent,
      agents: ctx.agents,
      step: ctx.step,
      round: ctx.round ?? null,
      supervisors: ctx.supervisors.map((s) => s.agent),
    },
    groups,
  };
}

/** One verl call: compute_score's keyword arguments for each completion of a group. */
function verlCall(p: Prepared, o: CallOptions, seed: string, where: string): Record<string, unknown> {
  const { ctx } = p;
  const truth = o.groundTruth ? reference(p, o, where) : p.label;
  const samples = ctx.completions.map((c, k) => ({
    data_source: typeof ctx.problem.metadata?.data_source === 'string' ? ctx.problem.metadata.data_source : 'corl',
    solution_str: c.text,
    ground_truth: truth,
    extra_info: {
      ...(ctx.problem.metadata ?? {}),
      index: ctx.problem.id,
      problem_id: ctx.problem.id,
      prompt: ctx.prompt,
      agent: ctx.agent,
      agents: ctx.agents,
      step: ctx.step,
      round: ctx.round ?? null,
      answer_key: c.key,
      extracted_answer: c.answer,
      finish_reason: c.finishReason,
      ...(o.groundTruth ? {} : { pseudo_label: p.label, matches_pseudo_label: p.matches[k] }),
      supervisor_answer_keys: ctx.supervisors.map((s) => s.keys),
      num_turns: null,
      rollout_reward_scores: {},
    },
  }));
  return { seeds: samples.map((_, k) => `${seed}:${k}`), samples };
}

/** A batch of calls and how to read their answers back into one result per context. */
export interface Batch {
  /** The calls to send (possibly none: every context settled without the function). */
  readonly calls: Record<string, unknown>[];
  /** One result per context, in order, from the host's answers to `calls`. */
  read(answers: readonly unknown[]): RewardResult[];
  /** What call `i` was about, for messages: agent, problem (a group call) and global_step. */
  describe(i: number): string;
}

/** Which contexts go into which call: one per group, or (trl, batch "step") one per agent and round. */
function callGroups(prepared: readonly Prepared[], o: CallOptions): number[][] {
  const live = prepared.map((_, i) => i).filter((i) => prepared[i]!.ctx.completions.length > 0);
  const skip = (i: number): boolean => o.signature === 'verl' && !o.groundTruth && prepared[i]!.label === null;
  const wanted = live.filter((i) => !skip(i));
  if (o.signature === 'verl' || o.batch === 'group') return wanted.map((i) => [i]);
  const byCall = new Map<string, number[]>();
  for (const i of wanted) {
    const c = prepared[i]!.ctx;
    const key = `${c.agent}:${c.round ?? 0}:${c.step}`;
    const members = byCall.get(key);
    if (members) members.push(i);
    else byCall.set(key, [i]);
  }
  return [...byCall.values()];
}

/** Build the calls for prepared contexts. `where` names the options in coded errors. */
export function batchOf(prepared: readonly Prepared[], o: CallOptions, seed: number, where: string): Batch {
  const groups = callGroups(prepared, o);
  const calls = groups.map((members) => {
    const first = prepared[members[0]!]!;
    const perGroup = members.length === 1 && (o.signature === 'verl' || o.batch === 'group');
    const s = seedOf(seed, first.ctx, perGroup);
    return o.signature === 'verl'
      ? verlCall(first, o, s, where)
      : trlCall(
          s,
          first.ctx,
          members.map((i) => trlGroup(prepared[i]!, o, where)),
        );
  });
  return {
    calls,
    describe(i) {
      const members = groups[i] ?? [];
      const c = prepared[members[0] ?? -1]?.ctx;
      if (!c) return `call ${i + 1}`;
      const what = members.length === 1 ? `, problem "${c.problem.id}"` : `, ${members.length} problems`;
      return `agent ${c.agent}${what}, global_step ${c.step}${c.round !== undefined ? `, round ${c.round}` : ''}`;
    },
    read(answers) {
      const results: (RewardResult | undefined)[] = prepared.map(() => undefined);
      groups.forEach((members, c) => {
        const answer = answers[c] as Record<string, unknown>;
        const read = o.signature === 'verl' ? readVerl(answer, members, prepared) : readTrl(answer, members, prepared);
        members.forEach((i, j) => (results[i] = read[j]));
      });
      // Contexts no call was made for: empty groups, and verl-style label-free groups without a label.
      return results.map((r, i) => r ?? settled(prepared[i]!));
    },
  };
}

function settled(p: Prepared): RewardResult {
  return { rewards: p.ctx.completions.map(() => 0), label: p.label, ownLabel: p.ownLabel, metrics: {} };
}

/** A metric name the function chose, in corl's namespace (`python/<name>`, lower case, [a-z0-9_./-]). */
export function metricName(name: string): string {
  const clean = name.toLowerCase().replace(/[^a-z0-9_./-]+/g, '_');
  return `python/${clean || '_'}`;
}

function readTrl(
  answer: Record<string, unknown>,
  members: readonly number[],
  prepared: readonly Prepared[],
): RewardResult[] {
  const rewards = answer.rewards as (number | null)[];
  const logged: Record<string, number> = {};
  for (const [name, values] of Object.entries((answer.metrics as Record<string, number[]>) ?? {}))
    if (values.length) logged[metricName(name)] = mean(values, NaN);
  let at = 0;
  return members.map((i) => {
    const p = prepared[i]!;
    const got = rewards.slice(at, at + p.ctx.completions.length);
    at += p.ctx.completions.length;
    // TRL leaves an abstained (None) completion out of its group's baseline and gives it advantage 0; here
    // it gets the mean of the group's scored completions (0 when none was scored), the same advantage 0.
    const scored = got.filter((r): r is number => r !== null);
    const fill = scored.length ? mean(scored, NaN) : 0;
    return {
      rewards: got.map((r) => (r === null ? fill : r)),
      label: p.label,
      ownLabel: p.ownLabel,
      metrics: { ...logged, 'python/abstained': (got.length - scored.length) / got.length },
    };
  });
}

function readVerl(
  answer: Record<string, unknown>,
  members: readonly number[],
  prepared: readonly Prepared[],
): RewardResult[] {
  const p = prepared[members[0]!]!;
  const scores = answer.scores as number[];
  const extras = (answer.extra as Record<string, number>[]) ?? [];
  const sums = new Map<string, number[]>();
  for (const e of extras) for (const [k, v] of Object.entries(e)) sums.set(k, [...(sums.get(k) ?? []), v]);
  const metrics: Record<string, number> = {};
  for (const [k, vs] of sums) metrics[metricName(k)] = mean(vs, NaN);
  return [{ rewards: [...scores], label: p.label, ownLabel: p.ownLabel, metrics }];
}
