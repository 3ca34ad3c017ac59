// docs/architecture.md's folder table is the import rule book: every folder it names exists, every
// source file belongs to a folder it names, and every relative import goes where the table allows.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../../scripts/generate';

/** The source roots compiled by tsconfig.json. */
const ROOTS = ['core', 'plugins', 'entry', 'bench', 'scripts', 'test'];

interface Rule {
  folder: string;
  /** Folders this one may import, or 'anything'. */
  allowed: Set<string> | 'anything';
  line: number;
}

/** Parse one "May import" cell: `a`, `b`; `—`; `anything`; "every `core/*` folder [except `x` and `y`]". */
export function parseAllowed(cell: string, folders: readonly string[]): Set<string> | 'anything' {
  const text = cell.trim();
  if (text === 'anything') return 'anything';
  const out = new Set<string>();
  if (text === '—') return out;
  for (const part of text.split(/,\s*/)) {
    const every = /^every `([^`]+)\/\*` folder(?: except (.*))?$/.exec(part.trim());
    if (every) {
      const except = new Set([...(every[2] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
      for (const f of folders) if (f.startsWith(every[1]! + '/') && !except.has(f)) out.add(f);
      continue;
    }
    const named = /^`([^`]+)`$/.exec(part.trim());
    if (!named) throw new Error(`architecture.md: cannot read the "May import" entry ${JSON.stringify(part)}`);
    out.add(named[1]!);
  }
  return out;
}

function rules(): Rule[] {
  const text = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('## What each folder owns'));
  expect(start, 'docs/architecture.md has the section "What each folder owns and may import"').to.be.greaterThan(-1);
  const rows: { folder: string; cell: string; line: number }[] = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const m = /^\| `([^`]+)` \|.*\| ([^|]+) \|$/.exec(lines[i]!);
    if (m) rows.push({ folder: m[1]!, cell: m[2]!, line: i + 1 });
  }
  const folders = rows.map((r) => r.folder);
  return rows.map((r) => ({ folder: r.folder, allowed: parseAllowed(r.cell, folders), line: r.line }));
}

/** The folder of the table a repository path (without extension) belongs to: the longest that contains it. */
function folderOf(p: string, folders: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const f of folders) if ((p === f || p.startsWith(f + '/')) && (!best || f.length > best.length)) best = f;
  return best;
}

function sourceFiles(): string[] {
  const out: string[] = [];
  for (const r of ROOTS) {
    for (const f of fs.readdirSync(path.join(ROOT, r), { recursive: true }).map(String)) {
      if (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.split(path.sep).includes('fixtures')) out.push(path.posix.join(r, f.split(path.sep).join('/')));
    }
  }
  return out.sort();
}

/** The relative imports of a TypeScript file (static, type-only, dynamic and `require`). */
function relativeImports(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName).filter((s) => s.startsWith('.'));
}

describe('docs/architecture.md import rules', () => {
  const table = rules();
  const folders = table.map((r) => r.folder);
  const byFolder = new Map(table.map((r) => [r.folder, r]));

  it('names every folder once, and each still exists', () => {
    expect(new Set(folders).size, 'no folder is named twice').to.equal(folders.length);
    for (const r of table) {
      const p = path.join(ROOT, r.folder);
      expect(fs.existsSync(p) || fs.existsSync(p + '.ts'), `docs/architecture.md:${r.line} names ${r.folder}, which no longer exists`).to.equal(true);
    }
  });

  it('names only folders in its "May import" cells', () => {
    for (const r of table) {
      if (r.allowed === 'anything') continue;
      for (const a of r.allowed) expect(byFolder.has(a), `docs/architecture.md:${r.line}: ${r.folder} may import ${a}, which the table does not name`).to.equal(true);
    }
  });

  it('every source file belongs to a named folder and imports only what its folder may', () => {
    const problems: string[] = [];
    for (const file of sourceFiles()) {
      const own = folderOf(file.replace(/\.ts$/, ''), folders);
      if (!own) {
        problems.push(`${file}: in no folder of docs/architecture.md`);
        continue;
      }
      const rule = byFolder.get(own)!;
      if (rule.allowed === 'anything') continue;
      for (const spec of relativeImports(file)) {
        if (spec.endsWith('.json')) continue; // data (package.json, schemas), not code
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.(js|json)$/, '');
        const to = folderOf(target, folders);
        if (to === own) continue;
        if (!to || !rule.allowed.has(to)) problems.push(`${file} imports '${spec}' (${to ?? 'outside every folder'}), which ${own} may not import`);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('reads the table the way it is written (worked example)', () => {
    const fs0 = ['core/a', 'core/b', 'core/c', 'plugins/x'];
    expect([...parseAllowed('every `core/*` folder except `core/b` and `core/c`', fs0) as Set<string>]).to.deep.equal(['core/a']);
    expect([...parseAllowed('every `plugins/*` folder, `core/b`', fs0) as Set<string>]).to.deep.equal(['plugins/x', 'core/b']);
    expect(parseAllowed('anything', fs0)).to.equal('anything');
    expect((parseAllowed('—', fs0) as Set<string>).size).to.equal(0);
    expect(() => parseAllowed('core/a', fs0)).to.throw(/cannot read/);
  });
});
