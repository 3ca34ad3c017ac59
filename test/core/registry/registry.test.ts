import 'reflect-metadata';
import { expect } from 'chai';
import { container } from 'tsyringe';
import { definePlugin, registerAll } from '../../../core/registry/define';
import { createRunContainer, registrar } from '../../../core/registry/container';
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
