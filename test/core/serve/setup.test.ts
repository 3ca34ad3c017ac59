// corl serve's config loading: a config with a discussion (`interaction`) is refused, since the
// service scores one group per request and would otherwise serve the verifier as if there were none.
import { expect } from 'chai';
import * as path from 'node:path';
import { loadServeConfig, loadServeConfigValue } from '../../../core/serve/setup';
import { tempDir, writeConfig } from '../../fixtures/configs';

const served = {
  name: 'serve-debate',
  labelFree: false,
  agents: [{ name: 'agent-0' }, { name: 'agent-1' }],
  topology: 'corl:ring',
  reward: 'corl:gt-verifier',
};

describe('serve/setup: loading a serve config', () => {
  it('loads the verifier alone', async () => {
    const { config, loaded } = await loadServeConfigValue(served);
    expect(config.reward.use).to.equal('corl:gt-verifier');
    expect(loaded.readsGroundTruth).to.equal(true);
  });

  it('refuses an interaction with CORL_ERR_CONFIG_INVALID naming the field and the file', async () => {
    const tmp = tempDir('corl-serve-setup-');
    try {
      const file = writeConfig(tmp.dir, 'debate.json', { ...served, interaction: { use: 'corl:debate' } });
      for (const load of [
        () => loadServeConfig(file),
        () => loadServeConfigValue(JSON.parse(JSON.stringify({ ...served, interaction: 'corl:debate' }))),
      ]) {
        let caught: any;
        try {
          await load();
        } catch (e) {
          caught = e;
        }
        expect(caught).to.have.property('code', 'CORL_ERR_CONFIG_INVALID');
        expect(caught.message).to.contain('"interaction"').and.contain('"corl:debate"');
      }
      let fromFile: any;
      await loadServeConfig(file).catch((e) => (fromFile = e));
      expect(fromFile.where).to.equal(`${path.resolve(file)}: interaction`);
    } finally {
      tmp.cleanup();
    }
  });
});
