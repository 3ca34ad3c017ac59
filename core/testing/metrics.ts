import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MetricsRecord } from '../contracts/metrics-sink';
import type { PluginDefinition } from '../contracts/plugin';
import { commonChecks, expectKind, kitCreate, label, optionSetsOf, suite, type Check, type KitOptions } from './common';

/** Records a sink receives in a short run: training and evaluation lines, per agent and cohort-wide. */
export function sampleRecords(): MetricsRecord[] {
  return [
    { step: 0, agent: 0, phase: 'eval', metrics: { 'eval/accuracy': 0.25 } },
    { step: 0, agent: null, phase: 'eval', metrics: { 'pair/0-1/kappa': 0.38 } },
    { step: 1, agent: 0, phase: 'train', metrics: { 'reward/mean': 0.5, 'label/labeled_fraction': 1 } },
    { step: 1, agent: 1, phase: 'train', metrics: { 'reward/mean': 0.75, 'loss/clip_fraction': 0 } },
    { step: 2, agent: 0, phase: 'train', metrics: {} },
  ];
}

/** Inputs of the metrics-sink suite. */
export interface MetricsKitOptions extends KitOptions {
  /** Read back what a sink built with `options` wrote under `baseDir`; the suite compares it with what it sent. */
  readonly readBack?: (
    baseDir: string,
    options: Readonly<Record<string, unknown>>,
  ) => MetricsRecord[] | Promise<MetricsRecord[]>;
}

/** The metrics-sink checks. `baseDir` defaults to a fresh temporary folder per check, removed afterwards. */
export function metricsChecks(plugin: PluginDefinition<'metrics'>, kit: MetricsKitOptions = {}): Check[] {
  expectKind(plugin, 'metrics');
  const inTemp = async (f: (dir: string) => Promise<void>): Promise<void> => {
    if (kit.baseDir) return f(kit.baseDir);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-kit-metrics-'));
    try {
      await f(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  return [
    ...commonChecks('metrics', plugin, { ...kit, baseDir: kit.baseDir ?? os.tmpdir() }),
    {
      title: 'accepts records in step order, cohort-wide ones included, closes, and keeps what it was sent',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          await inTemp(async (dir) => {
            const sink = await kitCreate(plugin, { ...kit, baseDir: dir }, options);
            assert.equal(typeof sink.write, 'function', 'a sink has write(record)');
            for (const r of sampleRecords()) {
              const out = await sink.write(Object.freeze(r));
              assert.equal(out, undefined, `${label(options)}: write() resolves to nothing`);
            }
            await sink.close?.();
            if (kit.readBack)
              assert.deepEqual(
                await kit.readBack(dir, options),
                sampleRecords(),
                `${label(options)}: the records read back should be the ones written, in order`,
              );
          });
        }
      },
    },
  ];
}

/** The metrics-sink contract as a test suite. */
export function metricsContract(plugin: PluginDefinition<'metrics'>, kit: MetricsKitOptions = {}): void {
  suite('metrics', plugin, kit, metricsChecks(plugin, kit));
}
