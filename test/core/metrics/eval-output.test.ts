import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../../../core/errors';
import { outputAgreement, readEvalOutput, selectAgent, type EvalOutputRow } from '../../../core/metrics/eval-output';
import { MathEquivalence } from '../../../plugins/answers/math';
import { tempDir } from '../../fixtures/configs';

/** A row whose first sample is `key` (right or wrong) and whose plurality is `majority`. */
function row(
  id: string,
  key: string | null,
  right: boolean,
  majority: string | null = key,
  majRight = right,
): EvalOutputRow {
  return { id, keys: [key, majority], correct: [right, majRight], majority, majCorrect: majRight };
}

async function refusal(fn: () => unknown): Promise<Error & { code?: string }> {
  try {
    await fn();
  } catch (e) {
    expect(isCorlError(e), String((e as Error)?.stack)).to.equal(true);
    return e as Error & { code?: string };
  }
  throw new Error('expected a refusal');
}

describe('core/metrics/eval-output (corl agreement)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-agree-');
  });
  afterEach(() => tmp.cleanup());
  const write = (name: string, lines: readonly (string | object)[]): string => {
    const f = path.join(tmp.dir, name);
    fs.writeFileSync(f, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
    return f;
  };

  // Ten problems, first samples:
  //   both right a = 4 (p1–p4), only A right b = 2 (p5, p6), only B right c′ = 1 (p7),
  //   both wrong d = 3 (p8–p10), two of them with the same wrong answer (p8: "9"/"9", p9: "8"/"8"; p10: "5"/"6").
  // p_o = (a + d)/N = 7/10 = 0.7; p_A = (a + b)/N = 0.6; p_B = (a + c′)/N = 0.5
  // p_e = p_A·p_B + (1 − p_A)(1 − p_B) = 0.30 + 0.20 = 0.5
  // κ = (0.7 − 0.5)/(1 − 0.5) = 0.4;  c = (b + c′)/N = 0.3;  w = 2/10 = 0.2;  u = 1 − d/N = 0.7
  const A = [
    row('p1', '1', true),
    row('p2', '2', true),
    row('p3', '3', true),
    row('p4', '4', true),
    row('p5', '5', true),
    row('p6', '6', true),
    row('p7', '0', false),
    row('p8', '9', false),
    row('p9', '8', false),
    row('p10', '5', false),
  ];
  // B in another order (the join is by id); its pluralities are all right except p1 (for the majority basis).
  const B = [
    row('p10', '6', false, '10', true),
    row('p9', '8', false, '9', true),
    row('p8', '9', false, '8', true),
    row('p7', '7', true),
    row('p6', '0', false, '6', true),
    row('p5', '0', false, '5', true),
    row('p4', '4', true),
    row('p3', '3', true),
    row('p2', '2', true),
    row('p1', '1', true, 'x', false),
  ];

  it('first samples: the worked example gives κ 0.4, c 0.3, w 0.2, u 0.7', async () => {
    const r = await outputAgreement(A, B);
    expect(r.agreement.counts).to.deep.equal({ a: 4, b: 2, c: 1, d: 3, dSame: 2 });
    expect(r.agreement.n).to.equal(10);
    expect(r.agreement.kappa).to.be.closeTo(0.4, 1e-12);
    expect(r.agreement.complementarity).to.be.closeTo(0.3, 1e-12);
    expect(r.agreement.sameWrong).to.be.closeTo(0.2, 1e-12);
    expect(r.agreement.coverage).to.be.closeTo(0.7, 1e-12);
    expect(r.ids).to.deep.equal(A.map((x) => x.id));
  });

  it("plurality answers: B's majority is right on p2–p10 only", async () => {
    // A's pluralities equal its first samples: right on p1–p6. B: right on p2–p10.
    // a = 5 (p2–p6), b = 1 (p1), c′ = 4 (p7–p10), d = 0.  p_o = 0.5, p_A = 0.6, p_B = 0.9
    // p_e = 0.54 + 0.04 = 0.58;  κ = (0.5 − 0.58)/(0.42) = −0.08/0.42 = −4/21
    const r = await outputAgreement(A, B, { basis: 'majority' });
    expect(r.agreement.counts).to.deep.equal({ a: 5, b: 1, c: 4, d: 0, dSame: 0 });
    expect(r.agreement.kappa).to.be.closeTo(-4 / 21, 1e-12);
    expect(r.agreement.coverage).to.equal(1);
  });

  it('every aligned sample pair: the two samples of each problem pooled into N·K = 20 items', async () => {
    // Sample 0 is the first-sample table (a 4, b 2, c′ 1, d 3, 2 same); sample 1 is the plurality
    // table (a 5, b 1, c′ 4, d 0). Pooled: a 9, b 3, c′ 5, d 3, N 20.
    // p_o = 12/20 = 0.6; p_A = 12/20 = 0.6; p_B = 14/20 = 0.7; p_e = 0.42 + 0.12 = 0.54
    // κ = 0.06/0.46 = 3/23; c = 8/20 = 0.4; w = 2/20 = 0.1; u = 1 − 3/20 = 0.85
    const r = await outputAgreement(A, B, { basis: 'all' });
    expect(r.agreement.counts).to.deep.equal({ a: 9, b: 3, c: 5, d: 3, dSame: 2 });
    expect(r.agreement.n).to.equal(20);
    expect(r.agreement.kappa).to.be.closeTo(3 / 23, 1e-12);
    expect(r.agreement.complementarity).to.be.closeTo(0.4, 1e-12);
    expect(r.agreement.sameWrong).to.be.closeTo(0.1, 1e-12);
    expect(r.agreement.coverage).to.be.closeTo(0.85, 1e-12);
    expect(r.ids.length).to.equal(10);
    // Unequal sample counts: only the first min(K_A, K_B) samples pair up.
    const one = A.map((x) => ({ ...x, keys: x.keys.slice(0, 1), correct: x.correct.slice(0, 1) }));
    expect((await outputAgreement(one, B, { basis: 'all' })).agreement.counts).to.deep.equal({
      a: 4,
      b: 2,
      c: 1,
      d: 3,
      dSame: 2,
    });
  });

  it("picks one agent's rows from a file of several (a run directory's eval file) by index or name", async () => {
    const mixed = [
      ...A.map((x) => ({ ...x, agent: 0, agentName: 'alpha' })),
      ...B.map((x) => ({ ...x, agent: 1, agentName: 'beta' })),
    ];
    const r = await outputAgreement(selectAgent(mixed, '0', 'f'), selectAgent(mixed, 'beta', 'f'));
    expect(r.agreement.kappa).to.be.closeTo(0.4, 1e-12);
    const e = await refusal(() => selectAgent(mixed, 'gamma', 'run/eval/step-000000.jsonl'));
    expect(e.code).to.equal('CORL_ERR_EVAL_MISMATCH');
    expect(e.message).to.contain('"gamma"').and.contain('0 (alpha), 1 (beta)');
    // Without a pick, a file of two agents repeats every id.
    expect((await refusal(() => outputAgreement(mixed, B))).message).to.contain('the file holds 2 agents');
  });

  it('rows without "majority" (older run directories) serve --use first and all, not majority', async () => {
    const old = A.map(({ majority: _m, ...rest }) => rest);
    expect((await outputAgreement(old, B)).agreement.kappa).to.be.closeTo(0.4, 1e-12);
    expect((await outputAgreement(old, B, { basis: 'all' })).agreement.n).to.equal(20);
    const e = await refusal(() => outputAgreement(old, B, { basis: 'majority', fileA: 'old.jsonl' }));
    expect(e.code).to.equal('CORL_ERR_EVAL_INPUT');
    expect(e.message).to.contain('"majority"');
  });

  it('two wrong answers are the same when the equivalence says so (0.5 and \\frac{1}{2}), as in the trainer', async () => {
    // Keys as corl:math writes them: B's wrong answers on p8 and p9 are other spellings of A's.
    const A2 = A.map((r) => (r.id === 'p8' ? row('p8', '0.5', false) : r));
    const B2 = B.map((r) =>
      r.id === 'p8' ? row('p8', '\\frac{1}{2}', false) : r.id === 'p9' ? row('p9', '8.0', false) : r,
    );
    // By string, only p10 differs from before... and p8, p9 now differ too: w = 0 of 10.
    expect((await outputAgreement(A2, B2)).agreement.counts.dSame).to.equal(0);
    const eq = new MathEquivalence({ symbolic: false } as any);
    try {
      const r = await outputAgreement(A2, B2, { equivalence: eq });
      expect(r.agreement.counts).to.deep.equal({ a: 4, b: 2, c: 1, d: 3, dSame: 2 });
      expect(r.agreement.sameWrong).to.be.closeTo(0.2, 1e-12);
    } finally {
      await eq.close?.();
    }
  });

  it('a null answer is never the same wrong answer as another null', async () => {
    const r = await outputAgreement([row('q', null, false)], [row('q', null, false)]);
    expect(r.agreement.counts).to.deep.equal({ a: 0, b: 0, c: 0, d: 1, dSame: 0 });
    expect(r.agreement.kappa).to.equal(1); // p_e = 1: both always wrong
  });

  it('mismatched ids are CORL_ERR_EVAL_MISMATCH naming them, unless --intersect', async () => {
    const e = await refusal(() => outputAgreement(A, B.slice(2), { fileA: 'a.jsonl', fileB: 'b.jsonl' }));
    expect(e.code).to.equal('CORL_ERR_EVAL_MISMATCH');
    expect(e.message).to.contain('2 only in a.jsonl ("p9", "p10")').and.contain('--intersect');
    const r = await outputAgreement(A, B.slice(2), { intersect: true });
    expect(r.ids.length).to.equal(8);
    expect(r.onlyA).to.deep.equal(['p9', 'p10']);
    expect(r.agreement.counts).to.deep.equal({ a: 4, b: 2, c: 1, d: 1, dSame: 1 });
    expect(
      (await refusal(() => outputAgreement([row('x', '1', true)], [row('y', '1', true)], { intersect: true }))).message,
    ).to.contain('share at least one problem id');
    const twice = await refusal(() =>
      outputAgreement(
        [
          { ...row('x', '1', true), agentName: 'a' },
          { ...row('x', '2', true), agentName: 'b' },
        ],
        [row('x', '1', true)],
        { fileA: 'all.jsonl' },
      ),
    );
    expect(twice.code).to.equal('CORL_ERR_EVAL_MISMATCH');
    expect(twice.message).to.contain(
      'all.jsonl: expected one row per problem, got id "x" twice (the file holds 2 agents)',
    );
  });

  it('reads eval output files back; bad lines, empty and missing files are CORL_ERR_EVAL_INPUT with file and line', async () => {
    const good = write('good.jsonl', [row('p1', '1', true), '', row('p2', null, false)]);
    expect(readEvalOutput(good).map((r) => r.id)).to.deep.equal(['p1', 'p2']);
    const cases: [(string | object)[], RegExp][] = [
      [[row('p1', '1', true), '{oops'], /bad\.jsonl:2: expected one JSON object per line, got invalid JSON/],
      [['[1]'], /bad\.jsonl:1: expected a JSON object/],
      [
        [{ keys: ['1'], correct: [true], majority: '1', majCorrect: true }],
        /bad\.jsonl:1: expected "id" to be a problem id, got no such field/,
      ],
      [
        [{ id: 'x', keys: [], correct: [], majority: null, majCorrect: false }],
        /bad\.jsonl:1: expected "keys" to be a non-empty list/,
      ],
      [
        [{ id: 'x', keys: ['1', '2'], correct: [true], majority: '1', majCorrect: true }],
        /bad\.jsonl:1: expected "correct" to be a list of 2 booleans/,
      ],
      [
        [{ id: 'x', keys: ['1'], correct: [true], majority: 1, majCorrect: true }],
        /bad\.jsonl:1: expected "majority" to be an answer key or null, got 1/,
      ],
      [
        [{ id: 'x', keys: ['1'], correct: [true], majority: '1' }],
        /bad\.jsonl:1: expected "majCorrect" to be a boolean/,
      ],
      [['', '  '], /bad\.jsonl: expected at least one row, got an empty file/],
    ];
    for (const [lines, re] of cases) {
      const e = await refusal(() => readEvalOutput(write('bad.jsonl', lines)));
      expect(e.code).to.equal('CORL_ERR_EVAL_INPUT');
      expect(e.message).to.match(re);
    }
    const missing = await refusal(() => readEvalOutput(path.join(tmp.dir, 'nope.jsonl')));
    expect(missing.code).to.equal('CORL_ERR_EVAL_INPUT');
    expect(missing.message).to.contain('nope.jsonl: expected a readable evaluation output, got no such file');
  });
});
