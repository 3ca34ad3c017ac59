// corl:python holds the guarantee every reward plugin holds (issue 30): a label-free Python function
// never receives a reference, whatever signature, batching or caller (`corl train`, `corl serve`),
// and nothing corl hands its process (arguments, environment, what crosses the pipe) carries one.
// Every reference of these runs carries a canary; the function records all it is handed.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../../core/config/load';
import type { RewardServer } from '../../../../core/serve/server';
import { RunDirectory } from '../../../../core/trainer/run-dir';
import { train } from '../../../../core/trainer/trainer';
import { coRlConfig, tempDir, writeConfig } from '../../../fixtures/configs';
import { boxed, post, ringServeConfig, startServer } from '../../../fixtures/serve';

const CANARY = 'CANARY-py-5e1d';

const canaryTask = {
  use: 'corl:inline',
  options: {
    train: [1, 2, 3, 4].map((i) => ({
      id: `t${i}`,
      prompt: `What is ${i} + 1?`,
      answer: `${i + 1} ${CANARY}`,
      solution: `${i} + 1 = ${i + 1} ${CANARY}`,
    })),
    heldOut: [1, 2].map((i) => ({ id: `h${i}`, prompt: `What is ${i} + 3?`, answer: `${i + 3} ${CANARY}` })),
  },
};

// Records, on every call, every argument (TRL's keywords with their objects' fields, verl's four),
// and once per process its argv, environment, working folder's listing and what stdin holds.
const RECORDER = `
import json, os, sys

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seen.jsonl")

def plain(v):
    if callable(v):
        return "<callable>"
    if hasattr(v, "__dict__"):
        return {k: plain(x) for k, x in vars(v).items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    return v

def record(what):
    with open(LOG, "a") as f:
        f.write(json.dumps(plain(what)) + "\\n")

record({"argv": sys.argv, "env": dict(os.environ), "globals": sorted(k for k in globals())})

def reward_func(prompts, completions, **kwargs):
    record({"prompts": prompts, "completions": completions, "kwargs": kwargs})
    return [0.5] * len(completions)

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    record({"data_source": data_source, "solution_str": solution_str, "ground_truth": ground_truth,
            "extra_info": extra_info})
    return 0.5
`;

const LABEL_FREE: Record<string, unknown>[] = [
  { signature: 'trl', batch: 'group' },
  { signature: 'trl', batch: 'step', format: 'conversational' },
  { signature: 'trl', referenceColumn: 'answer' },
  { signature: 'verl' },
  { signature: 'verl', labelRule: 'teacher' },
];

describe('corl:python: a label-free Python reward never receives a reference', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  beforeEach(() => {
    tmp = tempDir('corl-python-labels-');
    fs.writeFileSync(path.join(tmp.dir, 'recorder.py'), RECORDER);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    tmp.cleanup();
  });

  const seen = (): string => {
    const file = path.join(tmp.dir, 'seen.jsonl');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  };

  const trainWith = async (options: Record<string, unknown>, overrides: Record<string, unknown> = {}) => {
    const file = writeConfig(
      tmp.dir,
      'python.json',
      coRlConfig({
        task: canaryTask,
        reward: { use: 'corl:python', options: { module: 'recorder.py', stderr: 'discard', ...options } },
        trainer: {
          steps: 2,
          batchSize: 2,
          groupSize: 3,
          evalEvery: 1,
          checkpointEvery: 0,
          saveRollouts: true,
          sampling: { maxTokens: 4 },
        },
        ...overrides,
      }),
    );
    const loaded = await loadConfig(file);
    const out = fs.mkdtempSync(path.join(tmp.dir, 'run-'));
    const run = await RunDirectory.create(out, loaded.config, loaded.source, {
      configFile: loaded.file,
      baseDir: loaded.baseDir,
      supervised: loaded.readsGroundTruth,
    });
    await train(loaded, { run });
    return loaded;
  };

  for (const options of LABEL_FREE) {
    it(`corl train, ${JSON.stringify(options)}: no call, argument, environment or argv holds a reference`, async () => {
      const loaded = await trainWith(options);
      expect(loaded.readsGroundTruth).to.equal(false);
      const log = seen();
      const calls = log.split('\n').filter((l) => l.includes('"completions"') || l.includes('"solution_str"'));
      expect(calls.length, 'the function was called').to.be.greaterThan(0);
      expect(log).to.not.contain(CANARY);
    });
  }

  it('the same recorder with groundTruth: true does see the references (the canary is visible to this test)', async () => {
    await trainWith({ groundTruth: true }, { labelFree: false });
    expect(seen()).to.contain(CANARY);
  });

  it('corl serve, label-free: a reference a client posts never reaches the function', async () => {
    const reward = (options: Record<string, unknown>) => ({
      use: 'corl:python',
      options: { module: path.join(tmp.dir, 'recorder.py'), stderr: 'discard', ...options },
    });
    // A journal of its own for each service.
    const dir = (): string => fs.mkdtempSync(path.join(tmp.dir, 'serve-'));
    for (const options of [{}, { signature: 'verl' }]) {
      // POST /v1/groups, through the exchange of a ring.
      server = await startServer({ ...ringServeConfig(), reward: reward(options) }, dir());
      const group = (answers: string[]) => ({ ...boxed('g1', answers), reference: `2 ${CANARY}` });
      const answers = await Promise.all([
        post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [group(['2', '3', '2'])] }),
        post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [group(['3', '3', '2'])] }),
      ]);
      await server.close();
      // POST /get_reward (OpenRLHF), its labels column holding the references.
      server = await startServer(
        {
          ...ringServeConfig({ getReward: { groupSize: 2 } }, ['a']),
          topology: 'corl:self',
          reward: reward(options),
        },
        dir(),
      );
      answers.push(
        await post(server.url, '/get_reward', {
          query: ['problem g9 \\boxed{2}', 'problem g9 \\boxed{2}'],
          prompts: ['problem g9', 'problem g9'],
          labels: [`2 ${CANARY}`, `2 ${CANARY}`],
        }),
      );
      await server.close();
      server = undefined;
      for (const a of answers) {
        expect(a.status, JSON.stringify(a.body)).to.equal(200);
        expect(JSON.stringify(a.body)).to.not.contain(CANARY);
      }
      expect(seen(), JSON.stringify(options)).to.not.contain(CANARY);
    }
    expect(seen()).to.contain('"completions"').and.contain('"solution_str"');
  });
});
