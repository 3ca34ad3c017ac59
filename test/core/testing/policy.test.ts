import { expect } from 'chai';
import type { Completion } from '../../../core/contracts/completion';
import type { Policy, SamplingOptions } from '../../../core/contracts/policy';
import { CorlError } from '../../../core/errors';
import { definePlugin } from '../../../core/registry/define';
import { policyChecks, updateBatch } from '../../../core/testing';
import { Rng } from '../../../core/util/rng';
import { fails, passes } from './helpers';

/** A minimal honest policy to break one way at a time. */
function fake(overrides: Partial<Policy> & { drift?: boolean } = {}): Policy {
  let weight = 0;
  let draws = 0;
  const base: Policy = {
    describe: () => ({ kind: 'test:fake', family: 'fake', canTrain: true }),
    async sample(requests, o: SamplingOptions) {
      const rng = new Rng(o.seed + (overrides.drift ? draws++ : 0));
      return requests.map((r) =>
        Array.from({ length: o.n }, (): Completion => {
          const len = Math.min(r.overrides?.maxTokens ?? o.maxTokens, 2);
          const ids = Array.from({ length: len }, () => rng.int(3));
          return {
            text: ids.join(''),
            tokenIds: ids,
            logprobs: ids.map(() => Math.log(1 / 3) + weight * 0),
            finishReason: 'length',
          };
        }),
      );
    },
    async update() {
      weight += 1;
      return { metrics: { 'loss/policy': 0.5 } };
    },
    async save() {
      /* nothing to save: the fake's samples do not depend on its weight */
    },
    async load() {
      throw new CorlError('CORL_ERR_POLICY_CHECKPOINT', 'expected a checkpoint, got none');
    },
  };
  return { ...base, ...overrides };
}

const policy = (name: string, create: () => Policy) =>
  definePlugin({
    manifest: {
      name,
      kind: 'policy',
      description: 'test policy',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/policy (the policy suite catches broken policies)', () => {
  it('updateBatch gives the first completion of a prompt +1 and the others -1/(n-1)', () => {
    const c = (t: string): Completion => ({ text: t, tokenIds: [0], logprobs: [-1], finishReason: 'stop' });
    const b = updateBatch([{ prompt: 'p' }], [[c('a'), c('b'), c('c')]], 4);
    expect(b.samples.map((s) => s.advantage)).to.deep.equal([1, -0.5, -0.5]);
    expect(b.loss).to.include({ type: 'bnpo', beta: 0, maxCompletionLength: 4 });
  });

  it('an honest policy passes sampling, determinism and update checks', async () => {
    const checks = policyChecks(policy('test:fake', () => fake()));
    await passes(checks, 'samples n completions');
    await passes(checks, 'deterministic');
    await passes(checks, 'updates from advantages');
    await passes(checks, 'describes itself');
  });

  it('wrong group sizes, overlong completions, misaligned or positive logprobs are caught', async () => {
    await fails(
      policyChecks(
        policy('test:n', () =>
          fake({
            async sample(reqs) {
              return reqs.map(() => []);
            },
          }),
        ),
      ),
      'samples n completions',
      /should get n = 3/,
    );
    await fails(
      policyChecks(
        policy('test:long', () =>
          fake({
            async sample(reqs, o) {
              return reqs.map(() =>
                Array.from({ length: o.n }, () => ({
                  text: 'x',
                  tokenIds: Array(o.maxTokens + 1).fill(0),
                  logprobs: Array(o.maxTokens + 1).fill(-1),
                  finishReason: 'length' as const,
                })),
              );
            },
          }),
        ),
      ),
      'samples n completions',
      /at most maxTokens/,
    );
    await fails(
      policyChecks(
        policy('test:align', () =>
          fake({
            async sample(reqs, o) {
              return reqs.map(() =>
                Array.from({ length: o.n }, () => ({
                  text: 'x',
                  tokenIds: [1, 2],
                  logprobs: [-1],
                  finishReason: 'stop' as const,
                })),
              );
            },
          }),
        ),
      ),
      'samples n completions',
      /one logprob per token/,
    );
    await fails(
      policyChecks(
        policy('test:pos', () =>
          fake({
            async sample(reqs, o) {
              return reqs.map(() =>
                Array.from({ length: o.n }, () => ({
                  text: 'x',
                  tokenIds: [1],
                  logprobs: [0.3],
                  finishReason: 'stop' as const,
                })),
              );
            },
          }),
        ),
      ),
      'samples n completions',
      /should be <= 0/,
    );
  });

  it('missing token statistics are caught when the policy claims them', async () => {
    await fails(
      policyChecks(
        policy('test:stats', () => fake()),
        { tokenStats: true },
      ),
      'samples n completions',
      /entropies and meanLogprobs should be present/,
    );
  });

  it('sampling that ignores the seed is caught', async () => {
    await fails(policyChecks(policy('test:drift', () => fake({ drift: true }))), 'deterministic', /same seed/);
  });

  it('a policy that cannot train must refuse with CORL_ERR_POLICY_CANNOT_TRAIN', async () => {
    const sampler = () =>
      fake({
        describe: () => ({ kind: 'test:s', family: 'f', canTrain: false }),
        async update() {
          throw new Error('no');
        },
      });
    await fails(
      policyChecks(policy('test:sampler', sampler)),
      'updates from advantages',
      /CORL_ERR_POLICY_CANNOT_TRAIN/,
    );
    const coded = () =>
      fake({
        describe: () => ({ kind: 'test:s', family: 'f', canTrain: false }),
        async update() {
          throw new CorlError('CORL_ERR_POLICY_CANNOT_TRAIN', 'expected a trainable policy, got a sampler');
        },
      });
    await passes(policyChecks(policy('test:coded', coded)), 'updates from advantages');
  });

  it('a load that does not restore the weights, or accepts an empty folder silently, is caught', async () => {
    let id = 0;
    const forgetful = () => {
      const me = id++;
      return fake({
        async sample(reqs, o) {
          return reqs.map(() =>
            Array.from({ length: o.n }, () => ({
              text: String(me),
              tokenIds: [me],
              logprobs: [-1],
              finishReason: 'stop' as const,
            })),
          );
        },
        async load() {
          /* forgets to restore anything */
        },
      });
    };
    await fails(policyChecks(policy('test:forgetful', forgetful)), 'save then load', /sample exactly as the saved one/);
    await fails(
      policyChecks(
        policy('test:lenient', () =>
          fake({
            async load() {
              /* accepts anything */
            },
          }),
        ),
      ),
      'save then load',
      /load\(\) of an empty folder should throw/,
    );
  });
});
