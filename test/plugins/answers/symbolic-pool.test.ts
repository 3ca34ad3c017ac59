import { expect } from 'chai';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { SymbolicPool } from '../../../plugins/answers/symbolic-pool';

const SCRIPTED = path.join(__dirname, '..', '..', 'fixtures', 'scripted-symbolic-worker.js');
const pool = (extra: Partial<ConstructorParameters<typeof SymbolicPool>[0]> = {}) =>
  new SymbolicPool({ workers: 1, timeoutMs: 300, tolerance: 1e-4, heapMb: 32, script: SCRIPTED, ...extra });

describe('plugins/answers/symbolic-pool', () => {
  it('answers comparisons through a worker', async () => {
    const p = pool();
    try {
      expect(await p.compare('AB', 'ab')).to.equal(true);
      expect(await p.compare('a', 'b')).to.equal(false);
      expect(p.stats).to.include({ answered: 2, started: 1, timeouts: 0 });
    } finally {
      await p.close();
    }
  });

  it('a comparison that never ends is cut off at the limit, counts as unequal, and the pool goes on', async () => {
    const p = pool();
    try {
      const results = await Promise.all([p.compare('loop', 'x'), p.compare('c', 'C'), p.compare('d', 'e')]);
      expect(results).to.deep.equal([false, true, false]);
      expect(p.stats.timeouts).to.equal(1);
      expect(p.stats.started).to.equal(2);
    } finally {
      await p.close();
    }
  });

  it('a worker that crashes or runs out of memory costs one comparison, not the run', async () => {
    const p = pool({ timeoutMs: 20_000 });
    try {
      expect(await p.compare('crash', 'x')).to.equal(false);
      expect(await p.compare('oom', 'x')).to.equal(false);
      expect(await p.compare('q', 'Q')).to.equal(true);
      expect(p.stats.crashes).to.equal(2);
    } finally {
      await p.close();
    }
  });

  it('a worker that cannot start gives CORL_ERR_ANSWERS_SYMBOLIC after three tries', async () => {
    process.env.CORL_TEST_WORKER_FAIL_START = '1';
    const p = pool();
    try {
      let err: unknown;
      try {
        await p.compare('a', 'b');
      } catch (e) {
        err = e;
      }
      expect(isCorlError(err, 'CORL_ERR_ANSWERS_SYMBOLIC'), String(err)).to.equal(true);
      expect(p.stats.started).to.equal(3);
      let again: unknown;
      try {
        await p.compare('a', 'b');
      } catch (e) {
        again = e;
      }
      expect(isCorlError(again, 'CORL_ERR_ANSWERS_SYMBOLIC')).to.equal(true);
    } finally {
      delete process.env.CORL_TEST_WORKER_FAIL_START;
      await p.close();
    }
  });

  it('uses several workers in parallel and close() ends them all', async () => {
    const p = pool({ workers: 2 });
    const all = await Promise.all(['a', 'b', 'c', 'd'].map((x) => p.compare(x, x.toUpperCase())));
    expect(all).to.deep.equal([true, true, true, true]);
    expect(p.size).to.be.at.most(2);
    await p.close();
    expect(p.size).to.equal(0);
  });

  it('the real engine: a hanging comparison (a ten-million-term sum) is stopped by the hard limit', async () => {
    const p = new SymbolicPool({ workers: 1, timeoutMs: 1500, tolerance: 1e-4, heapMb: 256 });
    try {
      expect(await p.compare('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
      expect(await p.compare('\\sum_{k=1}^{10000000}\\frac{1}{k}', '17')).to.equal(false);
      expect(p.stats.timeouts).to.equal(1);
      expect(await p.compare('x^{2}-1', '(x-1)(x+1)')).to.equal(true);
    } finally {
      await p.close();
    }
  });
});
