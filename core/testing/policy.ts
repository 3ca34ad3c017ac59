import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Completion } from '../contracts/completion';
import type { PluginDefinition } from '../contracts/plugin';
import type { Policy, SampleRequest, SamplingOptions, UpdateBatch } from '../contracts/policy';
import { isCorlError } from '../errors';
import {
  commonChecks,
  expectKind,
  finite,
  kitCreate,
  label,
  optionSetsOf,
  sameTranscript,
  suite,
  thrown,
  type Check,
  type KitOptions,
} from './common';

/** Inputs of the policy suite. */
export interface PolicyKitOptions extends KitOptions {
  /** Prompts to sample from (default: two arithmetic questions). */
  readonly prompts?: readonly string[];
  /** Completions per prompt (default 3). */
  readonly n?: number;
  /** Maximum new tokens (default 8). */
  readonly maxTokens?: number;
  /** The policy supports `tokenStats: true` (per-token entropy and mean log-probability); checked when set. */
  readonly tokenStats?: boolean;
}

const FINISH = new Set(['stop', 'length', 'error']);

function sampling(kit: PolicyKitOptions, seed: number, extra: Partial<SamplingOptions> = {}): SamplingOptions {
  return { n: kit.n ?? 3, temperature: 1, topP: 1, maxTokens: kit.maxTokens ?? 8, seed, ...extra };
}

function requests(kit: PolicyKitOptions): SampleRequest[] {
  return (kit.prompts ?? ['What is 2 + 2?', 'What is 13 - 6?']).map((prompt) => ({ prompt }));
}

function checkCompletions(out: Completion[][], reqs: readonly SampleRequest[], o: SamplingOptions, what: string): void {
  assert.ok(Array.isArray(out), `${what}: sample() should resolve to an array of groups`);
  assert.equal(out.length, reqs.length, `${what}: one group per request`);
  out.forEach((group, i) => {
    assert.equal(group.length, o.n, `${what}: request ${i} should get n = ${o.n} completions`);
    group.forEach((c, k) => {
      const at = `${what}: request ${i} completion ${k}`;
      assert.equal(typeof c.text, 'string', `${at}: text`);
      assert.ok(
        c.tokenIds.length <= o.maxTokens,
        `${at}: at most maxTokens = ${o.maxTokens} tokens, got ${c.tokenIds.length}`,
      );
      assert.equal(c.logprobs.length, c.tokenIds.length, `${at}: one logprob per token`);
      for (const id of c.tokenIds)
        assert.ok(Number.isInteger(id) && id >= 0, `${at}: token ids are non-negative integers`);
      c.logprobs.forEach((l, t) => {
        finite(l, `${at}: logprob ${t}`);
        assert.ok(l <= 1e-9, `${at}: logprob ${t} should be <= 0, got ${l}`);
      });
      assert.ok(FINISH.has(c.finishReason), `${at}: finishReason should be stop, length or error`);
      if (o.tokenStats) {
        assert.ok(
          c.entropies && c.meanLogprobs,
          `${at}: tokenStats was asked for, so entropies and meanLogprobs should be present`,
        );
        assert.equal(c.entropies.length, c.tokenIds.length, `${at}: one entropy per token`);
        assert.equal(c.meanLogprobs.length, c.tokenIds.length, `${at}: one mean log-probability per token`);
        c.entropies.forEach((h, t) => {
          finite(h, `${at}: entropy ${t}`);
          assert.ok(h >= -1e-9, `${at}: entropy ${t} should be >= 0`);
        });
        c.meanLogprobs.forEach((m, t) => {
          finite(m, `${at}: meanLogprob ${t}`);
          assert.ok(m <= 1e-9, `${at}: meanLogprob ${t} should be <= 0`);
        });
      }
    });
  });
}

