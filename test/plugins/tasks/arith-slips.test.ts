import { expect } from 'chai';
import { arithCorpus, arithProblem, generateArith, type ArithOptions } from '../../../plugins/tasks/arith';
import { SLIP_KINDS, writeChain, type SlipRates } from '../../../plugins/tasks/arith-slips';
import { Rng } from '../../../core/util/rng';
import { arithOptions } from './arith-options';

const none: SlipRates = { column: 0, carry: 0, borrow: 0, copy: 0 };

/** Whether a written step is arithmetically right (of its written operands). */
const stepRight = (s: { left: number; op: '+' | '-'; right: number; result: number }): boolean =>
  (s.op === '+' ? s.left + s.right : s.left - s.right) === s.result;

describe('plugins/tasks/arith-slips', () => {
  it('with no slips writes the correct chain and counts the opportunities by hand', () => {
    // 47+85: columns 7+5 (carry out), 4+8+carry (carry in: 1 opportunity, carry out), final carry: 1 more.
    // 132-19: columns 2-9 (borrow), 3-1-borrow (borrow in: 1 opportunity), 1-0.
    const c = writeChain(arithProblem([47, 85, 19], ['+', '-']), none, new Rng(1));
    expect(c.steps).to.deep.equal([
      { left: 47, op: '+', right: 85, result: 132 },
      { left: 132, op: '-', right: 19, result: 113 },
    ]);
    expect(c.answer).to.equal(113);
    expect(c.slips).to.deep.equal({ column: 0, carry: 0, borrow: 0, copy: 0 });
    // column: 2 (47+85) + 3 (132-19); carry: the carry into the tens and the final carry; borrow: one; copy: into step 2 and into the box.
    expect(c.opportunities).to.deep.equal({ column: 5, carry: 2, borrow: 1, copy: 2 });
  });

  it('a forgotten carry, a forgotten borrow and a miscopy are the plausible wrong digits', () => {
    // carry = 1: both carries of 47+85 are forgotten: 7+5 → 2, 4+8 → 12 → 2 (carry out forgotten too) → 22.
    const carry = writeChain(arithProblem([47, 85], ['+']), { ...none, carry: 1 }, new Rng(1));
    expect(carry.steps[0]!.result).to.equal(22);
    expect(carry.answer).to.equal(22);
    // 47+5: the carry into the tens is forgotten → 42.
    expect(writeChain(arithProblem([47, 5], ['+']), { ...none, carry: 1 }, new Rng(1)).answer).to.equal(42);
    // borrow = 1: 132-19 → 2-9 borrows (12-9=3), the tens forget it (3-1=2) → 123.
    const borrow = writeChain(arithProblem([132, 19], ['-']), { ...none, borrow: 1 }, new Rng(1));
    expect(borrow.answer).to.equal(123);
    // A slip in step 1 propagates: step 2 works from the written 22, and the box holds its result.
    const chain = writeChain(arithProblem([47, 85, 10], ['+', '+']), { ...none, carry: 1 }, new Rng(1));
    expect(chain.steps[1]).to.deep.equal({ left: 22, op: '+', right: 10, result: 32 });
    expect(chain.answer).to.equal(32);
    // copy = 1: every copy changes the number (one digit off by one, or two digits swapped).
    for (let seed = 0; seed < 50; seed++) {
      const c = writeChain(arithProblem([47, 85, 19], ['+', '-']), { ...none, copy: 1 }, new Rng(seed));
      expect(c.steps[1]!.left).to.not.equal(132);
      expect(stepRight(c.steps[1]!)).to.equal(true);
      expect(c.answer).to.not.equal(c.steps[1]!.result);
    }
  });

  it('every step is computed from the written operands, and the box copies the last written result unless a copy slipped', () => {
    const o = generateArith(
      arithOptions({
        seed: 3,
        train: 10,
        heldOut: 10,
        operands: { min: 2, max: 4 },
        digits: { min: 1, max: 3 },
        pretrain: { size: 2000, phrasings: [0] },
      }),
    );
    const rng = new Rng(7);
    for (const p of o.pretrain) {
      const c = writeChain(p, { column: 0, carry: 0, borrow: 0, copy: 0.3 }, rng);
      for (const s of c.steps) expect(stepRight(s)).to.equal(true);
      if (c.slips.copy === 0) expect(c.answer).to.equal(p.answer);
    }
  });

  it('the slip rate of a generated corpus matches its option within sampling error', () => {
    const rates: SlipRates = { column: 0.04, carry: 0.15, borrow: 0.2, copy: 0.06 };
    const options: ArithOptions = arithOptions({
      seed: 11,
      train: 10,
      heldOut: 10,
      pretrain: { size: 20000, phrasings: [0, 1], slips: rates },
    });
    const corpus = arithCorpus(options, generateArith(options).pretrain);
    for (const kind of SLIP_KINDS) {
      const n = corpus.reduce((a, t) => a + t.opportunities[kind]!, 0);
      const k = corpus.reduce((a, t) => a + t.slips[kind]!, 0);
      const p = rates[kind];
      const sd = Math.sqrt((p * (1 - p)) / n);
      expect(n, kind).to.be.above(1000);
      expect(Math.abs(k / n - p), `${kind}: ${k}/${n}`).to.be.below(4 * sd);
    }
    // And the slips are visible where they were made: a text is wrong exactly when its box differs from the answer,
    // and a slip-free text is always right.
    for (const t of corpus) if (Object.values(t.slips).every((v) => v === 0)) expect(t.right).to.equal(true);
    const wrong = corpus.filter((t) => !t.right).length / corpus.length;
    expect(wrong).to.be.within(0.1, 0.6);
  });

  it('discussion turns quote neighbours right at the configured rate and adopt their answer when told to', () => {
    const options: ArithOptions = arithOptions({
      seed: 11,
      train: 10,
      heldOut: 10,
      pretrain: {
        size: 10000,
        phrasings: [0],
        slips: { column: 0.05, carry: 0.1, borrow: 0.1, copy: 0.05 },
        discussion: { fraction: 0.5, neighbours: { min: 1, max: 2 }, neighbourRight: 0.7, adopt: 1 },
      },
    });
    const g = generateArith(options);
    const corpus = arithCorpus(options, g.pretrain);
    const turns = corpus.map((t, i) => ({ t, p: g.pretrain[i]! })).filter(({ t }) => t.discussion);
    expect(turns.length / corpus.length).to.be.within(0.47, 0.53);
    const quoted = turns.flatMap(({ t, p }) => t.discussion!.answers.map((a) => a === p.answer));
    expect(quoted.filter(Boolean).length / quoted.length).to.be.within(0.67, 0.73);
    for (const { t, p } of turns) {
      expect(t.prompt).to.match(/^Peers: -?\d+(, -?\d+)?\. /);
      expect(t.prompt.endsWith(`${p.expression}=`)).to.equal(true);
      const boxed = Number(/\\boxed\{(-?\d+)\}$/.exec(t.solution)![1]);
      // adopt = 1: the box always holds the neighbours' answer (their plurality; with two different answers, the first).
      expect(boxed).to.equal(t.discussion!.answers[0]);
      expect(t.right).to.equal(boxed === p.answer);
    }
  });
});
