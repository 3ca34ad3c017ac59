// Hostile completions through the whole answer path: extraction, keys, equality. Nothing may throw,
// every result must be deterministic, and no input may take more than linear time. Tests never time
// anything: the megabyte inputs below take a quadratic (backtracking, rescanning) implementation
// hours, so a regression shows as this suite hanging; the per-character figures are in
// `npm run bench answers`.
import { expect } from 'chai';
import { Rng } from '../../../core/util/rng';
import { extractChoice } from '../../../plugins/answers/choice';
import { MathEquivalence } from '../../../plugins/answers/math';
import { ALL_RULES, extractMathAnswer } from '../../../plugins/answers/extract';
import { parseExpression } from '../../../plugins/answers/expression';
import { structureOf } from '../../../plugins/answers/compare';

const PIECES = [
  '{',
  '}',
  '{',
  '}',
  '\\boxed{',
  '\\boxed',
  '\\fbox{',
  '\\frac',
  '\\dfrac',
  '\\sqrt',
  '\\sqrt[',
  '$',
  '$$',
  '\\left(',
  '\\right)',
  '\\left.',
  '\\{',
  '\\}',
  'answer is',
  'The final answer is $',
  '$. I hope it is correct.',
  '<answer>',
  '</answer>',
  'Answer:',
  '\\text{',
  '\\mathrm{',
  '\\begin{pmatrix}',
  '\\end{pmatrix}',
  '&',
  '\\\\',
  '\\',
  '^',
  '_',
  '^\\circ',
  '%',
  '\\%',
  '\\$',
  '°',
  '−',
  '×',
  '½',
  'π',
  '∞',
  '\u200b',
  '\ufeff',
  '\u202e',
  '\u0301',
  '😀',
  '\ud800',
  '\udfff',
  '\u0000',
  '\u0007',
  '\t',
  '\n',
  '\r',
  ' ',
  '  ',
  '.',
  ',',
  '-',
  '+',
  '=',
  '/',
  '*',
  '(',
  ')',
  '[',
  ']',
  '|',
  '!',
  'e',
  'E',
  'x',
  'y',
  'i',
  '0',
  '1',
  '9',
  '00',
  '1,000',
  '1,00',
  '3.14',
  '.5',
  '-0',
  '1e9',
  '1e-9',
  '3.74\\times10^{24}',
  '\\infty',
  '\\pi',
  '\\cdot',
  'cm',
  ' units',
  'x = ',
  '\\sin',
  '\\log_',
  '\\binom',
  '\\cup',
  '(0,1]',
  'Monday',
  '(C)',
  'C.',
  'Option ',
  '**',
  '\\hspace{',
  '\\begin{',
  '\\end{',
];

function randomCompletion(rng: Rng): string {
  const n = 1 + rng.int(rng.next() < 0.9 ? 60 : 600);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (rng.next() < 0.15) s += String.fromCharCode(rng.int(0x3000));
    else s += PIECES[rng.int(PIECES.length)]!;
  }
  return s;
}

function nested(rng: Rng): string {
  const d = 1 + rng.int(400);
  const kind = rng.int(8);
  switch (kind) {
    case 0:
      return '{'.repeat(d) + 'x' + '}'.repeat(d);
    case 1:
      return '\\boxed{'.repeat(d);
    case 2:
      return '\\frac{'.repeat(d) + '1}{2'.repeat(rng.int(d + 1));
    case 3:
      return '('.repeat(d) + '1' + ')'.repeat(rng.int(d + 1));
    case 4:
      return '\\sqrt'.repeat(d) + '2';
    case 5:
      return '}'.repeat(d) + '\\boxed{' + '{'.repeat(d);
    case 6:
      return '\\text{'.repeat(d) + 'cm' + '}'.repeat(d);
    default:
      return '\\left('.repeat(d) + '\\right)'.repeat(rng.int(d + 1));
  }
}

function pathologicalNumber(rng: Rng): string {
  const n = 1 + rng.int(600);
  const kind = rng.int(10);
  switch (kind) {
    case 0:
      return '1'.repeat(n);
    case 1:
      return '1,'.repeat(n) + '1';
    case 2:
      return '1.'.repeat(n);
    case 3:
      return '-'.repeat(n) + '1';
    case 4:
      return '0.' + '0'.repeat(n) + '1';
    case 5:
      return '1e' + '9'.repeat(Math.min(n, 400));
    case 6:
      return '9'.repeat(n) + '.' + '9'.repeat(n);
    case 7:
      return '1,000'.repeat(n);
    case 8:
      return 'the answer is ' + '1.5'.repeat(n) + '.';
    default:
      return `${'9'.repeat(n)}\\times10^{${'9'.repeat(Math.min(n, 30))}}`;
  }
}

