// The contract-suite inputs of every built-in plugin (the built-ins run the same suites a third-party
// plugin runs). builtins.test.ts fails when a built-in is missing here.
import * as fs from 'node:fs';
import type { MetricsRecord } from '../../../core/contracts/metrics-sink';
import type { PluginDefinition } from '../../../core/contracts/plugin';
import type { AnyKitOptions } from '../../../core/testing';
import { categoricalPolicy, register as registerTesting } from '../../../core/testing';
import * as path from 'node:path';
import { drGrpoAdvantage, grpoAdvantage, rlooAdvantage } from '../../../plugins/advantages';
import { choiceExtractor, exactEquivalencePlugin, mathEquivalence, mathExtractor } from '../../../plugins/answers';
import { noDiversity, rephraseDiversity } from '../../../plugins/diversity';
import { comasInteraction, debateInteraction } from '../../../plugins/interactions';
import { openaiJudge, policyJudge } from '../../../plugins/judges';
import { jsonlSink, tensorboardSink } from '../../../plugins/metrics';
import { onnxLmPolicy } from '../../../plugins/policies/onnx-lm';
import { openaiPolicy } from '../../../plugins/policies/openai';
import { transformerPolicy } from '../../../plugins/policies/transformer';
import { tempDir } from '../../fixtures/configs';
import { writeTinyLm } from '../../fixtures/onnx-lm';
import { writeTinyVerifier } from '../../fixtures/tiny-verifier';
import { FakeOpenAI } from '../../fixtures/openai-server';
import {
  execTestsReward,
  execVoteReward,
  formatReward,
  groundTruthReward,
  gtVerifierReward,
  intrinsicReward,
  learnedVerifierReward,
  pythonReward,
  voteReward,
  weightedReward,
} from '../../../plugins/rewards';
import { arithTask, inlineTask, jsonlTask } from '../../../plugins/tasks';
import { dataFixture } from '../../fixtures/configs';
import { adjacencyTopology, completeTopology, ringTopology, selfTopology } from '../../../plugins/topologies';

export interface BuiltinKit {
  readonly plugin: PluginDefinition<any>;
  readonly kit: AnyKitOptions;
  /** Runs generated code in the bubblewrap sandbox: skipped where bubblewrap is not installed. */
  readonly needsBwrap?: boolean;
}

const sandbox = { timeoutMs: 2000, concurrency: 2 };
const pyKit = dataFixture('../python/kit_rewards.py');
const addProblem = {
  id: 'add',
  prompt: 'Write add(a, b).',
  testInputs: [
    ['1', '2'],
    ['2', '2'],
  ],
  metadata: { entryPoint: 'add' },
};
const programs = [
  '```python\ndef add(a, b):\n    return a + b\n```',
  '```python\ndef add(a, b):\n    return a * b\n```',
  'no code here',
  '```python\ndef add(a, b):\n    raise ValueError\n```',
];

const inlineRows = {
  train: [
    { id: 'a', prompt: '1+1=', answer: '2', solution: ' 1+1=2, so \\boxed{2}' },
    { id: 'b', prompt: '2+2=', answer: '4' },
  ],
  heldOut: [{ id: 'c', prompt: '3+3=', answer: '6', variants: ['What is 3+3?'] }],
};

// corl:openai is checked against the fixture server, started before the suites run; its URL is
// filled into the options object the kit holds.
const openaiOptions: Record<string, unknown> = { model: 'test-model', baseUrl: 'http://127.0.0.1:1/v1' };
const openaiCompletions: Record<string, unknown> = {
  model: 'test-model',
  baseUrl: 'http://127.0.0.1:1/v1',
  endpoint: 'completions',
  vllmTokenIds: true,
};
let fakeOpenAI: FakeOpenAI | undefined;
// corl:openai-judge gets a server of its own that answers every scoring prompt with a score drawn from
// the request seed (and, for one seed in three, a reply without a score: no verdict).
const judgeOptions: Record<string, unknown> = { model: 'judge-model', baseUrl: 'http://127.0.0.1:1/v1' };
const judgeNoSeed: Record<string, unknown> = { ...judgeOptions, sendSeed: false, systemPrompt: 'Be strict.' };
let fakeJudge: FakeOpenAI | undefined;
before(async () => {
  fakeOpenAI = await new FakeOpenAI({ model: 'test-model', tokenIds: 'field' }).start();
  openaiOptions.baseUrl = fakeOpenAI.url;
  openaiCompletions.baseUrl = fakeOpenAI.url;
  fakeJudge = await new FakeOpenAI({
    model: 'judge-model',
    respond: (_prompt, seed) => (seed % 4 === 3 ? 'I cannot decide.' : `It holds up. <score>${1 + (seed % 3)}</score>`),
  }).start();
  judgeOptions.baseUrl = fakeJudge.url;
  judgeNoSeed.baseUrl = fakeJudge.url;
});
after(async () => {
  await fakeOpenAI?.close();
  await fakeJudge?.close();
});

