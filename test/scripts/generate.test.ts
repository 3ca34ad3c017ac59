import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generatedFiles, ROOT } from '../../scripts/generate';

describe('scripts/generate (generated files are committed and current)', () => {
  it('every generated file (schema, errors, config, contracts and CLI references) matches the code', async () => {
    const files = await generatedFiles();
    for (const [rel, content] of Object.entries(files)) {
      const file = path.join(ROOT, rel);
      expect(fs.existsSync(file), `${rel} is missing: run npm run gen`).to.equal(true);
      expect(fs.readFileSync(file, 'utf8') === content, `${rel} is stale: run npm run gen and commit it`).to.equal(
        true,
      );
    }
  });

  it('every shipped config points at the published schema (serve configs at the serve schema)', () => {
    const dir = path.join(ROOT, 'configs');
    const configs = fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.json'))
      : [];
    for (const rel of configs) {
      const text = fs.readFileSync(path.join(dir, rel), 'utf8');
      const m = /"\$schema"\s*:\s*"([^"]+)"/.exec(text);
      expect(m, `${rel} has no $schema`).to.not.equal(null);
      const published = rel.startsWith(`serve${path.sep}`) ? 'corl-serve.schema.json' : 'corl.schema.json';
      expect(path.resolve(path.dirname(path.join(dir, rel)), m![1]!), rel).to.equal(
        path.join(ROOT, 'schema', published),
      );
    }
  });
});

describe('schema/corl.schema.json (the published schema)', () => {
  it('compiles as draft 2020-12 and accepts a built-in config while rejecting a typo', async () => {
    const Ajv2020 = require('ajv/dist/2020').default;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const schema = JSON.parse((await generatedFiles())['schema/corl.schema.json']!);
    const validate = ajv.compile(schema);
    const config = {
      task: { use: 'corl:inline', options: { train: [{ id: 'a', prompt: 'p', answer: '1' }] } },
      agents: [{ policy: 'some:policy' }, { policy: 'some:policy' }],
      topology: { use: 'corl:ring', options: { direction: 'forward' } },
      reward: 'corl:vote',
    };
    expect(validate(config), JSON.stringify(validate.errors)).to.equal(true);
    expect(validate({ ...config, topology: { use: 'corl:ring', options: { direktion: 'forward' } } })).to.equal(false);
    expect(validate({ ...config, trainer: { steps: 'ten' } })).to.equal(false);
  });
});

describe('schema/corl-serve.schema.json (the published serve schema)', () => {
  it('accepts every shipped serve config (no task, no policies) and rejects a bad serve field', async () => {
    const Ajv2020 = require('ajv/dist/2020').default;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse((await generatedFiles())['schema/corl-serve.schema.json']!));
    const dir = path.join(ROOT, 'configs', 'serve');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).to.be.greaterThan(0);
    for (const f of files) {
      const config = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
      expect(validate(config), `${f}: ${JSON.stringify(validate.errors)}`).to.equal(true);
      expect(validate({ ...config, serve: { ...config.serve, exchange: { fallback: 'retry' } } }), f).to.equal(false);
    }
  });
});
