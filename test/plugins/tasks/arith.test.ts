import { expect } from 'chai';
import {
  arithCategory,
  arithCorpus,
  arithProblem,
  arithSolution,
  arithTask,
  generateArith,
  type ArithOptions,
} from '../../../plugins/tasks/arith';
import { extractMath, mathKey } from '../../../plugins/answers/math';
import { arithOptions, NO_DISCUSSION, NO_SLIPS } from './arith-options';

const noSlips = NO_SLIPS;
const noDiscussion = NO_DISCUSSION;
const base: ArithOptions = arithOptions();

describe('plugins/tasks/arith (corl:arith)', () => {
  it('builds steps, answers and features by hand', () => {
    const p = arithProblem([47, 85, 19], ['+', '-']);
    expect(p.expression).to.equal('47+85-19');
    expect(p.steps).to.deep.equal([
      { left: 47, op: '+', right: 85, result: 132 },
      { left: 132, op: '-', right: 19, result: 113 },
    ]);
    expect(p.answer).to.equal(113);
    expect(p.features).to.deep.equal({ carry: true, borrow: true, hundreds: true, operands: 3 });
    expect(arithSolution(p)).to.equal('47+85=132;132-19=113;\\boxed{113}');
    expect(arithProblem([12, 31], ['+']).features).to.include({ carry: false, borrow: false, hundreds: false });
    expect(arithProblem([40, 25], ['-']).features.borrow).to.equal(true);
    expect(arithProblem([45, 25], ['-']).features.borrow).to.equal(false);
  });

  it('is deterministic, keeps the held-out split disjoint from train and pretraining, and never goes negative', () => {
    const a = generateArith(base);
    const b = generateArith(base);
    expect(a.train.map((p) => p.expression)).to.deep.equal(b.train.map((p) => p.expression));
    const held = new Set(a.heldOut.map((p) => p.expression));
    expect(held.size).to.equal(60);
    expect(new Set(a.train.map((p) => p.expression)).size).to.equal(300);
    for (const p of [...a.train, ...a.pretrain]) expect(held.has(p.expression)).to.equal(false);
    for (const p of [...a.train, ...a.heldOut]) for (const s of p.steps) expect(s.result).to.be.at.least(0);
    // The held-out split does not depend on the training size.
    expect(generateArith({ ...base, train: 100 }).heldOut.map((p) => p.expression)).to.deep.equal(
      a.heldOut.map((p) => p.expression),
    );
  });

  it('pretraining weights thin out the blind-spot features of a family', () => {
    const all = generateArith(base).pretrain;
    const noCarry = generateArith({
      ...base,
      pretrain: { ...base.pretrain, weights: { carry: 0, borrow: 1, hundreds: 1 } },
    }).pretrain;
    expect(all.some((p) => p.features.carry)).to.equal(true);
    expect(noCarry.some((p) => p.features.carry)).to.equal(false);
  });

  it('loads problems with phrasings as variants, references apart, and solutions whose boxed answer is the reference', async () => {
    const d = await (arithTask.create(base, {} as any) as any).load();
    expect(d.train.length).to.equal(300);
    const p = d.train[0];
    expect(p.prompt.endsWith('=')).to.equal(true);
    expect(p.variants.length).to.equal(3);
    expect(JSON.stringify(p)).to.not.contain('boxed');
    const ref = d.groundTruth.get(p.id);
    expect(mathKey(extractMath(ref.solution, { lastNumber: false })!)).to.equal(ref.answer);
    expect(d.pretrainText.length).to.equal(500);
    expect(d.pretrainPromptLengths.length).to.equal(500);
    expect(d.pretrainText[0].slice(d.pretrainPromptLengths[0])).to.match(/\\boxed\{\d+\}$/);
  });

  it('a validation split is disjoint from train, held-out and the corpus, and leaves the held-out split as it was', () => {
    const a = generateArith(base);
    const v = generateArith({ ...base, validation: 40 });
    expect(v.heldOut.map((p) => p.expression)).to.deep.equal(a.heldOut.map((p) => p.expression));
    expect(a.validation).to.have.length(0);
    const val = new Set(v.validation.map((p) => p.expression));
    expect(val.size).to.equal(40);
    for (const p of [...v.train, ...v.heldOut, ...v.pretrain]) expect(val.has(p.expression)).to.equal(false);
  });

  it('a fresh held-out set (heldOutSeed) is apart from the standing one, from train, validation and the corpus', () => {
    const a = generateArith({ ...base, validation: 40 });
    const f = generateArith({ ...base, validation: 40, heldOutSeed: 7 });
    const again = generateArith({ ...base, validation: 40, heldOutSeed: 7 });
    const other = generateArith({ ...base, validation: 40, heldOutSeed: 8 });
    const exprs = (ps: readonly { expression: string }[]) => ps.map((p) => p.expression);
    expect(generateArith({ ...base, heldOutSeed: 0 }).heldOut).to.deep.equal(generateArith(base).heldOut);
    expect(exprs(again.heldOut)).to.deep.equal(exprs(f.heldOut));
    expect(f.heldOut).to.have.length(60);
    expect(new Set(exprs(f.heldOut)).size).to.equal(60);
    const fresh = new Set(exprs(f.heldOut));
    for (const p of [...a.heldOut, ...f.train, ...f.validation, ...f.pretrain])
      expect(fresh.has(p.expression)).to.equal(false);
    // the standing set stays out of every split and corpus too
    const standing = new Set(exprs(a.heldOut));
    for (const p of [...f.train, ...f.validation, ...f.pretrain]) expect(standing.has(p.expression)).to.equal(false);
    expect(exprs(other.heldOut)).to.not.deep.equal(exprs(f.heldOut));
  });

  it('a heldOutSeed without held-out problems is a coded error naming the field', async () => {
    try {
      await (arithTask.create({ ...base, heldOut: 0, heldOutSeed: 3 }, {} as any) as any).load();
      expect.fail();
    } catch (e) {
      expect((e as Error).message)
        .to.contain('CORL_ERR_TASK_DATA')
        .and.contain('expected heldOut > 0 with heldOutSeed 3');
    }
  });

  it('tags every problem with the category its carries and borrows put it in', async () => {
    expect(arithCategory(arithProblem([47, 85, 19], ['+', '-']).features)).to.equal('carry+borrow');
    expect(arithCategory(arithProblem([47, 85], ['+']).features)).to.equal('carry');
    expect(arithCategory(arithProblem([40, 25], ['-']).features)).to.equal('borrow');
    expect(arithCategory(arithProblem([12, 31], ['+']).features)).to.equal('plain');
    const d = await (arithTask.create({ ...base, validation: 10 }, {} as any) as any).load();
    for (const p of [...d.train, ...d.heldOut, ...d.validation])
      expect(['plain', 'carry', 'borrow', 'carry+borrow']).to.include(p.metadata.category);
    expect(d.validation[0].metadata.split).to.equal('validation');
  });

  it('without slips or discussion turns the corpus is the correct worked solutions', () => {
    const g = generateArith(base);
    const corpus = arithCorpus(base, g.pretrain);
    corpus.forEach((t, i) => {
      expect(t.solution).to.equal(arithSolution(g.pretrain[i]!));
      expect(t.right).to.equal(true);
    });
    // Slip and discussion options never change which problems the corpus holds.
    const slipped = generateArith({
      ...base,
      pretrain: {
        ...base.pretrain,
        slips: { ...noSlips, column: 0.2 },
        discussion: { ...noDiscussion, fraction: 0.3 },
      },
    });
    expect(slipped.pretrain.map((p) => p.expression)).to.deep.equal(g.pretrain.map((p) => p.expression));
  });

  it('asking for more distinct problems than exist is a coded error', async () => {
    const tiny = {
      ...base,
      train: 500,
      heldOut: 10,
      operands: { min: 2, max: 2 },
      digits: { min: 1, max: 1 },
      operations: ['+'] as ('+' | '-')[],
    };
    try {
      await (arithTask.create(tiny, {} as any) as any).load();
      expect.fail();
    } catch (e) {
      expect((e as Error).message)
        .to.contain('CORL_ERR_TASK_DATA')
        .and.contain('distinct problems');
    }
  });
});