// corl:onnx-lm is checked on the tiny random-weight optimum-layout model, written before the suites run.
const onnxLmOptions: Record<string, unknown> = { path: 'unset', threads: 1 };
const onnxLmTemplate: Record<string, unknown> = {
  path: 'unset',
  threads: 1,
  template: 'q: {prompt}\na:',
  eosTokenIds: [0, 3],
  maxContext: 40,
};
let onnxLmDir: ReturnType<typeof tempDir> | undefined;
before(() => {
  onnxLmDir = tempDir('corl-kit-onnx-lm-');
  writeTinyLm(onnxLmDir.dir);
  onnxLmOptions.path = onnxLmDir.dir;
  onnxLmTemplate.path = onnxLmDir.dir;
});
after(() => {
  onnxLmDir?.cleanup();
});

// corl:learned-verifier is checked on the hand-weighted tiny verifier, written before the suites run.
// A verdict head (the checkpoint itself) and a likelihood head over it (verifier.json).
const verifierOptions: Record<string, unknown> = { checkpoint: 'unset' };
const likelihoodOptions: Record<string, unknown> = { checkpoint: 'unset' };
let verifierDir: ReturnType<typeof tempDir> | undefined;
before(async () => {
  verifierDir = tempDir('corl-kit-verifier-');
  const model = path.join(verifierDir.dir, 'model');
  await writeTinyVerifier(model);
  verifierOptions.checkpoint = model;
  const head = path.join(verifierDir.dir, 'likelihood');
  fs.mkdirSync(head);
  fs.writeFileSync(
    path.join(head, 'verifier.json'),
    JSON.stringify({
      format: 'corl-learned-verifier',
      version: 1,
      head: 'likelihood',
      model: '../model',
      weights: [1, 1],
      bias: 2,
    }),
  );
  likelihoodOptions.checkpoint = head;
});
after(() => {
  verifierDir?.cleanup();
});

