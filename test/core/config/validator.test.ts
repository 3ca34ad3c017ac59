import { expect } from 'chai';
import { loadConfigValue } from '../../../core/config/load';
import { coRlConfig } from '../../fixtures/configs';

describe('core/config/validator (plugins of different kinds with one name)', () => {
  it('validates the extractor and the equivalence "corl:math" each against its own schema', async () => {
    const loaded = await loadConfigValue(
      coRlConfig({
        extractor: { use: 'corl:math', options: { lastNumber: false } },
        equivalence: { use: 'corl:math', options: { tolerance: 1e-6 } },
      }),
    );
    expect(loaded.config.extractor.options).to.include({ lastNumber: false, boxed: true });
    expect(loaded.config.equivalence.options).to.include({ tolerance: 1e-6, symbolic: true });
    let err: Error | undefined;
    try {
      await loadConfigValue(coRlConfig({ equivalence: { use: 'corl:math', options: { lastNumber: false } } }));
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).to.contain('equivalence.options').and.contain('unknown field "lastNumber"');
  });
});
