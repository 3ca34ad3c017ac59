import type { Equivalence } from '../../../core/contracts/equivalence';
import { definePlugin } from '../../../core/registry/define';
import { equivalenceChecks, exactEquivalence } from '../../../core/testing';
import { fails, passes } from './helpers';

const equivalence = (name: string, create: () => Equivalence) =>
  definePlugin({
    manifest: {
      name,
      kind: 'equivalence',
      description: 'test equivalence',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/equivalence (the equivalence suite catches broken equivalences)', () => {
  it('an empty answer with a key is caught', async () => {
    await fails(
      equivalenceChecks(equivalence('test:keep', () => ({ key: (a) => a, equal: async (a, b) => a === b }))),
      'empty answer has no key',
      /key\(""\) should be null|non-empty string or null/,
    );
  });

  it('an asymmetric or irreflexive equal is caught', async () => {
    await fails(
      equivalenceChecks(equivalence('test:asym', () => ({ key: exactEquivalence.key, equal: async (a, b) => a <= b }))),
      'reflexive and symmetric',
      /symmetric/,
    );
    await fails(
      equivalenceChecks(equivalence('test:irrefl', () => ({ key: exactEquivalence.key, equal: async () => false }))),
      'reflexive and symmetric',
      /itself/,
    );
  });

  it('expected groupings are checked', async () => {
    const exact = equivalence('test:exact', () => exactEquivalence);
    await passes(
      equivalenceChecks(exact, { equalPairs: [[' 4', '4 ']], differentPairs: [['4', '4.0']] }),
      'groups the answers',
    );
    await fails(
      equivalenceChecks(exact, { equalPairs: [['0.5', '1/2']] }),
      'groups the answers',
      /should be equivalent/,
    );
  });
});
