import type { ResultRow } from './html';

/** The rows a verdict compares: the method and the baselines it is read against. */
export interface VerdictInput {
  /** The method's row (e.g. the Co-RL config). */
  readonly method: ResultRow;
  /** Baseline rows, in the order they are named (e.g. base, then TTRL). */
  readonly baselines: readonly ResultRow[];
  /** Evaluation problems per agent. */
  readonly problems: number;
  /** Name of the evaluation split ("held-out" or "validation"). */
  readonly split?: string;
  /** Where the multi-seed comparison lives, named when the verdict rests on fewer than 3 seeds. */
  readonly seeAlso?: string;
}

/** A difference of shares in points, signed; one that rounds to 0.0 is "±0.0", never "−0.0". */
const points = (x: number): string => {
  const text = Math.abs(100 * x).toFixed(1);
  return `${text === '0.0' ? '±' : x > 0 ? '+' : '−'}${text}`;
};

/**
 * Each agent's change against the same agent in `b`, "(alpha +6.3, beta +10.6)", when both rows
 * have the same agents in the same order (the first baseline is the untrained base); else "".
 */
function perAgentChange(method: ResultRow, b: ResultRow): string {
  const a = method.perAgent;
  if (a.length < 2 || a.length !== b.perAgent.length || a.some((x, i) => x.name !== b.perAgent[i]!.name)) return '';
  return ` (${a.map((x, i) => `${x.name} ${points(x.mean - b.perAgent[i]!.mean)}`).join(', ')})`;
}

/**
 * One plain sentence saying whether the method helped: its average final pass@1 against each
 * baseline's, in points (and each agent's against the first baseline's same agent), with the
 * problem count and the seeds, and a warning when the difference is within one standard deviation
 * of the seeds (or rests on one seed). Example: "co-rl: +8.4 points over base (alpha +6.3,
 * beta +10.6), −1.3 over ttrl on 200 held-out problems; 1 seed, see docs/results.md for 3".
 */
export function verdictLine(v: VerdictInput): string {
  const m = v.method.average.mean;
  const parts = v.baselines.map(
    (b, i) =>
      `${points(m - b.average.mean)}${i === 0 ? ` points over ${b.name}${perAgentChange(v.method, b)}` : ` over ${b.name}`}`,
  );
  const seeds = Math.min(v.method.seeds, ...v.baselines.map((b) => b.seeds));
  const spread = Math.max(v.method.average.sd, ...v.baselines.map((b) => b.average.sd));
  const noisy = seeds > 1 && v.baselines.some((b) => Math.abs(m - b.average.mean) <= spread);
  const seedText =
    seeds === 1
      ? `1 seed${v.seeAlso ? `, see ${v.seeAlso} for 3` : ''}`
      : `${seeds} seeds${noisy ? ', some differences within one sd of the seeds' : ''}`;
  return `${v.method.name}: ${parts.join(', ')} on ${v.problems} ${v.split ?? 'held-out'} problems; ${seedText}`;
}
