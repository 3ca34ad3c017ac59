import assert from 'node:assert/strict';
import type { PluginDefinition } from '../contracts/plugin';
import type { Topology } from '../contracts/topology';
import { isCorlError } from '../errors';
import {
  commonChecks,
  expectKind,
  kitCreate,
  label,
  optionSetsOf,
  repeatableCheck,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** Inputs of the topology suite. */
export interface TopologyKitOptions extends KitOptions {
  /** Cohort sizes to probe (default 1 to 6). */
  readonly sizes?: readonly number[];
  /** Whether an agent may have no supervisor (only when the topology was configured so). Default false. */
  readonly allowUnsupervised?: boolean;
}

type Probe = { agents: number; refused?: string; supervisors?: (readonly number[])[] };

function probe(t: Topology, sizes: readonly number[]): Probe[] {
  return sizes.map((agents) => {
    try {
      t.validate(agents);
    } catch (e) {
      assert.ok(
        isCorlError(e),
        `validate(${agents}) should refuse a cohort with a coded CorlError, got ${String((e as Error)?.stack ?? e)}`,
      );
      return { agents, refused: e.code };
    }
    return { agents, supervisors: Array.from({ length: agents }, (_, n) => [...t.supervisors(n, agents)]) };
  });
}

/** The topology checks. */
export function topologyChecks(plugin: PluginDefinition<'topology'>, kit: TopologyKitOptions = {}): Check[] {
  expectKind(plugin, 'topology');
  const sizes = kit.sizes ?? [1, 2, 3, 4, 5, 6];
  return [
    ...commonChecks('topology', plugin, kit),
    {
      title: 'names valid supervisors for every cohort it accepts, and refuses the others with a coded error',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const t = await kitCreate(plugin, kit, options);
          assert.equal(typeof t.selfSupervised, 'boolean', 'selfSupervised should be a boolean');
          const probes = probe(t, sizes);
          assert.ok(
            probes.some((p) => p.supervisors && p.agents >= 2),
            `${label(options)}: should accept some cohort of 2 or more agents among ${sizes.join(', ')}`,
          );
          for (const p of probes) {
            if (!p.supervisors) continue;
            p.supervisors.forEach((s, n) => {
              const what = `${label(options)}: supervisors(${n}, ${p.agents})`;
              assert.ok(Array.isArray(s), `${what} should be an array`);
              if (!kit.allowUnsupervised) assert.ok(s.length > 0, `${what} should not be empty`);
              for (const m of s)
                assert.ok(
                  Number.isInteger(m) && m >= 0 && m < p.agents,
                  `${what} should hold agent indices in [0, ${p.agents}), got ${m}`,
                );
              assert.equal(new Set(s).size, s.length, `${what} should not repeat an agent`);
              if (!t.selfSupervised)
                assert.ok(
                  !s.includes(n),
                  `${what} includes agent ${n} itself, but selfSupervised is false: under a peer topology an agent never contributes to its own target`,
                );
            });
          }
        }
      },
    },
    repeatableCheck(
      'is deterministic under a seed and pure (the same question gets the same answer)',
      plugin,
      kit,
      (t) => probe(t, sizes),
      'supervisors',
    ),
  ];
}

/**
 * The topology contract as a test suite: supervisors are distinct valid agent indices, never the
 * agent itself unless `selfSupervised`, cohorts it cannot serve are refused by `validate` with a
 * coded error, and answers are deterministic.
 */
export function topologyContract(plugin: PluginDefinition<'topology'>, kit: TopologyKitOptions = {}): void {
  suite('topology', plugin, kit, topologyChecks(plugin, kit));
}
