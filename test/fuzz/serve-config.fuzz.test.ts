// Serve configs generated from schema/corl-serve.schema.json: every field of the `serve` section (each
// leaf, nested ones included) generated valid or damaged into a working config, the section damaged
// whole, and odd agent lists. Each is refused with a coded error (no stack, no hang), or the service
// starts, answers GET /health and a round of both agents with a status below 500 (a coded error if
// 400 or more; with the default agents, the ring vote's exact rewards when it scores), and stops.
import { expect } from 'chai';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RewardServer } from '../../core/serve/server';
import { loadServeConfigValue } from '../../core/serve/setup';
import { tempDir } from '../fixtures/configs';
import { boxed, get, post, ringServeConfig } from '../fixtures/serve';
import { codedOrFine, outcomeOf, shown, STACK_LINE } from './assertions';
import { damage, hostileJson, validOrDamaged } from './schema-arbitrary';
import { cases, FUZZ_TIMEOUT, summary, tick } from './settings';

const ROOT = path.resolve(__dirname, '../../..');
const SCHEMA = JSON.parse(fs.readFileSync(path.join(ROOT, 'schema/corl-serve.schema.json'), 'utf8')) as Record<
  string,
  unknown
>;
const SERVE = (SCHEMA.properties as Record<string, Record<string, unknown>>).serve!;
const SUITE = 'serve-config';

type Schema = Record<string, unknown>;

/** Every leaf field of the serve section, as a path and its schema. */
function leaves(schema: Schema, at: string[] = []): { at: string[]; schema: Schema }[] {
  const props = schema.properties as Record<string, Schema> | undefined;
  if (schema.type === 'object' && props) return Object.entries(props).flatMap(([k, s]) => leaves(s, [...at, k]));
  return [{ at, schema }];
}
const FIELDS = leaves(SERVE);

/** Fields whose values reach the machine: kept to a pool, so that no case binds a random port or host, or names any file. */
const POOLS: Record<string, readonly unknown[]> = {
  port: [0, -1, 65536, 1.5, '0', null],
  host: ['127.0.0.1', '::1', 'localhost', '0.0.0.0', '', '256.1.1.1', '192.0.2.1', '\u0000', 'x'.repeat(300)],
  tokens: ['tokens.json', 'bad-tokens.json', 'missing.json', '/dev/null', '/proc/self/status', '.', ''],
  journal: [false, true, 'j.jsonl', 'sub/j.jsonl', '.', '/dev/null', '/proc/self/x', 'n'.repeat(300), ''],
};

/** The base serve section: a working service on a free port, quick to give up waiting. */
const BASE = { port: 0, journal: false, exchange: { wait: 5 }, samples: { wait: 1 }, getReward: { wait: 1 } };

function set(serve: Record<string, unknown>, at: readonly string[], value: unknown): Record<string, unknown> {
  const out = structuredClone(serve);
  let o = out;
  for (const k of at.slice(0, -1)) o = o[k] = { ...((o[k] as Record<string, unknown>) ?? {}) };
  o[at[at.length - 1]!] = value;
  return out;
}

const field = fc.constantFrom(...FIELDS).chain(({ at, schema }) => {
  const pool = POOLS[at.join('.')];
  const value = pool ? fc.constantFrom(...pool) : fc.oneof(validOrDamaged(schema, SCHEMA), hostileJson);
  return value.map((v) => ({ serve: set(BASE, at, v), agents: ['a', 'b'] }));
});

const configs = fc.oneof(
  { weight: 6, arbitrary: field },
  {
    weight: 1,
    arbitrary: damage(BASE, hostileJson).map((serve) => ({
      serve: serve as Record<string, unknown>,
      agents: ['a', 'b'],
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('a', 'b', 'c', '', 'a', '\ud800', 'é'.repeat(200), '__proto__', ' a'), {
        minLength: 1,
        maxLength: 4,
      })
      .map((agents) => ({ serve: BASE as Record<string, unknown>, agents })),
  },
);

/** Start the service of `config` in `dir`, check it answers, stop it. */
async function serveOnce(config: Record<string, unknown>, dir: string, agents: readonly string[]): Promise<void> {
  const served = await loadServeConfigValue(config, { baseDir: dir, name: 'fuzz' });
  const server = await RewardServer.start(served, {});
  try {
    const health = await get(server.url, '/health');
    expect(health.status).to.equal(200);
    if (!(agents.length === 2 && agents[0] === 'a' && agents[1] === 'b')) return;
    const step = server.runtime.settings.exchange.startStep;
    const [a, b] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step, groups: [boxed('c1', ['2', '3', '2'])] }),
      post(server.url, '/v1/groups', { agent: 'b', step, groups: [boxed('c1', ['3', '3', '2'])] }),
    ]);
    for (const r of [a, b]) {
      expect(r.status, shown(r.body)).to.be.below(500);
      // a request slower than timeouts.headers or timeouts.body is cut with a bare 408, as documented
      if (r.status >= 400 && !(r.status === 408 && r.body === undefined))
        expect(String(r.body?.error?.code), shown(r.body)).to.match(/^CORL_ERR_[A-Z0-9_]+$/);
      expect(JSON.stringify(r.body ?? '')).to.not.match(STACK_LINE);
    }
    if (a.status === 200 && a.body.groups[0].source === 'supervisors')
      expect(a.body.groups[0]).to.deep.include({ rewards: [0, 1, 0], label: '3' });
  } finally {
    await server.close();
  }
}

describe('fuzz: serve configs from the schema start a service that answers, or are refused with a coded error', function () {
  this.timeout(FUZZ_TIMEOUT);
  let tmp: ReturnType<typeof tempDir>;
  before(() => (tmp = tempDir('corl-fuzz-serve-config-')));
  after(() => {
    tmp.cleanup();
    process.stdout.write(summary(SUITE));
  });

  it('found by the longer run: timeouts of a fraction of a millisecond start a service (Node takes whole ms)', async () => {
    const dir = path.join(tmp.dir, 'fractions');
    fs.mkdirSync(dir);
    const serve = { ...BASE, timeouts: { idle: 9.4e-323, headers: 0.4004, body: 1.0004 } };
    await serveOnce({ ...ringServeConfig({}, ['a', 'b']), serve }, dir, ['a', 'b']).catch((e: unknown) =>
      codedOrFine({ error: e }, serve),
    );
  });

  it(`every serve field (${FIELDS.length} of them), the section damaged, odd agents (120 cases)`, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(configs, async ({ serve, agents }) => {
        tick(SUITE);
        const dir = path.join(tmp.dir, `case-${n++}`);
        fs.mkdirSync(dir);
        fs.writeFileSync(path.join(dir, 'tokens.json'), JSON.stringify({ a: 'a'.repeat(32), b: 'b'.repeat(32) }));
        fs.writeFileSync(path.join(dir, 'bad-tokens.json'), '{"a": 5, "zz": "short"');
        const config = { ...ringServeConfig({}, agents), serve };
        codedOrFine(await outcomeOf(() => serveOnce(config, dir, agents), 20_000, config), config);
      }),
      cases(SUITE, 120),
    );
  });
});
