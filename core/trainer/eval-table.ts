// One evaluation as one table, in the step table's style (step-table.ts): a cell per (round, agent,
// held-out problem) holding that agent's samples of the problem in that round and, once graded, its
// row (the answers, keys, verdicts and plurality `corl eval` writes). Round 0 is the agents answering
// alone; a run with an interaction adds a round per discussion round. Views read it by round, by
// agent or by problem, so nothing downstream indexes arrays nested by round, agent, problem and sample.
import type { Completion } from '../contracts/completion';
import type { Problem } from '../contracts/problem';
import type { EvalRow } from './evaluate';

/** One agent's samples of one held-out problem in one round, and their graded row. */
export interface EvalCell {
  readonly round: number;
  readonly agent: number;
  /** The problem's index in the evaluation's problems. */
  readonly problem: number;
  /** The samples, sample 0 first. */
  readonly completions: readonly Completion[];
  /** The graded row; filled by grading ({@link EvalTable.grade}). */
  row?: EvalRow;
}

/** The table of one evaluation: `agents` agents answering `problems`, round by round. */
export class EvalTable {
  private readonly all: EvalCell[] = [];
  private count = 0;

  constructor(
    readonly problems: readonly Problem[],
    readonly agents: number,
  ) {}

  /** Rounds added so far. */
  get rounds(): number {
    return this.count;
  }

  /** Add the next round: `completions(agent, problem)` are that agent's samples of that problem. */
  addRound(completions: (agent: number, problem: number) => readonly Completion[]): number {
    const round = this.count++;
    for (let agent = 0; agent < this.agents; agent++)
      for (let problem = 0; problem < this.problems.length; problem++)
        this.all.push({ round, agent, problem, completions: completions(agent, problem) });
    return round;
  }

  /**
   * Grade one round: `rows(agent, cells)` grades the agent's cells of the round (problem order) and
   * returns their rows in that order. Agents are graded concurrently, as the evaluation always was.
   */
  async grade(
    round: number,
    rows: (agent: number, cells: readonly EvalCell[]) => Promise<readonly EvalRow[]>,
  ): Promise<void> {
    await Promise.all(
      Array.from({ length: this.agents }, async (_, agent) => {
        const cells = this.agentCells(round, agent);
        const graded = await rows(agent, cells);
        if (graded.length !== cells.length)
          throw new RangeError(`expected ${cells.length} rows of agent ${agent}, round ${round}, got ${graded.length}`);
        cells.forEach((c, i) => (c.row = graded[i]));
      }),
    );
  }

  /** The cell of `round`, `agent` and problem `problem`. */
  cell(round: number, agent: number, problem: number): EvalCell {
    const c = this.all[(round * this.agents + agent) * this.problems.length + problem];
    if (!c || c.round !== round || c.agent !== agent || c.problem !== problem)
      throw new RangeError(`no evaluation cell of round ${round}, agent ${agent}, problem ${problem}`);
    return c;
  }

  /** Sample `sample` of `agent` for problem `problem` in `round`. */
  completion(round: number, agent: number, problem: number, sample: number): Completion {
    const c = this.cell(round, agent, problem).completions[sample];
    if (!c) throw new RangeError(`no sample ${sample} of agent ${agent}, problem ${problem}, round ${round}`);
    return c;
  }

  /** The graded row of a cell (a RangeError before its round is graded). */
  row(round: number, agent: number, problem: number): EvalRow {
    const r = this.cell(round, agent, problem).row;
    if (!r) throw new RangeError(`round ${round} of agent ${agent} is not graded yet`);
    return r;
  }

  /** One agent's cells of one round, problem by problem. */
  agentCells(round: number, agent: number): readonly EvalCell[] {
    const from = (round * this.agents + agent) * this.problems.length;
    return this.all.slice(from, from + this.problems.length);
  }

  /** One agent's graded rows of one round, problem by problem. */
  agentRows(round: number, agent: number): readonly EvalRow[] {
    return this.problems.map((_, problem) => this.row(round, agent, problem));
  }

  /** Every agent's graded rows of one round: `[agent][problem]`, what pairs and the ensemble compare. */
  roundRows(round: number): readonly (readonly EvalRow[])[] {
    return Array.from({ length: this.agents }, (_, agent) => this.agentRows(round, agent));
  }
}