/** Inputs whose quadratic processing would take hours (each about a megabyte). */
const MEGABYTE_LINES = [
  '\\boxed{'.repeat(150_000),
  '{'.repeat(1_000_000),
  'answer is '.repeat(100_000),
  '1,'.repeat(500_000) + '2',
  '<answer>'.repeat(125_000),
  'The final answer is $'.repeat(50_000),
  '\\frac'.repeat(200_000),
  '\\text{'.repeat(170_000),
  '1.'.repeat(500_000),
  ('\\left(' + 'x'.repeat(10)).repeat(60_000),
  '9'.repeat(1_000_000),
  '\\sqrt['.repeat(170_000),
  'x'.repeat(1_000_000),
  ('(1,' + '2'.repeat(5)).repeat(110_000),
];

interface Outcome {
  answer: string | null;
  key: string | null;
  choice: string | null;
}

function run(texts: readonly string[], eq: MathEquivalence): { outcomes: Outcome[]; errors: string[] } {
  const outcomes: Outcome[] = [];
  const errors: string[] = [];
  for (const t of texts) {
    try {
      const answer = extractMathAnswer(t, ALL_RULES);
      const key = answer === null ? null : eq.key(answer);
      const choice = extractChoice(t, { letters: 'ABCDE', anywhere: true });
      if (answer !== null && typeof answer !== 'string') throw new Error('answer not a string');
      if (key !== null && (typeof key !== 'string' || key.length === 0)) throw new Error('bad key');
      if (answer !== null && answer.length > t.length + 1) throw new Error('answer longer than the text');
      if (key !== null && answer !== null && key.length > 12 * answer.length + 16) throw new Error('key blew up');
      outcomes.push({ answer, key, choice });
    } catch (e) {
      errors.push(`${(e as Error).message} on ${JSON.stringify(t.slice(0, 80))}`);
      outcomes.push({ answer: null, key: null, choice: null });
    }
  }
  return { outcomes, errors };
}

describe('answer path under hostile input (fuzz)', () => {
  const eq = new MathEquivalence({ symbolic: false });
  const rng = new Rng(20260817);
  const texts: string[] = [];
  for (let i = 0; i < 100_000; i++) {
    const r = rng.next();
    texts.push(r < 0.8 ? randomCompletion(rng) : r < 0.9 ? nested(rng) : pathologicalNumber(rng));
  }

  it('100,000 generated hostile completions: nothing throws, results are well-formed', () => {
    const { outcomes, errors } = run(texts, eq);
    expect(errors.slice(0, 5)).to.deep.equal([]);
    expect(outcomes).to.have.length(100_000);
    // the generator does reach every rule
    expect(outcomes.filter((o) => o.key !== null).length).to.be.greaterThan(50_000);
    expect(outcomes.filter((o) => o.choice !== null).length).to.be.greaterThan(100);
  });

  it('results are deterministic: a fresh equivalence gives the same answers and keys', () => {
    const sample = texts.filter((_, i) => i % 10 === 0);
    const first = run(sample, eq).outcomes;
    const second = run(sample, new MathEquivalence({ symbolic: false })).outcomes;
    expect(second).to.deep.equal(first);
  });

  it('megabyte-long lines finish (linear time) and are well-formed', () => {
    const { outcomes, errors } = run(MEGABYTE_LINES, eq);
    expect(errors).to.deep.equal([]);
    expect(outcomes[10]!.key).to.equal('9.' + '9'.repeat(999_999) + 'e+999999');
    for (const line of MEGABYTE_LINES) {
      structureOf(line);
      parseExpression(line);
    }
  });

  it('equality of hostile keys never throws, is reflexive and symmetric', async () => {
    const { outcomes } = run(texts.slice(0, 4000), eq);
    const keys = outcomes.map((o) => o.key).filter((k): k is string => k !== null);
    const pick = new Rng(7);
    for (let i = 0; i < 4000; i++) {
      const a = keys[pick.int(keys.length)]!;
      const b = i % 3 === 0 ? a : keys[pick.int(keys.length)]!;
      const ab = await eq.equal(a, b);
      const ba = await eq.equal(b, a);
      expect(ab, `${a} vs ${b}`).to.equal(ba);
      if (a === b) expect(ab).to.equal(true);
    }
  });

  it('hostile keys through the real symbolic engine stay within the hard limit and do not stop the run', async () => {
    const real = new MathEquivalence({ timeoutMs: 1500 });
    try {
      const { outcomes } = run(texts.slice(0, 3000), eq);
      const keys = [...new Set(outcomes.map((o) => o.key).filter((k): k is string => k !== null && k.length < 300))];
      const pick = new Rng(11);
      for (let i = 0; i < 40; i++) {
        const r = await real.equal(keys[pick.int(keys.length)]!, keys[pick.int(keys.length)]!);
        expect(r).to.be.a('boolean');
      }
      expect(await real.equal('(x+1)^{2}', 'x^{2}+2x+1')).to.equal(true);
    } finally {
      await real.close();
    }
  });
});
