// definePythonReward: a named reward plugin around a Python function. Its public options type is
// written out (corl's published types need nothing of json-schema-to-ts); the compile-time check below
// fails the build when it and the schema's FromSchema differ.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FromSchema } from 'json-schema-to-ts';
import type { RewardSource } from '../../../../core/contracts/reward-source';
import { isCorlError, type CorlError } from '../../../../core/errors';
import { createPlugin, rewardContext } from '../../../../core/testing';
import { definePythonReward, type PythonRuntimeOptions } from '../../../../plugins/rewards/python';
import { RUNTIME_OPTIONS_SCHEMA } from '../../../../plugins/rewards/python/plugin';
import { tempDir } from '../../../fixtures/configs';

type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('definePythonReward (a named reward plugin backed by a Python function)', function () {
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-define-python-');
  });
  after(() => tmp.cleanup());

  it('its public options type is the schema’s (a compile-time check)', () => {
    const same: SameShape<PythonRuntimeOptions, FromSchema<typeof RUNTIME_OPTIONS_SCHEMA>> = true;
    expect(same).to.equal(true);
  });

  it('fixes module, function, signature and ground truth in code; the config sets only how it runs', async () => {
    const module = path.join(tmp.dir, 'lengths.py');
    fs.writeFileSync(
      module,
      'def score_lengths(completions, solution, **kwargs):\n    return [float(len(c)) if c.endswith(s) else 0.0 for c, s in zip(completions, solution)]\n',
    );
    const lengths = definePythonReward({
      name: 'lab:lengths',
      description: 'Length of a completion that ends with the reference',
      module,
      function: 'score_lengths',
      groundTruth: true,
    });
    expect(lengths.manifest).to.deep.include({
      name: 'lab:lengths',
      kind: 'reward',
      readsGroundTruth: true,
      corl: '^0.1.0',
    });
    expect(Object.keys((lengths.manifest.options as { properties: object }).properties).sort()).to.deep.equal([
      'batch',
      'labelRule',
      'labelThreshold',
      'python',
      'stderr',
      'timeoutSeconds',
    ]);
    let r: RewardSource | undefined;
    try {
      r = await createPlugin(lengths, { stderr: 'discard' });
      expect(
        (await r.score(rewardContext({ keys: ['4', '5'], texts: ['is 4', 'is 5'], reference: '4' }))).rewards,
      ).to.deep.equal([4, 0]);
    } finally {
      await r?.close?.();
    }
    try {
      await createPlugin(lengths, { module: 'other.py' });
      expect.fail('module is not an option of a defined reward');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_OPTIONS')).to.equal(true);
    }
  });

  it('errors name the plugin and the fixed field it comes from', async () => {
    const missing = definePythonReward({ name: 'lab:gone', description: 'x', module: path.join(tmp.dir, 'gone.py') });
    try {
      await createPlugin(missing, {});
      expect.fail('should throw');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PYTHON_IMPORT')).to.equal(true);
      expect((e as CorlError).where).to.equal(
        `lab:gone (its module, ${JSON.stringify(path.join(tmp.dir, 'gone.py'))})`,
      );
    }
    const noFn = path.join(tmp.dir, 'nofn.py');
    fs.writeFileSync(noFn, 'def other(prompts, completions, **kw):\n    return []\n');
    try {
      await createPlugin(definePythonReward({ name: 'lab:nofn', description: 'x', module: noFn }), {
        stderr: 'discard',
      });
      expect.fail('should throw');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PYTHON_FUNCTION')).to.equal(true);
      expect((e as CorlError).where).to.equal('lab:nofn (its function, "reward_func")');
    }
  });
});
