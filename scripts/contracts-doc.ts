// docs/reference/contracts.md, generated from the JSDoc in core/contracts/*.ts with the TypeScript
// compiler API: every exported interface, type, class and constant with every member. A declaration
// or interface member without JSDoc is an error, so the contracts keep carrying their documentation.
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** The contract files in reading order (the order of core/contracts/index.ts). */
export function contractFiles(root: string): string[] {
  const index = fs.readFileSync(path.join(root, 'core/contracts/index.ts'), 'utf8');
  return [...index.matchAll(/from '\.\/([\w-]+)'/g)].map((m) => `core/contracts/${m[1]}.ts`);
}

/**
 * Files of helpers a plugin imports from `corl` besides the contracts, documented the same way after
 * them: the plurality vote and answer matching that `corl:vote` uses (the plugin guide's example).
 */
export const HELPER_FILES: readonly string[] = ['core/voting/plurality.ts', 'core/voting/match.ts'];

/** One documented member. */
interface Member {
  readonly signature: string;
  readonly doc: string;
}

/** One exported declaration. */
interface Declaration {
  readonly name: string;
  readonly kind: 'interface' | 'type' | 'class' | 'const' | 'function';
  readonly doc: string;
  /** `type X = …` / `const X: T` / the heritage clause, as source text. */
  readonly head: string;
  members: Member[];
}

function jsDoc(node: ts.Node): string {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
  const text = docs
    .map((d) => (typeof d.comment === 'string' ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? '')))
    .join('\n')
    .trim();
  return text.replace(/\{@link\s+([^}\s]+)\s*\}/g, '`$1`');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\(\s/g, '(').replace(/\s\)/g, ')').replace(/;$/, '').trim();
}

/** The member's source without its JSDoc, on one line. */
function signature(node: ts.Node, sf: ts.SourceFile): string {
  return oneLine(sf.text.slice(node.getStart(sf), node.getEnd()));
}

