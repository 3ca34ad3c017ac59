import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Completion } from '../../../../core/contracts/completion';
import type { SamplingOptions } from '../../../../core/contracts/policy';
import { policyChecks } from '../../../../core/testing/policy';
import { openaiPolicy } from '../../../../plugins/policies/openai';
import type { ClientEffects } from '../../../../plugins/policies/openai/client';
import type { OpenAIOptions } from '../../../../plugins/policies/openai/options';
import {
  finishReason,
  OpenAIPolicy,
  requestSeed,
  tokenIds,
  UNKNOWN_TOKEN_ID,
} from '../../../../plugins/policies/openai/policy';
import { register } from '../../../../plugins/policies';
import { tempDir } from '../../../fixtures/configs';
import { FakeOpenAI, tokenFacts, tokensOf, type FakeOpenAIOptions } from '../../../fixtures/openai-server';
import { failure } from '../../../fixtures/errors';

const DEFAULTS: OpenAIOptions = {
  baseUrl: 'http://127.0.0.1:1/v1',
  model: 'test-model',
  endpoint: 'completions',
  family: 'openai',
  timeoutSeconds: 30,
  retries: 4,
  backoffSeconds: 0.5,
  maxBackoffSeconds: 30,
  concurrency: 8,
  logprobs: true,
  vllmTokenIds: false,
  splitN: false,
  sendSeed: true,
  extraBody: {},
};

const SAMPLING: SamplingOptions = { n: 3, temperature: 0.7, topP: 0.9, maxTokens: 64, seed: 5 };

