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

  it('serves lanes fairly; an aborted comparison leaves the queue or stops its worker, and rejects (it is not "unequal")', async () => {
    const p = pool({ timeoutMs: 60_000 });
    try {
      expect(await p.compare('w', 'W')).to.equal(true); // a worker is ready: the loop below runs at once
      const blocker = new AbortController();
      const looping = p.compare('loop', 'x', { signal: blocker.signal, lane: 'a' });
      const order: string[] = [];
      const queued = (x: string, lane: string) => p.compare(x, x.toUpperCase(), { lane }).then(() => order.push(x));
      const runs = [queued('a1', 'a'), queued('a2', 'a'), queued('b1', 'b')];
      const leaving = new AbortController();
      const never = p.compare('c', 'C', { signal: leaving.signal, lane: 'c' });
      leaving.abort(new Error('c left'));
      await never.then(
        () => expect.fail('compared'),
        (e: Error) => expect(e.message).to.equal('c left'),
      );
      blocker.abort(new Error('a left'));
      await looping.then(
        () => expect.fail('compared'),
        (e: Error) => expect(e.message).to.equal('a left'),
      );
      await Promise.all(runs);
      expect([...order].sort()).to.deep.equal(['a1', 'a2', 'b1']);
      expect(order.indexOf('a1')).to.be.below(order.indexOf('a2')); // first come first served within a lane
      // b, waiting while the only worker compared for a, got a worker of its own (an extra one, up
      // to twice `workers`); the looping worker was stopped, not timed out.
      expect(p.stats.timeouts).to.equal(0);
      expect(p.stats.started).to.be.at.least(2);
    } finally {
      await p.close();
    }
  });

  it('a lane waiting while the workers compare for another gets a worker of its own, which ends once idle', async () => {
    const p = pool({ timeoutMs: 60_000 });
    try {
      expect(await p.compare('w', 'W')).to.equal(true);
      const stop = new AbortController();
      const looping = p.compare('loop', 'x', { signal: stop.signal, lane: 'a' }).catch(() => 'stopped');
      // b's comparison is answered while a's runs on the only regular worker.
      expect(await p.compare('b', 'B', { lane: 'b' })).to.equal(true);
      expect(p.size).to.equal(1); // the extra worker ended once nothing waited
      stop.abort(new Error('a left'));
      expect(await looping).to.equal('stopped');
    } finally {
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
