// docs/architecture.md's glossary, checked where code can check it: every identifier it names
// exists (a member named as `Type.member` is a member of that declaration), the retired names of
// the words it settles do not come back, and the `step` members of the contracts say the one
// step convention.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../../scripts/generate';

/** Where the identifiers a glossary names live. */
const CODE_ROOTS = ['core', 'plugins', 'entry'];
/** Where retired names must not come back. */
const ALL_ROOTS = ['core', 'plugins', 'entry', 'bench', 'scripts', 'test', 'templates'];

const REQUIRED = [
  'agent',
  'cohort',
  'run context',
  'serve identity',
  'reads ground truth',
  'trained on labels',
  'trusted with references',
  'supervised',
  'label-free',
  'reference',
  'label',
  'answer key',
  'group',
  'round',
  'turn',
  'step',
  'look',
  'seed (index vs value)',
  'split',
  'lane',
  'plugin, manifest, definition',
];

interface Row {
  term: string;
  meaning: string;
  names: string[];
  line: number;
}

/** The rows of the glossary table: term, meaning, and the identifiers of its last column. */
export function glossaryRows(text: string): Row[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === '## Glossary');
  if (start < 0) return [];
  const rows: Row[] = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const m = /^\| ([^|]+) \| (.+) \| ([^|]+) \|$/.exec(lines[i]!);
    if (!m || m[1] === 'term' || m[1]!.startsWith('---')) continue;
    const names = [...m[3]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
    rows.push({ term: m[1]!.trim(), meaning: m[2]!.trim(), names, line: i + 1 });
  }
  return rows;
}

function files(roots: readonly string[], ext: RegExp): string[] {
  const out: string[] = [];
  for (const r of roots) {
    const dir = path.join(ROOT, r);
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir, { recursive: true }).map(String)) {
      const parts = f.split(path.sep);
      if (ext.test(f) && !f.endsWith('.d.ts') && !parts.includes('node_modules') && !parts.includes('dist'))
        out.push(path.join(dir, f));
    }
  }
  return out;
}

interface Declared {
  /** Member names of each declaration of this name (interfaces, classes, object literals, type literals). */
  members: Set<string>[];
}

/** Every top-level declaration of the code roots by name, with the members it declares. */
function declarations(): Map<string, Declared> {
  const out = new Map<string, Declared>();
  const add = (name: string, members: Set<string>) => {
    const d = out.get(name) ?? { members: [] };
    d.members.push(members);
    out.set(name, d);
  };
  const membersOf = (node: ts.Node | undefined): Set<string> => {
    const names = new Set<string>();
    const visit = (n: ts.Node): void => {
      if (
        (ts.isPropertySignature(n) ||
          ts.isPropertyDeclaration(n) ||
          ts.isMethodSignature(n) ||
          ts.isMethodDeclaration(n) ||
          ts.isPropertyAssignment(n) ||
          ts.isGetAccessor(n)) &&
        n.name &&
        (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name))
      )
        names.add(n.name.text);
      if (ts.isShorthandPropertyAssignment(n)) names.add(n.name.text);
      // members of this declaration only, not of nested named declarations
      if (!ts.isInterfaceDeclaration(n) || n === node) ts.forEachChild(n, visit);
    };
    if (node) visit(node);
    return names;
  };
  for (const file of files(CODE_ROOTS, /\.ts$/)) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const st of sf.statements) {
      if (ts.isInterfaceDeclaration(st) || ts.isClassDeclaration(st)) {
        const members = membersOf(st);
        // an interface's members include those of the interfaces it extends, named by the glossary as its own
        if (st.name) add(st.name.text, members);
      } else if (ts.isTypeAliasDeclaration(st) || ts.isFunctionDeclaration(st) || ts.isEnumDeclaration(st)) {
        if (st.name) add(st.name.text, membersOf(st));
      } else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations)
          if (ts.isIdentifier(d.name)) add(d.name.text, membersOf(d.initializer));
      }
    }
  }
  return out;
}

/**
 * The identifiers of TypeScript source, from its syntax tree: names of declarations, members,
 * references and property accesses; never a word of a comment, a JSDoc, a string or a template's text.
 */
export function identifiersOf(text: string, file = 'source.ts'): Set<string> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const seen = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n)) seen.add(n.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return seen;
}