export const BUILTIN_KITS: readonly BuiltinKit[] = [
  {
    plugin: openaiPolicy,
    kit: {
      options: openaiOptions,
      optionSets: [openaiCompletions],
      optionalWithoutDefault: ['systemPrompt', 'apiKeyEnv'],
      invalidOptions: [{ options: { model: 'm', apiKeyEnv: '1bad' }, field: 'apiKeyEnv' }],
    },
  },
  {
    plugin: onnxLmPolicy,
    kit: {
      options: onnxLmOptions,
      optionSets: [onnxLmTemplate],
      tokenStats: true,
      optionalWithoutDefault: ['file', 'eosTokenIds', 'maxContext', 'family'],
      invalidOptions: [
        { options: { path: 'm', template: 'no placeholder' }, field: 'template' },
        { options: { path: 'm', dtype: 'float16' }, field: 'dtype' },
      ],
    },
  },
  {
    plugin: arithTask,
    kit: {
      options: { train: 12, heldOut: 4, pretrain: { size: 8 } },
      optionSets: [{ train: 6, heldOut: 0, operands: { min: 3, max: 4 }, pretrain: { size: 0 } }],
      invalidOptions: [{ options: { operands: { min: 4, max: 3 } }, field: 'operands' }],
    },
  },
  {
    plugin: inlineTask,
    kit: {
      options: inlineRows,
      invalidOptions: [
        { options: { train: [] }, field: 'train' },
        { options: { train: [{ id: '', prompt: 'p' }] }, field: 'train' },
      ],
    },
  },
  {
    plugin: jsonlTask,
    kit: {
      options: { train: dataFixture('gsm8k.jsonl'), heldOutFraction: 0.25 },
      optionSets: [
        {
          train: dataFixture('math500.jsonl'),
          format: 'math',
          heldOutFraction: 0.34,
          template: '{question}\nPut the final answer in \\boxed{}.',
        },
        { train: dataFixture('plain.jsonl'), format: 'plain', limit: 2 },
      ],
      optionalWithoutDefault: ['train', 'heldOut', 'fields.id', 'fields.question', 'fields.answer'],
      invalidOptions: [
        { options: { train: dataFixture('gsm8k.jsonl'), template: 'no placeholder' }, field: 'template' },
        { options: { train: dataFixture('gsm8k.jsonl'), format: 'csv' }, field: 'format' },
      ],
    },
  },
  {
    plugin: categoricalPolicy,
    kit: {
      register: registerTesting,
      tokenStats: true,
      optionSets: [{ answers: ['yes', 'no'], prefer: { 'What is 2 + 2?': 'no' } }],
      invalidOptions: [
        { options: { answers: ['1', '1'] }, field: 'answers' },
        { options: { prefer: { x: '9' } }, field: 'prefer' },
      ],
    },
  },
  {
    plugin: transformerPolicy,
    kit: {
      options: { dModel: 16, layers: 1, heads: 2, context: 32, worker: false, threads: 1 },
      optionSets: [
        {
          dModel: 16,
          layers: 1,
          heads: 4,
          context: 32,
          norm: 'rmsnorm',
          activation: 'relu',
          positions: 'sinusoidal',
          tiedEmbeddings: true,
          bias: false,
          tokenizer: { tokens: ['What', ' is '] },
          worker: true,
          threads: 2,
        },
      ],
      tokenStats: true,
      optionalWithoutDefault: ['family', 'checkpoint', 'init.seed'],
      invalidOptions: [
        { options: { dModel: 16, heads: 3 } },
        { options: { tokenizer: { alphabet: 'aa' } } },
        { options: { optimizer: { betas: [0.9] } }, field: 'optimizer.betas' },
      ],
    },
  },
  { plugin: voteReward, kit: { optionSets: [{ rule: 'teacher' }, { threshold: 0.6 }] } },
  { plugin: groundTruthReward, kit: { optionSets: [{ correct: 2, wrong: -1 }] } },
  { plugin: gtVerifierReward, kit: {} },
  {
    plugin: learnedVerifierReward,
    kit: {
      options: verifierOptions,
      optionSets: [likelihoodOptions],
      invalidOptions: [
        { options: {}, field: 'checkpoint' },
        { options: { checkpoint: 'x', threads: 0 }, field: 'threads' },
      ],
    },
  },
  {
    plugin: debateInteraction,
    kit: {
      optionSets: [
        { alpha: [0.5, 1, 0.25, 2], rounds: 3 },
        { horizon: 'last', agentShare: 'individual', share: 'answer' },
        { horizon: 'current', discount: 1 },
      ],
      invalidOptions: [
        { options: { alpha: [1, 2] }, field: 'alpha' },
        { options: { discount: 1.5 }, field: 'discount' },
        { options: { rounds: 0 }, field: 'rounds' },
      ],
    },
  },
  {
    plugin: comasInteraction,
    kit: {
      optionSets: [
        { cycles: 1, share: 'answer' },
        { cycles: 3, references: 1, judge: { use: 'corl:policy-judge', options: { agent: 0, samples: 2 } } },
      ],
      invalidOptions: [
        { options: { cycles: 0 }, field: 'cycles' },
        { options: { references: 0 }, field: 'references' },
        { options: { judge: 'corl:no-such-judge' }, field: 'judge' },
      ],
    },
  },
  {
    plugin: policyJudge,
    kit: {
      optionSets: [{ agent: 1, samples: 3 }, { unchallenged: 1 }],
      invalidOptions: [
        { options: { agent: -1 }, field: 'agent' },
        { options: { samples: 0 }, field: 'samples' },
        { options: { unchallenged: 4 }, field: 'unchallenged' },
      ],
    },
  },
  {
    plugin: openaiJudge,
    kit: {
      options: judgeOptions,
      optionSets: [judgeNoSeed],
      optionalWithoutDefault: ['apiKeyEnv', 'systemPrompt'],
      invalidOptions: [
        { options: { model: 'm', extraBody: { messages: [] } }, field: 'extraBody' },
        { options: { model: 'm', temperature: 3 }, field: 'temperature' },
      ],
    },
  },
  { plugin: intrinsicReward, kit: { optionSets: [{ method: 'intuitor', vocabSize: 32 }] } },
  {
    plugin: pythonReward,
    kit: {
      options: { module: pyKit, function: 'co_rl_with_length', stderr: 'discard' },
      optionSets: [
        { module: pyKit, function: 'agreement_per_token', batch: 'step', format: 'conversational', stderr: 'discard' },
        { module: pyKit, function: 'accuracy', groundTruth: true, stderr: 'discard' },
        { module: pyKit, signature: 'verl', stderr: 'discard' },
        { module: pyKit, signature: 'verl', groundTruth: true, labelRule: 'teacher', stderr: 'discard' },
      ],
      optionalWithoutDefault: ['function'],
      invalidOptions: [
        { options: { module: pyKit, timeoutSeconds: 0 }, field: 'timeoutSeconds' },
        { options: { module: pyKit, function: 'not an identifier' }, field: 'function' },
        { options: { module: pyKit, function: 'no_such_function', stderr: 'discard' } },
        { options: { module: 'no-such-file.py' } },
      ],
    },
  },
  {
    plugin: formatReward,
    kit: {
      optionSets: [{ check: 'answer-tag' }, { check: 'pattern', pattern: 'answer is', flags: 'i', penalty: -1 }],
      invalidOptions: [{ options: { flags: 'g' }, field: 'flags' }],
    },
  },
  {
    plugin: weightedReward,
    kit: {
      options: {
        sources: [
          { source: 'corl:vote' },
          { source: { use: 'corl:format', options: { check: 'boxed' } }, weight: 0.1 },
        ],
      },
      optionSets: [
        {
          sources: [
            { source: 'corl:ground-truth', weight: 2 },
            { source: 'corl:intrinsic', weight: 0.5 },
          ],
        },
        {
          // a part that scores a whole step at once (scoreMany) beside one that does not
          sources: [
            { source: 'corl:vote' },
            {
              source: {
                use: 'corl:python',
                options: { module: pyKit, function: 'agreement_per_token', stderr: 'discard' },
              },
              weight: 0.5,
            },
          ],
        },
      ],
      invalidOptions: [
        { options: { sources: [] }, field: 'sources' },
        { options: { sources: [{ source: 'corl:nope' }] }, field: 'sources[0].source' },
      ],
    },
  },
  {
    plugin: execVoteReward,
    needsBwrap: true,
    kit: {
      options: sandbox,
      optionSets: [{ ...sandbox, errorKeys: true, rule: 'teacher' }],
      problem: addProblem,
      answerKeyTexts: programs,
    },
  },
  {
    plugin: execTestsReward,
    needsBwrap: true,
    kit: {
      options: sandbox,
      optionSets: [{ ...sandbox, partial: true }],
      problem: addProblem,
      reference: { answer: '', expectedOutputs: ['3', '4'] },
      contexts: [{ keys: ['a', 'b', null, 'c'], texts: programs }],
    },
  },
  { plugin: ringTopology, kit: { optionSets: [{ direction: 'forward' }, { order: [2, 0, 1] }] } },
  { plugin: selfTopology, kit: {} },
  { plugin: completeTopology, kit: { optionSets: [{ self: true }] } },
  {
    plugin: adjacencyTopology,
    kit: {
      options: {
        matrix: [
          [0, 1],
          [1, 0],
        ],
      },
      optionSets: [
        {
          matrix: [
            [0, 1, 2],
            [2, 0, 1],
            [1, 2, 0],
          ],
        },
        {
          matrix: [
            [1, 0],
            [1, 0],
          ],
          allowSelf: true,
          allowUnsupervised: true,
        },
      ],
      allowUnsupervised: true,
      invalidOptions: [
        {
          options: {
            matrix: [
              [1, 0],
              [0, 1],
            ],
          },
          field: 'matrix',
        },
      ],
    },
  },
  { plugin: noDiversity, kit: {} },
  {
    plugin: rephraseDiversity,
    kit: { optionalWithoutDefault: ['file'], optionSets: [{ assign: [0, 1, null], missing: 'original' }] },
  },
  {
    plugin: mathExtractor,
    kit: {
      optionSets: [{ lastNumber: false }],
      examples: [
        { text: 'so \\boxed{\\frac{1}{2}}.', answer: '\\frac{1}{2}' },
        { text: 'The answer is 42.', answer: '42' },
        { text: 'no digits', answer: null },
      ],
    },
  },
  {
    plugin: choiceExtractor,
    kit: {
      optionSets: [{ letters: 'ABCD', anywhere: true }],
      examples: [
        { text: 'so the answer is (C).', answer: 'C' },
        { text: '<answer>B. Paris</answer>', answer: 'B' },
      ],
      invalidOptions: [{ options: { letters: 'A1' }, field: 'letters' }],
    },
  },
  {
    plugin: exactEquivalencePlugin,
    kit: {
      optionSets: [{ caseSensitive: false, collapseSpace: false }],
      equalPairs: [[' C ', 'C']],
      differentPairs: [['0.5', '\\frac{1}{2}']],
    },
  },
  {
    plugin: mathEquivalence,
    kit: {
      equalPairs: [
        ['0.5', '\\frac{1}{2}'],
        ['1/2', '0.5'],
        ['1,000', '1000'],
        [' 4 ', '4.0'],
      ],
      differentPairs: [
        ['4', '5'],
        ['', ''],
      ],
    },
  },
  { plugin: grpoAdvantage, kit: { optionSets: [{ scale: 'batch' }, { scale: 'none', unbiased: false }] } },
  { plugin: drGrpoAdvantage, kit: {} },
  { plugin: rlooAdvantage, kit: {} },
  {
    plugin: jsonlSink,
    kit: {
      options: { path: 'extra/metrics.jsonl' },
      readBack: (dir: string): MetricsRecord[] =>
        fs
          .readFileSync(path.join(dir, 'extra/metrics.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
    },
  },
  // Its event files are read back by an independent reader in test/integrations/tensorboard.test.ts.
  { plugin: tensorboardSink, kit: { optionSets: [{}, { dir: 'tb', config: false }], optionalWithoutDefault: ['dir'] } },
];
