// corl:python's overhead per training step: the same step's reward contexts scored by corl:vote (in
// process) and by Python functions through corl's host, at the embedded benchmark's shape (2 agents ×
// 16 prompts × 8 completions of ~40 characters) and at paper scale (2 agents × 128 prompts × 12
// completions of ~600 characters). A step goes as one message (scoreMany: what the trainer does) or
// one round trip per prompt (score, for comparison). Figures: median wall milliseconds per step over
// the repeats, mean CPU milliseconds per step (corl's process plus its Python host: the figure a
// loaded machine disturbs least), and the CPU corl:python adds over corl:vote per completion.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RewardContext, RewardSource } from '../core/contracts/reward-source';
import { createPlugin, rewardContext } from '../core/testing';
import { Rng } from '../core/util/rng';
import { pythonReward } from '../plugins/rewards/python';
import { voteReward } from '../plugins/rewards/vote';
import type { Bench } from './index';

const REPEATS = Number(process.env.BENCH_PYTHON_REPEATS ?? 7);
const ROOT = path.resolve(__dirname, '..', '..');

/** One step's contexts: every agent's every prompt, as the trainer builds them. */
function stepContexts(agents: number, prompts: number, k: number, chars: number, seed: number): RewardContext[] {
  const rng = new Rng(seed);
  const out: RewardContext[] = [];
  const keys = (): (string | null)[] =>
    Array.from({ length: k }, () => (rng.next() < 0.1 ? null : String(10 + rng.int(4))));
  const texts = (ks: readonly (string | null)[]): string[] =>
    ks.map((key) => {
      let t = '';
      while (t.length < chars - 12) t += `${rng.int(90) + 10}+${rng.int(9)}=${rng.int(99)};`;
      return `${t}\\boxed{${key ?? '?'}}`;
    });
  const all = Array.from({ length: agents }, () => Array.from({ length: prompts }, () => keys()));
  for (let a = 0; a < agents; a++)
    for (let p = 0; p < prompts; p++) {
      const ks = all[a]![p]!;
      out.push(
        rewardContext({
          agent: a,
          agents,
          step: 3,
          problem: { id: `p${p}`, prompt: `Compute problem ${p}.` },
          keys: ks,
          texts: texts(ks),
          supervisors: [{ agent: (a + agents - 1) % agents, keys: all[(a + agents - 1) % agents]![p]! }],
        }),
      );
    }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** CPU milliseconds of this process's Python hosts so far (Linux /proc; clock ticks of 10 ms). */
function childCpuMs(): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // the fields after "(name) ": state ppid ... with utime and stime the 12th and 13th
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('host.py'))
        ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10;
}

/** Median wall milliseconds per step, and mean CPU milliseconds per step (corl's process and its Python host). */
async function timeStep(
  source: RewardSource,
  contexts: readonly RewardContext[],
  many: boolean,
): Promise<{ wall: number; cpu: number }> {
  const times: number[] = [];
  let cpu = 0;
  for (let r = 0; r < REPEATS + 1; r++) {
    const p0 = childCpuMs(); // read outside the measured span: scanning /proc costs CPU too
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    if (many && source.scoreMany) await source.scoreMany(contexts);
    else for (const c of contexts) await source.score(c);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const used = process.cpuUsage(c0);
    // the first is a warm-up (caches, the interpreter's first call)
    if (r > 0) {
      times.push(ms);
      cpu += (used.user + used.system) / 1000 + (childCpuMs() - p0);
    }
  }
  return { wall: median(times), cpu: cpu / REPEATS };
}

export const bench: Bench = {
  name: 'python',
  description:
    "corl:python's reward overhead per step against corl:vote (one message per step, and one round trip per prompt)",
  async run() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-python-'));
    try {
      const coRl = path.join(dir, 'co_rl.py');
      fs.writeFileSync(
        coRl,
        'def reward_func(prompts, completions, matches_pseudo_label, **kwargs):\n    return [1.0 if m else 0.0 for m in matches_pseudo_label]\n',
      );
      const steps = path.join(ROOT, 'templates', 'python-reward', 'reward.py');
      process.stdout.write(
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} on ${os.cpus().length} cores\n`,
      );
      const t0 = process.hrtime.bigint();
      const probe = await createPlugin(pythonReward, { module: coRl });
      process.stdout.write(
        `start of a Python process (interpreter, host, import): ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms\n`,
      );
      await probe.close?.();
      for (const [shape, agents, prompts, k, chars] of [
        ['embedded benchmark', 2, 16, 8, 40],
        ['paper scale', 2, 128, 12, 600],
      ] as const) {
        const contexts = stepContexts(agents, prompts, k, chars, 7);
        const n = agents * prompts * k;
        process.stdout.write(
          `\n${shape}: ${agents} agents × ${prompts} prompts × ${k} completions (${n}) of ~${chars} characters\n`,
        );
        const vote = await createPlugin(voteReward, {});
        const base = await timeStep(vote, contexts, false);
        const line = (label: string, t: { wall: number; cpu: number }, extra = ''): string =>
          `  ${label.padEnd(47)} ${t.wall.toFixed(1).padStart(8)} ms wall ${t.cpu.toFixed(1).padStart(8)} ms CPU per step${extra}\n`;
        process.stdout.write(line('corl:vote (in process)', base));
        const cases: [string, Record<string, unknown>, boolean][] = [
          ['corl:python, Co-RL in Python, one message/step', { module: coRl }, true],
          ['corl:python, same, batch "step" (GRPOTrainer)', { module: coRl, batch: 'step' }, true],
          ["corl:python, templates' reward.py, one message", { module: steps }, true],
          ['corl:python, Co-RL in Python, a trip per prompt', { module: coRl }, false],
        ];
        for (const [label, options, many] of cases) {
          const source = await createPlugin(pythonReward, { ...options, stderr: 'discard' });
          const t = await timeStep(source, contexts, many);
          await source.close?.();
          const over = (((t.cpu - base.cpu) * 1000) / n).toFixed(1);
          process.stdout.write(line(label, t, ` (+${over} µs CPU per completion over corl:vote)`));
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
