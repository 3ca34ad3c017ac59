// corl:openai-judge against the fixture OpenAI-compatible server: the exact request body of every
// scoring call, the score read from the reply, no verdict without one, and the coded failures.
import { expect } from 'chai';
import type { JudgeItem, JudgeRequest } from '../../../core/contracts/judge';
import { isCorlError } from '../../../core/errors';
import { createPlugin, judgeRequests } from '../../../core/testing';
import { mixSeed } from '../../../core/util/rng';
import { judgePrompt, OpenAIJudge, openaiJudge, parseScore, type OpenAIJudgeOptions } from '../../../plugins/judges';
import { FakeOpenAI } from '../../fixtures/openai-server';
import { failure } from '../../fixtures/errors';

const DEFAULTS: OpenAIJudgeOptions = {
  baseUrl: 'http://127.0.0.1:1/v1',
  model: 'judge-model',
  temperature: 0,
  maxTokens: 512,
  timeoutSeconds: 30,
  retries: 0,
  backoffSeconds: 0,
  maxBackoffSeconds: 0,
  concurrency: 2,
  sendSeed: true,
  extraBody: {},
};

const item = (proposal: string, evaluation: string): JudgeItem => ({
  proposal: { agent: 0, text: proposal, answer: null, key: null },
  evaluation: { agent: 1, text: evaluation, answer: null, key: null },
});

describe('corl:openai-judge', () => {
  let server: FakeOpenAI;
  // The server scores a solution that says "2" with 3, any other with 1, and says nothing scorable
  // about an evaluation that is empty.
  const respond = (prompt: string): string =>
    prompt.includes('An evaluation of that solution:\n\n')
      ? 'The evaluation is empty; I cannot tell.'
      : prompt.includes('Proposed solution:\n1 + 1 = 2')
        ? 'No criticism holds.\n<score>3</score>'
        : 'The evaluation found the slip: 1 + 1 is not 3.\n<score>1</score>';
  beforeEach(async () => {
    server = await new FakeOpenAI({ model: 'judge-model', apiKey: 'sk-test', respond }).start();
  });
  afterEach(async () => {
    await server.close();
  });
  const request = (items: JudgeItem[]): JudgeRequest => ({
    ...judgeRequests(2)[1]!.request,
    problem: 'p7',
    prompt: 'What is 1 + 1?',
    step: 4,
    items,
  });
  const env = { JUDGE_KEY: 'sk-test' };

  it('sends one chat request per item, exactly this body, and reads the last <score>', async () => {
    const judge = new OpenAIJudge(
      { ...DEFAULTS, baseUrl: server.url, apiKeyEnv: 'JUDGE_KEY', systemPrompt: 'Be strict.', extraBody: { top_k: 5 } },
      21,
      { env },
    );
    const items = [
      item('1 + 1 = 2', 'Nothing wrong.'),
      item('1 + 1 = 3', 'The sum is wrong: 1 + 1 = 2.'),
      item('1 + 1 = 2', ''),
    ];
    const r = await judge.score(request(items));
    expect(r).to.deep.equal({ scores: [3, 1, null], calls: 3, samples: 3 });
    const bodies = server.received.map((x) => x.body).sort((a, b) => a.seed - b.seed);
    const expected = items
      .map((it, j) => ({
        top_k: 5,
        model: 'judge-model',
        messages: [
          { role: 'system', content: 'Be strict.' },
          { role: 'user', content: judgePrompt('What is 1 + 1?', it) },
        ],
        temperature: 0,
        max_tokens: 512,
        n: 1,
        seed: mixSeed(21, 'judge', 4, 'p7', j),
      }))
      .sort((a, b) => a.seed - b.seed);
    expect(bodies).to.deep.equal(expected);
    expect(server.received.map((x) => [x.route, x.headers.authorization])).to.deep.equal(
      Array(3).fill(['/v1/chat/completions', 'Bearer sk-test']),
    );
  });

  it('builds the scoring prompt from the problem, the proposal, the evaluation and the 1–3 rubric', () => {
    expect(judgePrompt(' What is 1 + 1? ', item('1 + 1 = 3\n', 'Wrong sum.'))).to.equal(
      'Problem:\nWhat is 1 + 1?\n\n' +
        'Proposed solution:\n1 + 1 = 3\n\n' +
        'An evaluation of that solution:\nWrong sum.\n\n' +
        'Decide which criticisms in the evaluation actually hold, then score the solution:\n' +
        '3 - the solution is correct and none of the criticisms holds;\n' +
        '2 - some criticisms hold but are minor: the final answer is still right;\n' +
        '1 - a criticism holds and is fatal: the final answer is wrong.\n' +
        'Explain your reasons in a few sentences, then give the score as <score>N</score>.',
    );
  });

  it('reads scores 1, 2 or 3 from the last tag, and no verdict otherwise', () => {
    expect(parseScore('<score>2</score>')).to.equal(2);
    expect(parseScore('first <score>3</score>, on reflection < score > 1 </score>')).to.equal(1);
    expect(parseScore('<SCORE>3</SCORE>')).to.equal(3);
    expect(parseScore('<score>4</score>')).to.equal(null);
    expect(parseScore('<score>0</score>')).to.equal(null);
    expect(parseScore('I give it a 3.')).to.equal(null);
    expect(parseScore('<score>2.5</score>')).to.equal(null);
  });

  it('omits the seed when sendSeed is off, and is created from a config selection', async () => {
    const judge = await createPlugin(
      openaiJudge,
      { model: 'judge-model', baseUrl: server.url, apiKeyEnv: 'JUDGE_KEY', sendSeed: false },
      { seed: 3 },
    ).catch((e: unknown) => e);
    // No JUDGE_KEY in this process's environment: a coded refusal naming apiKeyEnv.
    expect(isCorlError(judge) && judge.code).to.equal('CORL_ERR_BACKEND_AUTH');
    const open = new OpenAIJudge({ ...DEFAULTS, baseUrl: server.url, apiKeyEnv: 'JUDGE_KEY', sendSeed: false }, 3, {
      env,
    });
    await open.score(request([item('1 + 1 = 2', 'Fine.')]));
    expect(server.received[0]!.body).to.not.have.property('seed');
  });

  it('refuses an extraBody that overrides its fields, and reports server failures with coded errors', async () => {
    const clash = await failure(() => new OpenAIJudge({ ...DEFAULTS, extraBody: { model: 'x' } }, 0));
    expect([clash.code, clash.where]).to.deep.equal(['CORL_ERR_JUDGE_OPTIONS', 'options.extraBody']);
    const wrongModel = new OpenAIJudge(
      { ...DEFAULTS, baseUrl: server.url, model: 'other', apiKeyEnv: 'JUDGE_KEY' },
      0,
      {
        env,
      },
    );
    const http = await failure(wrongModel.score(request([item('1 + 1 = 2', 'Fine.')])));
    expect(http.code).to.equal('CORL_ERR_BACKEND_HTTP');
    const judge = new OpenAIJudge({ ...DEFAULTS, baseUrl: server.url, apiKeyEnv: 'JUDGE_KEY' }, 0, { env });
    server.faults.push({ kind: 'malformed' });
    expect((await failure(judge.score(request([item('1 + 1 = 2', 'Fine.')])))).code).to.equal(
      'CORL_ERR_BACKEND_RESPONSE',
    );
  });
});
