// The plugin guide's section 4, read literally: its edits are exact replacements (each "find"
// block occurs once in the file it names, and is replaced by the "replace" block after it), made
// to the package the guide's section 1 generates (create-corl-plugin lab-agree --kind reward
// --name lab:agree). The edited package must compile, its new test must pass with the guide's
// hand-computed numbers, and the reward contract suite must still pass.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scaffold } from '../../core/scaffold/scaffold';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';

/** The guide's edits, in order: `<!-- corl:edit <file> find|replace|before-last-line -->` over a code block. */
export function guideEdits(text: string): { file: string; op: string; code: string; line: number }[] {
  const out: { file: string; op: string; code: string; line: number }[] = [];
  const re = /<!-- corl:edit (\S+) (find|replace|before-last-line) -->\s*\n```\w*\n([\s\S]*?)\n```/g;
  for (const m of text.matchAll(re)) out.push({ file: m[1]!, op: m[2]!, code: m[3]!, line: text.slice(0, m.index).split('\n').length });
  return out;
}

/** Apply the edits to the files under `dir`; every "find" must occur exactly once. */
export function applyEdits(dir: string, edits: ReturnType<typeof guideEdits>): void {
  for (let i = 0; i < edits.length; i++) {
    const e = edits[i]!;
    const file = path.join(dir, e.file);
    const text = fs.readFileSync(file, 'utf8');
    if (e.op === 'find') {
      const next = edits[i + 1];
      expect(next?.op, `line ${e.line}: a find is followed by its replace`).to.equal('replace');
      expect(next!.file).to.equal(e.file);
      expect(text.split(e.code).length - 1, `line ${e.line}: the block occurs exactly once in ${e.file}`).to.equal(1);
      fs.writeFileSync(file, text.replace(e.code, () => next!.code));
      i++;
    } else if (e.op === 'before-last-line') {
      const lines = text.replace(/\n+$/, '').split('\n');
      const indent = /^\s*/.exec(lines[lines.length - 2] ?? '')![0];
      const block = e.code.split('\n').map((l) => (l ? `${indent}${l}` : l));
      fs.writeFileSync(file, [...lines.slice(0, -1), '', ...block, lines[lines.length - 1], ''].join('\n'));
    } else expect.fail(`line ${e.line}: a replace without its find`);
  }
}

function run(cwd: string, args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  return { code: r.status ?? -1, out: `${r.stdout}\n${r.stderr}` };
}

describe("docs: the reward plugin guide's section 4 edits, applied literally", function () {
  this.timeout(300000);

  it('compile, pass the guide\'s test with its numbers, and keep the contract suite passing', () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/guide/writing-a-reward-plugin.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## 4. Make it yours'), guide.indexOf('## 5.'));
    const edits = guideEdits(section);
    expect(edits.map((e) => `${e.file} ${e.op}`)).to.deep.equal([
      'src/agreement.ts find',
      'src/agreement.ts replace',
      'src/agreement.ts find',
      'src/agreement.ts replace',
      'test/agreement.test.ts before-last-line',
    ]);
    const tmp = tempDir('corl-guide-');
    try {
      const dir = path.join(tmp.dir, 'lab-agree');
      scaffold({ dir, kind: 'reward', name: 'lab:agree', packageName: 'lab-agree', corl: { spec: 'file:' + ROOT }, toolchain: 'registry' });
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      for (const dep of Object.keys(pkg.devDependencies)) {
        const target = dep === 'corl' ? ROOT : path.dirname(require.resolve(`${dep}/package.json`, { paths: [ROOT] }));
        fs.mkdirSync(path.dirname(path.join(dir, 'node_modules', dep)), { recursive: true });
        fs.symlinkSync(target, path.join(dir, 'node_modules', dep), 'dir');
      }
      applyEdits(dir, edits);
      const build = run(dir, [require.resolve('typescript/bin/tsc', { paths: [ROOT] }), '-p', '.']);
      expect(build.code, build.out).to.equal(0);
      const mocha = path.join(dir, 'node_modules/mocha/bin/mocha.js');
      const mine = run(dir, [mocha, '--grep', 'subtracts the length penalty']);
      expect(mine.code, mine.out).to.equal(0);
      expect(mine.out).to.match(/1 passing/);
      const contract = run(dir, [mocha, '--grep', 'satisfies the reward contract']);
      expect(contract.code, contract.out).to.equal(0);
      expect(contract.out).to.match(/\d+ passing/).and.not.match(/failing/);
    } finally {
      tmp.cleanup();
    }
  });

  it("the helpers it uses are in the generated reference: pluralityVote's threshold and every field of its result", () => {
    const ref = fs.readFileSync(path.join(ROOT, 'docs/reference/contracts.md'), 'utf8');
    const section = ref.slice(ref.indexOf('## core/voting/plurality.ts'));
    expect(section).to.contain('### pluralityVote').and.contain('### matches').and.contain('### VoteOutcome');
    expect(section).to.match(/`threshold` is the smallest winning share that makes a label/);
    for (const field of ['label', 'share', 'voters', 'total', 'clusters'])
      expect(section.includes(`- \`readonly ${field}: `), field).to.equal(true);
  });
});
