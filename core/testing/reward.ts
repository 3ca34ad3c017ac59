import assert from 'node:assert/strict';
import type { Equivalence } from '../contracts/equivalence';
import type { PluginDefinition, ResolvedSelection } from '../contracts/plugin';
import type { Problem, Reference } from '../contracts/problem';
import type { RewardSource } from '../contracts/reward-source';
import { isCorlError, type CorlError } from '../errors';
import { manifestQueries } from '../registry/instantiate';
import type { GroupToScore } from '../reward/context';
import { scoreGroup, scoreGroups, sourceKeys, type ScoredGroup, type ScoringParts } from '../reward/pipeline';
import {
  commonChecks,
  expectKind,
  kitCreate,
  kitOptions,
  label,
  optionSetsOf,
  sameTranscript,
  suite,
  type Check,
  type KitOptions,
} from './common';
import { exactEquivalence, groundTruthTripwire, rewardGroup, type RewardContextSpec } from './contexts';

/** Inputs of the reward-source suite. */
export interface RewardKitOptions extends KitOptions {
  /** The equivalence contexts carry (default: exact string keys). */
  readonly equivalence?: Equivalence;
  /** Extra contexts to score, on top of the suite's own scenarios (null answers, empty groups, self and peer supervision...). */
  readonly contexts?: readonly RewardContextSpec[];
  /** Texts to derive answer keys from, when the source implements `answerKeys`. */
  readonly answerKeyTexts?: readonly string[];
  /** The problem every context is about (default `{ id: 'p1', prompt: 'What is 2 + 2?' }`); e.g. one with `testInputs` for code rewards. */
  readonly problem?: Problem;
  /** The reference a source that reads ground truth receives (default `{ answer: '4' }`). */
  readonly reference?: Reference;
}

/** The scenarios every reward source is scored on. `K` completions per group. */
export function rewardScenarios(
  tokenStats: boolean,
  reference: Reference | undefined,
  equivalence?: Equivalence,
  problem?: Problem,
): { title: string; spec: RewardContextSpec }[] {
  const base = { tokenStats, equivalence, ...(reference ? { reference } : {}), ...(problem ? { problem } : {}) };
  return [
    { title: 'agreeing peer', spec: { ...base, keys: ['4', '4', '4', '5'], supervisors: [['4', '4', '5', '4']] } },
    {
      title: 'split votes',
      spec: { ...base, keys: ['1', '2', '3', '4'], supervisors: [['4', '3', '2', '1']], step: 3 },
    },
    {
      title: 'some null answers',
      spec: { ...base, keys: [null, '4', null, '6'], supervisors: [['6', null, null, '6']] },
    },
    {
      title: 'only null answers',
      spec: { ...base, keys: [null, null, null, null], supervisors: [[null, null, null, null]] },
    },
    { title: 'a supervisor with an empty group', spec: { ...base, keys: ['4', '5', '4', '4'], supervisors: [[]] } },
    { title: 'no supervisors', spec: { ...base, keys: ['4', '5', '4', '4'], supervisors: [] } },
    { title: 'an empty group (no completions)', spec: { ...base, keys: [], supervisors: [['4', '4']] } },
    { title: 'a single completion', spec: { ...base, keys: ['4'], supervisors: [['4']] } },
    {
      title: 'self-supervision (TTRL)',
      spec: { ...base, keys: ['7', '7', '8', null], supervisors: [{ agent: 0, keys: ['7', '7', '8', null] }] },
    },
    {
      title: 'two peers, agent 1 of 3',
      spec: {
        ...base,
        agent: 1,
        agents: 3,
        keys: ['4', '9', '9', '4'],
        supervisors: [
          { agent: 0, keys: ['9', '9', '4', null] },
          { agent: 2, keys: ['4', '4', '4', '9'] },
        ],
      },
    },
    {
      title: 'truncated completions',
      spec: {
        ...base,
        keys: ['4', null, '4', '3'],
        supervisors: [['4', '4', '3', '3']],
        finishReasons: ['stop', 'length', 'length', 'stop'],
      },
    },
  ];
}

/**
 * The metric names a result reports follow docs/reference/metrics.md (`area/name`). The pipeline
 * logs whatever it is given; this is the one rule the kit adds to the pipeline's checks.
 */
function namespacedMetrics(result: ScoredGroup, what: string): void {
  for (const name of Object.keys(result.metrics))
    assert.match(
      name,
      /^[a-z0-9_]+\/[a-z0-9_./-]+$/,
      `${what}: metric names are namespaced, e.g. "vote/majority_ratio"`,
    );
}

/** Every group scored through the pipeline, then the source's own answer keys (when it has them). */
async function transcript(
  parts: ScoringParts,
  groups: readonly GroupToScore[],
  texts: readonly string[],
  problem: Problem,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [i, g] of groups.entries()) out.push(await scoreGroup(parts, g, `context ${i}`));
  if (parts.reward.answerKeys) out.push(await sourceKeys(parts, problem, texts, 'the kit texts'));
  return out;
}

