import assert from 'node:assert/strict';
import type { AgentView, DiversityStrategy } from '../contracts/diversity-strategy';
import type { PluginDefinition } from '../contracts/plugin';
import type { Problem } from '../contracts/problem';
import { isCorlError } from '../errors';
import { deepFreeze } from '../contracts/frozen';
import {
  commonChecks,
  expectKind,
  finite,
  kitCreate,
  label,
  optionSetsOf,
  sameTranscript,
  suite,
  type Check,
  type KitOptions,
} from './common';

/** Inputs of the diversity-strategy suite. */
export interface DiversityKitOptions extends KitOptions {
  /** Extra problems to view, on top of the suite's own (with and without variants and images). */
  readonly problems?: readonly Problem[];
  /** Cohort sizes to probe (default 1 to 4). */
  readonly sizes?: readonly number[];
}

/** The problems every strategy is asked about. */
export function diversityProblems(): Problem[] {
  return [
    { id: 'plain', prompt: 'What is 2 + 2?' },
    {
      id: 'variants',
      prompt: 'What is 3 + 4?',
      variants: ['Compute 3 plus 4.', 'Start at 3 and add 4.', 'Add 4 to 3.'],
    },
    {
      id: 'images',
      prompt: 'How many apples are in the picture?',
      images: ['apples.png'],
      variants: ['Count the apples.'],
    },
    { id: 'metadata', prompt: '17-9=', variants: ['What is 17-9?'], metadata: { difficulty: 2 } },
  ];
}

type Seen = { id: string; agent: number; agents: number; view?: AgentView; refused?: string };

function views(s: DiversityStrategy, problems: readonly Problem[], sizes: readonly number[]): Seen[] {
  const out: Seen[] = [];
  for (const p of problems) {
    for (const agents of sizes) {
      for (let agent = 0; agent < agents; agent++) {
        try {
          out.push({ id: p.id, agent, agents, view: s.view(p, agent, agents) });
        } catch (e) {
          assert.ok(
            isCorlError(e),
            `view(${p.id}, ${agent}, ${agents}) should fail with a coded CorlError when it cannot serve the problem, got ${String((e as Error)?.stack ?? e)}`,
          );
          out.push({ id: p.id, agent, agents, refused: e.code });
        }
      }
    }
  }
  return out;
}

function checkView(v: AgentView, what: string): void {
  assert.equal(typeof v?.prompt, 'string', `${what}: the view should have a prompt string`);
  assert.ok(v.prompt.length > 0, `${what}: the prompt should not be empty`);
  if (v.images !== undefined)
    assert.ok(
      Array.isArray(v.images) && v.images.every((i) => typeof i === 'string'),
      `${what}: images should be file names`,
    );
  const o = v.overrides;
  if (o === undefined) return;
  assert.ok(!('n' in o), `${what}: overrides cannot change n (the group size is the trainer's)`);
  if (o.temperature !== undefined) {
    finite(o.temperature, `${what}: overrides.temperature`);
    assert.ok(o.temperature >= 0, `${what}: temperature >= 0`);
  }
  if (o.topP !== undefined) assert.ok(o.topP > 0 && o.topP <= 1, `${what}: overrides.topP should be in (0, 1]`);
  if (o.maxTokens !== undefined)
    assert.ok(
      Number.isInteger(o.maxTokens) && o.maxTokens >= 1,
      `${what}: overrides.maxTokens should be an integer >= 1`,
    );
  if (o.seed !== undefined) assert.ok(Number.isInteger(o.seed), `${what}: overrides.seed should be an integer`);
  if (o.stop !== undefined)
    assert.ok(
      Array.isArray(o.stop) && o.stop.every((s) => typeof s === 'string' && s.length > 0),
      `${what}: overrides.stop should be non-empty strings`,
    );
}

/** The diversity-strategy checks. */
export function diversityChecks(plugin: PluginDefinition<'diversity'>, kit: DiversityKitOptions = {}): Check[] {
  expectKind(plugin, 'diversity');
  const sizes = kit.sizes ?? [1, 2, 3, 4];
  const problems = (): Problem[] => deepFreeze([...diversityProblems(), ...structuredClone(kit.problems ?? [])]);
  return [
    ...commonChecks('diversity', plugin, kit),
    {
      title:
        'gives every agent a valid view (a prompt, images, overrides that leave n alone) without changing the problem',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const s = await kitCreate(plugin, kit, options);
          const seen = views(s, problems(), sizes); // problems are frozen: a strategy that mutates one throws here
          assert.ok(
            seen.some((v) => v.view),
            `${label(options)}: should serve at least one problem`,
          );
          for (const v of seen)
            if (v.view) checkView(v.view, `${label(options)}: view(${v.id}, ${v.agent}, ${v.agents})`);
        }
      },
    },
    {
      title: 'is deterministic: the same problem, agent and cohort size always give the same view',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const a = await kitCreate(plugin, kit, options);
          const b = await kitCreate(plugin, kit, options);
          const first = views(a, problems(), sizes);
          sameTranscript(first, views(b, problems(), sizes), `views for ${label(options)}`);
          assert.deepEqual(
            views(a, problems(), sizes),
            first,
            `${label(options)}: asking again should give the same views`,
          );
        }
      },
    },
  ];
}

/** The diversity-strategy contract as a test suite. */
export function diversityContract(plugin: PluginDefinition<'diversity'>, kit: DiversityKitOptions = {}): void {
  suite('diversity', plugin, kit, diversityChecks(plugin, kit));
}
