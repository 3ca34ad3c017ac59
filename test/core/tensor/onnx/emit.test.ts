import { expect } from 'chai';
import * as ort from 'onnxruntime-node';
import { Graph } from '../../../../core/tensor/graph';
import { emitOnnx, OPSET } from '../../../../core/tensor/onnx/emit';
import { readModel } from '../../../../core/tensor/onnx/read';

describe('core/tensor/onnx/emit and read', () => {
  it('writes a standard model (opset 17) that onnxruntime runs, with weights as initializers', async () => {
    const g = new Graph('linear');
    const x = g.input('x', 'float32', ['B', 3]);
    const w = g.input('w', 'float32', [3, 2]);
    const y = g.add(g.matmul(x, w), g.constant([0.5, -0.5], [2]));
    const wData = Float32Array.from([1, 0, 0, 1, 1, 1]);
    const m = emitOnnx(g, {
      outputs: [
        ['y', y],
        ['y_again', y],
      ],
      initializers: new Map([[w, wData]]),
      metadata: { corl: 'test' },
    });
    expect(m.inputNames).to.deep.equal(['x']);
    const read = readModel(m.bytes);
    expect(read.opsets).to.deep.equal({ '': OPSET });
    expect(read.irVersion).to.equal(8);
    expect(read.inputs).to.deep.equal(['x']);
    expect(read.outputs).to.deep.equal(['y', 'y_again']);
    expect([...(read.initializers.get('w')!.data as Float32Array)]).to.deep.equal([...wData]);
    expect(read.initializers.get('w')!.dims).to.deep.equal([3, 2]);
    expect(read.metadata).to.deep.equal({ corl: 'test' });
    const s = await ort.InferenceSession.create(m.bytes);
    const r = await s.run({ x: new ort.Tensor('float32', Float32Array.from([1, 2, 3, 0, 0, 1]), [2, 3]) });
    expect([...(r.y!.data as Float32Array)]).to.deep.equal([4.5, 4.5, 1.5, 0.5]);
    expect([...(r.y_again!.data as Float32Array)]).to.deep.equal([4.5, 4.5, 1.5, 0.5]);
    await s.release();
  });

  it('prunes nodes no output needs and insists on every needed input', () => {
    const g = new Graph('prune');
    const x = g.input('x', 'float32', [2]);
    const z = g.input('z', 'float32', [2]);
    g.exp(z);
    const m = emitOnnx(g, { outputs: [['y', g.neg(x)]] });
    expect(m.nodeCount).to.equal(1);
    expect(m.inputNames).to.deep.equal(['x']);
    expect(() => emitOnnx(g, { inputs: [], outputs: [['y', g.neg(x)]] })).to.throw(/CORL_ERR_TENSOR_GRAPH.*"x"/);
  });

  it('an output that is an input gets an Identity node', async () => {
    const g = new Graph('passthrough');
    const x = g.input('x', 'float32', [2]);
    const m = emitOnnx(g, { outputs: [['x_out', x]] });
    const s = await ort.InferenceSession.create(m.bytes);
    const r = await s.run({ x: new ort.Tensor('float32', Float32Array.from([3, 4]), [2]) });
    expect([...(r.x_out!.data as Float32Array)]).to.deep.equal([3, 4]);
    await s.release();
  });
});
