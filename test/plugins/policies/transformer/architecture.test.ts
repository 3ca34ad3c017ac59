import { expect } from 'chai';
import {
  checkArchitecture,
  initParams,
  parameterCount,
  paramSpecs,
  sinusoidalTable,
  type Architecture,
} from '../../../../plugins/policies/transformer/architecture';

const ref: Architecture = {
  vocab: 32,
  dModel: 128,
  layers: 4,
  heads: 4,
  context: 64,
  mlpRatio: 4,
  norm: 'layernorm',
  activation: 'gelu',
  positions: 'learned',
  tiedEmbeddings: false,
  bias: true,
  normEps: 1e-5,
};

describe('plugins/policies/transformer/architecture', () => {
  it("counts the reference model's parameters by hand", () => {
    const d = 128;
    const perLayer = 2 * d + 4 * (d * d + d) + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d);
    expect(parameterCount(ref)).to.equal(32 * d + 64 * d + 4 * perLayer + 2 * d + d * 32);
    const tied = {
      ...ref,
      tiedEmbeddings: true,
      positions: 'sinusoidal' as const,
      norm: 'rmsnorm' as const,
      bias: false,
    };
    expect(parameterCount(tied)).to.equal(32 * d + 4 * (d + 4 * d * d + d + 8 * d * d) + d);
  });

  it('initializes deterministically from the seed (GPT-2 scheme) and decays only matrices', () => {
    const a = initParams(ref, 7);
    const b = initParams(ref, 7);
    const c = initParams(ref, 8);
    expect(a.map((x) => Array.from(x.slice(0, 5)))).to.deep.equal(b.map((x) => Array.from(x.slice(0, 5))));
    expect(Array.from(a[0]!.slice(0, 5))).to.not.deep.equal(Array.from(c[0]!.slice(0, 5)));
    const specs = paramSpecs(ref);
    const i = specs.findIndex((s) => s.name === 'h0.ln1.g');
    expect(Array.from(a[i]!.slice(0, 3))).to.deep.equal([1, 1, 1]);
    const j = specs.findIndex((s) => s.name === 'h0.mlp.fc.w');
    const std = Math.sqrt(a[j]!.reduce((s, x) => s + x * x, 0) / a[j]!.length);
    expect(std).to.be.closeTo(0.02, 0.002);
    expect(specs.filter((s) => s.decay).every((s) => s.shape.length === 2)).to.equal(true);
    expect(specs.filter((s) => !s.decay).every((s) => s.shape.length === 1)).to.equal(true);
  });

  it('sinusoidal table: sin on even, cos on odd columns', () => {
    const t = sinusoidalTable(4, 4);
    expect(t[0]).to.equal(0);
    expect(t[1]).to.equal(1);
    expect(t[4 + 0]).to.be.closeTo(Math.sin(1), 1e-7);
    expect(t[4 + 3]).to.be.closeTo(Math.cos(1 / 100), 1e-7);
  });

  it('refuses heads that do not divide the width', () => {
    expect(() => checkArchitecture({ ...ref, heads: 3 })).to.throw(/CORL_ERR_CONFIG_INVALID.*divisible by heads/);
  });
});
