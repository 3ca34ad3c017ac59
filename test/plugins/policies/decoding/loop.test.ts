import { expect } from 'chai';
import { Rng } from '../../../../core/util/rng';
import {
  decodeRows,
  type DecodeModel,
  type RowCheck,
  type StepLogits,
} from '../../../../plugins/policies/decoding/loop';

// A scripted model over a vocabulary of 4: logits one-hot on `next(row, n)` (n tokens chosen so
// far), so greedy decoding (temperature 0) follows the script; token 0 is the end token.
const V = 4;
const END = 0;

function scripted(
  next: (row: number, n: number) => number,
  check: (row: number, tokens: readonly number[]) => RowCheck,
) {
  const calls: number[][] = [];
  const logitsFor = (rows: readonly number[], n: (r: number) => number): StepLogits => {
    const logits = new Float32Array(rows.length * V);
    rows.forEach((r, i) => {
      logits[i * V + next(r, n(r))] = 5;
    });
    return { logits, vocab: V, offset: (r) => rows.indexOf(r) * V };
  };
  let R = 0;
  const model: DecodeModel = {
    prefill: async () =>
      logitsFor(
        Array.from({ length: R }, (_, r) => r),
        () => 0,
      ),
    step: async (active, tokens) => {
      calls.push([...active]);
      return logitsFor(active, (r) => tokens[r]!.length);
    },
    check,
  };
  return { model, calls, setRows: (n: number) => (R = n) };
}

const row = (maxTokens: number, extra: { minTokens?: number } = {}) => ({
  temperature: 0,
  topP: 1,
  maxTokens,
  rng: new Rng(1),
  ...extra,
});

describe('decodeRows', () => {
  it('steps only the active rows, and ends each on the end token, a stop check or its length', async () => {
    // Row 0 emits 1, 2, then the end token; row 1 emits 3 forever (length 2); row 2 is stopped by
    // its check after its second token; row 3 asks for no tokens.
    const script = [
      [1, 2, END],
      [3, 3, 3],
      [2, 2, 2],
      [1, 1, 1],
    ];
    const s = scripted(
      (r, n) => script[r]![n]!,
      (r, tokens) => (tokens.at(-1) === END || (r === 2 && tokens.length === 2) ? 'stop' : undefined),
    );
    s.setRows(4);
    const out = await decodeRows([row(5), row(2), row(5), row(0)], s.model, { tokenStats: false });
    expect(out.map((o) => o.tokens)).to.deep.equal([[1, 2, END], [3, 3], [2, 2], []]);
    expect(out.map((o) => o.finish)).to.deep.equal(['stop', 'length', 'stop', 'length']);
    // Prefill chose the first token of rows 0-2; then two steps: rows 0, 1, 2, then row 0 alone.
    expect(s.calls).to.deep.equal([[0, 1, 2], [0]]);
    // Greedy log-probabilities are those at T = 1 of a one-hot logit of 5 among four: 5 − log(e⁵ + 3).
    const lp = 5 - Math.log(Math.exp(5) + 3);
    expect(out[1]!.logprobs[0]).to.be.closeTo(lp, 1e-6);
    expect(out[0]!.entropies).to.deep.equal([]);
  });

  it('ends a row whose check reports a full context with finish "length"', async () => {
    const s = scripted(
      () => 1,
      (_, tokens) => (tokens.length === 3 ? 'full' : undefined),
    );
    s.setRows(1);
    const out = await decodeRows([row(10)], s.model, { tokenStats: true });
    expect(out[0]!.tokens).to.deep.equal([1, 1, 1]);
    expect(out[0]!.finish).to.equal('length');
    // Entropy of softmax([5, 0, 0, 0]) (the argmax has p = e⁵ / (e⁵ + 3)).
    const z = Math.exp(5) + 3;
    const p = [Math.exp(5) / z, 1 / z, 1 / z, 1 / z];
    const h = -p.reduce((a, q) => a + q * Math.log(q), 0);
    expect(out[0]!.entropies).to.have.length(3);
    expect(out[0]!.entropies[0]).to.be.closeTo(h, 1e-6);
  });

  it('never chooses the end token before minTokens', async () => {
    // The script always prefers the end token; banned for the first two tokens, the runner-up
    // (ties resolved by the lowest id, here 1) is chosen instead.
    const s = scripted(
      () => END,
      (_, tokens) => (tokens.at(-1) === END ? 'stop' : undefined),
    );
    s.setRows(1);
    const out = await decodeRows([row(10, { minTokens: 2 })], s.model, { tokenStats: false, end: END });
    expect(out[0]!.tokens).to.deep.equal([1, 1, END]);
    expect(out[0]!.finish).to.equal('stop');
  });

  it('returns no rows for no rows without calling the model', async () => {
    const s = scripted(
      () => 1,
      () => undefined,
    );
    expect(await decodeRows([], s.model, { tokenStats: false })).to.deep.equal([]);
    expect(s.calls).to.deep.equal([]);
  });
});
