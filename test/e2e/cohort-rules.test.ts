// Three-agent cohorts through the real trainer: every label in rollouts.jsonl is recomputed from the
// other agents' rollouts with the rule the config names.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../core/config/load';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train } from '../../core/trainer/trainer';
import { coRlConfig, fixture, tempDir } from '../fixtures/configs';

interface Rollout {
  step: number;
  agent: number;
  index: number;
  label: string | null;
  completions: { key: string | null; reward: number }[];
}

function plurality(keys: readonly (string | null)[]): { label: string | null; count: number } {
  const counts = new Map<string, number>();
  for (const k of keys) if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  let label: string | null = null;
  let count = 0;
  for (const [k, c] of counts)
    if (c > count) {
      label = k;
      count = c;
    }
  return { label, count };
}

async function run3(dir: string, topology: unknown, rule: string): Promise<Rollout[]> {
  const agents = ['a', 'b', 'c'].map((name, i) => ({
    name,
    policy: {
      use: 'test:categorical',
      options: { family: `fam-${i}`, ...(i === 1 ? { prefer: { 'What is 1 + 1?': '1' } } : {}) },
    },
  }));
  const config = coRlConfig({
    agents,
    topology,
    reward: { use: 'corl:vote', options: { rule } },
    plugins: [fixture('categorical-policy.js')],
    trainer: {
      steps: 4,
      batchSize: 4,
      groupSize: 6,
      evalEvery: 0,
      checkpointEvery: 0,
      saveRollouts: true,
      sampling: { maxTokens: 4 },
    },
  });
  const loaded = await loadConfigValue(config, { baseDir: dir });
  const runDir = await RunDirectory.create(path.join(dir, 'run'), loaded.config, loaded.source, {
    baseDir: dir,
    supervised: false,
  });
  await train(loaded, { run: runDir });
  return fs
    .readFileSync(path.join(runDir.dir, 'rollouts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

function peersOf(rows: Rollout[], row: Rollout, agents: number[]): Rollout[] {
  return agents.map((m) => rows.find((o) => o.step === row.step && o.index === row.index && o.agent === m)!);
}

describe('e2e: three-agent vote rules (corl:complete, corl:adjacency)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-e2e3-');
  });
  afterEach(() => tmp.cleanup());

  it("strict majority over peers: each peer's plurality is one vote, ties give no label and zero rewards", async () => {
    const rows = await run3(tmp.dir, 'corl:complete', 'majority');
    expect(rows).to.have.length(4 * 3 * 4);
    let unlabeled = 0;
    for (const row of rows) {
      const peers = peersOf(
        rows,
        row,
        [0, 1, 2].filter((m) => m !== row.agent),
      );
      const labels = peers.map((p) => plurality(p.completions.map((c) => c.key)).label);
      const expected = labels[0] !== null && labels[0] === labels[1] ? labels[0] : null;
      expect(row.label, JSON.stringify({ row, labels })).to.equal(expected);
      if (expected === null) {
        unlabeled++;
        expect(row.completions.every((c) => c.reward === 0)).to.equal(true);
      } else
        expect(row.completions.map((c) => c.reward)).to.deep.equal(
          row.completions.map((c) => (c.key === expected ? 1 : 0)),
        );
    }
    expect(unlabeled, 'the fixture makes peers disagree sometimes').to.be.greaterThan(0);
  });

  it('union of peers and self + peers: one plurality over the pooled answers', async () => {
    for (const self of [false, true]) {
      const rows = await run3(path.join(tmp.dir), { use: 'corl:complete', options: { self } }, 'pool');
      for (const row of rows) {
        const order = self
          ? [row.agent, (row.agent + 2) % 3, (row.agent + 1) % 3]
          : [(row.agent + 2) % 3, (row.agent + 1) % 3];
        const pooled = peersOf(rows, row, order).flatMap((p) => p.completions.map((c) => c.key));
        expect(row.label).to.equal(plurality(pooled).label);
      }
      fs.rmSync(path.join(tmp.dir, 'run'), { recursive: true, force: true });
    }
  });

  it('adjacency with the reference peer lists and rule "teacher": the ring of predecessors', async () => {
    // A: B, C; B: C, A; C: A, B — rewarded against the first
    const rows = await run3(
      tmp.dir,
      {
        use: 'corl:adjacency',
        options: {
          matrix: [
            [0, 1, 2],
            [2, 0, 1],
            [1, 2, 0],
          ],
        },
      },
      'teacher',
    );
    for (const row of rows) {
      const teacher = peersOf(rows, row, [(row.agent + 1) % 3])[0]!;
      expect(row.label).to.equal(plurality(teacher.completions.map((c) => c.key)).label);
    }
  });
});
