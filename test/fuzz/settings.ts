// The fuzz suite's settings: one fixed seed and a stated number of cases per property, so `npm test`
// tries the same inputs every time; `npm run fuzz -- --runs N [--seed S]` (scripts/fuzz.ts) sets the
// environment below for a longer or another run.
import type { Parameters } from 'fast-check';

/** The seed of every property (CORL_FUZZ_SEED overrides it). */
export const FUZZ_SEED = Number(process.env.CORL_FUZZ_SEED ?? 396);

/** A property's count: as stated, or scaled so that the largest gets CORL_FUZZ_RUNS. */
function scale(cases: number): number {
  const runs = Number(process.env.CORL_FUZZ_RUNS ?? '');
  return Number.isInteger(runs) && runs > 0 ? Math.max(1, Math.round((cases * runs) / LARGEST)) : cases;
}

/** The largest property's count in `npm test`; CORL_FUZZ_RUNS scales every property by runs / LARGEST. */
export const LARGEST = 250;

/** Inputs tried so far by each suite (printed when the suite ends). */
export const tried = new Map<string, number>();

/** fast-check parameters of a property stated to try `cases` inputs in `npm test`. */
export function cases<T>(suite: string, count: number): Parameters<T> {
  tried.set(suite, tried.get(suite) ?? 0);
  return { seed: FUZZ_SEED, numRuns: scale(count), endOnFailure: true, verbose: 1 };
}

/** Count one input tried by a suite (called by each property's predicate). */
export function tick(suite: string): void {
  tried.set(suite, (tried.get(suite) ?? 0) + 1);
}

/** One line saying how many inputs a suite tried, with the seed that reproduces them. */
export function summary(suite: string): string {
  return `      fuzz ${suite}: ${tried.get(suite) ?? 0} inputs tried (seed ${FUZZ_SEED})\n`;
}

/** Each suite's mocha timeout: generous in `npm test`, none for a longer run of `npm run fuzz`. */
export const FUZZ_TIMEOUT = process.env.CORL_FUZZ_RUNS ? 0 : 300_000;
