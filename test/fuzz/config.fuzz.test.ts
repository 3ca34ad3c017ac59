// Configs generated from schema/corl.schema.json (every top-level field, every plugin selection with
// its plugin's options schema, through the schema's if/then branches), most of them damaged, and
// config texts damaged byte by byte: each loads, or is refused with a coded error; no stack, no hang.
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig, loadConfigValue } from '../../core/config/load';
import { coRlConfig, fixture, tempDir } from '../fixtures/configs';
import { codedOrFine, outcomeOf } from './assertions';
import { arbitraryOf, damage, validOrDamaged } from './schema-arbitrary';
import { cases, FUZZ_TIMEOUT, summary, tick } from './settings';

const ROOT = path.resolve(__dirname, '../../..');
const SCHEMA = JSON.parse(fs.readFileSync(path.join(ROOT, 'schema/corl.schema.json'), 'utf8')) as Record<
  string,
  unknown
>;
const PROPERTIES = SCHEMA.properties as Record<string, Record<string, unknown>>;
const SUITE = 'configs';

/** Plugin modules a fuzzed config may list: the fixture the base config needs, and ones that must be refused. */
const MODULES = [
  fixture('categorical-policy.js'),
  './missing-plugin.js',
  'node:fs',
  'fs',
  '',
  '/dev/null',
  fixture('throwing-plugin.js'),
];

/** Module names a fuzzed config may not load (random strings could name any installed package). */
function tamed(config: unknown): unknown {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return config;
  const c = config as Record<string, unknown>;
  if (!Array.isArray(c.plugins)) return c;
  return {
    ...c,
    plugins: c.plugins.map((p) => (typeof p === 'string' && !MODULES.includes(p) ? './missing-plugin.js' : p)),
  };
}

/** A config: the base with one top-level field generated from its schema (valid or damaged), or the base damaged. */
const configs: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(...Object.keys(PROPERTIES).filter((k) => k !== '$schema' && k !== 'plugins'))
      .chain((field) =>
        validOrDamaged(PROPERTIES[field]!, SCHEMA).map((value) => ({ ...coRlConfig(), [field]: value })),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom(...MODULES), { maxLength: 3 })
      .map((plugins) => ({ ...coRlConfig(), plugins: [fixture('categorical-policy.js'), ...plugins] })),
  },
  { weight: 2, arbitrary: damage(coRlConfig()) },
  { weight: 1, arbitrary: arbitraryOf(SCHEMA, SCHEMA) },
);

/** A config's text with bytes cut, inserted or replaced. */
const texts: fc.Arbitrary<string> = fc
  .tuple(
    fc.constant(JSON.stringify(coRlConfig(), null, 2)),
    fc.array(
      fc.record({
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        cut: fc.nat({ max: 40 }),
        insert: fc.oneof(
          fc.string({ maxLength: 6 }),
          fc.constantFrom('\ufeff', '/*', '//', '\u0000', '{', ']', '"', ',', '\\', '\ud800'),
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([text, edits]) => {
    let t = text;
    for (const e of edits) {
      const at = Math.floor(e.at * t.length);
      t = t.slice(0, at) + e.insert + t.slice(at + e.cut);
    }
    return t;
  });

describe('fuzz: configs from the schemas load or are refused with a coded error', function () {
  this.timeout(FUZZ_TIMEOUT);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('corl-fuzz-config-')));
  after(() => {
    tmp.cleanup();
    process.stdout.write(summary(SUITE));
  });

  it('config values: every top-level field and plugin selection generated from the schema (150 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(configs, async (generated) => {
        tick(SUITE);
        const config = tamed(generated);
        codedOrFine(
          await outcomeOf(() => loadConfigValue(config, { baseDir: tmp.dir, file: 'fuzz.json' }), 20_000, config),
          config,
        );
      }),
      cases(SUITE, 150),
    );
  });

  it('config texts: cut, inserted and replaced bytes (50 cases)', async () => {
    const file = path.join(tmp.dir, 'fuzz.json');
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        tick(SUITE);
        fs.writeFileSync(file, text);
        codedOrFine(await outcomeOf(() => loadConfig(file), 20_000, text), text);
      }),
      cases(SUITE, 50),
    );
  });
});
