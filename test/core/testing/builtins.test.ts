import { expect } from 'chai';
import { PLUGIN_KINDS } from '../../../core/contracts/plugin';
import { createRunContainer } from '../../../core/registry/container';
import { PLUGIN_REGISTRY } from '../../../core/registry/registry';
import { contractSuite } from '../../../core/testing';
import { describeWithBwrap } from '../../support/bwrap';
import { BUILTIN_KITS } from './builtin-kits';

describe("corl/testing: every built-in plugin passes its kind's contract suite", () => {
  it('covers every registered built-in (add new ones to test/core/testing/builtin-kits.ts)', async () => {
    const registry = (await createRunContainer()).resolve(PLUGIN_REGISTRY);
    const builtins = registry
      .all()
      .map((d) => `${d.manifest.kind} ${d.manifest.name}`)
      .sort();
    const covered = BUILTIN_KITS.filter((k) => k.plugin.manifest.name.startsWith('corl:'))
      .map((k) => `${k.plugin.manifest.kind} ${k.plugin.manifest.name}`)
      .sort();
    expect(covered).to.deep.equal(builtins);
    for (const k of BUILTIN_KITS.filter((b) => b.plugin.manifest.name.startsWith('corl:'))) {
      expect(registry.holds(k.plugin), k.plugin.manifest.name).to.equal(true);
    }
    expect(new Set(BUILTIN_KITS.map((k) => k.plugin.manifest.kind)).size).to.be.at.most(PLUGIN_KINDS.length);
  });

  for (const { plugin, kit, needsBwrap } of BUILTIN_KITS) {
    if (needsBwrap) describeWithBwrap(`${plugin.manifest.name} in the sandbox`, () => contractSuite(plugin, kit));
    else contractSuite(plugin, kit);
  }
});
