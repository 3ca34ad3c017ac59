// Per-kind manifests: each kind's manifest declares its own fields beside the common ones (reward
// sources what they read and need, policies their memory, equivalences and metrics sinks whether they
// are trusted with references, the other kinds nothing more). In TypeScript a field of another kind
// does not compile (the `@ts-expect-error` lines below are checked by tsc when the suite is built: an
// expected error that stops being one fails the build); a JavaScript plugin that declares one is
// refused when it is registered, with a coded error naming the field.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  MANIFEST_FIELDS,
  PLUGIN_KINDS,
  type ManifestFields,
  type PluginDefinition,
  type PluginKind,
  type PluginManifest,
} from '../../../core/contracts/plugin';
import { CorlError, isCorlError } from '../../../core/errors';
import { definePlugin } from '../../../core/registry/define';
import { manifestQueries } from '../../../core/registry/instantiate';
import { loadPluginModules } from '../../../core/registry/load';
import { PluginRegistry } from '../../../core/registry/registry';
import { tempDir } from '../../fixtures/configs';

const common = {
  description: 'test',
  corl: '^0.1.0',
  options: { type: 'object', properties: {}, additionalProperties: false },
} as const;

const ring = () => ({ selfSupervised: false, supervisors: () => [0], validate: () => undefined });

// Correct manifests of each kind compile, with the kind's fields typed against the options.
const reward = definePlugin({
  manifest: {
    name: 'x:reward',
    kind: 'reward',
    ...common,
    readsGroundTruth: (o: { strict: boolean }) => o.strict,
    trainedOnLabels: false,
    pointwise: true,
    tokenStats: false,
  },
  create: (o: { strict: boolean }) => ({ score: async () => ({ rewards: [o.strict ? 1 : 0] }) }),
});
const sink = definePlugin({
  manifest: { name: 'x:sink', kind: 'metrics', ...common, readsReferences: true },
  create: () => ({ write: () => undefined }),
});

// A field of another kind is a compile error, in every direction.
definePlugin({
  manifest: {
    name: 'x:ring',
    kind: 'topology',
    ...common,
    // @ts-expect-error a topology never receives references: readsGroundTruth is a reward source's field
    readsGroundTruth: false,
  },
  create: ring,
});
definePlugin({
  manifest: {
    name: 'x:ring',
    kind: 'topology',
    ...common,
    // @ts-expect-error nor under its former name
    usesGroundTruth: false,
  },
  create: ring,
});
definePlugin({
  manifest: {
    name: 'x:ring',
    kind: 'topology',
    ...common,
    // @ts-expect-error readsReferences is an equivalence's or a metrics sink's field
    readsReferences: true,
  },
  create: ring,
});
definePlugin({
  manifest: {
    name: 'x:reward',
    kind: 'reward',
    ...common,
    // @ts-expect-error memory is a policy's field
    memory: () => 0,
  },
  create: () => ({ score: async () => ({ rewards: [] }) }),
});
definePlugin({
  manifest: {
    name: 'x:sink',
    kind: 'metrics',
    ...common,
    // @ts-expect-error pointwise is a reward source's field
    pointwise: true,
  },
  create: () => ({ write: () => undefined }),
});

/** Reading a kind's field needs the manifest narrowed to that kind. */
function readsGroundTruthField(m: PluginManifest<PluginKind, never>): unknown {
  if (m.kind === 'reward') return m.readsGroundTruth;
  // @ts-expect-error a manifest of any kind has no readsGroundTruth until its kind is known
  return m.readsGroundTruth;
}

// MANIFEST_FIELDS (what the registry checks at run time) lists every field of ManifestFields (the types).
type Unlisted = {
  [K in PluginKind]: Exclude<keyof ManifestFields<unknown>[K], (typeof MANIFEST_FIELDS)[K][number]>;
}[PluginKind];
const everyFieldListed: [Unlisted] extends [never] ? true : false = true;

