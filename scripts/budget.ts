// The RL budget rule on a packed comparison of validation runs (docs/results/slips-budget-steps):
// at every evaluated step, the change of each run's validation pass@1 from step 0 (mean over its
// agents), and the mean of those changes over the runs. With a constant learning rate a run of S
// steps is, step for step, the first S steps of a longer run with the same seed, so one long run
// per method gives every shorter budget. The rule picks the step with the largest mean change among
// those at most --max-steps (the most that fits the start budget). docs/results.md quotes the table
// (test/scripts/budget.test.ts checks the quote).
//   node dist/scripts/budget.js docs/results/slips-budget-steps --max-steps 250
import { readComparison } from '../core/report/compare';
import type { ReportGroup } from '../core/report/html';
import { metricSeries } from '../core/report/runs';
import { mean } from '../core/util/mean';

/** Change of validation pass@1 from step 0 at each evaluated step, per config and averaged over configs. */
export interface StepGains {
  readonly configs: readonly string[];
  readonly rows: readonly { readonly step: number; readonly gains: readonly number[]; readonly mean: number }[];
}

/** The first seed of each config: a budget probe runs one seed per method. */
export function stepGains(groups: readonly ReportGroup[]): StepGains {
  const perConfig = groups.map((g) => {
    const run = g.runs[0]!;
    const series = run.agents.map((_, i) => new Map(metricSeries(run.records, 'eval/accuracy', i, 'eval')));
    const steps = [...series[0]!.keys()].filter((s) => series.every((m) => m.has(s)));
    return new Map(
      steps.map((s) => [
        s,
        mean(
          series.map((m) => m.get(s)! - m.get(0)!),
          NaN,
        ),
      ]),
    );
  });
  const steps = [...perConfig[0]!.keys()]
    .filter((s) => s > 0 && perConfig.every((m) => m.has(s)))
    .sort((a, b) => a - b);
  return {
    configs: groups.map((g) => g.name),
    rows: steps.map((step) => {
      const gains = perConfig.map((m) => m.get(step)!);
      return { step, gains, mean: mean(gains, NaN) };
    }),
  };
}

/** The step the rule picks: the largest mean change at or below `maxSteps` (the earlier step on a tie). */
export function chooseSteps(g: StepGains, maxSteps: number): number {
  let best: { step: number; mean: number } | undefined;
  for (const r of g.rows) if (r.step <= maxSteps && (!best || r.mean > best.mean + 1e-12)) best = r;
  if (!best) throw new Error(`expected an evaluated step at or below ${maxSteps}, got none`);
  return best.step;
}

const signed = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}`;

/** The table docs/results.md quotes: one row per evaluated step, the chosen one in bold. */
export function budgetTable(g: StepGains, maxSteps: number): string {
  const chosen = chooseSteps(g, maxSteps);
  return [
    `| steps | ${g.configs.join(' | ')} | mean | fits the start budget (≤ ${maxSteps}) |`,
    `| --- | ${g.configs.map(() => '---').join(' | ')} | --- | --- |`,
    ...g.rows.map((r) => {
      const cells = [String(r.step), ...r.gains.map(signed), signed(r.mean), r.step <= maxSteps ? 'yes' : 'no'];
      return `| ${(r.step === chosen ? cells.map((c) => `**${c}**`) : cells).join(' | ')} |`;
    }),
  ].join('\n');
}

function main(argv: readonly string[]): void {
  const args = [...argv];
  const i = args.indexOf('--max-steps');
  const max = i >= 0 ? Number(args[i + 1]) : NaN;
  if (i >= 0) args.splice(i, 2);
  if (args.length !== 1 || !Number.isInteger(max) || max <= 0) {
    process.stderr.write('usage: node dist/scripts/budget.js <comparison folder> --max-steps <n>\n');
    process.exit(2);
  }
  process.stdout.write(budgetTable(stepGains(readComparison(args[0]!).groups), max) + '\n');
}

if (require.main === module) main(process.argv.slice(2));
