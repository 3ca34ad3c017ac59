// Helpers of the trainer tests that run a scripted cohort for real and read back what it wrote.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue, type LoadedConfig } from '../../core/config/load';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train, type TrainResult } from '../../core/trainer/trainer';
import { fixture } from '../fixtures/configs';

/** One agent's rollout of one round of a step, as rollouts.jsonl holds it in a discussion. */
export interface TurnRollout {
  step: number;
  agent: number;
  round: number;
  id: string;
  completions: { prompt: string; key: string; score?: number; reward: number; advantage: number }[];
}

/** Load `config` (relative paths from `dir`), train it in `dir/run`, and return the loaded config, run and result. */
export async function trainIn(
  dir: string,
  config: Record<string, unknown>,
  supervised: boolean,
): Promise<{ loaded: LoadedConfig; run: RunDirectory; result: TrainResult }> {
  const loaded = await loadConfigValue(config, { baseDir: dir });
  const run = await RunDirectory.create(path.join(dir, 'run'), loaded.config, loaded.source, {
    baseDir: dir,
    supervised,
  });
  const result = await train(loaded, { run });
  return { loaded, run, result };
}

/** The rollouts a run in `dir/run` saved, in order. */
export function readRollouts(dir: string): TurnRollout[] {
  return fs
    .readFileSync(path.join(dir, 'run', 'rollouts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TurnRollout);
}

/** The one train problem (answer "2") and the one held-out problem (answer "4") of a scripted run. */
export const P = 'What is 1 + 1?';
export const H = 'What is 1 + 3?';

/** GRPO's advantage of two rewards x > y (unbiased std |x − y|/√2, ε = 1e-6). */
export const pair = (d: number): number => d / 2 / (d / Math.SQRT2 + 1e-6);

/**
 * A scripted cohort's config: the fixture policy `test:scripted` answering each prompt from its
 * agent's script (logging its updates to `log` when given), the task of {@link P} and {@link H}, and
 * no evaluation at the start; `rest` (name, seed, topology, reward, trainer, …) is added.
 */
export function scriptedConfig(
  agents: readonly { name: string; script: Record<string, string[]>; log?: string }[],
  rest: Record<string, unknown>,
): Record<string, unknown> {
  return {
    plugins: [fixture('scripted-debater.js')],
    task: {
      use: 'corl:inline',
      options: { train: [{ id: 't1', prompt: P, answer: '2' }], heldOut: [{ id: 'h1', prompt: H, answer: '4' }] },
    },
    agents: agents.map(({ name, script, log }) => ({
      name,
      policy: { use: 'test:scripted', options: { script, ...(log !== undefined ? { log } : {}) } },
    })),
    eval: { atStart: false, samples: 1 },
    ...rest,
  };
}

/** One (agent, round)'s turns worked by hand: [agent, round, keys, rewards, advantages], or with the scores before the rewards. */
export type TurnRow =
  | readonly [agent: number, round: number, keys: string[], rewards: number[], advantages: number[]]
  | readonly [agent: number, round: number, keys: string[], scores: number[], rewards: number[], advantages: number[]];

/** Check each row against the saved rollouts: the answer keys (and scores) exactly, rewards and advantages to 1e-12. */
export function expectTurns(rollouts: readonly TurnRollout[], rows: readonly TurnRow[]): void {
  for (const row of rows) {
    const [agent, round, keys] = row;
    const [scores, rewards, advantages] = row.length === 6 ? [row[3], row[4], row[5]] : [undefined, row[3], row[4]];
    const r = rollouts.find((x) => x.agent === agent && x.round === round);
    const what = `agent ${agent} round ${round}`;
    expect(r, what).to.not.equal(undefined);
    expect(
      r!.completions.map((c) => c.key),
      what,
    ).to.deep.equal(keys);
    if (scores)
      expect(
        r!.completions.map((c) => c.score),
        what,
      ).to.deep.equal(scores);
    r!.completions.forEach((c, k) => {
      expect(c.reward, `${what} debate ${k} reward`).to.be.closeTo(rewards[k]!, 1e-12);
      expect(c.advantage, `${what} debate ${k} advantage`).to.be.closeTo(advantages[k]!, 1e-12);
    });
  }
}
