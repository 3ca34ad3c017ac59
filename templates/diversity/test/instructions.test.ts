import { expect } from 'chai';
import { createPlugin, diversityContract } from 'corl/testing';
import { exampleDiversity, register } from '../src';

// The contract every diversity strategy keeps: a prompt per agent, n never overridden, no mutation, determinism.
diversityContract(exampleDiversity, {
  register,
  optionSets: [{ instructions: ['A: ', 'B: ', 'C: '], position: 'suffix', temperatures: [null, 0.7] }],
  invalidOptions: [{ options: { instructions: [''] }, field: 'instructions' }],
});

describe('example:diversity', () => {
  const problem = { id: 'p', prompt: 'What is 2 + 2?' };

  it('cycles the instructions over the agents', async () => {
    const d = await createPlugin(exampleDiversity, { instructions: ['', 'Be brief. '] });
    expect([0, 1, 2].map((n) => d.view(problem, n, 3).prompt)).to.deep.equal(['What is 2 + 2?', 'Be brief. What is 2 + 2?', 'What is 2 + 2?']);
  });

  it('appends as a suffix and overrides the temperature of the agents that have one', async () => {
    const d = await createPlugin(exampleDiversity, { instructions: [' (show your work)'], position: 'suffix', temperatures: [null, 0.5] });
    expect(d.view(problem, 0, 2)).to.deep.equal({ prompt: 'What is 2 + 2? (show your work)' });
    expect(d.view(problem, 1, 2)).to.deep.equal({ prompt: 'What is 2 + 2? (show your work)', overrides: { temperature: 0.5 } });
  });

  it('refuses options under which every agent sees the same view', async () => {
    try {
      await createPlugin(exampleDiversity, { instructions: ['', ''] });
      expect.fail('should throw');
    } catch (e) {
      expect((e as { code?: string }).code).to.equal('CORL_ERR_PLUGIN_OPTIONS');
    }
  });
});
