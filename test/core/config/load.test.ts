import 'reflect-metadata';
import { expect } from 'chai';
import * as fs from 'node:fs';
import { loadConfig, loadConfigValue } from '../../../core/config/load';
import { coRlConfig, fixture, inlineTask, tempDir, writeConfig } from '../../fixtures/configs';
import { failure } from '../../fixtures/errors';

describe('core/config/load', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('applies defaults, normalizes selections, names the run after the file and freezes the result', async () => {
    const file = writeConfig(tmp.dir, 'my-run.json', { ...coRlConfig(), name: undefined });
    const { config, readsGroundTruth } = await loadConfig(file);
    expect(config.name).to.equal('my-run');
    expect(config.topology).to.deep.equal({ use: 'corl:ring', options: { direction: 'backward', order: [] } });
    expect(config.reward).to.deep.equal({ use: 'corl:vote', options: { threshold: 0, rule: 'pool' } });
    expect(config.diversity.use).to.equal('corl:none');
    expect(config.advantage).to.deep.equal({
      use: 'corl:grpo',
      options: { scale: 'group', epsilon: 1e-6, unbiased: true },
    });
    expect(config.trainer.loss).to.deep.equal({ type: 'bnpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, microBatch: 0 });
    expect(config.dataSeed).to.equal(11);
    expect(config.agents[1]!.policy.options.family).to.equal('fam-b');
    expect(readsGroundTruth).to.equal(false);
    expect(Object.isFrozen(config)).to.equal(true);
    expect(Object.isFrozen(config.trainer.sampling)).to.equal(true);
    expect(() => {
      (config as any).seed = 3;
    }).to.throw(TypeError);
  });

  it('reports every problem at once with path, line and column, and a hint for unknown names', async () => {
    const text = [
      '{',
      '  // comments are fine',
      `  "plugins": [${JSON.stringify(fixture('categorical-policy.js'))}],`,
      `  "task": ${JSON.stringify(inlineTask)},`,
      '  "agents": [{ "policy": "test:categorical" }, { "policy": { "use": "test:categorical", "options": { "learningRate": "fast" } } }],',
      '  "topology": "corl:rnig",',
      '  "reward": { "use": "corl:vote", "options": { "treshold": 0.5 } },',
      '  "trainer": { "steps": -2 },',
      '  "bogus": true,',
      '}',
    ].join('\n');
    const file = writeConfig(tmp.dir, 'bad.json', text);
    const e = await failure(loadConfig(file));
    expect(e.code).to.equal('CORL_ERR_CONFIG_INVALID');
    const issues = e.data!.issues as { path: string; line?: number; column?: number; message: string; hint?: string }[];
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i]));
    expect(Object.keys(byPath)).to.have.members([
      'agents[1].policy.options.learningRate',
      'topology',
      'reward.options.treshold',
      'trainer.steps',
      'bogus',
    ]);
    expect(byPath['topology']!.line).to.equal(6);
    expect(byPath['topology']!.message).to.contain('"corl:ring"').and.contain('"corl:self"');
    expect(byPath['topology']!.hint).to.equal('did you mean "corl:ring"?');
    expect(byPath['reward.options.treshold']!.hint).to.equal('did you mean "threshold"?');
    expect(byPath['reward.options.treshold']!.line).to.equal(7);
    expect(byPath['agents[1].policy.options.learningRate']!.message).to.equal('expected number, got string "fast"');
    expect(byPath['agents[1].policy.options.learningRate']!.line).to.equal(5);
    expect(byPath['trainer.steps']!.message).to.equal('expected a number >= 0, got number -2');
    expect(byPath['bogus']!.line).to.equal(9);
    expect(e.message).to.contain(`${file}:6:`);
  });

  it('a missing file and a syntax error are coded, with the position of the syntax error', async () => {
    expect((await failure(loadConfig(`${tmp.dir}/nope.json`))).code).to.equal('CORL_ERR_CONFIG_NOT_FOUND');
    expect((await failure(loadConfig(tmp.dir))).message).to.contain('a folder');
    const file = writeConfig(tmp.dir, 'syntax.json', '{\n  "seed": 1,\n  "task": {\n}}}');
    const e = await failure(loadConfig(file));
    expect(e.code).to.equal('CORL_ERR_CONFIG_PARSE');
    expect(e.data).to.deep.equal({ line: 4, column: 3 });
  });

  it('a byte-order mark before the JSON (as some Windows editors save) is read as whitespace, positions unchanged', async () => {
    const text = JSON.stringify(coRlConfig({ name: 'bom' }), null, 2);
    const file = `${tmp.dir}/bom.json`;
    fs.writeFileSync(file, `\ufeff${text}`);
    expect((await loadConfig(file)).config.name).to.equal('bom');
    // an error still names the line and column a user's editor shows
    fs.writeFileSync(file, '\ufeff{\n  "seed": 1,\n  "task": {\n}}}');
    const e = await failure(loadConfig(file));
    expect(e.code).to.equal('CORL_ERR_CONFIG_PARSE');
    expect(e.data).to.deep.equal({ line: 4, column: 3 });
  });

  it('a labelFree config refuses a ground-truth reward, naming the field', async () => {
    const file = writeConfig(tmp.dir, 'gt.json', coRlConfig({ reward: 'corl:ground-truth' }));
    const e = await failure(loadConfig(file));
    expect(e.code).to.equal('CORL_ERR_CONFIG_LABEL_FREE');
    expect(e.message).to.contain('reward').and.contain('corl:ground-truth');
    const ok = await loadConfig(
      writeConfig(tmp.dir, 'gt2.json', coRlConfig({ reward: 'corl:ground-truth', labelFree: false })),
    );
    expect(ok.readsGroundTruth).to.equal(true);
  });

  it('a ring with one agent is a coded topology error naming the field', async () => {
    const cfg = coRlConfig();
    cfg.agents = [(cfg.agents as unknown[])[0]];
    const e = await failure(loadConfig(writeConfig(tmp.dir, 'ring1.json', cfg)));
    expect(e.code).to.equal('CORL_ERR_CONFIG_TOPOLOGY');
    expect(e.message).to.contain('topology').and.contain('corl:self');
    expect(e.where).to.match(/ring1\.json:\d+:\d+ topology/);
  });

  it('plugin modules that are missing or throw are coded errors pointing at plugins[i]', async () => {
    const missing = await failure(
      loadConfig(writeConfig(tmp.dir, 'm.json', coRlConfig({ plugins: ['./does-not-exist.js'] }))),
    );
    expect(missing.code).to.equal('CORL_ERR_PLUGIN_LOAD');
    expect(missing.where).to.contain('plugins[0]');
    const throwing = await failure(
      loadConfig(
        writeConfig(
          tmp.dir,
          't.json',
          coRlConfig({ plugins: [fixture('categorical-policy.js'), fixture('throwing-plugin.js')] }),
        ),
      ),
    );
    expect(throwing.code).to.equal('CORL_ERR_PLUGIN_LOAD');
    expect(throwing.message).to.contain('deliberate failure');
    expect(throwing.where).to.contain('plugins[1]');
  });

  it('a module built into Node.js ("fs", "node:fs") is refused as a plugin, coded, pointing at plugins[i]', async () => {
    for (const builtin of ['fs', 'node:fs', 'child_process']) {
      const e = await failure(
        loadConfig(
          writeConfig(tmp.dir, 'b.json', coRlConfig({ plugins: [fixture('categorical-policy.js'), builtin] })),
        ),
      );
      expect(e.code, builtin).to.equal('CORL_ERR_PLUGIN_LOAD');
      expect(e.message).to.contain(`"${builtin}", a module built into Node.js`);
      expect(e.where).to.contain('plugins[1]');
    }
  });

  it('a "use" may be a module path (relative to the config) that registers one plugin of the kind', async () => {
    const cfg = coRlConfig({ plugins: [] });
    cfg.agents = [
      { policy: { use: fixture('categorical-policy.js') } },
      { policy: { use: fixture('categorical-policy.js'), options: { learningRate: 0.1 } } },
    ];
    const { config } = await loadConfig(writeConfig(tmp.dir, 'use.json', cfg));
    expect(config.agents[0]!.policy.use).to.equal('test:categorical');
    expect(config.agents[1]!.policy.options.learningRate).to.equal(0.1);
    const cfg2 = coRlConfig({ plugins: [], reward: { use: fixture('categorical-policy.js') } });
    const e = await failure(loadConfig(writeConfig(tmp.dir, 'use2.json', cfg2)));
    expect(e.code).to.equal('CORL_ERR_CONFIG_INVALID');
    expect(e.message).to.contain('exactly one reward plugin');
  });

  it('overrides apply before validation; duplicate agent names are refused', async () => {
    const { config } = await loadConfigValue(coRlConfig(), { overrides: { 'trainer.steps': 1 }, baseDir: tmp.dir });
    expect(config.trainer.steps).to.equal(1);
    const cfg = coRlConfig();
    (cfg.agents as { name: string }[])[1]!.name = 'a';
    const e = await failure(loadConfigValue(cfg, { baseDir: tmp.dir }));
    expect(e.message).to.contain('agents[1].name').and.contain('unique');
  });

  it('rejects a selection with stray keys or a wrong type', async () => {
    const e = await failure(
      loadConfigValue(coRlConfig({ topology: { use: 'corl:ring', direction: 'forward' }, reward: 42 }), {
        baseDir: tmp.dir,
      }),
    );
    const paths = (e.data!.issues as { path: string }[]).map((i) => i.path);
    expect(paths).to.have.members(['topology.direction', 'reward']);
  });
});