describe('corl:openai policy', () => {
  let server: FakeOpenAI;
  let tmp: ReturnType<typeof tempDir>;
  const slept: number[] = [];
  const effects: ClientEffects = {
    sleep: async (ms) => {
      slept.push(ms);
    },
  };
  const start = async (o: FakeOpenAIOptions = {}): Promise<FakeOpenAI> => {
    await server?.close();
    server = await new FakeOpenAI({ model: 'test-model', ...o }).start();
    return server;
  };
  const policy = (o: Partial<OpenAIOptions> = {}, e: ClientEffects = effects): OpenAIPolicy =>
    new OpenAIPolicy({ ...DEFAULTS, baseUrl: server.url, ...o }, 11, tmp.dir, e);

  beforeEach(async () => {
    slept.length = 0;
    tmp = tempDir();
    await start();
  });
  afterEach(async () => {
    await server.close();
    tmp.cleanup();
  });

  describe('/v1/completions', () => {
    it('sends the sampling options and returns n completions per prompt with per-token logprobs, in index order', async () => {
      const out = await policy().sample([{ prompt: 'What is 2 + 2?' }, { prompt: 'Name a prime.' }], {
        ...SAMPLING,
        stop: ['\n\n'],
      });
      expect(out).to.have.length(2);
      const [a, b] = server.received;
      expect(server.received).to.have.length(2);
      expect(a!.route).to.equal('/v1/completions');
      expect(a!.body).to.deep.equal({
        model: 'test-model',
        prompt: 'What is 2 + 2?',
        logprobs: 1,
        n: 3,
        temperature: 0.7,
        top_p: 0.9,
        max_tokens: 64,
        stop: ['\n\n'],
        seed: requestSeed(5, 0, 0),
      });
      expect(b!.body.seed)
        .to.equal(requestSeed(5, 1, 0))
        .and.not.equal(a!.body.seed);
      out[0]!.forEach((c, k) => {
        const expected = `Reply ${k} (seed ${a!.body.seed % 1000}) to a prompt of 14 characters. The answer is ${(a!.body.seed + k) % 5}.`;
        expect(c.text).to.equal(expected);
        const tokens = tokensOf(expected);
        expect(c.logprobs).to.deep.equal(tokens.map((t, i) => tokenFacts(t, i).logprob));
        expect(c.tokenIds).to.deep.equal(tokens.map(() => UNKNOWN_TOKEN_ID));
        expect(c.finishReason).to.equal('stop');
      });
    });

    it('maps a token limit to finishReason "length" and keeps one logprob per token', async () => {
      const [[c]] = (await policy().sample([{ prompt: 'p' }], { ...SAMPLING, n: 1, maxTokens: 3 })) as [[Completion]];
      expect(c!.finishReason).to.equal('length');
      expect(c!.logprobs).to.have.length(3);
      expect(c!.text)
        .to.equal(tokensOf(c!.text).join(''))
        .and.match(/^Reply 0 \(seed$/);
    });

    it('reads vLLM token ids from "token_id:N" tokens or from a token_ids field', async () => {
      await start({ tokenIds: 'prefix' });
      const [[c]] = (await policy({ vllmTokenIds: true }).sample([{ prompt: 'p' }], { ...SAMPLING, n: 1 })) as [
        [Completion],
      ];
      expect(server.received[0]!.body.return_tokens_as_token_ids).to.equal(true);
      expect(c!.tokenIds).to.deep.equal(tokensOf(c!.text).map((t, i) => tokenFacts(t, i).id));
      await start({ tokenIds: 'field' });
      const [[d]] = (await policy({ endpoint: 'chat' }).sample([{ prompt: 'p' }], { ...SAMPLING, n: 1 })) as [
        [Completion],
      ];
      expect(d!.tokenIds).to.deep.equal(tokensOf(d!.text).map((t, i) => tokenFacts(t, i).id));
      expect(tokenIds(undefined, ['token_id:7', 'x'])).to.deep.equal([7, UNKNOWN_TOKEN_ID]);
      expect(tokenIds([1, 2], ['a'])).to.deep.equal([UNKNOWN_TOKEN_ID]);
    });

    it('applies per-request overrides and splits n into seeded n = 1 requests with splitN', async () => {
      await policy().sample([{ prompt: 'p', overrides: { temperature: 0.1, maxTokens: 5 } }], SAMPLING);
      expect(server.received[0]!.body).to.include({ temperature: 0.1, max_tokens: 5, n: 3 });
      server.received.length = 0;
      const [group] = await policy({ splitN: true }).sample([{ prompt: 'p' }], SAMPLING);
      expect(server.received.map((r) => r.body.n)).to.deep.equal([1, 1, 1]);
      const seeds = server.received.map((r) => r.body.seed).sort();
      expect(seeds).to.deep.equal([0, 1, 2].map((k) => requestSeed(5, 0, k)).sort());
      expect(new Set(group!.map((c) => c.text)).size).to.equal(3);
    });

    it('returns text-only completions without logprobs when logprobs is off, and omits seed when sendSeed is off', async () => {
      const [[c]] = (await policy({ logprobs: false, sendSeed: false, extraBody: { top_k: 20 } }).sample(
        [{ prompt: 'p' }],
        { ...SAMPLING, n: 1 },
      )) as [[Completion]];
      expect(c!.tokenIds).to.deep.equal([]);
      expect(c!.logprobs).to.deep.equal([]);
      expect(c!.text).to.match(/^Reply 0 \(seed 0\)/);
      expect(server.received[0]!.body).to.not.have.any.keys('logprobs', 'seed');
      expect(server.received[0]!.body.top_k).to.equal(20);
    });
  });

  describe('/v1/chat/completions', () => {
    it('sends a system prompt and the user message, and reads message.content and logprobs.content', async () => {
      const out = await policy({ endpoint: 'chat', systemPrompt: 'Answer briefly.' }).sample(
        [{ prompt: 'What is 1 + 1?' }],
        { ...SAMPLING, n: 2 },
      );
      const body = server.received[0]!.body;
      expect(server.received[0]!.route).to.equal('/v1/chat/completions');
      expect(body.messages).to.deep.equal([
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What is 1 + 1?' },
      ]);
      expect(body.logprobs).to.equal(true);
      expect(out[0]!.map((c) => c.text)).to.deep.equal(
        [0, 1].map(
          (k) =>
            `Reply ${k} (seed ${body.seed % 1000}) to a prompt of 14 characters. The answer is ${(body.seed + k) % 5}.`,
        ),
      );
      expect(out[0]![1]!.logprobs).to.deep.equal(tokensOf(out[0]![1]!.text).map((t, i) => tokenFacts(t, i).logprob));
    });

    it('is deterministic under a seed and differs across seeds', async () => {
      const p = policy({ endpoint: 'chat' });
      const a = await p.sample([{ prompt: 'x' }], SAMPLING);
      expect(await p.sample([{ prompt: 'x' }], SAMPLING)).to.deep.equal(a);
      expect((await p.sample([{ prompt: 'x' }], { ...SAMPLING, seed: 6 }))[0]![0]!.text).to.not.equal(a[0]![0]!.text);
    });
  });

  describe('API key', () => {
    it('sends the key read from the named environment variable as a bearer token', async () => {
      await start({ apiKey: 'sk-secret' });
      const p = policy({ apiKeyEnv: 'CORL_TEST_KEY' }, { ...effects, env: { CORL_TEST_KEY: 'sk-secret' } });
      await p.sample([{ prompt: 'p' }], SAMPLING);
      expect(server.received[0]!.headers.authorization).to.equal('Bearer sk-secret');
      expect(JSON.stringify(p.describe())).to.not.contain('sk-secret');
    });

    it('refuses an unset variable with CORL_ERR_BACKEND_AUTH naming apiKeyEnv, and a wrong key is a 401 not retried', async () => {
      const e = await failure((async () => policy({ apiKeyEnv: 'CORL_TEST_NO_SUCH_KEY' }, { ...effects, env: {} }))());
      expect(e.code).to.equal('CORL_ERR_BACKEND_AUTH');
      expect(e.message).to.contain('CORL_TEST_NO_SUCH_KEY').and.contain('apiKeyEnv');
      await start({ apiKey: 'sk-secret' });
      const p = policy({ apiKeyEnv: 'K' }, { ...effects, env: { K: 'wrong' } });
      const f = await failure(p.sample([{ prompt: 'p' }], SAMPLING));
      expect(f.code).to.equal('CORL_ERR_BACKEND_HTTP');
      expect(f.message).to.contain('401').and.contain('apiKeyEnv');
      expect(p.client.stats.attempts).to.equal(1);
    });
  });

  describe('retries, timeouts and failures', () => {
    it('honours Retry-After on a 429 and retries 5xx with seeded exponential backoff', async () => {
      server.faults.push(
        { kind: 'status', status: 429, retryAfter: '7' },
        { kind: 'status', status: 500 },
        { kind: 'status', status: 503 },
      );
      const p = policy({ backoffSeconds: 0.5 });
      const out = await p.sample([{ prompt: 'p' }], SAMPLING);
      expect(out[0]).to.have.length(3);
      expect(p.client.stats).to.include({ attempts: 4, retries: 3 });
      expect(slept[0]).to.equal(7000);
      // retry 2 waits 0.5·2^1 s, retry 3 0.5·2^2 s, each times a jitter in [0.5, 1)
      expect(slept[1]).to.be.within(500, 1000);
      expect(slept[2]).to.be.within(1000, 2000);
      const again: number[] = [];
      server.faults.push(
        { kind: 'status', status: 429, retryAfter: '7' },
        { kind: 'status', status: 500 },
        { kind: 'status', status: 503 },
      );
      await policy(
        { backoffSeconds: 0.5 },
        {
          sleep: async (ms) => {
            again.push(ms);
          },
        },
      ).sample([{ prompt: 'p' }], SAMPLING);
      expect(again).to.deep.equal(slept);
    });

    it('caps the exponential delay at maxBackoffSeconds', async () => {
      for (let i = 0; i < 4; i++) server.faults.push({ kind: 'status', status: 502 });
      const p = policy({ backoffSeconds: 10, maxBackoffSeconds: 12 });
      await p.sample([{ prompt: 'p' }], SAMPLING);
      expect(slept).to.have.length(4);
      expect(slept[0]).to.be.within(5000, 10000);
      for (const d of slept.slice(1)) expect(d).to.be.within(6000, 12000);
    });

    it('gives up after `retries` with the last error, naming the option', async () => {
      for (let i = 0; i < 3; i++) server.faults.push({ kind: 'status', status: 503, message: 'overloaded' });
      const p = policy({ retries: 2 });
      const e = await failure(p.sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_HTTP');
      expect(e.message)
        .to.contain('503')
        .and.contain('overloaded')
        .and.contain('after 3 attempts')
        .and.contain('retries = 2');
      expect(p.client.stats.attempts).to.equal(3);
    });

    it('does not retry a 4xx other than 429; a wrong model is a 404 that names the option', async () => {
      const p = policy({ model: 'other-model' });
      const e = await failure(p.sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_HTTP');
      expect(e.message).to.contain('404').and.contain('other-model').and.contain('options model');
      expect(p.client.stats.attempts).to.equal(1);
      expect(slept).to.deep.equal([]);
    });

    it('retries a dropped connection and succeeds', async () => {
      server.faults.push({ kind: 'reset' });
      const p = policy();
      expect((await p.sample([{ prompt: 'p' }], SAMPLING))[0]).to.have.length(3);
      expect(p.client.stats.retries).to.equal(1);
    });

    it('reports a server that is not there as CORL_ERR_BACKEND_UNREACHABLE naming baseUrl, after every retry', async () => {
      const url = server.url;
      await server.close();
      const p = new OpenAIPolicy({ ...DEFAULTS, baseUrl: url, retries: 2 }, 11, tmp.dir, effects);
      const e = await failure(p.sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_UNREACHABLE');
      expect(e.message).to.contain('ECONNREFUSED').and.contain('baseUrl').and.contain('after 3 attempts');
      expect(slept).to.have.length(2);
      await start();
    });

    it('times out a hanging server (timeoutSeconds) and retries; with no retries left it is CORL_ERR_BACKEND_UNREACHABLE', async () => {
      server.faults.push({ kind: 'hang' });
      const p = policy({ timeoutSeconds: 2 });
      expect((await p.sample([{ prompt: 'p' }], SAMPLING))[0]).to.have.length(3);
      expect(p.client.stats).to.include({ attempts: 2, retries: 1 });
      server.faults.push({ kind: 'hang' });
      const e = await failure(policy({ timeoutSeconds: 0.3, retries: 0 }).sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_UNREACHABLE');
      expect(e.message).to.contain('within 0.3 s').and.contain('timeoutSeconds');
    });

    it('refuses malformed JSON without retrying (CORL_ERR_BACKEND_RESPONSE)', async () => {
      server.faults.push({ kind: 'malformed' });
      const p = policy();
      const e = await failure(p.sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_RESPONSE');
      expect(e.message).to.contain('expected a JSON body');
      expect(p.client.stats.attempts).to.equal(1);
    });

    it('refuses the wrong number of choices, pointing at splitN', async () => {
      server.faults.push({ kind: 'wrongN' });
      const e = await failure(policy().sample([{ prompt: 'p' }], SAMPLING));
      expect(e.code).to.equal('CORL_ERR_BACKEND_RESPONSE');
      expect(e.message).to.contain('n = 3 choices, got 4').and.contain('splitN');
    });

    it('refuses an answer without the logprobs it asked for, pointing at the logprobs option', async () => {
      for (const endpoint of ['completions', 'chat'] as const) {
        server.faults.push({ kind: 'noLogprobs' });
        const e = await failure(policy({ endpoint }).sample([{ prompt: 'p' }], SAMPLING));
        expect(e.code).to.equal('CORL_ERR_BACKEND_RESPONSE');
        expect(e.message)
          .to.contain(endpoint === 'chat' ? 'logprobs.content' : 'logprobs.tokens')
          .and.contain('option logprobs');
      }
    });
  });

  it('never has more than `concurrency` requests in flight, and uses all of them', async () => {
    // The server holds its answers until 3 requests are in flight, then keeps each for 30 ms: a
    // client that let a 4th through would be seen; one that allowed fewer than 3 would never finish.
    await start({ gate: 3, delayMs: 30 });
    const p = policy({ concurrency: 3 });
    const prompts = Array.from({ length: 10 }, (_, i) => ({ prompt: `q${i}` }));
    const out = await p.sample(prompts, { ...SAMPLING, n: 1 });
    expect(out).to.have.length(10);
    expect(server.received).to.have.length(10);
    expect(server.maxInFlight).to.equal(3);
    expect(p.client.stats.maxInFlight).to.equal(3);
    await start({ gate: 10 });
    const wide = policy({ concurrency: 16 });
    await wide.sample(prompts, { ...SAMPLING, n: 1 });
    expect(server.maxInFlight).to.equal(10);
  });

  it('cannot train: update throws CORL_ERR_POLICY_CANNOT_TRAIN and there is no pretrainStep', async () => {
    const p = policy();
    expect(p.describe()).to.deep.include({ kind: 'corl:openai', canTrain: false, family: 'openai' });
    const e = await failure(p.update());
    expect(e.code).to.equal('CORL_ERR_POLICY_CANNOT_TRAIN');
    expect((p as { pretrainStep?: unknown }).pretrainStep).to.equal(undefined);
  });

  it('save writes the backend identity and load refuses another model', async () => {
    const dir = path.join(tmp.dir, 'ckpt');
    await policy().save(dir);
    await policy().load(dir);
    const e = await failure(policy({ model: 'm2' }).load(dir));
    expect(e.code).to.equal('CORL_ERR_POLICY_CHECKPOINT');
    expect((await failure(policy().load(tmp.dir))).code).to.equal('CORL_ERR_POLICY_CHECKPOINT');
  });

  it('maps finish reasons', () => {
    expect(['stop', 'eos', 'length', 'tool_calls', 'content_filter', null, 'abort'].map(finishReason)).to.deep.equal([
      'stop',
      'stop',
      'length',
      'stop',
      'error',
      'error',
      'error',
    ]);
  });

  it('passes the corl/testing policy contract against the fixture server (chat and completions)', async () => {
    await start({ tokenIds: 'field' });
    const checks = policyChecks(openaiPolicy, {
      options: { baseUrl: server.url, model: 'test-model' },
      optionSets: [{ baseUrl: server.url, model: 'test-model', endpoint: 'completions', vllmTokenIds: true }],
      register: (c) => register(c),
      optionalWithoutDefault: ['systemPrompt', 'apiKeyEnv'],
      baseDir: tmp.dir,
    });
    for (const c of checks) {
      try {
        await c.run();
      } catch (e) {
        throw new Error(`${c.title}: ${(e as Error).message}`, { cause: e });
      }
    }
    expect(checks.length).to.be.greaterThan(4);
  });

  describe('images', () => {
    const PNG = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from('fake png body 1'),
    ]);
    const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('fake jpeg body')]);

    it('sends local images as base64 data-URL image parts after the text, and the server receives the same bytes', async () => {
      fs.writeFileSync(path.join(tmp.dir, 'a.png'), PNG);
      fs.writeFileSync(path.join(tmp.dir, 'b.jpg'), JPEG);
      await start({ expectImages: [PNG, JPEG] });
      const out: Completion[][] = await policy({ endpoint: 'chat' }).sample(
        [{ id: 'img-1', prompt: 'Which shape?', images: ['a.png', path.join(tmp.dir, 'b.jpg')] }],
        SAMPLING,
      );
      expect(out[0]).to.have.length(3);
      const content = server.received[0]!.body.messages[0].content;
      expect(content[0]).to.deep.equal({ type: 'text', text: 'Which shape?' });
      expect(content[1].image_url.url).to.equal(`data:image/png;base64,${PNG.toString('base64')}`);
      expect(server.received[0]!.images.map((i) => i.type)).to.deep.equal(['image/png', 'image/jpeg']);
    });

    it('names the problem and path of a missing or unsupported image, before sending anything', async () => {
      const p = policy({ endpoint: 'chat' });
      const missing = await failure(p.sample([{ id: 'geo-7', prompt: 'q', images: ['nope.png'] }], SAMPLING));
      expect(missing.code).to.equal('CORL_ERR_BACKEND_IMAGE');
      expect(missing.message)
        .to.contain('problem "geo-7"')
        .and.contain(path.join(tmp.dir, 'nope.png'))
        .and.contain('no such file');
      fs.writeFileSync(path.join(tmp.dir, 'notes.png'), 'just text');
      const wrong = await failure(p.sample([{ prompt: 'q', images: ['notes.png'] }], SAMPLING));
      expect(wrong.code).to.equal('CORL_ERR_BACKEND_IMAGE');
      expect(wrong.message).to.contain('request 0').and.contain('notes.png').and.contain('PNG, JPEG, GIF or WebP');
      expect(server.received).to.have.length(0);
    });

    it('refuses images on /v1/completions with CORL_ERR_BACKEND_UNSUPPORTED naming the endpoint option', async () => {
      fs.writeFileSync(path.join(tmp.dir, 'a.png'), PNG);
      const e = await failure(
        policy({ endpoint: 'completions' }).sample([{ id: 'img-2', prompt: 'q', images: ['a.png'] }], SAMPLING),
      );
      expect(e.code).to.equal('CORL_ERR_BACKEND_UNSUPPORTED');
      expect(e.message).to.contain('endpoint').and.contain('problem "img-2"');
      expect(server.received).to.have.length(0);
    });
  });
});
