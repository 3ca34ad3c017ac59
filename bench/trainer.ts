// Trainer overhead: one Co-RL step of the cohort loop with a policy that costs nothing, so the
// figures are the loop's own cost (extraction, keys, votes, advantages, metrics, bookkeeping).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfigValue } from '../core/config/load';
import { RunDirectory } from '../core/trainer/run-dir';
import { train } from '../core/trainer/trainer';
import { mean } from '../core/util/mean';
import type { Bench } from './index';

export const bench: Bench = {
  name: 'trainer',
  description: 'cohort loop overhead per step (2 agents, 32 prompts x 8 completions, test policy)',
  async run() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-trainer-'));
    try {
      const train64 = Array.from({ length: 64 }, (_, i) => ({
        id: `p${i}`,
        prompt: `What is ${i} + 1?`,
        answer: String(i + 1),
      }));
      const answers = Array.from({ length: 12 }, (_, i) => String(i));
      const config = {
        name: 'bench-trainer',
        plugins: [path.join(__dirname, '../core/testing/index.js')],
        task: { use: 'corl:inline', options: { train: train64 } },
        agents: [
          { policy: { use: 'testing:categorical', options: { answers } } },
          { policy: { use: 'testing:categorical', options: { answers } } },
        ],
        topology: 'corl:ring',
        reward: 'corl:vote',
        trainer: { steps: 40, batchSize: 32, groupSize: 8, evalEvery: 0, checkpointEvery: 0 },
        eval: { atStart: false },
      };
      const loaded = await loadConfigValue(config, { baseDir: dir });
      const run = await RunDirectory.create(path.join(dir, 'run'), loaded.config, loaded.source, {
        baseDir: dir,
        supervised: false,
      });
      await train(loaded, { run });
      const rows = fs
        .readFileSync(path.join(run.dir, 'timing.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .slice(5);
      const avg = (k: string): number =>
        mean(
          rows.map((r) => r[k] as number),
          NaN,
        );
      process.stdout.write(`steps measured: ${rows.length} (first 5 skipped as warm-up)\n`);
      process.stdout.write(
        `ms per step: total ${avg('totalMs').toFixed(2)}, sampling ${avg('sampleMs').toFixed(2)}, keys+rewards ${avg('rewardMs').toFixed(2)}, updates ${avg('updateMs').toFixed(2)}\n`,
      );
      process.stdout.write(
        `completions handled per second by the loop: ${((2 * 32 * 8) / (avg('totalMs') / 1000)).toFixed(0)}\n`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
