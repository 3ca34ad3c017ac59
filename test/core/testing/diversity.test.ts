import type { DiversityStrategy } from '../../../core/contracts/diversity-strategy';
import { definePlugin } from '../../../core/registry/define';
import { diversityChecks } from '../../../core/testing';
import { fails } from './helpers';

const strategy = (name: string, create: () => DiversityStrategy) =>
  definePlugin({
    manifest: {
      name,
      kind: 'diversity',
      description: 'test diversity',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/diversity (the diversity suite catches broken strategies)', () => {
  it('overriding n, an empty prompt or a bad topP is caught', async () => {
    await fails(
      diversityChecks(
        strategy('test:n', () => ({ view: (p) => ({ prompt: p.prompt, overrides: { n: 3 } as never }) })),
      ),
      'valid view',
      /cannot change n/,
    );
    await fails(
      diversityChecks(strategy('test:empty', () => ({ view: () => ({ prompt: '' }) }))),
      'valid view',
      /should not be empty/,
    );
    await fails(
      diversityChecks(strategy('test:topp', () => ({ view: (p) => ({ prompt: p.prompt, overrides: { topP: 0 } }) }))),
      'valid view',
      /topP/,
    );
  });

  it('a strategy that mutates the problem is caught', async () => {
    const mutating = strategy('test:mutating', () => ({
      view: (p) => {
        (p as { prompt: string }).prompt += '!';
        return { prompt: p.prompt };
      },
    }));
    await fails(diversityChecks(mutating), 'valid view', /read.only|Cannot assign/);
  });

  it('a plain Error for an unservable problem is caught', async () => {
    const strict = strategy('test:strict', () => ({
      view: (p, agent) => {
        if (agent > 0 && !p.variants) throw new Error('no variants');
        return { prompt: p.variants?.[0] ?? p.prompt };
      },
    }));
    await fails(diversityChecks(strict), 'valid view', /coded CorlError/);
  });

  it('views that depend on hidden state are caught', async () => {
    let calls = 0;
    const counting = strategy('test:counting', () => ({ view: (p) => ({ prompt: `${p.prompt} (${calls++})` }) }));
    await fails(diversityChecks(counting), 'deterministic', /same/);
  });
});
