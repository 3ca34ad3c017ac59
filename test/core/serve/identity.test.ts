// Agent identity (issue 30, item 3): each agent posts with its own token, and only as itself.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { Credentials } from '../../../core/serve/identity';
import type { RewardServer } from '../../../core/serve/server';
import { tempDir } from '../../fixtures/configs';
import { boxed, get, post, ringServeConfig, startServer } from '../../fixtures/serve';

const TOKENS = { a: 'token-of-agent-a-0123456789', b: 'token-of-agent-b-0123456789' };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function refused(f: () => unknown, where: string, text: string): void {
  try {
    f();
    expect.fail('accepted');
  } catch (e) {
    expect(isCorlError(e, 'CORL_ERR_SERVE_TOKENS'), String(e)).to.equal(true);
    expect((e as { where?: string }).where).to.contain(where);
    expect((e as Error).message).to.contain(text);
  }
}

describe('serve/identity: the tokens file', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-serve-tokens-');
  });
  afterEach(() => tmp.cleanup());
  const write = (value: unknown): string => {
    const f = path.join(tmp.dir, 'tokens.json');
    fs.writeFileSync(f, typeof value === 'string' ? value : JSON.stringify(value), { mode: 0o600 });
    return f;
  };

  it('refuses a missing file, a folder, bad JSON, unknown or missing agents, short and shared tokens', () => {
    refused(() => Credentials.load(['a', 'b'], path.join(tmp.dir, 'none.json'), undefined), 'none.json', 'readable');
    refused(() => Credentials.load(['a', 'b'], tmp.dir, undefined), tmp.dir, 'got a folder');
    refused(() => Credentials.load(['a', 'b'], write('{"a":'), undefined), 'tokens.json', 'JSON object');
    refused(() => Credentials.load(['a', 'b'], write(['x']), undefined), 'tokens.json', 'JSON object');
    refused(() => Credentials.load(['a', 'b'], write({ ...TOKENS, c: 'x'.repeat(20) }), undefined), ': c', '"c"');
    refused(() => Credentials.load(['a', 'b'], write({ a: TOKENS.a }), undefined), ': b', 'none');
    refused(() => Credentials.load(['a', 'b'], write({ a: TOKENS.a, b: 'short' }), undefined), ': b', '16');
    refused(() => Credentials.load(['a', 'b'], write({ a: TOKENS.a, b: TOKENS.a }), undefined), ': b', 'agent "a"');
    refused(() => Credentials.load(['a', 'b'], write(TOKENS), TOKENS.b), ': b', 'service token');
  });

  it('authenticates each token as its agent, the service token as the service; says so at start', () => {
    const c = Credentials.load(['a', 'b'], write(TOKENS), 'the-service-token');
    expect(c.mode).to.equal('agents');
    expect(c.authenticate(`Bearer ${TOKENS.b}`)).to.deep.equal({ kind: 'agent', agent: 1 });
    expect(c.authenticate(undefined, TOKENS.a)).to.deep.equal({ kind: 'agent', agent: 0 });
    expect(c.authenticate('Bearer the-service-token')).to.deep.equal({ kind: 'service' });
    for (const h of [undefined, 'Bearer nope', `Basic ${TOKENS.a}`, 'Bearer '])
      expect(() => c.authenticate(h), String(h)).to.throw(/CORL_ERR_SERVE_UNAUTHORIZED|expected "Authorization/);
    expect(c.agentOf({ kind: 'agent', agent: 1 }, undefined, 'agent')).to.equal(1);
    expect(c.agentOf({ kind: 'agent', agent: 1 }, 1, 'agent')).to.equal(1);
    expect(() => c.agentOf({ kind: 'agent', agent: 1 }, 0, 'agent')).to.throw(/post as "b".*as "a"/);
    expect(() => c.agentOf({ kind: 'service' }, 0, 'agent')).to.throw(/service token/);
    expect(c.startNotes('127.0.0.1')).to.deep.equal([]);
    const open = Credentials.load(['a', 'b'], undefined, undefined);
    expect(open.authenticate(undefined)).to.deep.equal({ kind: 'open' });
    expect(open.agentOf({ kind: 'open' }, 1, 'agent')).to.equal(1);
    expect(open.startNotes('127.0.0.1').join()).to.contain('no credentials').and.contain('post as any agent');
    const shared = Credentials.load(['a', 'b'], undefined, 'the-service-token');
    expect(shared.agentOf(shared.authenticate('Bearer the-service-token'), 0, 'agent')).to.equal(0);
    expect(shared.startNotes('0.0.0.0').join()).to.contain('whoever holds it can post as any agent');
    fs.chmodSync(path.join(tmp.dir, 'tokens.json'), 0o644);
    expect(Credentials.load(['a', 'b'], path.join(tmp.dir, 'tokens.json'), undefined).notes.join()).to.contain(
      'readable by other users',
    );
  });
});

