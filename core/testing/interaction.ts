import assert from 'node:assert/strict';
import type { DebateScores, Interaction } from '../contracts/interaction';
import type { PluginDefinition } from '../contracts/plugin';
import { isCorlError } from '../errors';
import { mixSeed, Rng } from '../util/rng';
import {
  commonChecks,
  expectKind,
  finite,
  kitCreate,
  label,
  labelFreeCheck,
  optionSetsOf,
  repeatableCheck,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** Inputs of the interaction suite. */
export interface InteractionKitOptions extends KitOptions {
  /** Cohort sizes to probe (default 1 to 5). */
  readonly sizes?: readonly number[];
}

/** Who reads whom in the probes: everyone (complete) and the Co-RL ring (n reads n − 1). */
export function neighbourLayouts(agents: number): readonly (readonly number[])[][] {
  const complete = Array.from({ length: agents }, (_, n) =>
    Array.from({ length: agents }, (_, m) => m).filter((m) => m !== n),
  );
  const ring = Array.from({ length: agents }, (_, n) => (agents > 1 ? [(n - 1 + agents) % agents] : []));
  return [complete, ring];
}

/**
 * Score batches to credit, seeded: 0/1 verifier scores (a ground-truth verifier), fractional scores
 * (a learned one), all right, all wrong, for 2 to 3 turns and 1 to 4 debates.
 */
export function debateScoreBatches(agents: number, neighbours: readonly (readonly number[])[]): DebateScores[] {
  const rng = new Rng(mixSeed(7, 'interaction-suite', agents));
  const out: DebateScores[] = [];
  for (const turns of [2, 3])
    for (const debates of [1, 4])
      for (const kind of ['binary', 'fraction', 'right', 'wrong'] as const) {
        const scores = Array.from({ length: turns }, () =>
          Array.from({ length: agents }, () =>
            Array.from({ length: debates }, () =>
              kind === 'right' ? 1 : kind === 'wrong' ? 0 : kind === 'binary' ? (rng.next() < 0.5 ? 0 : 1) : rng.next(),
            ),
          ),
        );
        out.push(deepFrozen({ agents, turns, debates, scores, neighbours }));
      }
  return out;
}

function deepFrozen<T>(x: T): T {
  if (x && typeof x === 'object') {
    for (const v of Object.values(x)) deepFrozen(v);
    Object.freeze(x);
  }
  return x;
}

type Probe = { agents: number; layout: number; refused?: string; credits?: number[][][][] };

function probe(t: Interaction, sizes: readonly number[]): Probe[] {
  const out: Probe[] = [];
  for (const agents of sizes)
    neighbourLayouts(agents).forEach((neighbours, layout) => {
      try {
        t.validate(agents, neighbours);
      } catch (e) {
        assert.ok(
          isCorlError(e),
          `validate(${agents}, …) should refuse a cohort with a coded CorlError, got ${String((e as Error)?.stack ?? e)}`,
        );
        out.push({ agents, layout, refused: e.code });
        return;
      }
      out.push({ agents, layout, credits: debateScoreBatches(agents, neighbours).map((d) => t.credit(d)) });
    });
  return out;
}

/** The interaction checks. */
export function interactionChecks(plugin: PluginDefinition<'interaction'>, kit: InteractionKitOptions = {}): Check[] {
  expectKind(plugin, 'interaction');
  const sizes = kit.sizes ?? [1, 2, 3, 4, 5];
  return [
    ...commonChecks('interaction', plugin, kit),
    labelFreeCheck(
      'interaction',
      plugin,
      'an interaction sees verifier scores only; ground truth belongs to the reward source (the verifier)',
    ),
    {
      title: 'has at least one discussion round and a known share',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const t = await kitCreate(plugin, kit, options);
          assert.ok(
            Number.isInteger(t.rounds) && t.rounds >= 1,
            `${label(options)}: rounds should be an integer ≥ 1, got ${t.rounds}`,
          );
          assert.ok(
            ['answer', 'solution'].includes(t.share),
            `${label(options)}: share should be "answer" or "solution", got ${t.share}`,
          );
        }
      },
    },
    {
      title: 'credits every turn with a finite reward, in the shape of the scores, for every cohort it accepts',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const t = await kitCreate(plugin, kit, options);
          const probes = probe(t, sizes);
          assert.ok(
            probes.some((p) => p.credits && p.agents >= 2),
            `${label(options)}: should accept some cohort of 2 or more agents among ${sizes.join(', ')}`,
          );
          for (const p of probes) {
            if (!p.credits) continue;
            const batches = debateScoreBatches(p.agents, neighbourLayouts(p.agents)[p.layout]!);
            p.credits.forEach((rewards, b) => {
              const d = batches[b]!;
              const what = `${label(options)}: credit of ${d.turns} turns × ${d.agents} agents × ${d.debates} debates`;
              assert.ok(Array.isArray(rewards) && rewards.length === d.turns, `${what} should have ${d.turns} rounds`);
              rewards.forEach((row, r) => {
                assert.ok(
                  Array.isArray(row) && row.length === d.agents,
                  `${what}: round ${r} should have ${d.agents} agents`,
                );
                row.forEach((g, a) => {
                  assert.ok(
                    Array.isArray(g) && g.length === d.debates,
                    `${what}: round ${r} agent ${a} should have ${d.debates} rewards`,
                  );
                  g.forEach((v, k) => finite(v, `${what}: reward [${r}][${a}][${k}]`));
                });
              });
            });
          }
        }
      },
    },
    {
      title: 'names a known kind for every round and only earlier turns to read (when it has turn or reads)',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const t = await kitCreate(plugin, kit, options);
          if (!t.turn && !t.reads) continue;
          for (const agents of sizes)
            neighbourLayouts(agents).forEach((neighbours) => {
              try {
                t.validate(agents, neighbours);
              } catch {
                return;
              }
              for (let r = 1; r <= t.rounds; r++) {
                const kind = t.turn?.(r) ?? 'answer';
                assert.ok(
                  kind === 'answer' || kind === 'evaluate',
                  `${label(options)}: turn(${r}) should be "answer" or "evaluate", got ${String(kind)}`,
                );
                for (let a = 0; a < agents; a++) {
                  const refs = t.reads
                    ? t.reads(r, a, neighbours)
                    : neighbours[a]!.map((m) => ({ round: r - 1, agent: m }));
                  const what = `${label(options)}: reads(${r}, ${a}) of ${agents} agents`;
                  assert.ok(Array.isArray(refs), `${what} should be an array`);
                  for (const ref of refs)
                    assert.ok(
                      Number.isInteger(ref.round) &&
                        ref.round >= 0 &&
                        ref.round < r &&
                        Number.isInteger(ref.agent) &&
                        ref.agent >= 0 &&
                        ref.agent < agents,
                      `${what} should name turns of rounds 0..${r - 1} and agents 0..${agents - 1}, got ${JSON.stringify(ref)}`,
                    );
                  if (kind === 'evaluate')
                    assert.equal(refs.length, 1, `${what}: an evaluate round reads exactly one turn`);
                }
              }
            });
        }
      },
    },
    repeatableCheck(
      'is deterministic and pure (frozen scores, the same credit when asked again)',
      plugin,
      kit,
      (t) => probe(t, sizes),
      'credits',
    ),
  ];
}

/**
 * The interaction contract as a test suite: at least one round and a known share, label-free,
 * cohorts it cannot serve refused by `validate` with a coded error, and `credit` returning one finite
 * reward per turn (the scores' shape), deterministically, without changing its (frozen) input.
 */
export function interactionContract(plugin: PluginDefinition<'interaction'>, kit: InteractionKitOptions = {}): void {
  suite('interaction', plugin, kit, interactionChecks(plugin, kit));
}
