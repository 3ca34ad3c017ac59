// Helpers of the trainer tests that run a scripted cohort for real and read back what it wrote.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue, type LoadedConfig } from '../../core/config/load';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train, type TrainResult } from '../../core/trainer/trainer';

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
