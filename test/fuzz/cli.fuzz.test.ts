// Every `corl` command with generated arguments: its own flags (with and without values, repeated,
// misspelt), positionals and values from a pool of bad inputs (missing files, folders, devices,
// damaged configs, numbers out of range). Each exits 0, 1 or 2, with a coded error on 1 and 2 and no
// stack; none hangs. No input in the pool is a valid config, so no command trains or serves.
import { expect } from 'chai';
import type { Command } from 'commander';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildProgram } from '../../core/cli/main';
import { coRlConfig, tempDir } from '../fixtures/configs';
import { STACK_LINE } from './assertions';
import { corlInProcess } from './cli-runner';
import { cases, FUZZ_TIMEOUT, summary, tick } from './settings';

const SUITE = 'cli';

const PATHS = [
  'missing.json',
  'bad.json',
  'empty.json',
  'array.json',
  'folder',
  '/dev/null',
  '/proc/self/status',
  '',
  'x'.repeat(300),
  'folder/../missing.jsonl',
  'rows.jsonl',
];
const VALUES = ['-1', '0', '1', '1e9', 'NaN', '1.5', 'abc', '', '{"a":1}', '[]', '--', '-q', '999999999999999999999'];

interface Shape {
  readonly name: string;
  readonly flags: readonly { readonly flag: string; readonly takesValue: boolean }[];
  readonly positionals: number;
}

function shapeOf(c: Command): Shape {
  return {
    name: c.name(),
    flags: c.options.map((o) => ({ flag: (o.long ?? o.short)!, takesValue: o.required || o.optional })),
    positionals: c.registeredArguments.length,
  };
}

const SHAPES = buildProgram().commands.map(shapeOf);

const argvs: fc.Arbitrary<string[]> = fc.constantFrom(...SHAPES).chain((shape) =>
  fc
    .tuple(
      fc.array(fc.constantFrom(...PATHS), { maxLength: shape.positionals + 1 }),
      fc.array(
        fc.oneof(
          {
            weight: 6,
            arbitrary: fc.constantFrom(...(shape.flags.length ? shape.flags : [{ flag: '--help', takesValue: false }])),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom({ flag: '--no-such-flag', takesValue: false }, { flag: '-Z', takesValue: true }),
          },
        ),
        { maxLength: 4 },
      ),
      fc.array(fc.oneof(fc.constantFrom(...VALUES), fc.constantFrom(...PATHS)), { minLength: 4, maxLength: 4 }),
    )
    .map(([positionals, flags, values]) => {
      const argv = [shape.name, ...positionals];
      flags.forEach((f, i) => argv.push(...(f.takesValue ? [f.flag, values[i]!] : [f.flag])));
      // corl answers reads stdin without a file: the suite never leaves it waiting on mocha's stdin.
      if (shape.name === 'answers' && positionals.length === 0) argv.push('missing.jsonl');
      return argv;
    }),
);

describe('fuzz: every corl command with generated arguments exits with a coded error or its answer', function () {
  this.timeout(FUZZ_TIMEOUT);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('corl-fuzz-cli-')));
  after(() => {
    tmp.cleanup();
    process.stdout.write(summary(SUITE));
  });

  it(`${SHAPES.length} commands, their flags and bad values (150 cases)`, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(argvs, async (argv) => {
        tick(SUITE);
        // A fresh working folder per case, holding the pool's files (corl init may write into it).
        const cwd = path.join(tmp.dir, `case-${n++}`);
        fs.mkdirSync(path.join(cwd, 'folder'), { recursive: true });
        fs.writeFileSync(path.join(cwd, 'bad.json'), JSON.stringify(coRlConfig()).slice(0, 120));
        fs.writeFileSync(path.join(cwd, 'empty.json'), '');
        fs.writeFileSync(path.join(cwd, 'array.json'), '[1, 2]');
        fs.writeFileSync(path.join(cwd, 'rows.jsonl'), '{"answer": 1}\nnot json\n');
        const r = await corlInProcess(argv, cwd, 60_000);
        const what = `corl ${argv.map((a) => JSON.stringify(a)).join(' ')}: exit ${r.code}\n${r.stderr.slice(0, 800)}`;
        expect(r.stderr, what).to.not.match(STACK_LINE).and.not.contain('internal error');
        expect([0, 1, 2], what).to.include(r.code);
        if (r.code !== 0) expect(r.stderr, what).to.match(/CORL_ERR_[A-Z0-9_]+/);
        fs.rmSync(cwd, { recursive: true, force: true });
      }),
      cases(SUITE, 150),
    );
  });
});
