// Claims of the docs that drift when code changes and a test can hold: the phases of one training
// step as the architecture page numbers them and core/trainer/step.ts comments them, and the files
// `npm run gen` writes as the contributing guide lists them.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generatedFiles, ROOT } from '../../scripts/generate';

const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** `a/{b,c}.md` → a/b.md, a/c.md (one brace group). */
function expand(spec: string): string[] {
  const m = /^(.*)\{([^}]*)\}(.*)$/.exec(spec);
  return m ? m[2]!.split(',').map((x) => `${m[1]}${x}${m[3]}`) : [spec];
}

describe('docs: claims that can drift are held by the code', () => {
  it("the step's phases: the architecture page's numbered list is what core/trainer/step.ts numbers", () => {
    const page = read('docs/architecture.md');
    const start = page.indexOf('## One training step');
    const section = page.slice(start, page.indexOf('\n## ', start));
    const phases = [...section.matchAll(/^(\d+)\. \*\*([^*]+?)\.\*\*/gm)].map((m) => Number(m[1]));
    expect(phases).to.deep.equal(Array.from({ length: phases.length }, (_, i) => i + 1));
    expect(phases.length).to.equal(9);
    // every phase number appears in step.ts's comments, in order ("// 3–5.", "7. …; 8. …")
    const code = read('core/trainer/step.ts');
    const body = code.slice(code.indexOf('export async function trainStep'));
    const seen: number[] = [];
    for (const c of body.matchAll(/\/\/ (.*)$/gm))
      for (const m of c[1]!.matchAll(/(?:^|[;(] ?|and )(\d+)(?:–(\d+))?\. /g)) {
        const from = Number(m[1]);
        const to = m[2] ? Number(m[2]) : from;
        for (let k = from; k <= to; k++) seen.push(k);
      }
    expect(seen).to.deep.equal(phases);
  });

  it('the walk of one /get_reward request names files that exist, in numbered steps', () => {
    const page = read('docs/architecture.md');
    const start = page.indexOf('## One /get_reward request');
    expect(start, 'the section exists').to.be.above(0);
    const section = page.slice(start, page.indexOf('\n## ', start));
    const steps = [...section.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1]));
    expect(steps).to.deep.equal([1, 2, 3, 4, 5]);
    const files = [...section.matchAll(/`((?:core|plugins)\/[\w./-]+\.ts)`/g)].map((m) => m[1]!);
    expect(files).to.include.members(['core/serve/server.ts', 'core/serve/routes/get-reward.ts', 'core/serve/barrier.ts']);
    for (const f of files) expect(fs.existsSync(path.join(ROOT, f)), f).to.equal(true);
  });

  it('the contributing guide lists every file npm run gen writes', async () => {
    const guide = read('docs/guide/contributing.md');
    const at = guide.indexOf('npm run gen          #');
    const lines = guide.slice(at).split('\n');
    const text = [lines[0], ...lines.slice(1).filter((l, i, all) => all.slice(0, i + 1).every((x) => /^ +#/.test(x)))].join(' ');
    const listed = [...text.matchAll(/[\w./-]*\{[^}]+\}[\w./-]*|[\w-]+\/[\w./-]+\.(?:json|md|py)/g)].flatMap((m) => expand(m[0]));
    expect([...listed].sort()).to.deep.equal(Object.keys(await generatedFiles()).sort());
  });
});