/** A definition as a JavaScript module would hand it over: no types, any fields. */
function untyped(kind: PluginKind, extra: Record<string, unknown>): PluginDefinition {
  return {
    manifest: { name: `x:${kind}`, kind, ...common, ...extra },
    create: () => ({}),
  } as unknown as PluginDefinition;
}

function refusal(def: PluginDefinition): CorlError {
  try {
    new PluginRegistry().add(def);
  } catch (e) {
    if (isCorlError(e)) return e;
    throw e;
  }
  expect.fail('expected the registry to refuse the definition');
}

describe('core/registry per-kind manifests', () => {
  it('the registry checks what the types say: every kind, its own fields and no other', () => {
    expect(everyFieldListed).to.equal(true);
    expect(MANIFEST_FIELDS.reward).to.deep.equal([
      'readsGroundTruth',
      'usesGroundTruth',
      'trainedOnLabels',
      'pointwise',
      'tokenStats',
    ]);
    expect(MANIFEST_FIELDS.policy).to.deep.equal(['memory']);
    expect(MANIFEST_FIELDS.equivalence).to.deep.equal(['readsReferences']);
    expect(MANIFEST_FIELDS.metrics).to.deep.equal(['readsReferences']);
    const none = PLUGIN_KINDS.filter((k) => MANIFEST_FIELDS[k].length === 0);
    expect(none).to.deep.equal(['task', 'topology', 'diversity', 'extractor', 'advantage', 'interaction', 'judge']);
  });

  it("a correct manifest of each kind registers, with its kind's fields kept", () => {
    const r = new PluginRegistry();
    r.add(reward);
    r.add(sink);
    const m = r.get('reward', 'x:reward').manifest;
    expect(m.pointwise).to.equal(true);
    expect(r.answer('reward', { use: 'x:reward', options: { strict: true } }, 'readsGroundTruth', noQueries)).to.equal(
      true,
    );
    expect(r.get('metrics', 'x:sink').manifest.readsReferences).to.equal(true);
    expect(readsGroundTruthField(m)).to.be.a('function');
    for (const kind of PLUGIN_KINDS) {
      const own = Object.fromEntries(
        MANIFEST_FIELDS[kind]
          .filter((f) => f !== 'usesGroundTruth')
          .map((f) => [f, f === 'memory' ? () => 0 : f === 'pointwise' || f === 'readsReferences']),
      );
      expect(() => new PluginRegistry().add(untyped(kind, own)), kind).to.not.throw();
    }
  });

  it('every field of another kind is refused on every kind, naming the field, even false or a getter', () => {
    const fields = [...new Set(PLUGIN_KINDS.flatMap((k) => MANIFEST_FIELDS[k] as readonly string[]))];
    let refused = 0;
    for (const kind of PLUGIN_KINDS) {
      for (const f of fields) {
        if ((MANIFEST_FIELDS[kind] as readonly string[]).includes(f)) continue;
        const e = refusal(untyped(kind, { [f]: false }));
        expect(e.code, `${kind} ${f}`).to.equal('CORL_ERR_PLUGIN_INVALID');
        expect(e.message, `${kind} ${f}`).to.contain(`manifest.${f}`).and.contain(`the ${kind} "x:${kind}"`);
        expect(e.message).to.not.match(/\n\s+at /);
        refused++;
      }
    }
    // 11 kinds, 7 fields: the reward source's 5 on 10 kinds, memory on 10, readsReferences on 9
    expect(refused).to.equal(50 + 10 + 9);
    const inherited = Object.create({
      get readsGroundTruth() {
        return true;
      },
    }) as Record<string, unknown>;
    Object.assign(inherited, { name: 'x:hidden', kind: 'topology', ...common });
    const e = refusal({ manifest: inherited, create: ring } as unknown as PluginDefinition);
    expect(e.message).to.contain('manifest.readsGroundTruth').and.contain('only reward sources declare');
  });

  it('usesGroundTruth, the former name, is read as readsGroundTruth for one release and warned once per plugin', async () => {
    const warnings: Error[] = [];
    const listen = (w: Error) => warnings.push(w);
    process.on('warning', listen);
    try {
      const old = (name: string) =>
        definePlugin({
          manifest: {
            name,
            kind: 'reward',
            ...common,
            usesGroundTruth: (o: { strict: boolean }) => o.strict,
          },
          create: (o: { strict: boolean }) => ({ score: async () => ({ rewards: [o.strict ? 1 : 0] }) }),
        });
      const legacy = old('x:legacy');
      const first = new PluginRegistry();
      first.add(legacy);
      new PluginRegistry().add(legacy); // a second run of the same process
      new PluginRegistry().add(old('x:legacy-two'));
      await new Promise((r) => setImmediate(r));
      const m = first.get('reward', 'x:legacy').manifest;
      expect(Object.keys(m)).to.include('readsGroundTruth').and.not.include('usesGroundTruth');
      const sel = (strict: boolean) => ({ use: 'x:legacy', options: { strict } });
      expect(first.answer('reward', sel(true), 'readsGroundTruth', noQueries)).to.equal(true);
      expect(first.answer('reward', sel(false), 'readsGroundTruth', noQueries)).to.equal(false);
      // the query context keeps the former name too, with the same answers
      expect(manifestQueries(first).usesGroundTruth(sel(true))).to.equal(true);
      expect(manifestQueries(first).readsGroundTruth(sel(false))).to.equal(false);
      const mine = warnings.filter((w) => (w as Error & { code?: string }).code === 'CORL_DEP_USES_GROUND_TRUTH');
      expect(mine.map((w) => [w.name, w.message.slice(0, 20)])).to.deep.equal([
        ['DeprecationWarning', 'plugin "x:legacy" de'],
        ['DeprecationWarning', 'plugin "x:legacy-two'],
      ]);
      expect(mine[0]!.message).to.contain('rename it').and.contain('readsGroundTruth');
    } finally {
      process.off('warning', listen);
    }
  });

  it('a manifest that declares both names is refused', () => {
    const e = refusal(untyped('reward', { readsGroundTruth: true, usesGroundTruth: true }));
    expect(e.code).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(e.message).to.contain('manifest.readsGroundTruth of "x:reward" alone').and.contain('remove usesGroundTruth');
  });

  it('a field no kind has is refused, with the near one it misspells', () => {
    const e = refusal(untyped('reward', { trainedOnLabel: true }));
    expect(e.code).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(e.message).to.contain('manifest.trainedOnLabel').and.contain('did you mean trainedOnLabels?');
    expect(refusal(untyped('judge', { homepage: 'x' })).message).to.contain('manifest.homepage');
  });

  it('a JavaScript plugin module loaded at run time: a topology that declares usesGroundTruth is refused, coded', async () => {
    const t = tempDir('corl-manifest-');
    try {
      const file = path.join(t.dir, 'ring.js');
      fs.writeFileSync(
        file,
        `exports.register = (plugins) => plugins.add({
  manifest: { name: 'lab:ring', kind: 'topology', description: 'd', corl: '^0.1.0',
    options: { type: 'object', properties: {}, additionalProperties: false }, usesGroundTruth: false },
  create: () => ({ selfSupervised: false, supervisors: () => [0], validate: () => undefined }),
});
`,
      );
      const registry = new PluginRegistry();
      let caught: unknown;
      try {
        await loadPluginModules(registry, [file], t.dir);
      } catch (e) {
        caught = e;
      }
      expect(isCorlError(caught, 'CORL_ERR_PLUGIN_INVALID'), String(caught)).to.equal(true);
      expect((caught as Error).message)
        .to.contain('manifest.usesGroundTruth')
        .and.contain('the topology "lab:ring"')
        .and.contain('remove usesGroundTruth');
      expect(registry.has('topology', 'lab:ring')).to.equal(false);
    } finally {
      t.cleanup();
    }
  });
});

const noQueries = {
  readsGroundTruth: () => false,
  usesGroundTruth: () => false,
  trainedOnLabels: () => false,
  tokenStats: () => false,
};
