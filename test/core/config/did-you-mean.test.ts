// Every unknown key gets a "did you mean": a typo of every field of the root schema (trainer's,
// eval's, sampling's, the loss's, ... to any depth) and of every built-in plugin's options is
// answered with the field it resembles, as a typo of a plugin name always was.
import { expect } from 'chai';
import { loadConfigValue } from '../../../core/config/load';
import { rootSchema } from '../../../core/config/root-schema';
import type { ConfigIssue } from '../../../core/config/validator';
import type { JsonSchema } from '../../../core/contracts/plugin';
import { isCorlError } from '../../../core/errors';
import { createRunContainer } from '../../../core/registry/container';
import { PLUGIN_REGISTRY } from '../../../core/registry/registry';
import { closest, editDistance } from '../../../core/util/text';
import { installBuiltins } from '../../../entry/builtins';
import { coRlConfig } from '../../fixtures/configs';

/** A typo of a field name: two neighbouring letters swapped, or for short names another case. */
function typo(key: string): string {
  if (key.length < 4) return key.toUpperCase() === key ? key.toLowerCase() : key.toUpperCase();
  for (let i = 1; i + 1 < key.length; i++)
    if (key[i] !== key[i + 1]) return key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
  return key + 'x';
}

/** Every (path, field) of objects with closed properties in a schema, through properties and array items. */
function fields(schema: JsonSchema, at: string[] = []): { at: string[]; key: string }[] {
  const out: { at: string[]; key: string }[] = [];
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (props && schema.additionalProperties === false) {
    for (const [k, sub] of Object.entries(props)) {
      out.push({ at, key: k });
      out.push(...fields(sub, [...at, k]));
    }
  }
  const items = schema.items as JsonSchema | undefined;
  if (items && typeof items === 'object') out.push(...fields(items, [...at, '0']));
  return out;
}

async function issuesOf(config: Record<string, unknown>): Promise<ConfigIssue[]> {
  try {
    await loadConfigValue(config, { baseDir: process.cwd() });
  } catch (e) {
    if (isCorlError(e) && e.code === 'CORL_ERR_CONFIG_INVALID') return (e.data as { issues: ConfigIssue[] }).issues;
    throw e;
  }
  return [];
}

/** Put `{[bad]: 1}` at a path of the config, creating objects (and first array items) on the way. */
function plant(config: Record<string, unknown>, at: readonly string[], bad: string): void {
  let o = config as Record<string, unknown>;
  for (const seg of at) {
    const next = o[seg];
    if (next === null || typeof next !== 'object') o[seg] = {};
    o = o[seg] as Record<string, unknown>;
  }
  o[bad] = 1;
}

describe('did you mean, for every unknown key', () => {
  before(() => installBuiltins());

  it('edit distance counts a swap of neighbours as one edit; case-only differences are typos', () => {
    expect(editDistance('stpes', 'steps')).to.equal(1);
    expect(editDistance('kitten', 'sitting')).to.equal(3);
    expect(editDistance('ca', 'abc')).to.equal(3); // optimal string alignment, not unrestricted Damerau (2)
    expect(closest('stpes', ['steps', 'seed'])).to.equal('steps');
    expect(closest('batchsize', ['batchSize', 'groupSize'])).to.equal('batchSize');
    expect(closest('steps', ['steps'])).to.equal(undefined);
    expect(closest('zzzzzz', ['steps'])).to.equal(undefined);
  });

  it('a typo of each field of the root schema names the field', async () => {
    const missed: string[] = [];
    const all = fields(rootSchema()).filter((f) => f.at[0] !== 'serve' && !f.key.startsWith('$'));
    expect(all.length).to.be.greaterThan(30);
    for (const f of all) {
      const config = coRlConfig();
      const bad = typo(f.key);
      plant(config, f.at, bad);
      const issue = (await issuesOf(config)).find((i) => i.path.endsWith(bad));
      if (!issue || issue.hint !== `did you mean "${f.key}"?`)
        missed.push(`${[...f.at, bad].join('.')}: ${issue ? `${issue.message} ${issue.hint ?? ''}` : 'no issue'}`);
    }
    expect(missed).to.deep.equal([]);
  });

  it("a typo of each option of every built-in plugin names the option; so does one of a selection's use/options", async () => {
    const container = await createRunContainer();
    const registry = container.resolve(PLUGIN_REGISTRY);
    const missed: string[] = [];
    let checked = 0;
    for (const def of registry
      .all()
      .filter((d) => d.manifest.kind === 'reward' || d.manifest.kind === 'topology' || d.manifest.kind === 'metrics')) {
      for (const f of fields(def.manifest.options)) {
        if (f.at.length > 0) continue; // top-level options: nested ones are walked the same way as the root's
        const bad = typo(f.key);
        const slot = def.manifest.kind === 'metrics' ? 'metrics' : def.manifest.kind;
        const selection = { use: def.manifest.name, options: { [bad]: 1 } };
        const config = coRlConfig({ [slot]: slot === 'metrics' ? [selection] : selection });
        const issue = (await issuesOf(config)).find((i) => i.path.endsWith(bad));
        checked++;
        if (!issue || issue.hint !== `did you mean "${f.key}"?`)
          missed.push(`${def.manifest.name} ${bad}: ${issue?.hint ?? 'no issue'}`);
      }
    }
    expect(checked).to.be.greaterThan(20);
    expect(missed).to.deep.equal([]);
    const wrapper = await issuesOf(coRlConfig({ reward: { use: 'corl:vote', option: { threshold: 0.5 } } }));
    expect(wrapper.find((i) => i.path === 'reward.option')?.hint).to.equal('did you mean "options"?');
  });
});
