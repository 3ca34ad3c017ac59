import { expect } from 'chai';
import { SharedWork, waitFor } from '../../../core/util/shared-work';

const reason = (what: string) => new Error(what);

describe('util/shared-work', () => {
  it('one computation per key while it runs, with the first caller lane; each caller may leave on its own', async () => {
    const shared = new SharedWork<string, number>();
    let starts = 0;
    let seen: { lane?: string; signal?: AbortSignal } = {};
    let finish!: (v: number) => void;
    const start = (w: { lane?: string; signal?: AbortSignal }) => {
      starts++;
      seen = w;
      return new Promise<number>((r) => (finish = r));
    };
    const a = new AbortController();
    const b = new AbortController();
    const pa = shared.run('k', { signal: a.signal, lane: 'x' }, start);
    const pb = shared.run('k', { signal: b.signal, lane: 'y' }, start);
    await Promise.resolve();
    await Promise.resolve();
    expect(starts).to.equal(1);
    expect(seen.lane).to.equal('x');
    a.abort(reason('a left'));
    await pa.then(
      () => expect.fail('resolved'),
      (e: Error) => expect(e.message).to.equal('a left'),
    );
    expect(seen.signal!.aborted).to.equal(false); // b still waits
    finish(7);
    expect(await pb).to.equal(7);
    expect(shared.size).to.equal(0);
  });

  it('aborts the computation when its last caller leaves (with that reason); a caller without a signal keeps it alive', async () => {
    const shared = new SharedWork<string, number>();
    let signal!: AbortSignal;
    const start = (w: { signal?: AbortSignal }) => {
      signal = w.signal!;
      return new Promise<number>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    };
    const a = new AbortController();
    const p = shared.run('k', { signal: a.signal }, start);
    await Promise.resolve();
    await Promise.resolve();
    a.abort(reason('gone'));
    await p.catch(() => undefined);
    expect(signal.aborted).to.equal(true);
    expect((signal.reason as Error).message).to.equal('gone');
    expect(shared.size).to.equal(0);
    const c = new AbortController();
    const pc = shared.run('j', { signal: c.signal }, start);
    const forever = shared.run('j', undefined, start);
    await Promise.resolve();
    await Promise.resolve();
    c.abort(reason('c left'));
    await pc.catch(() => undefined);
    expect(signal.aborted).to.equal(false);
    expect(shared.size).to.equal(1);
    void forever.catch(() => undefined);
  });

  it('waitFor: the result, or the caller signal reason once it aborts (already aborted: at once)', async () => {
    expect(await waitFor(Promise.resolve(3), undefined)).to.equal(3);
    const done = new AbortController();
    done.abort(reason('early'));
    let left = 0;
    await waitFor(Promise.resolve(3), done.signal, () => left++).then(
      () => expect.fail('resolved'),
      (e: Error) => expect(e.message).to.equal('early'),
    );
    expect(left).to.equal(1);
  });
});
