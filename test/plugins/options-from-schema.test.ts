// Guard of the house rule "a plugin's options type is derived from its schema": every definePlugin
// call in plugins/ and templates/ takes options typed by FromSchema (json-schema-to-ts), never by an
// interface or type literal written by hand beside the schema, where the two could drift apart.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../../scripts/generate';

/** Type operators that keep a derived type derived (`Partial<FromSchema<…>>`). */
const WRAPPERS = new Set(['Partial', 'Readonly', 'Required', 'Omit', 'Pick', 'NonNullable']);
const DERIVERS = new Set(['FromSchema', 'FromExtendedSchema']);

/** One plugin's options type as found: derived, or where the hand-written declaration is. */
export interface OptionsTypeFinding {
  readonly file: string;
  readonly line: number;
  /** The type as written on `create`'s options parameter (or the `@inject(PLUGIN_OPTIONS)` one). */
  readonly type: string;
  /** Undefined when derived from a schema; else what was found instead. */
  readonly problem?: string;
}

type Read = (file: string) => ts.SourceFile | undefined;

function lineOf(sf: ts.SourceFile, node: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

/** The file a relative module specifier names (`./options` → options.ts or options/index.ts). */
function moduleFile(from: string, spec: string, read: Read): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => read(f) !== undefined);
}

/** Why the type `name` as declared in (or imported into) `file` is not derived; undefined when it is. */
function namedProblem(file: string, name: string, read: Read, seen: Set<string>): string | undefined {
  const key = `${file}#${name}`;
  if (seen.has(key)) return undefined;
  seen.add(key);
  const sf = read(file)!;
  for (const st of sf.statements) {
    if (ts.isTypeAliasDeclaration(st) && st.name.text === name) return typeProblem(sf, st.type, read, seen);
    if (ts.isInterfaceDeclaration(st) && st.name.text === name)
      return `an interface written by hand (${path.relative(ROOT, file)}:${lineOf(sf, st)})`;
    if (ts.isClassDeclaration(st) && st.name?.text === name)
      return `a class (${path.relative(ROOT, file)}:${lineOf(sf, st)})`;
    const imported = ts.isImportDeclaration(st) ? st.importClause?.namedBindings : undefined;
    const exported = ts.isExportDeclaration(st) ? st.exportClause : undefined;
    const bindings =
      imported && ts.isNamedImports(imported)
        ? imported
        : exported && ts.isNamedExports(exported)
          ? exported
          : undefined;
    const spec = (st as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier;
    if (!bindings || !spec || !ts.isStringLiteral(spec)) continue;
    for (const el of bindings.elements) {
      if (el.name.text !== name) continue;
      const target = moduleFile(file, spec.text, read);
      if (!target) return `imported from "${spec.text}", which this check cannot follow`;
      return namedProblem(target, (el.propertyName ?? el.name).text, read, seen);
    }
  }
  return `not declared in ${path.relative(ROOT, file)}`;
}

function typeProblem(sf: ts.SourceFile, node: ts.TypeNode, read: Read, seen: Set<string>): string | undefined {
  if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText(sf);
    if (DERIVERS.has(name)) return undefined;
    if (WRAPPERS.has(name) && node.typeArguments?.[0]) return typeProblem(sf, node.typeArguments[0], read, seen);
    return namedProblem(sf.fileName, name, read, seen);
  }
  if (ts.isIndexedAccessTypeNode(node)) return typeProblem(sf, node.objectType, read, seen);
  if (ts.isParenthesizedTypeNode(node)) return typeProblem(sf, node.type, read, seen);
  if (ts.isTypeLiteralNode(node))
    return `a type literal written by hand (${path.relative(ROOT, sf.fileName)}:${lineOf(sf, node)})`;
  return `\`${node.getText(sf)}\`, not a type derived from a schema`;
}

/**
 * The options parameter's type node of a definePlugin argument's `create` (or of the class `fromClass`
 * builds); 'none' for a `create()` that takes no parameter, so reads no options.
 */
