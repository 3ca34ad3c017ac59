import { expect } from 'chai';
import {
  checkKind,
  checkPackageName,
  checkPluginName,
  identifierFor,
  packageNameFor,
  pluginNameFor,
  templateTokens,
  TEMPLATE_KINDS,
} from '../../../core/scaffold/names';

describe('core/scaffold/names (kinds, plugin and package names)', () => {
  it('an unknown or missing kind is CORL_ERR_SCAFFOLD_KIND listing every kind', () => {
    expect(checkKind('reward')).to.equal('reward');
    for (const bad of ['rewards', 'equivalence', undefined]) {
      expect(() => checkKind(bad)).to.throw(
        /CORL_ERR_SCAFFOLD_KIND.*reward, python-reward, topology, diversity, extractor, policy, task, interaction, judge/,
      );
    }
    expect(TEMPLATE_KINDS).to.deep.equal([
      'reward',
      'python-reward',
      'topology',
      'diversity',
      'extractor',
      'policy',
      'task',
      'interaction',
      'judge',
    ]);
  });

  it('plugin names are scope:name in lowercase, never in the corl: scope', () => {
    expect(checkPluginName('lab:length-penalty')).to.equal('lab:length-penalty');
    for (const bad of ['Lab:x', 'lab', 'lab:', ':x', 'lab:x y', 'lab:x:y'])
      expect(() => checkPluginName(bad), bad).to.throw(/CORL_ERR_SCAFFOLD_NAME.*scope:name/);
    expect(() => checkPluginName('corl:mine')).to.throw(/CORL_ERR_SCAFFOLD_NAME.*reserved.*lab:mine/s);
  });

  it("package names follow npm's rules; defaults come from the folder", () => {
    expect(checkPackageName('@lab/corl-agree')).to.equal('@lab/corl-agree');
    for (const bad of ['My-Plugin', '.hidden', '_x', 'a b', 'x'.repeat(215)])
      expect(() => checkPackageName(bad), bad).to.throw(/CORL_ERR_SCAFFOLD_NAME/);
    expect(packageNameFor('/tmp/My Reward!')).to.equal('my-reward');
    expect(packageNameFor('/tmp/___')).to.equal(undefined);
    expect(pluginNameFor('@lab/corl-agree')).to.equal('local:corl-agree');
  });

  it('identifiers are the camel-cased name plus the kind, without repeating it', () => {
    expect(identifierFor('lab:length-penalty', 'reward')).to.equal('lengthPenaltyReward');
    expect(identifierFor('lab:vote-reward', 'reward')).to.equal('voteReward');
    expect(identifierFor('lab:2hop', 'topology')).to.equal('plugin2hopTopology');
    // a Python reward is a reward plugin: its identifier ends in Reward
    expect(identifierFor('lab:majority-steps', 'python-reward')).to.equal('majorityStepsReward');
    expect(templateTokens('python-reward')).to.deep.equal({
      packageName: 'example-corl-python-reward',
      pluginName: 'example:python-reward',
      identifier: 'examplePythonReward',
    });
    expect(templateTokens('task')).to.deep.equal({
      packageName: 'example-corl-task',
      pluginName: 'example:task',
      identifier: 'exampleTask',
    });
  });
});
