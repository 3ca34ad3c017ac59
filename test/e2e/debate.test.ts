// MAPoRL's debate through the `corl` binary with the categorical test policy: per-round training and
// evaluation metrics, evaluation rows of the final round, rollouts whose rewards are corl:debate's
// credit of the verifier's scores, and the refusal of a ground-truth verifier in a label-free config.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { debateCredit, type DebateOptions } from '../../plugins/interactions';
import { verifierText } from '../../plugins/rewards/learned-verifier';
import { coRlConfig, inlineTask, tempDir, writeConfig } from '../fixtures/configs';
import { tinyVerifierProbability, writeTinyVerifier } from '../fixtures/tiny-verifier';

const BIN = path.resolve(__dirname, '../../../bin/corl.js');

function corl(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const jsonl = (file: string): any[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

const DEBATE: DebateOptions = {
  rounds: 2,
  share: 'answer',
  horizon: 'discounted_sum',
  agentShare: 'all',
  discount: 0.3,
  alpha: [0.5, 1, 0.25, 2],
  threshold: 0.5,
};

/** The fixture's Co-RL config turned into a 2-round debate scored by the ground-truth verifier. */
function debateConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const base = coRlConfig();
  return {
    ...base,
    name: 'fixture-debate',
    labelFree: false,
    topology: 'corl:complete',
    reward: 'corl:gt-verifier',
    interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer', alpha: DEBATE.alpha } },
    trainer: { ...(base.trainer as object), steps: 2, evalEvery: 1, checkpointEvery: 0 },
    ...overrides,
  };
}

describe('e2e: corl train with corl:debate (MAPoRL)', function () {
  this.timeout(120000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-e2e-debate-');
  });
  afterEach(() => tmp.cleanup());

  it('reports every round, writes final-round eval rows and credits each turn as corl:debate does', () => {
    const file = writeConfig(tmp.dir, 'debate.json', debateConfig());
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out]);
    expect(r.code, r.stderr).to.equal(0);

    const metrics = jsonl(path.join(out, 'metrics.jsonl'));
    const train = metrics.filter((m) => m.phase === 'train');
    expect(train.map((m) => `${m.step}/${m.agent}`)).to.deep.equal(['1/0', '1/1', '2/0', '2/1']);
    for (const m of train) {
      for (const round of [0, 1, 2]) {
        expect(m.metrics, `train round ${round}`).to.have.property(`train/round${round}/accuracy`).within(0, 1);
        expect(m.metrics).to.have.property(`reward/round${round}/score_mean`).within(0, 1);
      }
      expect(m.metrics).not.to.have.property('train/round3/accuracy');
    }
    // Evaluation at the start and after each step, for both agents: each round's pass@1, the final
    // round's as eval/accuracy.
    const evals = metrics.filter((m) => m.phase === 'eval' && m.agent !== null);
    expect(evals.map((m) => `${m.step}/${m.agent}`)).to.deep.equal(['0/0', '0/1', '1/0', '1/1', '2/0', '2/1']);
    for (const m of evals) {
      for (const round of [0, 1, 2]) expect(m.metrics).to.have.property(`eval/round${round}/pass@1`).within(0, 1);
      expect(m.metrics['eval/accuracy']).to.equal(m.metrics['eval/round2/pass@1']);
      expect(m.metrics).to.have.property('eval/round2/maj@3');
    }
    // The eval rows are the final round's: 2 agents × 3 held-out problems, each marked round 2.
    const rows = jsonl(path.join(out, 'eval', 'step-000002.jsonl'));
    expect(rows).to.have.length(6);
    for (const row of rows) expect(row).to.include({ round: 2 });

    // Rollouts: 3 rounds per (agent, problem); the verifier's score is correctness against the
    // reference, and the rewards are corl:debate's credit of those scores.
    const answers = new Map(
      [...inlineTask.options.train, ...inlineTask.options.heldOut].map((p) => [p.id, p.answer] as const),
    );
    const rollouts = jsonl(path.join(out, 'rollouts.jsonl'));
    expect(rollouts).to.have.length(2 * 2 * 4 * 3);
    let changed = 0;
    for (const step of [1, 2])
      for (const index of [0, 1, 2, 3]) {
        const at = (agent: number, round: number) =>
          rollouts.find((x) => x.step === step && x.index === index && x.agent === agent && x.round === round)!;
        const id = at(0, 0).id;
        const scores = [0, 1, 2].map((t) =>
          [0, 1].map((a) => {
            const row = at(a, t);
            expect(row.id).to.equal(id);
            return row.completions.map((c: { key: string | null; score: number }) => {
              expect(c.score).to.equal(c.key === answers.get(id) ? 1 : 0);
              return c.score;
            });
          }),
        );
        const credit = debateCredit(DEBATE, { agents: 2, turns: 3, debates: 5, scores, neighbours: [[1], [0]] });
        for (const t of [0, 1, 2])
          for (const a of [0, 1]) {
            const row = at(a, t);
            row.completions.forEach((c: { prompt: string; reward: number }, k: number) => {
              expect(c.reward, `step ${step} problem ${id} agent ${a} round ${t} debate ${k}`).to.be.closeTo(
                credit[t]![a]![k]!,
                1e-12,
              );
              if (t > 0) expect(c.prompt).to.contain('Other agents answered this question in the previous round');
            });
            if (t > 0)
              changed += row.completions.filter(
                (c: { key: string | null }, k: number) => c.key !== at(a, t - 1).completions[k].key,
              ).length;
          }
      }
    expect(changed, 'the policy answers discussion prompts anew, so some turns change').to.be.greaterThan(0);
  });

  it("with corl:learned-verifier: each turn's score is the verifier's P(Y), credited as corl:debate does; the run is marked supervised", async () => {
    const verifier = path.join(tmp.dir, 'verifier');
    await writeTinyVerifier(verifier);
    const reward = { use: 'corl:learned-verifier', options: { checkpoint: verifier } };
    const base = debateConfig({ reward });
    const file = writeConfig(tmp.dir, 'learned.json', {
      ...base,
      trainer: { ...(base.trainer as object), steps: 1, evalEvery: 0 },
    });
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--out', out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('supervised run (a reward source was trained on labels): 1 step(s)');
    expect(JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8'))).to.include({
      supervised: true,
      trainedOnLabels: true,
    });
    const prompts = new Map(inlineTask.options.train.map((p) => [p.id, p.prompt] as const));
    const rollouts = jsonl(path.join(out, 'rollouts.jsonl'));
    expect(rollouts).to.have.length(2 * 4 * 3);
    const distinct = new Set<string>();
    for (const index of [0, 1, 2, 3]) {
      const at = (agent: number, round: number) =>
        rollouts.find((x) => x.index === index && x.agent === agent && x.round === round)!;
      const id = at(0, 0).id;
      // The score reads the problem's canonical prompt and the completion, never the discussion prompt.
      const scores = [0, 1, 2].map((t) =>
        [0, 1].map((a) =>
          at(a, t).completions.map((c: { text: string; score: number }) => {
            const hand = tinyVerifierProbability(verifierText(prompts.get(id)!, c.text));
            expect(c.score, `${id} agent ${a} round ${t}`).to.be.closeTo(hand, 1e-6);
            distinct.add(c.score.toFixed(6));
            return c.score;
          }),
        ),
      );
      const credit = debateCredit(DEBATE, { agents: 2, turns: 3, debates: 5, scores, neighbours: [[1], [0]] });
      for (const t of [0, 1, 2])
        for (const a of [0, 1])
          at(a, t).completions.forEach((c: { reward: number }, k: number) =>
            expect(c.reward).to.be.closeTo(credit[t]![a]![k]!, 1e-9),
          );
    }
    expect(distinct.size, 'the scores differ between completions').to.be.greaterThan(1);
    // A labelFree config refuses it before any step.
    const lf = writeConfig(tmp.dir, 'learned-lf.json', { ...base, labelFree: true });
    const v = corl(['validate', lf]);
    expect(v.code).to.equal(1);
    expect(v.stderr)
      .to.match(/^CORL_ERR_CONFIG_LABEL_FREE/)
      .and.contain('trained on labelled data');
    const ok = corl(['validate', file]);
    expect(ok.stdout).to.contain('supervised (a reward source was trained on labels; it reads none)');
  });

  it('refuses corl:gt-verifier in a labelFree config with CORL_ERR_CONFIG_LABEL_FREE, before any step', () => {
    const file = writeConfig(tmp.dir, 'label-free.json', debateConfig({ labelFree: true }));
    const out = path.join(tmp.dir, 'run');
    const t = corl(['train', '-c', file, '--out', out]);
    expect(t.code).to.equal(1);
    expect(t.stderr)
      .to.match(/^CORL_ERR_CONFIG_LABEL_FREE/)
      .and.contain('"corl:gt-verifier"');
    expect(fs.existsSync(path.join(out, 'metrics.jsonl'))).to.equal(false);
    const v = corl(['validate', file]);
    expect(v.code).to.equal(1);
    expect(v.stderr).to.match(/^CORL_ERR_CONFIG_LABEL_FREE/);
  });

  it('--eval-split validation measures base models on the validation split (--steps 0), never on resume', () => {
    const file = writeConfig(
      tmp.dir,
      'arith-debate.json',
      debateConfig({
        task: { use: 'corl:arith', options: { train: 8, heldOut: 3, validation: 4 } },
        trainer: { steps: 0, batchSize: 2, groupSize: 2, evalEvery: 0, checkpointEvery: 0, sampling: { maxTokens: 4 } },
        eval: { samples: 2, sampling: { temperature: 1, maxTokens: 4 } },
      }),
    );
    const out = path.join(tmp.dir, 'run');
    const r = corl(['train', '-c', file, '--steps', '0', '--eval-split', 'validation', '--out', out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8')).eval.split).to.equal('validation');
    const rows = jsonl(path.join(out, 'eval', 'step-000000.jsonl'));
    expect(rows.map((x) => x.id)).to.have.length(2 * 4);
    const evals = jsonl(path.join(out, 'metrics.jsonl')).filter((m) => m.phase === 'eval' && m.agent === 0);
    expect(evals[0].metrics).to.have.property('eval/round1/peers_right/share');
    const bad = corl(['train', '-c', file, '--eval-split', 'held-out', '--out', path.join(tmp.dir, 'bad')]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr)
      .to.match(/^CORL_ERR_CLI_USAGE/)
      .and.contain('"held-out"');
    const again = corl(['train', '--resume', out, '--eval-split', 'test']);
    expect(again.code).to.equal(2);
    expect(again.stderr)
      .to.match(/^CORL_ERR_CLI_USAGE/)
      .and.contain('--eval-split');
  });
});
