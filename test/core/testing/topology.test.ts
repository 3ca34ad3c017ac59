import type { Topology } from '../../../core/contracts/topology';
import { CorlError } from '../../../core/errors';
import { definePlugin } from '../../../core/registry/define';
import { topologyChecks } from '../../../core/testing';
import { fails, passes } from './helpers';

const topology = (name: string, create: () => Topology) =>
  definePlugin({
    manifest: {
      name,
      kind: 'topology',
      description: 'test topology',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/topology (the topology suite catches broken topologies)', () => {
  it('an agent among its own supervisors without selfSupervised is caught', async () => {
    const all = topology('test:all', () => ({
      selfSupervised: false,
      validate: () => undefined,
      supervisors: (_n, N) => [...Array(N).keys()],
    }));
    await fails(topologyChecks(all), 'valid supervisors', /includes agent 0 itself/);
  });

  it('out-of-range, repeated and empty supervisor lists are caught', async () => {
    await fails(
      topologyChecks(
        topology('test:far', () => ({
          selfSupervised: false,
          validate: () => undefined,
          supervisors: (n, N) => [((n + 1) % N) + N],
        })),
      ),
      'valid supervisors',
      /agent indices in \[0, 1\)|agent indices/,
    );
    await fails(
      topologyChecks(
        topology('test:twice', () => ({ selfSupervised: true, validate: () => undefined, supervisors: (n) => [n, n] })),
      ),
      'valid supervisors',
      /should not repeat/,
    );
    await fails(
      topologyChecks(
        topology('test:none', () => ({ selfSupervised: false, validate: () => undefined, supervisors: () => [] })),
      ),
      'valid supervisors',
      /should not be empty/,
    );
    await passes(
      topologyChecks(
        topology('test:none2', () => ({ selfSupervised: false, validate: () => undefined, supervisors: () => [] })),
        { allowUnsupervised: true },
      ),
      'valid supervisors',
    );
  });

  it('validate refusing a cohort with a plain Error is caught; a coded refusal passes', async () => {
    const plain = topology('test:plain', () => ({
      selfSupervised: false,
      validate: (N) => {
        if (N < 2) throw new Error('too small');
      },
      supervisors: (n, N) => [(n + N - 1) % N],
    }));
    await fails(topologyChecks(plain), 'valid supervisors', /coded CorlError/);
  });

  it('a topology that accepts no cohort of two or more is caught', async () => {
    const never = topology('test:never', () => ({
      selfSupervised: false,
      validate: (N) => {
        throw new CorlError('CORL_ERR_CONFIG_TOPOLOGY', `expected nothing, got ${N}`);
      },
      supervisors: () => [0],
    }));
    await fails(topologyChecks(never), 'valid supervisors', /should accept some cohort/);
  });

  it('answers that change between calls are caught', async () => {
    let t = 0;
    const moody = topology('test:moody', () => ({
      selfSupervised: true,
      validate: () => undefined,
      supervisors: (n, N) => [(n + t++) % N],
    }));
    await fails(topologyChecks(moody), 'deterministic', /same/);
  });
});
