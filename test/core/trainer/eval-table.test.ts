import { expect } from 'chai';
import type { Completion } from '../../../core/contracts/completion';
import { EvalTable } from '../../../core/trainer/eval-table';
import type { EvalRow } from '../../../core/trainer/evaluate';

/** A completion whose text names its cell. */
const completion = (text: string): Completion => ({ text, tokenIds: [1, 2], logprobs: [0, 0], finishReason: 'stop' });
const problems = [
  { id: 'p0', prompt: 'zero' },
  { id: 'p1', prompt: 'one' },
  { id: 'p2', prompt: 'two' },
];

/** A row naming its cell: its one answer is the first sample's text. */
function rowOf(agent: number, id: string, texts: readonly string[], round?: number): EvalRow {
  return {
    agent,
    id,
    ...(round !== undefined ? { round } : {}),
    answers: [...texts],
    keys: [...texts],
    correct: texts.map((t) => t.endsWith('k0')),
    majority: texts[0] ?? null,
    majCorrect: true,
    reference: null,
    meanLength: 2,
  };
}

/** 2 agents × 3 problems × 2 samples, `rounds` rounds named `r<round>a<agent>p<problem>k<sample>`, every round graded. */
async function table(rounds: number): Promise<EvalTable> {
  const t = new EvalTable(problems, 2);
  for (let r = 0; r < rounds; r++) {
    const round = t.addRound((a, i) => [0, 1].map((k) => completion(`r${r}a${a}p${i}k${k}`)));
    expect(round).to.equal(r);
    await t.grade(round, async (a, cells) =>
      cells.map((c) =>
        rowOf(
          a,
          problems[c.problem]!.id,
          c.completions.map((x) => x.text),
          round,
        ),
      ),
    );
  }
  return t;
}

describe('core/trainer/eval-table', () => {
  it('a cell per (round, agent, problem) with its samples, read by round, agent, problem and sample', async () => {
    const t = await table(2);
    expect(t.rounds).to.equal(2);
    expect(t.completion(1, 0, 2, 1).text).to.equal('r1a0p2k1');
    expect(t.completion(0, 1, 0, 0).text).to.equal('r0a1p0k0');
    const cell = t.cell(1, 1, 1);
    expect([cell.round, cell.agent, cell.problem]).to.deep.equal([1, 1, 1]);
    expect(cell.completions.map((c) => c.text)).to.deep.equal(['r1a1p1k0', 'r1a1p1k1']);
    expect(t.row(0, 1, 2)).to.deep.include({ agent: 1, id: 'p2', round: 0, answers: ['r0a1p2k0', 'r0a1p2k1'] });
    expect(t.agentRows(1, 0).map((r) => r.answers[1])).to.deep.equal(['r1a0p0k1', 'r1a0p1k1', 'r1a0p2k1']);
    // [agent][problem] of one round: what pairs and the ensemble compare
    expect(t.roundRows(0).map((rows) => rows.map((r) => r.answers[0]))).to.deep.equal([
      ['r0a0p0k0', 'r0a0p1k0', 'r0a0p2k0'],
      ['r0a1p0k0', 'r0a1p1k0', 'r0a1p2k0'],
    ]);
  });

  it('grading hands each agent its cells of the round in problem order, and refuses a wrong count of rows', async () => {
    const t = new EvalTable(problems, 2);
    t.addRound((a, i) => [completion(`a${a}p${i}`)]);
    const seen: string[] = [];
    await t.grade(0, async (a, cells) => {
      seen.push(`${a}:${cells.map((c) => c.problem).join(',')}`);
      return cells.map((c) => rowOf(a, problems[c.problem]!.id, [c.completions[0]!.text]));
    });
    expect(seen.sort()).to.deep.equal(['0:0,1,2', '1:0,1,2']);
    const u = new EvalTable(problems, 1);
    u.addRound(() => [completion('x')]);
    let refused: unknown;
    await u.grade(0, async () => [rowOf(0, 'p0', ['x'])]).catch((e: unknown) => (refused = e));
    expect(String(refused)).to.contain('expected 3 rows of agent 0, round 0, got 1');
  });

  it('an ungraded round or a cell outside the table is a RangeError naming it', async () => {
    const t = await table(1);
    t.addRound((a, i) => [completion(`late a${a}p${i}`)]);
    expect(() => t.row(1, 0, 0)).to.throw(RangeError, 'round 1 of agent 0 is not graded yet');
    expect(t.completion(1, 0, 0, 0).text).to.equal('late a0p0');
    expect(() => t.cell(2, 0, 0)).to.throw(RangeError, 'no evaluation cell of round 2, agent 0, problem 0');
    expect(() => t.cell(0, 0, 3)).to.throw(RangeError, 'no evaluation cell of round 0, agent 0, problem 3');
    expect(() => t.completion(0, 0, 0, 2)).to.throw(RangeError, 'no sample 2 of agent 0, problem 0, round 0');
  });
});