/** The identifiers of every TypeScript file of `roots`, by file (see {@link identifiersOf}). */
function identifierTokens(roots: readonly string[], skip: (file: string) => boolean): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const file of files(roots, /\.ts$/)) {
    if (skip(file)) continue;
    out.set(path.relative(ROOT, file), identifiersOf(fs.readFileSync(file, 'utf8'), file));
  }
  return out;
}

/** The JSDoc text of each `name` member of the interfaces in `file`, by interface. */
function memberDocs(file: string, name: string): { owner: string; doc: string }[] {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { owner: string; doc: string }[] = [];
  for (const st of sf.statements) {
    if (!ts.isInterfaceDeclaration(st)) continue;
    for (const m of st.members) {
      if (m.name && ts.isIdentifier(m.name) && m.name.text === name) {
        const doc = ts
          .getJSDocCommentsAndTags(m)
          .map((d) => d.getText(sf))
          .join('\n');
        out.push({ owner: st.name.text, doc });
      }
    }
  }
  return out;
}

describe('docs/architecture.md glossary', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const rows = glossaryRows(text);

  it('defines each word of the house once, each with the code that carries it', () => {
    const terms = rows.map((r) => r.term);
    expect(new Set(terms).size, 'no term is defined twice').to.equal(terms.length);
    for (const t of REQUIRED) expect(terms, `the glossary defines "${t}"`).to.include(t);
    for (const r of rows) expect(r.names.length, `docs/architecture.md:${r.line} (${r.term}) names its code`).to.be.above(0);
  });

  it('names only identifiers and paths that exist (Type.member: a member of that declaration)', () => {
    const decl = declarations();
    // identifiers of the code, never a word of a comment or a string
    const words = new Set<string>();
    for (const seen of identifierTokens(CODE_ROOTS, () => false).values()) for (const w of seen) words.add(w);
    const problems: string[] = [];
    for (const r of rows) {
      for (const n of r.names) {
        const where = `docs/architecture.md:${r.line} (${r.term}) names \`${n}\``;
        if (n.includes('/')) {
          if (!fs.existsSync(path.join(ROOT, n))) problems.push(`${where}, a path that does not exist`);
        } else if (n.includes('.')) {
          const [owner, member, ...rest] = n.split('.');
          const d = decl.get(owner!);
          if (rest.length || !d) problems.push(`${where}: no declaration ${owner}`);
          else if (!d.members.some((m) => m.has(member!))) problems.push(`${where}: ${owner} has no member ${member}`);
        } else if (!/^[A-Za-z_$][\w$]*$/.test(n) || !words.has(n)) {
          problems.push(`${where}, which no source of ${CODE_ROOTS.join(', ')} declares or uses`);
        }
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('the retired names stay retired: no Cohort meaning the run context, no JournalCohort', () => {
    const self = path.join(ROOT, 'test', 'docs', 'glossary.test.ts');
    const tokens = identifierTokens(ALL_ROOTS, (f) => f === self || f.startsWith(path.join(ROOT, 'dist')));
    const retired = ['Cohort', 'buildCohort', 'JournalCohort'];
    const found: string[] = [];
    for (const [file, seen] of tokens) for (const r of retired) if (seen.has(r)) found.push(`${file}: ${r}`);
    expect(found, found.join('\n')).to.deep.equal([]);
    expect(fs.existsSync(path.join(ROOT, 'core/trainer/cohort.ts')), 'core/trainer/cohort.ts is gone').to.equal(false);
  });

  it('one meaning per identifier: the names that once meant two things are declared once', () => {
    // top-level declarations of the code roots (not comments, not re-exports): each of these names
    // is one thing; the other side was renamed (TrainLoopOptions, CompareRunOptions, GradedEvalRow,
    // buildRewardContext, manifestLabelUse)
    const where = new Map<string, string[]>();
    const exported = new Map<string, string[]>();
    const isExported = (st: ts.Statement) =>
      ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    for (const file of files([...CODE_ROOTS, 'bench', 'scripts', 'packages'], /\.ts$/)) {
      if (file.endsWith('.d.ts')) continue;
      const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      for (const st of sf.statements) {
        const names =
          (ts.isInterfaceDeclaration(st) || ts.isClassDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isFunctionDeclaration(st)) &&
          st.name
            ? [st.name.text]
            : ts.isVariableStatement(st)
              ? st.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []))
              : [];
        for (const n of names) where.set(n, [...(where.get(n) ?? []), path.relative(ROOT, file)]);
        if (isExported(st) && !path.relative(ROOT, file).startsWith('entry'))
          for (const n of names) exported.set(n, [...(exported.get(n) ?? []), path.relative(ROOT, file)]);
      }
    }
    const settled = {
      TrainOptions: 'core/api/train.ts',
      CompareOptions: 'core/api/compare.ts',
      EvalRow: 'core/trainer/evaluate.ts',
      rewardContext: 'core/testing/contexts.ts',
      labelUse: 'core/trainer/run-dir.ts',
      // the public one kept (corl/testing, corl/tensor), the internal renamed: exactEquivalencePlugin,
      // RunSchedule, ModelShard, normalizeKey, NoiseDesign, calibrateFact, factOutcomeOf
      exactEquivalence: 'core/testing/contexts.ts',
      Schedule: 'core/tensor/optim.ts',
      Shard: 'core/compare/shard.ts',
      mathKey: 'plugins/answers/math.ts',
      Design: 'core/report/design.ts',
      calibrate: 'core/compare/wall-time.ts',
      outcomeOf: 'core/stats/paired.ts',
    };
    for (const [name, file] of Object.entries(settled)) expect(where.get(name), name).to.deep.equal([file]);
    // every other exported name is declared once, save those whose copies mean one thing: a bench
    // module's `bench`, a plugin module's `register`, each CLI's `main`, the public facade over the
    // engine's `train` and `loadConfig`, and `evaluate` of corl (a config) and corl/tensor (a graph),
    // both public API
    const sameMeaning = new Set(['bench', 'register', 'main', 'train', 'loadConfig', 'evaluate']);
    const twice = [...exported]
      .filter(([n, fs]) => fs.length > 1 && !sameMeaning.has(n))
      .map(([n, fs]) => `${n}: ${fs.join(', ')}`);
    expect(twice, twice.join('\n')).to.deep.equal([]);
  });

  it('"supervised" is the union: the flag that means reads ground truth is readsGroundTruth', () => {
    const decl = declarations();
    for (const name of ['LoadedConfig', 'TrainResult', 'ServeRuntime']) {
      const d = decl.get(name);
      expect(d, name).to.not.equal(undefined);
      expect(
        d!.members.some((m) => m.has('readsGroundTruth')),
        `${name}.readsGroundTruth`,
      ).to.equal(true);
      expect(
        d!.members.some((m) => m.has('supervised')),
        `${name} has no supervised (it would mean reads ground truth)`,
      ).to.equal(false);
    }
    const row = rows.find((r) => r.term === 'supervised');
    expect(row?.meaning).to.contain('reads ground truth **or** trained on labels');
    // nor the SFT of `corl pretrain`
    const sft: string[] = [];
    for (const f of files([...CODE_ROOTS, 'docs/guide', 'docs/reference', 'schema'], /\.(ts|md|json)$/))
      if (/supervised (cross-entropy|pretraining|loss)/i.test(fs.readFileSync(f, 'utf8'))) sft.push(path.relative(ROOT, f));
    expect(sft, 'SFT is called SFT').to.deep.equal([]);
  });

  it('label visibility: five words, one per question, and reads ground truth is one word in every layer', () => {
    const terms = rows.map((r) => r.term);
    const label = ['reads ground truth', 'trained on labels', 'trusted with references', 'supervised', 'label-free'];
    for (const t of label) expect(terms, t).to.include(t);
    const section = text.slice(text.indexOf('## Glossary'), text.indexOf('| term | meaning | in code |'));
    for (const t of label) expect(section, `the glossary says why "${t}" remains`).to.contain(`*${t}*`);
    const decl = declarations();
    const member = (owner: string, name: string) => decl.get(owner)?.members.some((m) => m.has(name)) ?? false;
    // the manifest, the query a composite asks, the loaded config, a run's result and the service: one word
    for (const owner of ['RewardManifestFields', 'ManifestQueryContext', 'LoadedConfig', 'TrainResult', 'ServeRuntime'])
      expect(member(owner, 'readsGroundTruth'), `${owner}.readsGroundTruth`).to.equal(true);
    // each kind's own field: only a reward source says what it reads, only a trusted kind readsReferences
    expect(member('RewardManifestFields', 'readsReferences')).to.equal(false);
    expect(member('TrustManifestFields', 'readsGroundTruth')).to.equal(false);
    expect(member('ManifestCommon', 'readsGroundTruth') || member('ManifestCommon', 'readsReferences')).to.equal(false);
  });

  it('usesGroundTruth, the former name, lives only where the deprecated alias is read, documented and tested', () => {
    const self = path.join(ROOT, 'test', 'docs', 'glossary.test.ts');
    const tokens = identifierTokens(ALL_ROOTS, (f) => f === self || f.startsWith(path.join(ROOT, 'dist')));
    const alias = [
      'core/contracts/plugin.ts', // the deprecated field and query, documented
      'core/registry/instantiate.ts', // the query's alias in every context and manifest query
      'core/testing/leaks.ts', // the kit asks a manifest under either name
      'test/core/registry/manifest-kinds.test.ts', // the alias's tests
      'test/core/registry/registry.test.ts', // query contexts the tests build
    ];
    const found = [...tokens].filter(([file, seen]) => seen.has('usesGroundTruth') && !alias.includes(file)).map(([f]) => f);
    expect(found, found.join('\n')).to.deep.equal([]);
    // prose names it only as the former name
    const prose: string[] = [];
    for (const f of [path.join(ROOT, 'README.md'), ...files(['docs/guide', 'docs/algorithms', 'templates'], /\.md$/), path.join(ROOT, 'docs/architecture.md')])
      fs.readFileSync(f, 'utf8')
        .split('\n')
        .forEach((l, i) => {
          if (l.includes('usesGroundTruth') && !/former name/.test(l)) prose.push(`${path.relative(ROOT, f)}:${i + 1}`);
        });
    expect(prose, prose.join('\n')).to.deep.equal([]);
  });

  it('reads identifiers, not words of comments, JSDoc, strings or templates (worked example)', () => {
    const seen = identifiersOf(
      [
        '// inComment',
        '/** inJsDoc {@link alsoInJsDoc} */',
        "const a = 'inString';",
        'const b = `inTemplate ${inTemplateCode} tail inTemplateTail`;',
        'interface Shape { member: number }',
        'obj.accessed(arg);',
      ].join('\n'),
    );
    for (const w of ['a', 'b', 'inTemplateCode', 'Shape', 'member', 'obj', 'accessed', 'arg']) expect(seen.has(w), w).to.equal(true);
    for (const w of ['inComment', 'inJsDoc', 'alsoInJsDoc', 'inString', 'inTemplate', 'inTemplateTail', 'tail'])
      expect(seen.has(w), w).to.equal(false);
  });

  it('every step of the contracts and the records says the one convention: updates completed', () => {
    const contracts = files(['core/contracts'], /\.ts$/);
    const docs = contracts.flatMap((f) => memberDocs(f, 'step').map((d) => ({ ...d, file: path.relative(ROOT, f) })));
    expect(docs.map((d) => d.owner)).to.include.members([
      'RewardContext',
      'UpdateBatch',
      'PretrainBatch',
      'MetricsRecord',
      'JudgeRequest',
      'DiscussionRecord',
    ]);
    for (const d of docs) {
      expect(d.doc, `${d.file} ${d.owner}.step`).to.match(/updates completed|updates? .*completed/i);
      expect(d.doc, `${d.file} ${d.owner}.step`).to.not.match(/zero-based|0-based|steps done/i);
    }
    for (const page of ['docs/reference/metrics.md', 'docs/reference/run-directory.md', 'docs/reference/contracts.md']) {
      const body = fs.readFileSync(path.join(ROOT, page), 'utf8');
      expect(body, page).to.not.match(/zero-based (training )?step|steps done/i);
    }
  });

  it('reads the table the way it is written (worked example)', () => {
    const rowsOf = glossaryRows(
      ['## Glossary', '', '| term | meaning | in code |', '| --- | --- | --- |', '| a | b `x` c | `A.b`, `c/d.ts` |', '## Next', '| z | y | `w` |'].join('\n'),
    );
    expect(rowsOf).to.deep.equal([{ term: 'a', meaning: 'b `x` c', names: ['A.b', 'c/d.ts'], line: 5 }]);
  });
});
