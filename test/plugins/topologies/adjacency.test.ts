import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Topology } from '../../../core/contracts/topology';
import { loadConfigValue } from '../../../core/config/load';
import { adjacencyTopology } from '../../../plugins/topologies/adjacency';
import { coRlConfig, tempDir } from '../../fixtures/configs';

const defaults = { matrix: [] as number[][], file: '', allowUnsupervised: false, allowSelf: false };
const adjacency = (options: Partial<typeof defaults>, baseDir = process.cwd()) =>
  adjacencyTopology.create({ ...defaults, ...options }, { baseDir } as never) as Topology;

describe('plugins/topologies/adjacency (corl:adjacency)', () => {
  it('the reference three-agent peer lists: A: B, C; B: C, A; C: A, B (teacher first)', () => {
    const t = adjacency({
      matrix: [
        [0, 1, 2],
        [2, 0, 1],
        [1, 2, 0],
      ],
    });
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([
      [1, 2],
      [2, 0],
      [0, 1],
    ]);
    expect(t.selfSupervised).to.equal(false);
  });
  it('0/1 and booleans work; equal priorities go by index', () => {
    const t = adjacency({
      matrix: [
        [0, 1, 1],
        [true, false, false],
        [1, 0, 0],
      ] as unknown as number[][],
    });
    expect([0, 1, 2].map((n) => t.supervisors(n, 3))).to.deep.equal([[1, 2], [0], [0]]);
  });
  it('reads the matrix from a JSON file relative to the config folder', () => {
    const tmp = tempDir();
    try {
      fs.writeFileSync(
        path.join(tmp.dir, 'graph.json'),
        JSON.stringify({
          matrix: [
            [0, 1],
            [1, 0],
          ],
        }),
      );
      expect(adjacency({ file: 'graph.json' }, tmp.dir).supervisors(0, 2)).to.deep.equal([1]);
      fs.writeFileSync(path.join(tmp.dir, 'bad.json'), '[[0, 1], [1');
      expect(() => adjacency({ file: 'bad.json' }, tmp.dir)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*expected JSON/);
      expect(() => adjacency({ file: 'missing.json' }, tmp.dir)).to.throw(/CORL_ERR_CONFIG_TOPOLOGY.*ENOENT/);
      expect(() => adjacency({ file: 'graph.json', matrix: [[0]] }, tmp.dir)).to.throw(/got both/);
    } finally {
      tmp.cleanup();
    }
  });
  it('validates: square, non-negative integers, zero diagonal, a supervisor for everyone, size = agents', () => {
    expect(() => adjacency({ matrix: [[0, 1], [1]] })).to.throw(
      /CORL_ERR_CONFIG_TOPOLOGY.*matrix\[1\].*row 1 to have 2 entries/,
    );
    expect(() =>
      adjacency({
        matrix: [
          [0, -1],
          [1, 0],
        ],
      }),
    ).to.throw(/matrix\[0\]\[1\].*non-negative integer/);
    expect(() =>
      adjacency({
        matrix: [
          [0, 1.5],
          [1, 0],
        ],
      }),
    ).to.throw(/non-negative integer/);
    expect(() =>
      adjacency({
        matrix: [
          [1, 1],
          [1, 0],
        ],
      }),
    ).to.throw(/matrix\[0\]\[0\].*zero diagonal/);
    expect(() =>
      adjacency({
        matrix: [
          [0, 1],
          [0, 0],
        ],
      }),
    ).to.throw(/matrix\[1\].*every agent to have a supervisor.*allowUnsupervised/);
    expect(() => adjacency({ matrix: [] })).to.throw(/non-empty/);
    expect(() =>
      adjacency({
        matrix: [
          [0, 1],
          [1, 0],
        ],
      }).validate(3),
    ).to.throw(/expected a 3×3 matrix for 3 agents, got 2×2/);
  });
  it('allowUnsupervised and allowSelf relax the checks', () => {
    const t = adjacency({
      matrix: [
        [0, 1],
        [0, 0],
      ],
      allowUnsupervised: true,
    });
    expect(t.supervisors(1, 2)).to.deep.equal([]);
    const s = adjacency({
      matrix: [
        [1, 2],
        [1, 1],
      ],
      allowSelf: true,
    });
    expect(s.supervisors(0, 2)).to.deep.equal([0, 1]);
    expect(s.selfSupervised).to.equal(true);
  });
  it('a config whose matrix does not fit the cohort is refused at load with the topology code', async () => {
    let err: Error | undefined;
    try {
      await loadConfigValue(
        coRlConfig({
          topology: {
            use: 'corl:adjacency',
            options: {
              matrix: [
                [0, 1, 1],
                [1, 0, 1],
                [1, 1, 0],
              ],
            },
          },
        }),
        { baseDir: process.cwd() },
      );
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).to.match(/CORL_ERR_CONFIG_TOPOLOGY.*3×3|CORL_ERR_CONFIG_TOPOLOGY.*2×2/);
  });
});
