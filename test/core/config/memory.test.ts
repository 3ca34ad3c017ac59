import { expect } from 'chai';
import type { CorlConfig } from '../../../core/config/types';
import { checkMemory } from '../../../core/config/memory';
import { isCorlError, type CorlError } from '../../../core/errors';
import { createRunContainer } from '../../../core/registry/container';
import { definePlugin } from '../../../core/registry/define';
import { registryOf } from '../../../core/registry/registry';
import { transformerPolicy } from '../../../plugins/policies/transformer';

// Two agents, 16 prompts × 8 completions of up to 40 tokens a step; 200 problems × 1 sample of up
// to 64 tokens an evaluation. The trainer's own share: 160 bytes a completion, 12 a token.
const config = (policy: { use: string; options: Record<string, unknown> }) =>
  ({
    agents: [
      { name: 'a', policy },
      { name: 'b', policy },
    ],
    trainer: { batchSize: 16, groupSize: 8, sampling: { maxTokens: 40 } },
    eval: { samples: 1, sampling: { maxTokens: 64 } },
  }) as unknown as CorlConfig;
const sizes = { evalProblems: 200, rounds: 0 };
const STEP_HEAP = 2 * 16 * 8 * (160 + 12 * 40); // 163,840
const EVAL_HEAP = 2 * 200 * 1 * (160 + 12 * 64); // 371,200

function refusal(f: () => void): CorlError {
  try {
    f();
  } catch (e) {
    expect(isCorlError(e, 'CORL_ERR_CONFIG_MEMORY'), String(e)).to.equal(true);
    return e as CorlError;
  }
  return expect.fail('refused') as never;
}

describe('core/config/memory (a step or an evaluation that cannot fit is refused before it runs)', () => {
  it('the heap a step and an evaluation need, against the limit, by hand', async () => {
    const registry = registryOf(await createRunContainer());
    const plain = config({ use: 'corl:openai', options: {} });
    checkMemory(plain, registry, sizes, { heap: EVAL_HEAP, native: 0 });
    const step = refusal(() => checkMemory(plain, registry, sizes, { heap: STEP_HEAP - 1, native: 0 }));
    expect(step.where).to.equal('trainer.groupSize');
    expect(step.message).to.contain('2 agent(s) × 128 sequences of up to 40 tokens');
    const ev = refusal(() => checkMemory(plain, registry, sizes, { heap: EVAL_HEAP - 1, native: 0 }));
    expect(ev.where).to.equal('eval.maxProblems');
    expect(ev.message)
      .to.contain('2 agent(s) × 200 sequences of up to 64 tokens')
      .and.contain('eval.maxProblems 200 problems');
  });

  it("adds each policy's sampling caches (its manifest's memory) against the machine's memory", async () => {
    const registry = registryOf(await createRunContainer());
    const options = { layers: 3, dModel: 96, context: 96 };
    // The transformer's KV cache: rows × layers × 2 × dModel × min(context, maxTokens) × 4 bytes.
    const perAgentStep = 128 * 3 * 2 * 96 * 40 * 4; // 11,796,480
    const perAgentEval = 200 * 3 * 2 * 96 * 64 * 4; // 29,491,200
    expect(transformerPolicy.manifest.memory!(options as never, { rows: 128, maxTokens: 40 })).to.equal(perAgentStep);
    expect(transformerPolicy.manifest.memory!(options as never, { rows: 1, maxTokens: 1000 })).to.equal(
      3 * 2 * 96 * 96 * 4,
    );
    const c = config({ use: 'corl:transformer', options });
    checkMemory(c, registry, sizes, { heap: 1e12, native: 2 * perAgentEval });
    const e = refusal(() => checkMemory(c, registry, sizes, { heap: 1e12, native: 2 * perAgentEval - 1 }));
    expect(e.where).to.equal('eval.maxProblems');
    expect(e.message).to.contain('agents[0] (corl:transformer)').and.contain("over this machine's");
  });

  it('a memory estimate that throws is a coded error naming the agent', async () => {
    const registry = registryOf(await createRunContainer());
    registry.add(
      definePlugin({
        manifest: {
          name: 'test:bad-memory',
          kind: 'policy',
          description: 'a policy whose estimate throws',
          corl: '^0.1.0',
          options: { type: 'object', properties: {}, additionalProperties: false },
          memory: () => {
            throw new Error('no idea');
          },
        },
        create: () => ({}) as never,
      }),
    );
    try {
      checkMemory(config({ use: 'test:bad-memory', options: {} }), registry, sizes);
      expect.fail('refused');
    } catch (e) {
      expect(isCorlError(e, 'CORL_ERR_PLUGIN_INVALID')).to.equal(true);
      expect((e as CorlError).where).to.equal('agents[0].policy');
    }
  });
});
