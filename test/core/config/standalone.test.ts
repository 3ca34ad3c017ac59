import { expect } from 'chai';
import { standalonePlugin, standaloneRegistry } from '../../../core/config/standalone';
import { isCorlError } from '../../../core/errors';

describe('core/config/standalone (plugins made outside a run)', () => {
  it('creates a built-in with its options defaulted in place, as a config would', async () => {
    const registry = await standaloneRegistry([], process.cwd());
    const options: Record<string, unknown> = {};
    const eq = await standalonePlugin(
      registry,
      'equivalence',
      { use: 'corl:math', options },
      { baseDir: process.cwd(), where: '--equivalence' },
    );
    expect(eq.key('1,200')).to.equal(eq.key('1200'));
    expect(Object.keys(options).length, 'defaults applied to the options given').to.be.greaterThan(0);
  });

  it('refuses bad options with CORL_ERR_PLUGIN_OPTIONS naming the options, an unknown plugin by its registry', async () => {
    const registry = await standaloneRegistry([], process.cwd());
    const scope = { baseDir: process.cwd(), where: '--extractor', optionsWhere: '--extractor-options' };
    try {
      await standalonePlugin(registry, 'extractor', { use: 'corl:math', options: { nope: 1 } }, scope);
      expect.fail('expected a refusal');
    } catch (e) {
      expect(isCorlError(e) && e.code, String(e)).to.equal('CORL_ERR_PLUGIN_OPTIONS');
      expect((e as { where?: string }).where).to.equal('--extractor-options');
      expect((e as Error).message)
        .to.contain('expected valid options for "corl:math"')
        .and.contain('nope');
    }
    try {
      await standalonePlugin(registry, 'extractor', { use: 'corl:nothing', options: {} }, scope);
      expect.fail('expected a refusal');
    } catch (e) {
      expect(isCorlError(e), String(e)).to.equal(true);
      expect((e as { code: string }).code).to.not.equal('CORL_ERR_PLUGIN_OPTIONS');
    }
  });
});
