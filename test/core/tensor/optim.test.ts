import { expect } from 'chai';
import { Graph } from '../../../core/tensor/graph';
import { HostTensor } from '../../../core/tensor/host';
import { adamwInputs, adamwScalars, adamwUpdate, clipByGlobalNorm, learningRate } from '../../../core/tensor/optim';
import { evaluate } from '../../../core/tensor/reference';

const hyper = { beta1: 0.9, beta2: 0.95, eps: 1e-8 };

describe('core/tensor/optim', () => {
  it('clips by the global norm', () => {
    const g = new Graph('clip');
    const a = g.input('a', 'float32', [2]);
    const b = g.input('b', 'float32', [1]);
    const { grads, norm } = clipByGlobalNorm(g, [a, b], 1);
    const feeds = { a: HostTensor.float([2], [3, 0]), b: HostTensor.float([1], [4]) };
    const [n, ca, cb] = evaluate(g, feeds, [norm, ...grads]);
    expect(n!.at(0)).to.be.closeTo(5, 1e-12);
    expect(ca!.at(0)).to.be.closeTo(0.6, 1e-6);
    expect(cb!.at(0)).to.be.closeTo(0.8, 1e-6);
    const small = clipByGlobalNorm(g, [a, b], 10);
    expect(evaluate(g, feeds, small.grads).map((t) => t.toArray())).to.deep.equal([[3, 0], [4]]);
  });

  it('two AdamW steps by hand (decoupled decay, bias correction)', () => {
    const g = new Graph('adam');
    const p = g.input('p', 'float32', [2]);
    const d = g.input('d', 'float32', [2]);
    const m = g.input('m', 'float32', [2]);
    const v = g.input('v', 'float32', [2]);
    const s = adamwInputs(g);
    const up = adamwUpdate(g, { params: [p], grads: [d], m: [m], v: [v], decayed: [true] }, s, hyper);
    const lr = 0.1;
    const wd = 0.01;
    let state = { p: [1, -2], m: [0, 0], v: [0, 0] };
    const grads = [
      [0.5, -1],
      [0.25, 2],
    ];
    let expectP = [1, -2];
    let em = [0, 0];
    let ev = [0, 0];
    for (let t = 1; t <= 2; t++) {
      const sc = adamwScalars(t, lr, wd, hyper);
      const [np, nm, nv] = evaluate(
        g,
        {
          p: HostTensor.float([2], state.p),
          d: HostTensor.float([2], grads[t - 1]!),
          m: HostTensor.float([2], state.m),
          v: HostTensor.float([2], state.v),
          adam_step_size: HostTensor.float([], [sc.stepSize]),
          adam_inv_sqrt_bias2: HostTensor.float([], [sc.invSqrtBias2]),
          adam_decay: HostTensor.float([], [sc.decay]),
        },
        [up.params[0]!, up.m[0]!, up.v[0]!],
      );
      // PyTorch AdamW: p *= 1 − lr·wd; m, v moments; p −= lr · m̂ / (√v̂ + ε)
      em = em.map((x, i) => 0.9 * x + 0.1 * grads[t - 1]![i]!);
      ev = ev.map((x, i) => 0.95 * x + 0.05 * grads[t - 1]![i]! ** 2);
      expectP = expectP.map(
        (x, i) => x * (1 - lr * wd) - (lr * (em[i]! / (1 - 0.9 ** t))) / (Math.sqrt(ev[i]! / (1 - 0.95 ** t)) + 1e-8),
      );
      // graph constants (β, ε) are float32, hence the tolerance
      np!.toArray().forEach((x, i) => expect(x).to.be.closeTo(expectP[i]!, 1e-7));
      state = { p: np!.toArray(), m: nm!.toArray(), v: nv!.toArray() };
    }
    // The first step moves each parameter by lr against the gradient's sign (|m̂/√v̂| = 1).
    expect(expectP[0]).to.be.lessThan(1 - 0.1);
  });

  it('learning-rate schedules: warmup, constant, cosine down to the floor', () => {
    const s = { type: 'cosine' as const, warmupSteps: 0, warmupRatio: 0.1, minRatio: 0.1 };
    expect(learningRate(1, 0, 100, s)).to.be.closeTo(0.1, 1e-12);
    expect(learningRate(1, 9, 100, s)).to.be.closeTo(1, 1e-12);
    expect(learningRate(1, 10, 100, s)).to.be.closeTo(1, 1e-12);
    expect(learningRate(1, 99, 100, s)).to.be.closeTo(0.1, 1e-12);
    expect(learningRate(1, 10 + 89 / 2, 100, s)).to.be.closeTo(0.55, 1e-12);
    expect(learningRate(2, 50, 100, { ...s, type: 'constant', warmupSteps: 5 })).to.equal(2);
    expect(learningRate(2, 0, 100, { ...s, type: 'constant', warmupSteps: 5 })).to.be.closeTo(0.4, 1e-12);
  });
});
