import { expect } from 'chai';
import { FairGate, FairQueue } from '../../../core/util/fair-queue';

describe('util/fair-queue', () => {
  it('serves lanes in turn, first come first served within a lane; a new lane waits behind those waiting', () => {
    const q = new FairQueue<string>();
    for (let i = 1; i <= 4; i++) q.push('a', `a${i}`);
    q.push('b', 'b1');
    q.push('b', 'b2');
    expect(q.shift()).to.equal('a1');
    q.push('c', 'c1');
    expect(q.size).to.equal(6);
    expect(q.drain()).to.deep.equal(['b1', 'a2', 'c1', 'b2', 'a3', 'a4']);
    expect(q.shift()).to.equal(undefined);
    expect(q.size).to.equal(0);
  });
  it('takes out a cancelled item, and an emptied lane loses its turn', () => {
    const q = new FairQueue<number>();
    const x = { n: 1 };
    const items = [1, 2, 3];
    q.push('a', items[0]!);
    q.push('b', items[1]!);
    q.push('a', items[2]!);
    expect(q.remove('b', 2)).to.equal(true);
    expect(q.remove('b', 2)).to.equal(false);
    expect(q.remove('z', x.n)).to.equal(false);
    expect(q.size).to.equal(2);
    expect(q.drain()).to.deep.equal([1, 3]);
  });
});

describe('util/fair-queue: FairGate', () => {
  /** Let settled promises' callbacks run. */
  const tick = () => new Promise<void>((r) => setImmediate(r));

  it('holds `places` places; a lane with nothing running gets one extra; waiting work starts lane by lane', async () => {
    const gate = new FairGate(1);
    const order: string[] = [];
    const take = (lane: string, name: string) => gate.acquire(lane).then(() => void order.push(name));
    await take('a', 'a1'); // the place
    void take('a', 'a2'); // waits: a runs already
    void take('a', 'a3');
    await take('b', 'b1'); // b runs nothing: the extra place
    void take('c', 'c1'); // waits: both places held
    await tick();
    expect([gate.held, gate.queued, order]).to.deep.equal([2, 3, ['a1', 'b1']]);
    gate.release('a'); // a1 done: 1 held, so the next in turn (a2, queued first) starts
    await tick();
    expect(order).to.deep.equal(['a1', 'b1', 'a2']);
    gate.release('b'); // b1 done: c, then a, in turn
    await tick();
    expect(order).to.deep.equal(['a1', 'b1', 'a2', 'c1']);
    gate.release('a');
    gate.release('c');
    await tick();
    expect(order).to.deep.equal(['a1', 'b1', 'a2', 'c1', 'a3']);
    gate.release('a');
    expect([gate.held, gate.queued]).to.deep.equal([0, 0]);
  });

  it('work whose signal aborts leaves the queue with the reason and takes no place; an aborted signal is refused at once', async () => {
    const gate = new FairGate(1);
    await gate.acquire('a');
    await gate.acquire('b');
    const ctl = new AbortController();
    const waiting = gate.acquire('c', ctl.signal);
    ctl.abort(new Error('client gone'));
    let reason = '';
    await waiting.catch((e: Error) => (reason = e.message));
    expect([reason, gate.queued, gate.held]).to.deep.equal(['client gone', 0, 2]);
    expect(() => gate.acquire('d', ctl.signal)).to.throw('client gone');
    gate.release('a');
    gate.release('b');
    expect(gate.held).to.equal(0);
    expect(await gate.run('e', undefined, async () => 7)).to.equal(7);
    expect(gate.held).to.equal(0);
  });
});
