import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { committedResult } from '../../../core/report/committed';
import { tempDir } from '../../fixtures/configs';

describe('report/committed: the committed many-seed result of the same configs', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-committed-');
  });
  afterEach(() => tmp.cleanup());

  const folder = (name: string, v: Record<string, unknown>): void => {
    fs.mkdirSync(path.join(tmp.dir, name));
    fs.writeFileSync(path.join(tmp.dir, name, 'verdicts.json'), JSON.stringify(v));
  };
  const values = (xs: number[]): Record<string, number> => Object.fromEntries(xs.map((x, i) => [String(i), x]));

  it('finds configs by identity, prefers a planned folder, then more seeds, and decides from the per-seed values', () => {
    // no plan, 3 seeds: differences 1, 2, 3 → +2.0, t(0.975, 2)·1/√3 = 2.48 → [−0.5, +4.5]
    folder('small', {
      identities: { x: 'A', y: 'B', z: 'C' },
      values: { final: { x: values([51, 52, 53]), y: values([50, 50, 50]) } },
    });
    const small = committedResult(tmp.dir, 'A', 'B')!;
    expect(small.folder).to.match(/small$/);
    expect(small.planned).to.equal(false);
    expect(small.pair.a).to.equal('x');
    expect(small.pair.mean).to.equal(2);
    expect(small.pair.t!.lo).to.be.closeTo(2 - 4.302652729749464 / Math.sqrt(3), 1e-9);
    expect(small.pair.outcome).to.equal('inconclusive');
    // a bigger unplanned folder wins on seeds; a planned one wins over both, with its own decided pair
    folder('big', {
      identities: { p: 'A', q: 'B' },
      values: { final: { p: values([51, 52, 53, 52]), q: values([50, 50, 50, 50]) } },
    });
    expect(committedResult(tmp.dir, 'A', 'B')!.folder).to.match(/big$/);
    const decided = { a: 'co', b: 'tt', n: 2, mean: 1, outcome: 'ahead', alpha: 0.031, seeds: [] };
    folder('planned', { plan: { name: 'p' }, identities: { co: 'A', tt: 'B' }, pairs: [decided] });
    const planned = committedResult(tmp.dir, 'A', 'B')!;
    expect(planned.planned).to.equal(true);
    expect(planned.pair).to.deep.equal(decided);
    // other configs, one config only, or no folder at all: nothing
    expect(committedResult(tmp.dir, 'A', 'Z')).to.equal(undefined);
    expect(committedResult(tmp.dir, 'A', 'A')).to.equal(undefined);
    expect(committedResult(path.join(tmp.dir, 'none'), 'A', 'B')).to.equal(undefined);
  });
});
