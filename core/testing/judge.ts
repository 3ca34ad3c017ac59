import assert from 'node:assert/strict';
import type { JudgeItem, JudgeRequest, JudgeSample } from '../contracts/judge';
import type { PluginDefinition } from '../contracts/plugin';
import {
  commonChecks,
  expectKind,
  kitCreate,
  label,
  labelFreeCheck,
  optionSetsOf,
  sameTranscript,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** Inputs of the judge suite. */
export interface JudgeKitOptions extends KitOptions {
  /** Cohort size of the probe requests (default 3). */
  readonly agents?: number;
}

const turn = (agent: number, answer: string | null): JudgeItem['proposal'] => ({
  agent,
  text: answer === null ? 'I am not sure.' : `So the answer is \\boxed{${answer}}.`,
  answer,
  key: answer,
});

/**
 * Probe requests: right and wrong proposals, contested and let stand, unanswered ones, and an empty
 * request. Each agent's policy "samples" answers seeded by the agent (7, 7, 8 for agent 0, …), exact equality.
 */
export function judgeRequests(agents: number): { request: JudgeRequest; sampled: number[] }[] {
  const make = (problem: string, items: JudgeItem[]): { request: JudgeRequest; sampled: number[] } => {
    const sampled: number[] = [];
    const request: JudgeRequest = Object.freeze({
      agents,
      problem,
      prompt: 'What is 3 + 4?',
      step: 2,
      items: Object.freeze(items.map((i) => Object.freeze(i))),
      equal: async (a: string, b: string) => a === b,
      sample: async (agent: number, n: number): Promise<JudgeSample[]> => {
        assert.ok(
          Number.isInteger(agent) && agent >= 0 && agent < agents,
          `sample(agent) should name an agent 0..${agents - 1}, got ${agent}`,
        );
        assert.ok(Number.isInteger(n) && n >= 1, `sample(n) should ask for n ≥ 1 completions, got ${n}`);
        sampled.push(n);
        return Array.from({ length: n }, (_, k) => {
          const answer = k % 3 === 2 ? String(8 + agent) : '7';
          return { text: `\\boxed{${answer}}`, answer, key: answer };
        });
      },
    });
    return { request, sampled };
  };
  return [
    make('p-mixed', [
      { proposal: turn(0, '7'), evaluation: turn(1, '7') },
      { proposal: turn(1, '9'), evaluation: turn(2 % agents, '7') },
      { proposal: turn(1, '9'), evaluation: turn(2 % agents, '9') },
      { proposal: turn(0, null), evaluation: turn(1, '7') },
      { proposal: turn(0, '7'), evaluation: turn(1, null) },
    ]),
    make('p-empty', []),
  ];
}

/** The judge checks. */
export function judgeChecks(plugin: PluginDefinition<'judge'>, kit: JudgeKitOptions = {}): Check[] {
  expectKind(plugin, 'judge');
  const agents = kit.agents ?? 3;
  const probe = async (options: Readonly<Record<string, unknown>>) => {
    const j = await kitCreate(plugin, kit, options);
    try {
      const out = [];
      for (const { request, sampled } of judgeRequests(agents)) {
        const r = await j.score(request);
        out.push({ scores: r?.scores, calls: r?.calls, samples: r?.samples, sampled });
      }
      return { agents: j.agents, out };
    } finally {
      await j.close?.();
    }
  };
  return [
    ...commonChecks('judge', plugin, kit),
    labelFreeCheck('judge', plugin, 'a judge reads proposals and evaluations; ground truth never reaches it'),
    {
      title: 'scores every item in [1, 3] or null, counts whole calls and samples, and names only cohort agents',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const { agents: named, out } = await probe(options);
          if (named !== undefined) {
            assert.ok(Array.isArray(named), `${label(options)}: agents should be an array when present`);
            for (const a of named)
              assert.ok(Number.isInteger(a) && a >= 0, `${label(options)}: agents should hold agent indices, got ${a}`);
          }
          judgeRequests(agents).forEach(({ request }, b) => {
            const r = out[b]!;
            const what = `${label(options)}: request "${request.problem}"`;
            assert.ok(
              Array.isArray(r.scores) && r.scores.length === request.items.length,
              `${what} should get ${request.items.length} scores`,
            );
            r.scores.forEach((s, j) =>
              assert.ok(
                s === null || (typeof s === 'number' && Number.isFinite(s) && s >= 1 && s <= 3),
                `${what}: score ${j} should be in [1, 3] or null, got ${String(s)}`,
              ),
            );
            for (const [k, v] of [
              ['calls', r.calls],
              ['samples', r.samples],
            ] as const)
              assert.ok(Number.isInteger(v) && v! >= 0, `${what}: ${k} should be a whole number, got ${String(v)}`);
            const drawn = r.sampled.reduce((x, y) => x + y, 0);
            assert.ok(
              r.samples! >= drawn,
              `${what}: samples (${r.samples}) should count the ${drawn} policy samples drawn`,
            );
          });
        }
      },
    },
    {
      title: 'is deterministic (the same scores from a second instance and when asked again)',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const first = await probe(options);
          sameTranscript(first, await probe(options), `judgements for ${label(options)}`);
        }
      },
    },
  ];
}

/**
 * The judge contract as a test suite: label-free, one score in [1, 3] or null per item, whole counts
 * of calls and samples (policy samples included), deterministic.
 */
export function judgeContract(plugin: PluginDefinition<'judge'>, kit: JudgeKitOptions = {}): void {
  suite('judge', plugin, kit, judgeChecks(plugin, kit));
}
