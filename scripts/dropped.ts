// How often a run's majority answer is the "dropped" answer of a corl:arith problem: the answer
// written with every carry and every borrow forgotten (corl:arith's own forgotten-carry and
// forgotten-borrow slips, at rate 1). docs/results.md uses it to show what the vote-based rewards
// drift to on the blind spots. Reads a run's (or a packed run's) eval rows of step 0 and of its
// last evaluation; counts, per agent and in all, the (agent, problem) pairs on carry and borrow
// problems whose dropped answer is wrong, and how many of them have it as their majority answer.
//   node dist/scripts/dropped.js docs/results/slips/co-rl-diff/seed-0 docs/results/slips/ttrl/seed-*
import * as fs from 'node:fs';
import { evalStepFiles } from '../core/report/markdown';
import { existingOrGz, readTextMaybeGz } from '../core/util/gz';
import { arithProblem } from '../plugins/tasks/arith';
import { writeChain } from '../plugins/tasks/arith-slips';
import { Rng } from '../core/util/rng';

const ALL_DROPPED = { column: 0, carry: 1, borrow: 1, copy: 0 };

/** The answer of `expression` (e.g. `37+4`, `52-0-35`) with every carry and borrow forgotten. */
export function droppedAnswer(expression: string): number {
  const m = /^\d+([+-]\d+)+$/.exec(expression);
  if (!m) throw new Error(`expected an expression like 37+4 or 52-0-35, got "${expression}"`);
  const operands = expression.split(/[+-]/).map(Number);
  const ops = expression.replace(/\d+/g, '').split('') as ('+' | '-')[];
  return writeChain(arithProblem(operands, ops), ALL_DROPPED, new Rng(0)).answer;
}

/** The expression of a corl:arith problem id (`test-37+4`, `validation-52-0-35`). */
export function expressionOfId(id: string): string {
  return id.replace(/^[a-z]+-/, '');
}

interface Row {
  readonly agent: number;
  readonly id: string;
  readonly majority: string | null;
  readonly reference: string;
  readonly category?: string;
}

/** Pairs on carry/borrow problems whose dropped answer is wrong, and those whose majority is it. */
export function countDropped(rows: readonly Row[]): { pairs: number; majority: number } {
  let pairs = 0;
  let majority = 0;
  for (const r of rows) {
    if (r.category === undefined || r.category === 'plain') continue;
    const d = String(droppedAnswer(expressionOfId(r.id)));
    if (d === r.reference) continue;
    pairs++;
    if (r.majority === d) majority++;
  }
  return { pairs, majority };
}

function readRows(file: string): Row[] {
  return readTextMaybeGz(existingOrGz(file))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row);
}

function main(dirs: readonly string[]): void {
  if (dirs.length === 0) {
    process.stderr.write('usage: node dist/scripts/dropped.js <run dir>...\n');
    process.exit(2);
  }
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) throw new Error(`expected a run directory, got none at ${dir}`);
    const files = evalStepFiles(dir);
    const steps = [...files.keys()].sort((a, b) => a - b);
    if (steps[0] !== 0 || steps.length < 2) throw new Error(`expected eval rows of step 0 and a later step in ${dir}`);
    const last = steps[steps.length - 1]!;
    const start = countDropped(readRows(files.get(0)!));
    const end = countDropped(readRows(files.get(last)!));
    process.stdout.write(
      `${dir}: majority = dropped answer on ${start.majority}/${start.pairs} (agent, problem) pairs at step 0, ${end.majority}/${end.pairs} at step ${last}\n`,
    );
  }
}

if (require.main === module) main(process.argv.slice(2));