describe('serve/identity: through the service', function () {
  this.timeout(30000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-serve-identity-');
    fs.writeFileSync(path.join(tmp.dir, 'tokens.json'), JSON.stringify(TOKENS), { mode: 0o600 });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  it("posting as another agent (the issue's attack) is 403 and changes nothing; the real agents meet", async () => {
    const log: string[] = [];
    server = await startServer(ringServeConfig({ exchange: { wait: 5 }, tokens: 'tokens.json' }), tmp.dir, {
      token: 'service-token-0123456789',
      log: (l) => log.push(l),
    });
    expect(log.join('\n')).to.not.contain('no credentials');
    // b's token posting as a; no token; an unknown token; the service token.
    const forged = { agent: 'a', step: 0, groups: [boxed('g', ['999', '999'])] };
    const cases: [Record<string, string>, number, string][] = [
      [bearer(TOKENS.b), 403, 'CORL_ERR_SERVE_FORBIDDEN'],
      [{}, 401, 'CORL_ERR_SERVE_UNAUTHORIZED'],
      [bearer('a-token-nobody-has-0000'), 401, 'CORL_ERR_SERVE_UNAUTHORIZED'],
      [bearer('service-token-0123456789'), 403, 'CORL_ERR_SERVE_FORBIDDEN'],
    ];
    for (const [headers, status, code] of cases) {
      const r = await post(server.url, '/v1/groups', forged, headers);
      expect(r.status, JSON.stringify(headers)).to.equal(status);
      expect(r.body.error.code).to.equal(code);
      const g = await post(server.url, '/get_reward?agent=a', { query: ['\\boxed{999}'], prompts: [''] }, headers);
      expect(g.status, `/get_reward ${JSON.stringify(headers)}`).to.equal(status);
    }
    expect((await get(server.url, '/health')).body.exchange.slots).to.equal(0);
    expect((await get(server.url, '/metrics', bearer('service-token-0123456789'))).status).to.equal(200);
    expect((await get(server.url, '/metrics', bearer(TOKENS.a))).status).to.equal(200);
    expect((await get(server.url, '/metrics')).status).to.equal(401);
    expect((await get(server.url, '/health')).body.auth).to.equal('agents');
    const [a, b] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g', ['4', '4'])] }, bearer(TOKENS.a)),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g', ['4', '5'])] }, bearer(TOKENS.b)),
    ]);
    expect(a.body.groups[0]).to.deep.include({ label: '4', source: 'supervisors', rewards: [1, 1] });
    expect(b.body.groups[0]).to.deep.include({ label: '4', source: 'supervisors', rewards: [1, 0] });
  });

  it('POST /get_reward: the token names the agent (?agent= must agree), also as ?token= for OpenRLHF', async () => {
    server = await startServer(
      {
        agents: [{ name: 'a' }, { name: 'b' }],
        topology: 'corl:self',
        reward: 'corl:vote',
        serve: { port: 0, tokens: 'tokens.json', getReward: { groupSize: 1 } },
      },
      tmp.dir,
    );
    const q = { query: ['\\boxed{1}'], prompts: [''] };
    expect((await post(server.url, '/get_reward', q, bearer(TOKENS.b))).status).to.equal(200);
    expect((await post(server.url, '/get_reward?agent=b', q, bearer(TOKENS.b))).status).to.equal(200);
    expect((await post(server.url, '/get_reward?agent=1', q, bearer(TOKENS.b))).status).to.equal(200);
    const wrong = await post(server.url, '/get_reward?agent=a', q, bearer(TOKENS.b));
    expect(wrong.status).to.equal(403);
    expect(wrong.body.error.where).to.equal('agent (query parameter)');
    expect((await post(server.url, `/get_reward?agent=b&token=${TOKENS.b}`, q)).status).to.equal(200);
    expect((await post(server.url, `/get_reward?token=${TOKENS.a}`, q)).status).to.equal(200);
    expect((await post(server.url, `/get_reward?agent=b&token=${TOKENS.a}`, q)).status).to.equal(403);
    // ?token= is for /get_reward only
    const groups = { agent: 'a', step: 0, groups: [boxed('g', ['1'])] };
    expect((await post(server.url, `/v1/groups?token=${TOKENS.a}`, groups)).status).to.equal(401);
  });

  it('on loopback without credentials the start says so; beyond loopback it refuses (CORL_ERR_SERVE_BIND)', async () => {
    const log: string[] = [];
    server = await startServer(ringServeConfig(), tmp.dir, { log: (l) => log.push(l) });
    expect(log.join('\n')).to.contain('no credentials: any process that reaches 127.0.0.1 can post as any agent');
    await server.close();
    server = undefined;
    try {
      server = await startServer(ringServeConfig(), tmp.dir, { host: '0.0.0.0' });
      expect.fail('started');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_SERVE_BIND'), String(e)).to.equal(true);
    }
    try {
      server = await startServer(ringServeConfig({ tokens: 'missing.json' }), tmp.dir);
      expect.fail('started');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_SERVE_TOKENS'), String(e)).to.equal(true);
    }
  });
});