/** A group with a decoy reference: an answer some completion gave (or "4"). */
function withDecoy(g: GroupToScore): GroupToScore {
  const decoy = g.keys.find((k) => k !== null) ?? '4';
  return { ...g, reference: { answer: decoy, expectedOutputs: g.problem.testInputs?.map(() => decoy) } };
}

const DEFAULT_TEXTS = ['The answer is \\boxed{4}.', 'I think it is 5', '', 'no idea', '```python\nprint(4)\n```'];

/** The reward-source checks. */
export function rewardChecks(plugin: PluginDefinition<'reward'>, kit: RewardKitOptions = {}): Check[] {
  expectKind(plugin, 'reward');
  const facts = async (
    options: Readonly<Record<string, unknown>>,
  ): Promise<{ readsGroundTruth: boolean; tokenStats: boolean }> => {
    const { registry, options: resolved } = await kitOptions(plugin, kit, options);
    const q = manifestQueries(registry);
    const sel: ResolvedSelection = { use: plugin.manifest.name, options: resolved };
    return { readsGroundTruth: q.readsGroundTruth(sel), tokenStats: q.tokenStats(sel) };
  };
  const reference = (f: { readsGroundTruth: boolean }): Reference | undefined =>
    f.readsGroundTruth ? (kit.reference ?? { answer: '4' }) : undefined;
  const problem = kit.problem ?? { id: 'p1', prompt: 'What is 2 + 2?' };
  // Scored as a run scores them: the pipeline's frozen contexts, its checks, its coded errors.
  const equivalence = kit.equivalence ?? exactEquivalence;
  const partsOf = (reward: RewardSource): ScoringParts => ({ reward, use: plugin.manifest.name, equivalence });
  const groupsFor = (f: { readsGroundTruth: boolean; tokenStats: boolean }): GroupToScore[] => [
    ...rewardScenarios(f.tokenStats, reference(f), kit.equivalence, kit.problem).map((s) => rewardGroup(s.spec)),
    ...(kit.contexts ?? []).map((s) =>
      rewardGroup({
        tokenStats: f.tokenStats,
        equivalence: kit.equivalence,
        problem: kit.problem,
        reference: reference(f),
        ...s,
      }),
    ),
  ];
  return [
    ...commonChecks('reward', plugin, kit),
    {
      title: 'returns one finite reward per completion, for null answers and empty groups too',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const f = await facts(options);
          const source = await kitCreate(plugin, kit, options);
          const scenarios = rewardScenarios(f.tokenStats, reference(f), kit.equivalence, kit.problem);
          for (const [i, g] of groupsFor(f).entries()) {
            const what = `${label(options)}, ${scenarios[i]?.title ?? `contexts[${i - scenarios.length}]`}`;
            namespacedMetrics(await scoreGroup(partsOf(source), g, what), what);
          }
          await source.close?.();
        }
      },
    },
    {
      title: 'is deterministic under a seed',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const f = await facts(options);
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          sameTranscript(
            await transcript(partsOf(a), groupsFor(f), kit.answerKeyTexts ?? DEFAULT_TEXTS, problem),
            await transcript(partsOf(b), groupsFor(f), kit.answerKeyTexts ?? DEFAULT_TEXTS, problem),
            `rewards for ${label(options)}`,
          );
          await a.close?.();
          await b.close?.();
        }
      },
    },
    {
      title:
        'a label-free source neither reaches for ground truth nor depends on it; one that reads it declares readsGroundTruth',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const f = await facts(options);
          if (f.readsGroundTruth) {
            // A source that reads ground truth gets the reference; a problem without one is a coded error
            // of the source's own or a reward the pipeline accepts, never a crash (CORL_ERR_REWARD_FAILED)
            // nor output the pipeline refuses (CORL_ERR_REWARD_OUTPUT).
            const source = await kitCreate(plugin, kit, options);
            const g = rewardGroup({
              keys: ['4', '5'],
              supervisors: [['4', '4']],
              tokenStats: f.tokenStats,
              equivalence: kit.equivalence,
              problem: kit.problem,
            });
            const what = `${label(options)}, no reference`;
            try {
              namespacedMetrics(await scoreGroup(partsOf(source), g, what), what);
            } catch (e) {
              const pipelines = ['CORL_ERR_REWARD_FAILED', 'CORL_ERR_REWARD_OUTPUT'];
              assert.ok(
                isCorlError(e) && !pipelines.includes(e.code),
                `${label(options)}: a problem without a reference should give a coded error, got ${(e as Error)?.message ?? String(e)}`,
              );
            }
            await source.close?.();
            continue;
          }
          // Rewards must not depend on ground truth: the same contexts with a decoy reference (an answer
          // some completion gave) must score exactly the same. The tripwire's ground truth and task are
          // handed over as a run holds them (withheld from this source): any route to them is a refusal
          // (CORL_ERR_PLUGIN_CAPABILITY) or a recorded touch, and fails the check.
          const wire = groundTruthTripwire({ [problem.id]: kit.reference ?? { answer: '4' } });
          const refusals: CorlError[] = [];
          const reached = (e: unknown): never => {
            if (isCorlError(e) && e.code === 'CORL_ERR_PLUGIN_CAPABILITY') {
              assert.fail(
                `${plugin.manifest.name} does not declare readsGroundTruth for ${label(options)} but reached for ground truth: ${e.message}`,
              );
            }
            throw e;
          };
          try {
            const armed = {
              groundTruth: wire.groundTruth,
              task: wire.task,
              onRefusal: (r: CorlError) => {
                refusals.push(r);
              },
            };
            const plain = await kitCreate(plugin, kit, options, armed);
            const decoyed = await kitCreate(plugin, kit, options, armed);
            for (const [i, g] of groupsFor(f).entries()) {
              assert.equal('reference' in g, false);
              const a = await scoreGroup(partsOf(plain), g, `${label(options)}, context ${i}`);
              namespacedMetrics(a, label(options));
              const b = await scoreGroup(partsOf(decoyed), withDecoy(g), `${label(options)}, context ${i}`);
              assert.deepEqual(
                b,
                a,
                `${plugin.manifest.name} does not declare readsGroundTruth for ${label(options)}, but its result for context ${i} changed when a reference was present`,
              );
            }
            if (plain.scoreMany) {
              // The trainer scores a step through scoreMany: the same decoy must change nothing there either.
              const groups = groupsFor(f);
              const whats = groups.map((_, i) => `context ${i}`);
              assert.deepEqual(
                await scoreGroups(partsOf(decoyed), groups.map(withDecoy), whats, label(options)),
                await scoreGroups(partsOf(plain), groups, whats, label(options)),
                `${plugin.manifest.name} does not declare readsGroundTruth for ${label(options)}, but its scoreMany results changed when references were present`,
              );
            }
            if (plain.answerKeys)
              await sourceKeys(partsOf(plain), problem, kit.answerKeyTexts ?? DEFAULT_TEXTS, 'the kit texts');
            await plain.close?.();
            await decoyed.close?.();
          } catch (e) {
            reached(e);
          }
          assert.deepEqual(
            wire.touches,
            [],
            `${plugin.manifest.name} does not declare readsGroundTruth for ${label(options)} but reached for ground truth: ${wire.touches.join(', ')}`,
          );
          // A refusal the source caught and swallowed still counts: it tried.
          assert.deepEqual(
            refusals.map((r) => r.message),
            [],
            `${plugin.manifest.name} does not declare readsGroundTruth for ${label(options)} but reached for ground truth (and caught the refusal): ${refusals.map((r) => r.message).join('; ')}`,
          );
        }
      },
    },
    {
      title: 'scoreMany (when implemented) gives each context exactly what score gives it, in order',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const f = await facts(options);
          const source = await kitCreate(plugin, kit, options);
          if (source.scoreMany) {
            // Several agents and steps in one batch, as the trainer hands over a step (and a later one).
            const groups = groupsFor(f).flatMap((g, i) => [g, { ...g, agent: (i % 2) + g.agent, step: g.step + 1 }]);
            const whats = groups.map((_, i) => `${label(options)}, scoreMany context ${i}`);
            const many = await scoreGroups(partsOf(source), groups, whats, `${label(options)}, scoreMany`);
            const one: ScoredGroup[] = [];
            for (const [i, g] of groups.entries()) one.push(await scoreGroup(partsOf(source), g, whats[i]!));
            many.forEach((r, i) => namespacedMetrics(r, whats[i]!));
            assert.deepEqual(many, one, `${label(options)}: scoreMany should give each context what score gives it`);
          }
          await source.close?.();
        }
      },
    },
    {
      title: 'answerKeys (when implemented) gives one key or null per text, an empty list for no texts',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const source = await kitCreate(plugin, kit, options);
          if (!source.answerKeys) continue;
          const texts = kit.answerKeyTexts ?? DEFAULT_TEXTS;
          // The pipeline's own check: one string or null per text (CORL_ERR_REWARD_OUTPUT otherwise).
          await sourceKeys(partsOf(source), problem, texts, 'the kit texts');
          assert.deepEqual(await sourceKeys(partsOf(source), problem, [], 'no texts'), []);
          await source.close?.();
        }
      },
    },
  ];
}

/**
 * The reward-source contract as a test suite: manifest and options schema, one finite reward per
 * completion in every scenario (null answers, empty groups, no supervisors, self-supervision...),
 * determinism under a seed, and ground truth never reaching a label-free source.
 *
 * ```ts
 * import { rewardContract } from 'corl/testing';
 * import { register, myReward } from '../src';
 * rewardContract(myReward, { register, options: { scale: 2 } });
 * ```
 */
export function rewardContract(plugin: PluginDefinition<'reward'>, kit: RewardKitOptions = {}): void {
  suite('reward', plugin, kit, rewardChecks(plugin, kit));
}
