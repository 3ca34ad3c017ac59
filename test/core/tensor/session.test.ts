import { expect } from 'chai';
import { Graph } from '../../../core/tensor/graph';
import { HostTensor } from '../../../core/tensor/host';
import { compile, GraphSession, sessionTimings } from '../../../core/tensor/session';
import { availableCores, leaseCores, openLeases } from '../../../core/tensor/threads';

describe('core/tensor/session', () => {
  it('runs a compiled graph with dynamic dimensions and checks feeds', async () => {
    const g = new Graph('dyn');
    const x = g.input('x', 'float32', ['B', 'T']);
    const ids = g.input('ids', 'int32', ['B']);
    const y = g.add(g.reduceSum(x, [1]), g.cast(ids, 'float32'));
    const s = await GraphSession.create(compile(g, { outputs: [['y', y]] }), { threads: 1 });
    try {
      for (const [B, T] of [
        [1, 3],
        [4, 2],
      ] as const) {
        const r = await s.run({
          x: HostTensor.float([B, T], 1),
          ids: HostTensor.int(
            [B],
            Array.from({ length: B }, (_, i) => i),
          ),
        });
        expect(r.y!.toArray()).to.deep.equal(Array.from({ length: B }, (_, i) => T + i));
      }
      await s.run({ x: HostTensor.float([2, 2], 1) }).then(
        () => expect.fail('missing feed'),
        (e) => expect(String(e)).to.match(/CORL_ERR_TENSOR_GRAPH.*"ids"/),
      );
      await s.run({ x: HostTensor.float([2, 2], 1), ids: HostTensor.int([3], [0, 1, 2]) }).then(
        () => expect.fail('bad shape'),
        (e) => expect(String(e)).to.match(/CORL_ERR_TENSOR_SHAPE.*"ids" dimension 0 \(B\) to be 2/),
      );
    } finally {
      await s.close();
    }
    await s.run({}).then(
      () => expect.fail('closed'),
      (e) => expect(String(e)).to.match(/CORL_ERR_TENSOR_RUNTIME.*closed/),
    );
  });

  it('counts runs and time per graph until reset', async () => {
    const g = new Graph('timed-graph');
    const x = g.input('x', 'float32', ['B']);
    const s = await GraphSession.create(compile(g, { outputs: [['y', g.exp(x)]] }));
    try {
      sessionTimings(true);
      for (let i = 0; i < 3; i++) await s.run({ x: HostTensor.float([2], 0) });
      const t = sessionTimings(true)['timed-graph']!;
      expect(t.calls).to.equal(3);
      expect(t.ortMs).to.be.at.least(0);
      expect(t.totalMs).to.be.at.least(t.ortMs);
      expect(sessionTimings()).to.not.have.property('timed-graph');
    } finally {
      await s.close();
    }
  });

  it('wraps onnxruntime load failures in a coded error', async () => {
    const bad = { name: 'broken', bytes: Uint8Array.from([1, 2, 3, 4]), inputs: [], outputs: [], nodeCount: 0 };
    await GraphSession.create(bad).then(
      () => expect.fail('loaded garbage'),
      (e) => expect(String(e)).to.match(/CORL_ERR_TENSOR_RUNTIME.*"broken"/),
    );
  });

  it('splits the cores between open leases', () => {
    const before = openLeases();
    const a = leaseCores();
    const b = leaseCores();
    expect(openLeases()).to.equal(before + 2);
    expect(a.threads()).to.equal(Math.max(1, Math.floor(availableCores() / (before + 2))));
    b.release();
    b.release();
    expect(openLeases()).to.equal(before + 1);
    a.release();
    expect(openLeases()).to.equal(before);
  });
});