function optionsTypeNode(sf: ts.SourceFile, def: ts.ObjectLiteralExpression): ts.TypeNode | 'none' | undefined {
  const create = def.properties.find((p) => p.name?.getText(sf) === 'create');
  if (!create) return undefined;
  const typeOf = (params: ts.NodeArray<ts.ParameterDeclaration>): ts.TypeNode | 'none' | undefined =>
    params.length === 0 ? 'none' : params[0]!.type;
  if (ts.isMethodDeclaration(create)) return typeOf(create.parameters);
  if (!ts.isPropertyAssignment(create)) return undefined;
  const init = create.initializer;
  if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return typeOf(init.parameters);
  if (ts.isCallExpression(init) && init.expression.getText(sf) === 'fromClass' && init.arguments[0]) {
    const cls = sf.statements.find(
      (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === init.arguments[0]!.getText(sf),
    );
    const ctor = cls?.members.find(ts.isConstructorDeclaration);
    const param = ctor?.parameters.find((p) =>
      ts.getDecorators(p)?.some((d) => /^inject\(\s*PLUGIN_OPTIONS\s*\)$/.test(d.expression.getText(sf))),
    );
    return param?.type;
  }
  return undefined;
}

/** Every definePlugin call in `files` and how its options are typed. */
export function findOptionsTypes(files: readonly string[], read: Read): OptionsTypeFinding[] {
  const out: OptionsTypeFinding[] = [];
  for (const file of files) {
    const sf = read(file);
    if (!sf) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.getText(sf) === 'definePlugin') {
        const def = node.arguments[0];
        const type = def && ts.isObjectLiteralExpression(def) ? optionsTypeNode(sf, def) : undefined;
        const where = { file: path.relative(ROOT, file), line: lineOf(sf, node) };
        if (type === 'none') out.push({ ...where, type: '(no options read)' });
        else if (type) out.push({ ...where, type: type.getText(sf), problem: typeProblem(sf, type, read, new Set()) });
        else out.push({ ...where, type: '(untyped)', problem: "no type on create's options parameter" });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

function sourceReader(overrides: Record<string, string> = {}): Read {
  const cache = new Map<string, ts.SourceFile | undefined>();
  return (file) => {
    if (!cache.has(file)) {
      const text = overrides[file] ?? (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined);
      cache.set(file, text === undefined ? undefined : ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
    }
    return cache.get(file);
  };
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

describe('plugin options types are derived from their schemas (FromSchema), never declared by hand', () => {
  const templates = fs.readdirSync(path.join(ROOT, 'templates')).map((k) => path.join(ROOT, 'templates', k, 'src'));
  const files = [path.join(ROOT, 'plugins'), ...templates].flatMap(tsFiles);
  const findings = findOptionsTypes(files, sourceReader());

  it('finds every built-in plugin and every template', () => {
    const defined = files.reduce(
      (n, f) => n + (fs.readFileSync(f, 'utf8').match(/\bdefinePlugin\(\{/g) ?? []).length,
      0,
    );
    expect(findings.length).to.equal(defined);
    expect(findings.length).to.be.greaterThan(30);
    // A template whose plugin is made by definePythonReward has no options type of its own (its
    // options are corl:python's runtime options, derived in plugins/rewards/python/define.ts).
    const python = (t: string): boolean =>
      tsFiles(t).some((f) => /\bdefinePythonReward\(\{/.test(fs.readFileSync(f, 'utf8')));
    for (const t of templates.filter((x) => !python(x)))
      expect(
        findings.some((f) => f.file.startsWith(path.relative(ROOT, t))),
        t,
      ).to.equal(true);
    expect(templates.filter(python).map((t) => path.basename(path.dirname(t)))).to.deep.equal(['python-reward']);
  });

  it('no plugin in plugins/ or templates/ types its options by hand', () => {
    const bad = findings
      .filter((f) => f.problem !== undefined)
      .map((f) => `${f.file}:${f.line}: ${f.type} is ${f.problem}`);
    expect(
      bad,
      'derive it: `type XOptions = FromSchema<typeof X_OPTIONS_SCHEMA>` (docs/guide/contributing.md)',
    ).to.deep.equal([]);
  });

  describe('the check itself', () => {
    const file = path.join(ROOT, 'plugins/zz/example.ts');
    const check = (text: string, more: Record<string, string> = {}): (string | undefined)[] =>
      findOptionsTypes([file], sourceReader({ [file]: text, ...more })).map((f) => f.problem);
    const schema =
      "const S = { type: 'object', properties: { n: { type: 'integer', default: 1 } }, additionalProperties: false } as const;\n";

    it('accepts FromSchema, through aliases, Partial, indexed access and a relative import', () => {
      expect(
        check(
          `${schema}type O = FromSchema<typeof S>;\ndefinePlugin({ manifest: { options: S }, create(o: Partial<O>) { return o; } });`,
        ),
      ).to.deep.equal([undefined]);
      expect(
        check(
          `${schema}type A = FromSchema<typeof S>; type O = A['n'];\ndefinePlugin({ manifest: {}, create: (o: O) => o });`,
        ),
      ).to.deep.equal([undefined]);
      const options = path.join(ROOT, 'plugins/zz/options.ts');
      expect(
        check("import { type O } from './options';\ndefinePlugin({ manifest: {}, create(o: O) { return o; } });", {
          [options]: `${schema}export type O = FromSchema<typeof S>;`,
        }),
      ).to.deep.equal([undefined]);
    });

    it("refuses an interface, a type literal or an untyped create, and a class-based plugin's hand-written options", () => {
      const [iface] = check(
        `${schema}interface O { n: number }\ndefinePlugin({ manifest: { options: S }, create(o: O) { return o; } });`,
      );
      expect(iface).to.match(/^an interface written by hand \(plugins\/zz\/example\.ts:2\)$/);
      expect(
        check(`${schema}type O = { n: number };\ndefinePlugin({ manifest: {}, create(o: O) { return o; } });`)[0],
      ).to.match(/^a type literal written by hand/);
      expect(check('definePlugin({ manifest: {}, create(o) { return o; } });')).to.deep.equal([
        "no type on create's options parameter",
      ]);
      const cls = `interface O { n: number }\nclass Sink { constructor(@inject(PLUGIN_OPTIONS) private readonly o: O) {} }\ndefinePlugin({ manifest: {}, create: fromClass(Sink) });`;
      expect(check(cls)[0]).to.match(/^an interface written by hand/);
    });
  });
});
