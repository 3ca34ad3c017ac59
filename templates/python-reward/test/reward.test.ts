import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { createPlugin, rewardContext, rewardContract } from 'corl/testing';
import { examplePythonReward, register } from '../src';

const ROOT = path.join(__dirname, '..', '..');

// The contract every reward source keeps (manifest, options, null answers, empty groups,
// determinism, no ground truth), run against reward.py through corl's Python host.
rewardContract(examplePythonReward, {
  register,
  options: { stderr: 'discard' },
  optionSets: [{ batch: 'step', stderr: 'discard' }],
});

describe('example:python-reward', () => {
  it("rewards agreement with the supervisors' majority when every written step holds (hand-computed)", async () => {
    const reward = await createPlugin(examplePythonReward, { stderr: 'discard' });
    try {
      const r = await reward.score(
        rewardContext({
          keys: ['19', '19', '18', null],
          supervisors: [['19', '19', '18', '19']],
          texts: ['12+7=19;\\boxed{19}', '12+7=18;18+1=19;\\boxed{19}', '12+7=18;\\boxed{18}', 'no idea'],
        }),
      );
      // the second agrees with the majority (19) but writes 12+7=18; the third disagrees; the last has no answer
      expect(r.rewards).to.deep.equal([1, 0, 0, 0]);
      expect(r.label).to.equal('19');
      expect(r.metrics!['python/steps_hold']).to.equal(0.5);
    } finally {
      await reward.close?.();
    }
  });

  it('its Python unit tests pass: reward_func called as TRL calls it (python3 -m unittest)', () => {
    const r = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', 'test', '-p', 'test_*.py'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).to.equal(0);
    expect(r.stderr).to.match(/Ran \d+ tests?/).and.to.match(/\nOK/);
  });
});
