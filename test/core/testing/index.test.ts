import { expect } from 'chai';
import { registrar } from '../../../core/registry/container';
import { PluginRegistry } from '../../../core/registry/registry';
import * as testing from '../../../core/testing';
import { resolveRunner, type TestBody } from '../../../core/testing';
import { ringTopology } from '../../../plugins/topologies';

describe('core/testing (corl/testing entry point)', () => {
  it('register(plugins) adds testing:categorical, so a config can list "corl/testing" in plugins', async () => {
    const registry = new PluginRegistry();
    testing.register(registrar(registry, { builtin: false }).api);
    expect(registry.names('policy')).to.deep.equal(['testing:categorical']);
  });

  it('suites run under any runner given as { describe, it } (e.g. node:test), and all their checks pass', async () => {
    const titles: string[] = [];
    const bodies: TestBody[] = [];
    testing.contractSuite(ringTopology, {
      runner: {
        describe: (t, body) => {
          titles.push(t);
          body();
        },
        it: (t, body) => {
          titles.push(t);
          bodies.push(body);
        },
      },
    });
    expect(titles[0]).to.equal('corl:ring satisfies the topology contract');
    expect(titles).to.include('is deterministic under a seed and pure (the same question gets the same answer)');
    for (const b of bodies) await b();
  });

  it('without a runner and outside mocha, a suite is CORL_ERR_TESTING_RUNNER; a plugin of the wrong kind is CORL_ERR_TESTING_SETUP', () => {
    const g = globalThis as Record<string, unknown>;
    const saved = g.describe;
    g.describe = undefined;
    try {
      expect(() => resolveRunner(undefined)).to.throw(/CORL_ERR_TESTING_RUNNER/);
    } finally {
      g.describe = saved;
    }
    expect(() => testing.rewardContract(ringTopology as never)).to.throw(
      /CORL_ERR_TESTING_SETUP.*topology plugin "corl:ring"/,
    );
    expect(() => testing.contractSuite({ manifest: { kind: 'nope' } } as never)).to.throw(/CORL_ERR_TESTING_SETUP/);
  });
});
