// The documentation is checked like code: every config a guide marks `<!-- corl:validate ... -->`
// passes corl's own validation, the README's plugin example compiles against corl's types and passes
// the reward contract suite, and every relative link (with its #anchor) points at something real.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import ts from 'typescript';
import { loadConfigValue } from '../../core/config/load';
import type { PluginDefinition } from '../../core/contracts/plugin';
import { createPlugin, rewardChecks, rewardContext } from '../../core/testing';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';

function markdownFiles(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f));
  return ['README.md', ...docs.sort()];
}

/** Code blocks preceded by an HTML comment marker `<!-- corl:<kind> <args> -->`. */
function markedBlocks(text: string, kind: string): { args: string; code: string; line: number }[] {
  const out: { args: string; code: string; line: number }[] = [];
  const re = new RegExp(`<!-- corl:${kind}\\s*([^>]*?)\\s*-->\\s*\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  for (const m of text.matchAll(re)) out.push({ args: m[1]!, code: m[2]!, line: text.slice(0, m.index).split('\n').length });
  return out;
}

/** GitHub's heading anchors of a markdown text. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]!.trim().toLowerCase().replace(/[`*_]/g, '').replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('docs (guides and README checked against the code)', function () {
  this.timeout(120000);

  it('every config marked corl:validate in the guides is a valid corl config', async () => {
    let checked = 0;
    for (const rel of markdownFiles()) {
      const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
      const named = new Map<string, Record<string, unknown>>();
      for (const b of markedBlocks(text, 'validate')) {
        const value = parseJsonc(b.code) as Record<string, unknown>;
        const name = /name=([\w-]+)/.exec(b.args)?.[1];
        const base = /base=([\w-]+)/.exec(b.args)?.[1];
        if (base) expect(named.has(base), `${rel}:${b.line}: base "${base}" is defined above`).to.equal(true);
        const config = base ? { ...named.get(base)!, ...value } : value;
        try {
          await loadConfigValue(config, { baseDir: path.join(ROOT, 'configs') });
        } catch (e) {
          expect.fail(`${rel}:${b.line}: ${(e as Error).message}`);
        }
        if (name) named.set(name, config);
        checked++;
      }
    }
    expect(checked, 'the baselines guide validates its configs').to.be.greaterThanOrEqual(6);
  });

  it('the README\'s reward plugin compiles against corl\'s types and passes the reward contract suite', async () => {
    const [block] = markedBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), 'example reward');
    expect(block, 'README has a <!-- corl:example reward --> block').to.not.equal(undefined);
    expect(block!.code.split('\n').length, 'about 20 lines').to.be.at.most(22);
    const tmp = tempDir('corl-readme-');
    try {
      fs.mkdirSync(path.join(tmp.dir, 'node_modules'));
      fs.symlinkSync(ROOT, path.join(tmp.dir, 'node_modules/corl'), 'dir');
      const src = path.join(tmp.dir, 'example.ts');
      fs.writeFileSync(src, block!.code);
      const program = ts.createProgram([src], {
        target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.Node20, moduleResolution: ts.ModuleResolutionKind.Node16,
        strict: true, skipLibCheck: true, types: [], outDir: tmp.dir, declaration: true,
      });
      const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
      expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).to.deep.equal([]);
      const mod = require(path.join(tmp.dir, 'example.js')) as { shortVote: PluginDefinition<'reward'>; register: unknown };
      for (const check of rewardChecks(mod.shortVote, { register: mod.register as never, optionSets: [{ penalty: 0 }] })) {
        try {
          await check.run();
        } catch (e) {
          expect.fail(`${check.title}: ${(e as Error).message}`);
        }
      }
      const reward = await createPlugin(mod.shortVote, { penalty: 0.01 });
      const r = await reward.score(rewardContext({ keys: ['4', '5', null], supervisors: [['4', '4', '5']], texts: ['\\boxed{4}', '\\boxed{5}', 'no idea'] }));
      expect(r.rewards).to.deep.equal([1 - 0.01 * 9, -0.01 * 9, -0.01 * 7]);
      expect(r.label).to.equal('4');
    } finally {
      tmp.cleanup();
    }
  });

  it('every file a guide quotes whole (<!-- corl:python-file path -->) is quoted as it is', () => {
    let checked = 0;
    for (const rel of markdownFiles()) {
      const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
      for (const b of markedBlocks(text, 'python-file')) {
        const file = path.join(ROOT, b.args);
        expect(fs.existsSync(file), `${rel}:${b.line}: ${b.args} exists`).to.equal(true);
        expect(b.code + '\n', `${rel}:${b.line}: the block is ${b.args} as it is`).to.equal(fs.readFileSync(file, 'utf8'));
        checked++;
      }
    }
    expect(checked, 'the Python rewards guide quotes templates/python-reward/reward.py').to.be.greaterThanOrEqual(1);
  });

  it('every relative link in README.md and docs/ points at an existing file and heading', () => {
    const broken: string[] = [];
    for (const rel of markdownFiles()) {
      const text = fs.readFileSync(path.join(ROOT, rel), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.resolve(path.dirname(path.join(ROOT, rel)), file) : path.join(ROOT, rel);
        if (!fs.existsSync(resolved)) { broken.push(`${rel}: ${target} (no file)`); continue; }
        if (anchor && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${rel}: ${target} (no heading)`);
      }
    }
    expect(broken).to.deep.equal([]);
  });
});

describe('docs: the command line is written the way a checkout runs it', () => {
  it('no command line in a code block starts with a bare `corl <command>` (write `npx corl`)', () => {
    const files = markdownFiles().filter((f) => !f.startsWith(path.join('docs', 'results')));
    const bare: string[] = [];
    for (const f of files) {
      // ```text blocks quote `--help` verbatim (docs/reference/cli.md); instructions are sh blocks.
      let fence = false;
      let quoted = false;
      fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').forEach((line, i) => {
        if (line.trimStart().startsWith('```')) {
          fence = !fence;
          quoted = fence && line.trimStart().startsWith('```text');
        } else if (fence && !quoted && /^\s*(\$ )?corl (train|pretrain|eval|agreement|validate|list|compare|report|answers|serve|rephrase|--help)\b/.test(line)) bare.push(`${f}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(bare, bare.join('\n')).to.deep.equal([]);
  });
});