/** A batch from sampled completions: the first completion of each prompt rewarded, the rest not (GRPO-style advantages). */
export function updateBatch(
  reqs: readonly SampleRequest[],
  out: Completion[][],
  maxTokens: number,
  step = 0,
): UpdateBatch {
  const samples = out.flatMap((group, i) =>
    group.map((completion, k) => {
      const n = group.length;
      const advantage = n < 2 ? 0 : k === 0 ? 1 : -1 / (n - 1);
      return { prompt: reqs[i]!.prompt, completion, advantage };
    }),
  );
  return {
    samples,
    loss: { type: 'bnpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: maxTokens },
    temperature: 1,
    step,
    totalSteps: 4,
  };
}

async function withTemp<T>(f: (dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-kit-policy-'));
  try {
    return await f(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function closeAll(...policies: Policy[]): Promise<void> {
  for (const p of policies) await p.close?.();
}

/** The policy checks. */
export function policyChecks(plugin: PluginDefinition<'policy'>, kit: PolicyKitOptions = {}): Check[] {
  expectKind(plugin, 'policy');
  const create = (options: Readonly<Record<string, unknown>>): Promise<Policy> =>
    kitCreate(plugin, kit, options, { agent: 0 });
  return [
    ...commonChecks('policy', plugin, kit),
    {
      title: 'describes itself (kind, family, whether it trains)',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const p = await create(options);
          const d = p.describe();
          assert.equal(typeof d.kind, 'string', 'describe().kind');
          assert.equal(typeof d.family, 'string', 'describe().family');
          assert.ok(
            d.family.length > 0,
            'describe().family should not be empty (it tells cross-family pairs from same-family ones)',
          );
          assert.equal(typeof d.canTrain, 'boolean', 'describe().canTrain');
          if (d.parameters !== undefined)
            assert.ok(Number.isInteger(d.parameters) && d.parameters >= 0, 'describe().parameters');
          await closeAll(p);
        }
      },
    },
    {
      title: 'samples n completions per request with one finite logprob per token, within maxTokens',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const p = await create(options);
          const reqs = requests(kit);
          for (const o of [
            sampling(kit, 3),
            sampling(kit, 4, { temperature: 0 }),
            sampling(kit, 5, { topP: 0.5, maxTokens: 1 }),
            sampling(kit, 6, { n: 1 }),
          ]) {
            checkCompletions(
              await p.sample(reqs, o),
              reqs,
              o,
              `${label(options)}, ${JSON.stringify({ ...o, n: undefined })}`,
            );
          }
          const overridden = [{ prompt: reqs[0]!.prompt, overrides: { temperature: 0.5, maxTokens: 2 } }];
          const o = sampling(kit, 7);
          checkCompletions(
            await p.sample(overridden, o),
            overridden,
            { ...o, maxTokens: 2 },
            `${label(options)}, per-request overrides`,
          );
          assert.deepEqual(await p.sample([], o), [], 'no requests, no completions');
          if (kit.tokenStats) {
            const s = sampling(kit, 8, { tokenStats: true });
            checkCompletions(await p.sample(reqs, s), reqs, s, `${label(options)}, tokenStats`);
          }
          await closeAll(p);
        }
      },
    },
    {
      title: 'is deterministic under a seed (same seed, same weights, same completions)',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await create(options);
          const b = await create(options);
          const reqs = requests(kit);
          const o = sampling(kit, 21);
          const first = await a.sample(reqs, o);
          assert.deepEqual(
            await a.sample(reqs, o),
            first,
            `${label(options)}: sampling again with the same seed should give the same completions`,
          );
          sameTranscript(first, await b.sample(reqs, o), `completions for ${label(options)}`);
          await closeAll(a, b);
        }
      },
    },
    {
      title: 'updates from advantages with finite metrics, or refuses with CORL_ERR_POLICY_CANNOT_TRAIN',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const p = await create(options);
          const reqs = requests(kit);
          const o = sampling(kit, 31);
          const batch = updateBatch(reqs, await p.sample(reqs, o), o.maxTokens);
          if (!p.describe().canTrain) {
            const e = await thrown(() => p.update(batch), `${label(options)}: update() of a policy that cannot train`);
            assert.ok(
              isCorlError(e, 'CORL_ERR_POLICY_CANNOT_TRAIN'),
              `${label(options)}: update() should throw CORL_ERR_POLICY_CANNOT_TRAIN, got ${String((e as Error)?.message ?? e)}`,
            );
          } else {
            const result = await p.update(batch);
            for (const [name, v] of Object.entries(result.metrics)) {
              assert.match(name, /^[a-z0-9_]+\/[a-z0-9_./-]+$/, `metric names are namespaced, e.g. "loss/policy"`);
              finite(v, `${label(options)}: update metric "${name}"`);
            }
            checkCompletions(await p.sample(reqs, o), reqs, o, `${label(options)}, after an update`);
          }
          await closeAll(p);
        }
      },
    },
    {
      title: 'save then load restores exactly what was saved; a missing checkpoint is a coded error',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          await withTemp(async (dir) => {
            const a = await create(options);
            const reqs = requests(kit);
            const o = sampling(kit, 41);
            if (a.describe().canTrain) await a.update(updateBatch(reqs, await a.sample(reqs, o), o.maxTokens));
            const ckpt = path.join(dir, 'checkpoint');
            await a.save(ckpt);
            const b = await create(options);
            await b.load(ckpt);
            const probe = sampling(kit, 42);
            assert.deepEqual(
              await b.sample(reqs, probe),
              await a.sample(reqs, probe),
              `${label(options)}: a loaded policy should sample exactly as the saved one`,
            );
            const empty = path.join(dir, 'empty');
            fs.mkdirSync(empty);
            const c = await create(options);
            const e = await thrown(() => c.load(empty), `${label(options)}: load() of an empty folder`);
            assert.ok(
              isCorlError(e),
              `${label(options)}: load() of an empty folder should throw a coded error (e.g. CORL_ERR_POLICY_CHECKPOINT), got ${String((e as Error)?.message ?? e)}`,
            );
            await closeAll(a, b, c);
          });
        }
      },
    },
  ];
}

/** The policy contract as a test suite. */
export function policyContract(plugin: PluginDefinition<'policy'>, kit: PolicyKitOptions = {}): void {
  suite('policy', plugin, kit, policyChecks(plugin, kit));
}
