import 'reflect-metadata';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { container, inject, injectable } from 'tsyringe';
import { definePlugin, registerAll } from '../../../core/registry/define';
import { createRunContainer, isolatedContainer, registrar } from '../../../core/registry/container';
import { PLUGIN_REGISTRY, PluginRegistry, registryOf } from '../../../core/registry/registry';
import { isCorlError } from '../../../core/errors';

const topo = (name: string, corl = '^0.1.0') =>
  definePlugin({
    manifest: {
      name,
      kind: 'topology',
      description: 'test',
      corl,
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create: () => ({ selfSupervised: false, supervisors: () => [0], validate: () => undefined }),
  });

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isCorlError(e) ? e.code : 'not coded';
  }
  return undefined;
}

describe('core/registry/registry', () => {
  it('adds, finds and lists plugins by kind', () => {
    const r = new PluginRegistry();
    r.add(topo('x:b'));
    r.add(topo('x:a'));
    expect(r.names('topology')).to.deep.equal(['x:a', 'x:b']);
    expect(r.get('topology', 'x:a').manifest.name).to.equal('x:a');
    expect(r.has('reward', 'x:a')).to.equal(false);
  });

  it('a duplicate name is an error; the same definition twice is harmless', () => {
    const r = new PluginRegistry();
    const d = topo('x:a');
    r.add(d);
    r.add(d);
    expect(code(() => r.add(topo('x:a')))).to.equal('CORL_ERR_PLUGIN_DUPLICATE');
  });

  it('an unknown name lists the names that exist, and says when the kind is wrong', () => {
    const r = new PluginRegistry();
    r.add(topo('x:ring'));
    try {
      r.get('topology', 'x:rong');
      expect.fail();
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_UNKNOWN')).to.equal(true);
      expect((e as Error).message)
        .to.contain('"x:ring"')
        .and.contain('"x:rong"');
      expect((e as any).data.names).to.deep.equal(['x:ring']);
    }
    expect(() => r.get('reward', 'x:ring')).to.throw(/is a topology plugin/);
  });

  it('rejects malformed manifests and unsupported corl versions with codes', () => {
    const r = new PluginRegistry();
    expect(code(() => r.add({} as any))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(topo('NoScope')))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add({ ...topo('x:k'), manifest: { ...topo('x:k').manifest, kind: 'nope' as any } }))).to.equal(
      'CORL_ERR_PLUGIN_INVALID',
    );
    expect(
      code(() => r.add({ ...topo('x:k'), manifest: { ...topo('x:k').manifest, options: { type: 'string' } } })),
    ).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(topo('x:k', 'not a range')))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(topo('x:k', '^9.0.0')))).to.equal('CORL_ERR_PLUGIN_VERSION');
  });

  it('each run container has its own registry with the built-ins, and nothing leaks between them', async () => {
    const a = await createRunContainer();
    const b = await createRunContainer();
    registerAll(topo('x:only-a'))(registrar(a.resolve(PLUGIN_REGISTRY), { builtin: false }).api);
    expect(a.resolve(PLUGIN_REGISTRY).has('topology', 'x:only-a')).to.equal(true);
    expect(b.resolve(PLUGIN_REGISTRY).has('topology', 'x:only-a')).to.equal(false);
    expect(b.resolve(PLUGIN_REGISTRY).has('topology', 'corl:ring')).to.equal(true);
    expect(container.isRegistered(PLUGIN_REGISTRY)).to.equal(false);
  });

  it('registerAll refuses what is not a plugin definition, such as registerAll(container, [plugin])', async () => {
    const c = await createRunContainer();
    let err: unknown;
    try {
      registerAll(c as never, [topo('x:t')] as never);
    } catch (e) {
      err = e;
    }
    expect(isCorlError(err, 'CORL_ERR_PLUGIN_INVALID'), String(err)).to.equal(true);
    expect(String(err)).to.contain('argument 1').and.contain('got object');
    expect((err as { hint: string }).hint).to.contain('register: registerAll(a, b)');
    expect(code(() => registerAll(topo('x:t'), undefined as never))).to.equal('CORL_ERR_PLUGIN_INVALID');
  });

  it('registryOf creates a registry in a bare container', () => {
    const c = container.createChildContainer();
    const r = registryOf(c);
    expect(registryOf(c)).to.equal(r);
  });
});

