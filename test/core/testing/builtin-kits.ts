// The contract-suite inputs of every built-in plugin (the built-ins run the same suites a third-party
// plugin runs). builtins.test.ts fails when a built-in is missing here.
import * as fs from 'node:fs';
import type { MetricsRecord } from '../../../core/contracts/metrics-sink';
import type { PluginDefinition } from '../../../core/contracts/plugin';
import type { AnyKitOptions } from '../../../core/testing';
import { categoricalPolicy, register as registerTesting } from '../../../core/testing';
import * as path from 'node:path';
import { drGrpoAdvantage, grpoAdvantage, rlooAdvantage } from '../../../plugins/advantages';
import { mathEquivalence, mathExtractor } from '../../../plugins/answers';
import { noDiversity, rephraseDiversity } from '../../../plugins/diversity';
import { jsonlSink } from '../../../plugins/metrics';
import { groundTruthReward, voteReward } from '../../../plugins/rewards';
import { arithTask, inlineTask } from '../../../plugins/tasks';
import { ringTopology, selfTopology } from '../../../plugins/topologies';

export interface BuiltinKit {
  readonly plugin: PluginDefinition<any>;
  readonly kit: AnyKitOptions;
}

const inlineRows = { train: [{ id: 'a', prompt: '1+1=', answer: '2', solution: ' 1+1=2, so \\boxed{2}' }, { id: 'b', prompt: '2+2=', answer: '4' }], heldOut: [{ id: 'c', prompt: '3+3=', answer: '6', variants: ['What is 3+3?'] }] };

export const BUILTIN_KITS: readonly BuiltinKit[] = [
  { plugin: arithTask, kit: { options: { train: 12, heldOut: 4, pretrain: { size: 8 } }, optionSets: [{ train: 6, heldOut: 0, operands: { min: 3, max: 4 }, pretrain: { size: 0 } }], invalidOptions: [{ options: { operands: { min: 4, max: 3 } }, field: 'operands' }] } },
  { plugin: inlineTask, kit: { options: inlineRows, invalidOptions: [{ options: { train: [] }, field: 'train' }, { options: { train: [{ id: '', prompt: 'p' }] }, field: 'train' }] } },
  { plugin: categoricalPolicy, kit: { register: registerTesting, tokenStats: true, optionSets: [{ answers: ['yes', 'no'], prefer: { 'What is 2 + 2?': 'no' } }], invalidOptions: [{ options: { answers: ['1', '1'] }, field: 'answers' }, { options: { prefer: { x: '9' } }, field: 'prefer' }] } },
  { plugin: voteReward, kit: { optionSets: [{ rule: 'teacher' }, { threshold: 0.6 }] } },
  { plugin: groundTruthReward, kit: { optionSets: [{ correct: 2, wrong: -1 }] } },
  { plugin: ringTopology, kit: { optionSets: [{ direction: 'forward' }, { order: [2, 0, 1] }] } },
  { plugin: selfTopology, kit: {} },
  { plugin: noDiversity, kit: {} },
  { plugin: rephraseDiversity, kit: { optionalWithoutDefault: ['file'], optionSets: [{ assign: [0, 1, null], missing: 'original' }] } },
  { plugin: mathExtractor, kit: { optionSets: [{ lastNumber: false }], examples: [{ text: 'so \\boxed{\\frac{1}{2}}.', answer: '\\frac{1}{2}' }, { text: 'The answer is 42.', answer: '42' }, { text: 'no digits', answer: null }] } },
  { plugin: mathEquivalence, kit: { optionSets: [{ tolerance: 0 }], equalPairs: [['0.5', '\\frac{1}{2}'], ['1/2', '0.5'], ['1,000', '1000'], [' 4 ', '4.0']], differentPairs: [['4', '5'], ['', '']] } },
  { plugin: grpoAdvantage, kit: { optionSets: [{ scale: 'batch' }, { scale: 'none', unbiased: false }] } },
  { plugin: drGrpoAdvantage, kit: {} },
  { plugin: rlooAdvantage, kit: {} },
  {
    plugin: jsonlSink,
    kit: {
      options: { path: 'extra/metrics.jsonl' },
      readBack: (dir: string): MetricsRecord[] => fs.readFileSync(path.join(dir, 'extra/metrics.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    },
  },
];