function isExported(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** Parse the exported declarations of one file; `missing` collects what lacks JSDoc. */
function declarations(file: string, text: string, missing: string[]): Declaration[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: Declaration[] = [];
  const needDoc = (doc: string, what: string): string => {
    if (!doc) missing.push(`${file}: ${what}`);
    return doc;
  };
  for (const st of sf.statements) {
    if (!isExported(st)) continue;
    if (ts.isInterfaceDeclaration(st)) {
      const members = st.members.map((m) => ({
        signature: signature(m, sf),
        doc: needDoc(jsDoc(m), `${st.name.text}.${m.name?.getText(sf) ?? '(call signature)'}`),
      }));
      const heritage = st.heritageClauses?.map((h) => h.getText(sf)).join(' ') ?? '';
      const generics = st.typeParameters ? `<${st.typeParameters.map((p) => p.getText(sf)).join(', ')}>` : '';
      out.push({
        name: st.name.text,
        kind: 'interface',
        doc: needDoc(jsDoc(st), st.name.text),
        head: oneLine(`interface ${st.name.text}${generics} ${heritage}`),
        members,
      });
    } else if (ts.isTypeAliasDeclaration(st)) {
      out.push({
        name: st.name.text,
        kind: 'type',
        doc: needDoc(jsDoc(st), st.name.text),
        head: oneLine(st.getText(sf).replace(/^export\s+/, '')),
        members: [],
      });
    } else if (ts.isClassDeclaration(st) && st.name) {
      const members = st.members
        .filter(
          (m) =>
            !(ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : []).some(
              (x) => x.kind === ts.SyntaxKind.PrivateKeyword,
            ) && !ts.isConstructorDeclaration(m),
        )
        .map((m) => ({ signature: signature(m, sf).replace(/\s*\{.*$/, ''), doc: jsDoc(m) }));
      const heritage = st.heritageClauses?.map((h) => h.getText(sf)).join(' ') ?? '';
      out.push({
        name: st.name.text,
        kind: 'class',
        doc: needDoc(jsDoc(st), st.name.text),
        head: oneLine(`class ${st.name.text} ${heritage}`),
        members,
      });
    } else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        const name = d.name.getText(sf);
        const type = d.type ? `: ${d.type.getText(sf)}` : '';
        const value =
          d.initializer && d.initializer.getText(sf).length <= 60 ? ` = ${oneLine(d.initializer.getText(sf))}` : '';
        out.push({
          name,
          kind: 'const',
          doc: needDoc(jsDoc(st), name),
          head: oneLine(`const ${name}${type}${value}`),
          members: [],
        });
      }
    } else if (ts.isFunctionDeclaration(st) && st.name) {
      out.push({
        name: st.name.text,
        kind: 'function',
        doc: needDoc(jsDoc(st), st.name.text),
        head: signature(st, sf)
          .replace(/^export\s+/, '')
          .replace(/\s*\{.*$/, ''),
        members: [],
      });
    }
  }
  // Class members without their own JSDoc take the doc of the interface member they implement.
  for (const c of out.filter((d) => d.kind === 'class')) {
    const implemented = out.filter((d) => d.kind === 'interface' && c.head.includes(d.name));
    c.members = c.members.map((m) => {
      if (m.doc) return m;
      const name = m.signature.replace(/^(get |set |readonly |static )*/, '').match(/^[\w$]+/)?.[0];
      const from = implemented
        .flatMap((i) => i.members)
        .find((im) => im.signature.replace(/^readonly /, '').startsWith(`${name}`));
      if (!from) missing.push(`${c.name}.${name}`);
      return { ...m, doc: from?.doc ?? '' };
    });
  }
  return out;
}

function escapeCode(s: string): string {
  return s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``;
}

/** The whole page. Throws when a contract declaration or member has no JSDoc. */
export function contractsReference(root: string): string {
  const missing: string[] = [];
  const files = [...contractFiles(root), ...HELPER_FILES].map((rel) => ({
    rel,
    decls: declarations(rel, fs.readFileSync(path.join(root, rel), 'utf8'), missing),
  }));
  if (missing.length)
    throw new Error(`every contract declaration and member needs JSDoc; missing for:\n  ${missing.join('\n  ')}`);
  const out = [
    '# Contracts',
    '',
    '<!-- Generated from the JSDoc in core/contracts/*.ts by `npm run gen`; do not edit by hand. -->',
    '',
    'Everything a plugin implements or receives, with every member, as written in `core/contracts/`.',
    'Import these types from `corl`; the suites in `corl/testing` check the behaviour each one promises.',
    'A plugin is a `definePlugin({ manifest, create })` whose `create` returns the interface of its kind',
    `(the helpers it may use, such as \`pluralityVote\` and \`matches\`, follow the contracts: ${HELPER_FILES.map((f) => `[\`${f}\`](#${anchor(f)})`).join(', ')}):`,
    '',
    '| kind | interface | contract suite (`corl/testing`) |',
    '| --- | --- | --- |',
    ...[
      ['task', 'Task'],
      ['policy', 'Policy'],
      ['reward', 'RewardSource'],
      ['topology', 'Topology'],
      ['diversity', 'DiversityStrategy'],
      ['extractor', 'AnswerExtractor'],
      ['equivalence', 'Equivalence'],
      ['advantage', 'AdvantageEstimator'],
      ['metrics', 'MetricsSink'],
      ['interaction', 'Interaction'],
      ['judge', 'Judge'],
    ].map(([kind, iface]) => `| \`${kind}\` | [\`${iface}\`](#${iface!.toLowerCase()}) | \`${kind}Contract\` |`),
    '',
    '## Files',
    '',
    ...files.map((f) => `- [\`${f.rel}\`](#${anchor(f.rel)}): ${f.decls.map((d) => `\`${d.name}\``).join(', ')}`),
    '',
  ];
  for (const f of files) {
    out.push(`## ${f.rel}`, '');
    for (const d of f.decls) {
      out.push(
        `### ${d.name}`,
        '',
        '```ts',
        d.kind === 'interface' || d.kind === 'class' ? `${d.head} { … }` : d.head,
        '```',
        '',
        d.doc,
        '',
      );
      if (d.members.length) {
        for (const m of d.members) out.push(`- ${escapeCode(m.signature)} — ${m.doc.replace(/\s*\n\s*/g, ' ')}`);
        out.push('');
      }
    }
  }
  return out.join('\n');
}

function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}