describe('core/registry: definitions are read once, registration only adds', () => {
  const none = { type: 'object', properties: {}, additionalProperties: false } as const;
  const reward = (manifest: Record<string, unknown>) =>
    definePlugin({
      manifest: {
        name: 'x:r',
        kind: 'reward',
        description: 'test',
        corl: '^0.1.0',
        options: none,
        ...manifest,
      } as never,
      create: () => ({ score: async () => ({ rewards: [] }) }),
    });

  it('a manifest getter is read once, at registration: later reads of the original change nothing', () => {
    let reads = 0;
    const manifest = {
      name: 'x:flip',
      kind: 'reward',
      description: 'test',
      corl: '^0.1.0',
      options: { ...none },
      get readsGroundTruth() {
        return reads++ > 0;
      },
    };
    const def = definePlugin({ manifest: manifest as never, create: () => ({ score: async () => ({ rewards: [] }) }) });
    const r = new PluginRegistry();
    r.add(def);
    expect(reads).to.equal(1);
    const sel = { use: 'x:flip', options: {} };
    const q = {
      readsGroundTruth: () => false,
      usesGroundTruth: () => false,
      trainedOnLabels: () => false,
      tokenStats: () => false,
    };
    for (let i = 0; i < 3; i++) expect(r.answer('reward', sel, 'readsGroundTruth', q)).to.equal(false);
    expect(reads).to.equal(1);
    expect(Object.isFrozen(r.get('reward', 'x:flip').manifest)).to.equal(true);
    expect(Object.isFrozen(r.get('reward', 'x:flip').manifest.options)).to.equal(true);
    (manifest.options as Record<string, unknown>).type = 'string';
    expect(r.get('reward', 'x:flip').manifest.options.type).to.equal('object');
    expect(r.holds(def)).to.equal(true);
  });

  it('a question answered by a function is asked once per options, whatever order their keys come in', () => {
    let calls = 0;
    const r = new PluginRegistry();
    r.add(reward({ readsGroundTruth: () => calls++ % 2 === 1 }));
    const q = {
      readsGroundTruth: () => false,
      usesGroundTruth: () => false,
      trainedOnLabels: () => false,
      tokenStats: () => false,
    };
    expect(r.answer('reward', { use: 'x:r', options: { a: 1, b: 2 } }, 'readsGroundTruth', q)).to.equal(false);
    expect(r.answer('reward', { use: 'x:r', options: { b: 2, a: 1 } }, 'readsGroundTruth', q)).to.equal(false);
    expect(calls).to.equal(1);
    expect(r.answer('reward', { use: 'x:r', options: { a: 2 } }, 'readsGroundTruth', q)).to.equal(true);
  });

  it('an unreadable or malformed manifest, and a question that throws or answers a non-boolean, are coded', () => {
    const r = new PluginRegistry();
    const throwing = {
      ...reward({}).manifest,
      get tokenStats(): boolean {
        throw new Error('boom\n    at x (/y.js:1:2)');
      },
    };
    expect(code(() => r.add({ manifest: throwing, create: () => ({}) } as never))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(reward({ readsGroundTruth: 'yes' })))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(reward({ description: 7 })))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(code(() => r.add(reward({ options: { type: 'object', properties: {}, f: () => 1 } })))).to.equal(
      'CORL_ERR_PLUGIN_INVALID',
    );
    const q = {
      readsGroundTruth: () => false,
      usesGroundTruth: () => false,
      trainedOnLabels: () => false,
      tokenStats: () => false,
    };
    const r2 = new PluginRegistry();
    r2.add(reward({ readsGroundTruth: () => 'yes' }));
    expect(code(() => r2.answer('reward', { use: 'x:r', options: {} }, 'readsGroundTruth', q))).to.equal(
      'CORL_ERR_PLUGIN_INVALID',
    );
    const r3 = new PluginRegistry();
    r3.add(
      reward({
        readsGroundTruth: () => {
          throw new Error('no\n    at secret (/s.js:3:4)');
        },
      }),
    );
    try {
      r3.answer('reward', { use: 'x:r', options: {} }, 'readsGroundTruth', q);
      expect.fail('throws');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_INVALID')).to.equal(true);
      expect((e as Error).message)
        .to.contain('got an error: no')
        .and.not.contain('secret');
    }
  });

  it("the registration API adds only, while register runs, and keeps the corl: scope to corl's built-ins", () => {
    const registry = new PluginRegistry();
    const r = registrar(registry, { builtin: false, module: 'm' });
    expect(Object.keys(r.api)).to.deep.equal(['add']);
    expect(Object.isFrozen(r.api)).to.equal(true);
    r.api.add(topo('x:a'));
    expect(code(() => r.api.add(topo('corl:fake')))).to.equal('CORL_ERR_PLUGIN_INVALID');
    r.close();
    expect(code(() => r.api.add(topo('x:late')))).to.equal('CORL_ERR_PLUGIN_INVALID');
    expect(registry.names('topology')).to.deep.equal(['x:a']);
    expect(registry.isBuiltin('topology', 'x:a')).to.equal(false);
  });

  it("a plugin instance container sees nothing registered elsewhere, by tsyringe's public API alone", () => {
    class Secret {
      constructor(readonly v: string) {}
    }
    @injectable()
    class Asks {
      constructor(@inject('test.global') readonly got: string) {}
    }
    // an optional parameter of a token only an ancestor holds is left out, as tsyringe leaves out one registered nowhere
    @injectable()
    class MaybeAsks {
      constructor(@inject('test.global', { isOptional: true }) readonly got?: string) {}
    }
    @injectable()
    class Local {
      constructor(@inject('test.local') readonly got: string) {}
    }
    container.register('test.global', { useValue: 'global' });
    container.register(Secret, { useValue: new Secret('global') });
    try {
      const c = isolatedContainer();
      c.register('test.local', { useValue: 'local' });
      expect(c.isRegistered('test.global', true)).to.equal(false);
      expect(c.isRegistered('test.local', true)).to.equal(true);
      expect(() => c.resolve('test.global')).to.throw(/unregistered dependency token: "test\.global"/);
      expect(() => c.resolveAll('test.global')).to.throw(/unregistered dependency token: "test\.global"/);
      expect(() => c.resolve(Secret)).to.throw(/unregistered dependency token: "Secret"/);
      expect(() => c.resolve(Asks)).to.throw(/unregistered dependency token: "test\.global"/);
      expect(c.resolve(MaybeAsks).got).to.equal(undefined);
      expect(c.resolve(Local).got).to.equal('local');
      expect(c.resolve('test.local')).to.equal('local');
      // Two instance containers share nothing either.
      expect(isolatedContainer().isRegistered('test.local', true)).to.equal(false);
    } finally {
      container.reset();
    }
  });

  it('the registry reaches no tsyringe internals (no container.constructor, no parent field)', () => {
    const source = readFileSync(join(__dirname, '../../../../core/registry/container.ts'), 'utf8');
    expect(source).not.to.match(/\.constructor\b|\.parent\b|InternalDependencyContainer/);
  });
});
