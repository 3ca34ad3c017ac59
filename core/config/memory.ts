// What a run must hold at once, estimated before it starts (so `corl validate` refuses what would
// run out of memory in `corl train`): a lower bound, from the config's sizes and each policy's own
// estimate of its sampling caches. Realistic runs sit orders of magnitude below the limits; a typo
// or a runaway size (a group of 100,000, a batch of a million) does not, and is refused naming it.
import * as os from 'node:os';
import * as v8 from 'node:v8';
import type { PluginRegistry } from '../registry/registry';
import { CorlError, errorLine } from '../errors';
import type { CorlConfig } from './types';

/** Bytes the trainer holds per completion it keeps (the object, its arrays' headers, its view for rewards). */
const PER_COMPLETION = 160;
/** Bytes per generated token it keeps: the token id and its log-probability. */
const PER_TOKEN = 12;

/** Where a run's memory goes: JavaScript heap and memory outside it (ArrayBuffers, native sessions). */
export interface MemoryLimits {
  readonly heap: number;
  readonly native: number;
}

/** This process's limits: V8's heap limit, and the machine's memory. */
export function processLimits(): MemoryLimits {
  return { heap: v8.getHeapStatistics().heap_size_limit, native: os.totalmem() };
}

/** One sampling load: how many sequences at once, of how many tokens. */
interface Load {
  readonly what: string;
  readonly rows: number;
  readonly maxTokens: number;
  /** The config fields that set it, the likeliest culprit first. */
  readonly fields: readonly { readonly path: string; readonly value: number; readonly shown?: string }[];
}

const gib = (b: number): string => `${(b / 2 ** 30).toFixed(b < 2 ** 30 ? 2 : 1)} GiB`;

/**
 * Refuse a training config whose step or evaluation cannot fit in memory (CORL_ERR_CONFIG_MEMORY,
 * naming the field to lower). `evalProblems` is the number of problems an evaluation samples.
 */
export function checkMemory(
  config: Pick<CorlConfig, 'agents' | 'trainer' | 'eval'>,
  registry: PluginRegistry,
  sizes: { readonly evalProblems: number; readonly rounds: number },
  limits: MemoryLimits = processLimits(),
): void {
  const t = config.trainer;
  const ev = config.eval;
  const agents = config.agents.length;
  const byRatio = (fs: { path: string; value: number; usual: number; shown?: string }[]) =>
    [...fs].sort((a, b) => b.value / b.usual - a.value / a.usual);
  const loads: Load[] = [
    {
      what: 'a training step',
      rows: t.batchSize * t.groupSize * (1 + sizes.rounds),
      maxTokens: t.sampling.maxTokens,
      fields: byRatio([
        { path: 'trainer.groupSize', value: t.groupSize, usual: 8 },
        { path: 'trainer.batchSize', value: t.batchSize, usual: 16 },
        { path: 'trainer.sampling.maxTokens', value: t.sampling.maxTokens, usual: 256 },
      ]),
    },
    {
      what: 'an evaluation',
      rows: sizes.evalProblems * ev.samples,
      maxTokens: ev.sampling.maxTokens,
      fields: byRatio([
        { path: 'eval.samples', value: ev.samples, usual: 4 },
        { path: 'eval.maxProblems', value: sizes.evalProblems, usual: 500, shown: `${sizes.evalProblems} problems` },
        { path: 'eval.sampling.maxTokens', value: ev.sampling.maxTokens, usual: 256 },
      ]),
    },
  ];
  for (const load of loads) {
    const heap = agents * load.rows * (PER_COMPLETION + PER_TOKEN * load.maxTokens);
    let native = 0;
    const by: string[] = [];
    config.agents.forEach((a, i) => {
      const f = registry.get('policy', a.policy.use).manifest.memory;
      if (typeof f !== 'function') return;
      let bytes: number;
      try {
        bytes = Number(f(a.policy.options as never, { rows: load.rows, maxTokens: load.maxTokens }));
      } catch (e) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_INVALID',
          `expected manifest.memory of "${a.policy.use}" to estimate its sampling caches, got an error: ${errorLine(e)}`,
          { where: `agents[${i}].policy` },
        );
      }
      if (Number.isFinite(bytes) && bytes > 0) {
        native += bytes;
        by.push(`agents[${i}] (${a.policy.use}) ${gib(bytes)}`);
      }
    });
    const over =
      heap > limits.heap
        ? `${gib(heap)} of JavaScript heap for the completions alone, over this process's ${gib(limits.heap)}`
        : native > limits.native
          ? `${gib(native)} for the policies' sampling caches (${by.join(', ')}), over this machine's ${gib(limits.native)}`
          : undefined;
    if (!over) continue;
    const culprit = load.fields[0]!;
    throw new CorlError(
      'CORL_ERR_CONFIG_MEMORY',
      `expected ${load.what} that fits in memory, got ${agents} agent(s) × ${load.rows.toLocaleString('en-US')} sequences of up to ${load.maxTokens} tokens (${load.fields.map((f) => `${f.path} ${f.shown ?? f.value}`).join(', ')}): at least ${over}`,
      {
        where: culprit.path,
        hint: `lower ${culprit.path} (or ${load.fields
          .slice(1)
          .map((f) => f.path)
          .join(' or ')})`,
      },
    );
  }
}
