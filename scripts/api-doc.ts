// docs/reference/api.md, the snapshot of corl's public surface: every name each package entry point
// exports, with its declaration as the published .d.ts files give it (comments removed). It is read
// from the compiled declarations (dist/entry/*.d.ts), i.e. what a user's compiler sees, so a name
// added, removed or retyped anywhere behind an entry point changes this page, and the generated-files
// test fails until `npm run gen` rewrites it and the change is committed on purpose.
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** The package's entry points: subpath → the compiled module it exports (package.json `exports`). */
export function entryPoints(root: string): { subpath: string; file: string }[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string; default: string }>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target !== 'string')
    .map(([subpath, target]) => ({
      subpath: subpath === '.' ? 'corl' : `corl/${subpath.slice(2)}`,
      file: path.join(root, (target as { types?: string; default: string }).types!),
    }));
}

/** One exported name and its declaration text. */
export interface ApiEntry {
  readonly name: string;
  readonly kind: string;
  readonly text: string;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

function kindOf(d: ts.Declaration): string {
  if (ts.isInterfaceDeclaration(d)) return 'interface';
  if (ts.isTypeAliasDeclaration(d)) return 'type';
  if (ts.isClassDeclaration(d)) return 'class';
  if (ts.isFunctionDeclaration(d)) return 'function';
  if (ts.isVariableDeclaration(d)) return 'const';
  if (ts.isEnumDeclaration(d)) return 'enum';
  if (ts.isModuleDeclaration(d) || ts.isSourceFile(d)) return 'namespace';
  return ts.SyntaxKind[d.kind];
}

/** The declaration as source text without comments, `export`/`declare` and indentation differences. */
function declarationText(d: ts.Declaration, root: string): string {
  const sf = d.getSourceFile();
  if (!path.resolve(sf.fileName).startsWith(path.join(root, 'dist') + path.sep)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(sf.fileName);
    return `(declared by ${m ? m[1] : path.basename(sf.fileName)})`;
  }
  const node: ts.Node = ts.isVariableDeclaration(d) ? d.parent.parent : d;
  return printer
    .printNode(ts.EmitHint.Unspecified, node, sf)
    .replace(/^(export )?(declare )?/gm, (m, e, dec) => (e || dec ? '' : m))
    .trim();
}

/** The exports of one module symbol, sorted by name; namespaces list their own exports inside. */
function exportsOf(checker: ts.TypeChecker, moduleSymbol: ts.Symbol, root: string): ApiEntry[] {
  const out: ApiEntry[] = [];
  for (const s of checker.getExportsOfModule(moduleSymbol)) {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const decls = target.declarations ?? [];
    if (decls.length === 0) continue;
    const kind = kindOf(decls[0]!);
    if (kind === 'namespace') {
      const inner = exportsOf(checker, target, root);
      out.push({
        name: s.name,
        kind,
        text: inner.map((e) => e.text).join('\n\n'),
      });
      continue;
    }
    out.push({ name: s.name, kind, text: decls.map((d) => declarationText(d, root)).join('\n') });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Every entry point's exports, read from the compiled declarations under `root`. */
export function publicApi(root: string): { subpath: string; entries: ApiEntry[] }[] {
  const points = entryPoints(root);
  for (const p of points)
    if (!fs.existsSync(p.file)) throw new Error(`expected ${p.file} (build first: npm run build), got none`);
  const program = ts.createProgram(
    points.map((p) => p.file),
    {
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.Node20,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      types: [],
    },
  );
  const checker = program.getTypeChecker();
  return points.map((p) => {
    const sf = program.getSourceFile(p.file)!;
    const symbol = checker.getSymbolAtLocation(sf);
    return { subpath: p.subpath, entries: symbol ? exportsOf(checker, symbol, path.resolve(root)) : [] };
  });
}

/** The page. */
export function apiReference(root: string): string {
  const api = publicApi(root);
  const out = [
    '# Public API',
    '',
    '<!-- Generated from the compiled declarations dist/entry/*.d.ts by `npm run gen`; do not edit by hand. -->',
    '',
    "Every name corl's package exports, by entry point, with its declaration as a user's compiler sees it",
    '(comments removed; the guides and the JSDoc explain them). This page is also the snapshot of the',
    "public surface: `npm test` fails when it differs from the build, so a change to the package's API",
    'is made on purpose: change the code, run `npm run gen`, and commit this page with the change.',
    '',
    '| entry point | for | names |',
    '| --- | --- | --- |',
    ...api.map((e) => `| \`${e.subpath}\` | ${PURPOSE[e.subpath] ?? ''} | ${e.entries.length} |`),
    '',
  ];
  for (const e of api) {
    out.push(`## ${e.subpath}`, '', e.entries.map((x) => `\`${x.name}\``).join(', '), '');
    for (const x of e.entries) out.push(`### ${e.subpath}: ${x.name} (${x.kind})`, '', '```ts', x.text, '```', '');
  }
  return out.join('\n');
}

/** What each entry point is for, in the table at the top. */
const PURPOSE: Readonly<Record<string, string>> = {
  corl: 'writing plugins (definitions, contracts, helpers) and running experiments from code (`loadConfig`, `train`, `resume`, `compare`, `evaluate`, `pretrain`)',
  'corl/testing': "the contract suites and test helpers a plugin's tests use",
  'corl/engine':
    "the engine's internals: plugin registry and run containers, container tokens, atomic writes, the error catalog",
  'corl/tensor': 'the tensor engine: graph IR, autodiff, optimizer graphs, ONNX emit and read, onnxruntime sessions',
};
