// Run and comparison folders with one file damaged (run.json, state.json, compare.json, config
// records, eval rows, metrics, the reads ledger, a plan): `corl report` and `corl train --resume`
// answer with a report or a coded error, never a stack or a hang, and every other file the folder
// held is still there, unchanged (a ledger or log only grows).
import { expect } from 'chai';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeComparison } from '../fixtures/comparison';
import { tempDir } from '../fixtures/configs';
import { STACK_LINE } from './assertions';
import { corlInProcess } from './cli-runner';
import { anyJson, damage } from './schema-arbitrary';
import { cases, FUZZ_TIMEOUT, summary, tick } from './settings';

const SUITE = 'run folders';

/** The first frame of corl's own code in an internal error's stack. */
function crashSite(stderr: string): string | undefined {
  if (!stderr.startsWith('internal error')) return undefined;
  const frame = stderr.split('\n').find((l) => /dist\/core\//.test(l));
  return frame?.replace(/^.*dist\//, '').replace(/\)$/, '');
}

/** Every file below dir, relative, with its bytes. */
function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, rel);
    if (fs.lstatSync(file).isFile()) files.set(rel, fs.readFileSync(file));
  }
  return files;
}

/** A damaged text of a file: its JSON (or one JSONL line) edited, bytes cut or added, or another kind of file. */
function damagedText(text: string): fc.Arbitrary<string | Buffer | 'folder' | 'empty'> {
  const lines = text.split('\n').filter(Boolean);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const edits: fc.Arbitrary<string | Buffer | 'folder' | 'empty'>[] = [
    fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => text.slice(0, n)),
    fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    fc.constantFrom('folder' as const, 'empty' as const, 'null', '[]', '"x"', '{}', '\ufeff' + text),
    anyJson.map((v) => JSON.stringify(v) ?? ''),
  ];
  if (json !== undefined) edits.push(damage(json).map((v) => JSON.stringify(v) ?? ''));
  else if (lines.length)
    edits.push(
      fc.nat({ max: lines.length - 1 }).chain((i) => {
        let line: unknown;
        try {
          line = JSON.parse(lines[i]!);
        } catch {
          line = lines[i];
        }
        return damage(line).map(
          (v) => [...lines.slice(0, i), JSON.stringify(v) ?? '', ...lines.slice(i + 1)].join('\n') + '\n',
        );
      }),
    );
  return fc.oneof(...edits);
}

describe('fuzz: damaged run-folder files are coded errors, and nothing already written is lost', function () {
  this.timeout(FUZZ_TIMEOUT);
  let tmp: ReturnType<typeof tempDir>;
  let pristine: string;
  let files: string[];
  /** What `corl report` writes (its report, results and verdicts): rewritten by each report, the rest never. */
  let outputs: Set<string>;
  before(async () => {
    tmp = tempDir('corl-fuzz-folders-');
    pristine = path.join(tmp.dir, 'pristine');
    fs.mkdirSync(pristine);
    writeComparison(pristine, {
      configs: [{ name: 'base' }, { name: 'co-rl' }],
      seeds: [0, 1],
      problems: 4,
      answers: (config, seed, step, agent, p) => [
        ((p + seed + agent) % 2 === 0) !== (config === 'co-rl' && step > 0),
        true,
      ],
    });
    const written = new Set(snapshot(pristine).keys());
    // The first report writes the reads ledger and the report, so that they too are there to damage.
    const first = await corlInProcess(['report', pristine], tmp.dir, 60_000);
    expect(first.stderr, 'the undamaged folder reports without a stack').to.not.match(STACK_LINE);
    files = [...snapshot(pristine).keys()].sort();
    outputs = new Set(files.filter((f) => !written.has(f) && !f.endsWith('.jsonl')));
  });
  after(() => {
    tmp.cleanup();
    process.stdout.write(summary(SUITE));
  });

  it('one file of a comparison folder damaged, then corl report and corl train --resume (60 cases)', async () => {
    let n = 0;
    const known = new Map<string, string>();
    const damaged = fc
      .constantFrom(...files)
      .chain((rel) => damagedText(fs.readFileSync(path.join(pristine, rel), 'utf8')).map((text) => ({ rel, text })));
    await fc.assert(
      fc.asyncProperty(damaged, fc.constantFrom('report', 'resume'), async ({ rel, text }, command) => {
        tick(SUITE);
        const dir = path.join(tmp.dir, `case-${n++}`);
        fs.cpSync(pristine, dir, { recursive: true });
        const target = path.join(dir, rel);
        if (text === 'folder') {
          fs.rmSync(target);
          fs.mkdirSync(target);
        } else fs.writeFileSync(target, text === 'empty' ? '' : text);
        const before = snapshot(dir);
        const run = path.join(dir, rel.split(path.sep).slice(0, 2).join(path.sep));
        const args =
          command === 'report'
            ? ['report', dir]
            : [
                'train',
                '--resume',
                fs.existsSync(path.join(run, 'state.json')) ? run : path.join(dir, 'base', 'seed-0'),
                '-q',
              ];
        const r = await corlInProcess(args, tmp.dir, 60_000);
        const what = `${rel} damaged to ${JSON.stringify(typeof text === 'string' ? text.slice(0, 300) : text.toString('hex'))}, corl ${args.join(' ')}`;
        const at = r.code === 70 ? crashSite(r.stderr) : undefined;
        if (at && process.env.CORL_FUZZ_COLLECT) {
          // CORL_FUZZ_COLLECT=1 lists every crash site instead of failing at the first (the folder must still be intact).
          const key = `${rel.replace(/seed-\d+/, 'seed-i').replace(/step-\d+/, 'step-N')} (${command}): ${r.stderr.split('\n')[0]!.slice(0, 140)} at ${at}`;
          if (!known.has(key)) known.set(key, what);
        } else {
          expect(r.stderr, `a stack for ${what}`).to.not.match(STACK_LINE).and.not.contain('internal error');
          expect([0, 1], `${what}: exit ${r.code}\n${r.stderr.slice(0, 600)}`).to.include(r.code);
          if (r.code === 1) expect(r.stderr, what).to.match(/CORL_ERR_[A-Z0-9_]+/);
        }
        const after = snapshot(dir);
        for (const [file, bytes] of before) {
          const now = after.get(file);
          expect(now, `${file} was removed (${what})`).to.not.equal(undefined);
          if (file.endsWith('.jsonl'))
            expect(now!.subarray(0, bytes.length).equals(bytes), `${file} lost lines (${what})`).to.equal(true);
          else if (!outputs.has(file)) expect(now!.equals(bytes), `${file} changed (${what})`).to.equal(true);
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      cases(SUITE, 60),
    );
    if (known.size)
      process.stdout.write(
        [...known].map(([k, v]) => `      open finding: ${k}\n        e.g. ${v.slice(0, 300)}`).join('\n') + '\n',
      );
  });
});
