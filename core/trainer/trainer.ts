// The cohort loop: steps (step.ts: sample, answer keys, rewards against the topology's supervisors,
// credit, advantages, updates, metrics; docs/architecture.md, "One training step"), evaluations and
// checkpoints. What a run leaves behind goes through the writers: metrics-writer.ts, checkpoint-writer.ts
// and timing-writer.ts.
import type { LoadedConfig } from '../config/load';
import { CorlError } from '../errors';
import { AnswerKeys } from '../reward/answer-keys';
import { RewardPipeline } from '../reward/pipeline';
import { buildRunContext, type RunContext } from './run-context';
import { evaluateCohort, runGrader } from './evaluate';
import { NoProgress, type ProgressReporter } from './progress';
import { CheckpointWriter } from './checkpoint-writer';
import { MetricsWriter } from './metrics-writer';
import { RunDirectory, type RunState } from './run-dir';
import { trainStep, type StepRun } from './step';
import { TimingWriter } from './timing-writer';

/** How to run {@link train}. */
export interface TrainLoopOptions {
  /**
   * The run directory: a new one, or the one being resumed; or a function that creates it, called
   * once the run's plugins loaded (a config whose checkpoint or data cannot load leaves no folder).
   */
  readonly run: RunDirectory | (() => Promise<RunDirectory>);
  /** Continue from the run's last checkpoint instead of starting fresh. */
  readonly resume?: boolean;
  /** Where progress goes (default: nowhere). */
  readonly progress?: ProgressReporter;
  /** Polled between steps; when it returns true the run checkpoints and stops (resumable). */
  readonly shouldStop?: () => boolean;
}

/** Held-out accuracy of one agent before and after. */
export interface AgentOutcome {
  readonly name: string;
  readonly family: string;
  /** pass@1 of the base policy (step 0), if evaluated. */
  readonly base?: number;
  /** pass@1 at the last evaluation. */
  readonly final?: number;
  /** Step of the last evaluation. */
  readonly finalStep?: number;
}

/** What a finished (or stopped) run reports. */
export interface TrainResult {
  readonly runDir: string;
  /** Steps completed in total. */
  readonly steps: number;
  /** True when `shouldStop` ended the run before its last step. */
  readonly stopped: boolean;
  /** Whether a reward source read ground truth (the run is supervised when this or `trainedOnLabels`). */
  readonly readsGroundTruth: boolean;
  /** Whether a reward source was trained on labels although it read none (a learned verifier). */
  readonly trainedOnLabels: boolean;
  readonly agents: readonly AgentOutcome[];
}

/**
 * Train a cohort: every agent sees the same problems in the same order, samples with its own seed,
 * is rewarded by the reward source against the topology's supervisors, and updates its own policy.
 * Metrics go to metrics.jsonl (and the config's sinks); checkpoints are atomic; a resumed run
 * produces exactly the metrics of an uninterrupted one.
 */
export async function train(loaded: LoadedConfig, options: TrainLoopOptions): Promise<TrainResult> {
  const progress = options.progress ?? new NoProgress();
  const ctx = await buildRunContext(loaded);
  let taken: RunDirectory | undefined;
  try {
    if (loaded.config.trainer.steps > 0) {
      for (const a of ctx.agents) {
        if (!a.policy.describe().canTrain) {
          throw new CorlError(
            'CORL_ERR_POLICY_CANNOT_TRAIN',
            `expected a trainable policy for agent ${a.index} (${a.name}) because trainer.steps = ${loaded.config.trainer.steps}, got "${loaded.config.agents[a.index]!.policy.use}", which only samples`,
            {
              where: `agents[${a.index}].policy`,
            },
          );
        }
      }
    }
    const run = typeof options.run === 'function' ? await options.run() : options.run;
    taken = run;
    const state: RunState = run.state();
    const checkpoints = new CheckpointWriter(ctx, run, loaded.config.trainer.keepCheckpoints);
    if (options.resume) {
      run.truncateTo(state);
      await checkpoints.restore(state);
    } else if (state.nextStep !== 0) {
      throw new CorlError('CORL_ERR_RUN_EXISTS', `expected a fresh run directory, got one at step ${state.nextStep}`, {
        where: run.dir,
      });
    }
    const writers: Writers = {
      metrics: new MetricsWriter(
        run,
        ctx.sinks,
        ctx.loaded.config.metrics.map((m) => m.use),
      ),
      checkpoints,
      timing: new TimingWriter(run.dir),
    };
    await writers.metrics.start({
      dir: run.dir,
      config: loaded.config,
      agents: ctx.agents.map((a) => a.name),
      resumeAt: options.resume ? state.nextStep : null,
    });
    return await loop(ctx, run, state, options, progress, writers);
  } finally {
    progress.stop();
    await ctx.close();
    // one writer at a time: the folder is free for the next run (a resume) once this one ended
    taken?.release();
  }
}

/** Where a run's outputs go besides the policies: metrics, checkpoints, step timings. */
interface Writers {
  readonly metrics: MetricsWriter;
  readonly checkpoints: CheckpointWriter;
  readonly timing: TimingWriter;
}

async function loop(
  ctx: RunContext,
  run: RunDirectory,
  state: RunState,
  options: TrainLoopOptions,
  progress: ProgressReporter,
  writers: Writers,
): Promise<TrainResult> {
  const { config } = ctx.loaded;
  const T = config.trainer.steps;
  const keys = new AnswerKeys(ctx.extractor, ctx.equivalence);
  const pipeline = new RewardPipeline({
    reward: ctx.reward,
    use: config.reward.use,
    keys,
    // A source that reads references compares answers with them through the grading equivalence,
    // the one the run trusts with references; a label-free equivalence never sees one.
    equivalence: ctx.loaded.readsGroundTruth ? ctx.grading : ctx.equivalence,
  });
  // Grading against references goes through a separate equivalence instance: the one whose keys
  // and verdicts reach reward sources never sees a reference.
  const grader = runGrader(ctx);
  const stepRun: StepRun = { ctx, pipeline, grader, run, metrics: writers.metrics };
  const lastEval: number[] = ctx.agents.map(() => NaN);
  // a planned run's evaluations are sealed: however it is run (corl compare, corl train --resume),
  // its progress shows that an evaluation happened, never its numbers
  const sealed = run.sealed;
  const evaluate = async (stepsDone: number): Promise<void> => {
    const t = performance.now();
    const result = await evaluateCohort(ctx, grader, stepsDone);
    for (const r of result.records) await writers.metrics.write(r);
    await run.writeEval(`step-${String(stepsDone).padStart(6, '0')}.jsonl`, result.rows);
    const took = `(${((performance.now() - t) / 1000).toFixed(1)} s)`;
    if (sealed) {
      progress.note(`eval @ step ${stepsDone}: done ${took}, results hidden until the plan's look`);
      return;
    }
    result.accuracy.forEach((a, i) => {
      lastEval[i] = a;
    });
    progress.note(
      `eval @ step ${stepsDone}: ${ctx.agents.map((a) => `${a.name} ${(result.accuracy[a.index]! * 100).toFixed(1)}%`).join(', ')} ${took}`,
    );
  };
  const every = (n: number, stepsDone: number) => n > 0 && stepsDone % n === 0;

  if (state.nextStep === 0 && config.eval.atStart && ctx.data.heldOut.length > 0) await evaluate(0);

  progress.start(T, state.nextStep, config.name);
  let stopped = false;
  for (let step = state.nextStep; step < T; step++) {
    const t0 = performance.now();
    const phase = await trainStep(stepRun, step);
    const stepsDone = step + 1;
    const tEval = performance.now();
    if ((stepsDone === T || every(config.trainer.evalEvery, stepsDone)) && ctx.data.heldOut.length > 0)
      await evaluate(stepsDone);
    const tCkpt = performance.now();
    stopped = stepsDone < T && options.shouldStop?.() === true;
    if (stopped || stepsDone === T || every(config.trainer.checkpointEvery, stepsDone))
      state = await writers.checkpoints.write(stepsDone, stepsDone === T);
    const tEnd = performance.now();
    writers.timing.write({
      step: stepsDone,
      ...phase.ms,
      evalMs: tCkpt - tEval,
      checkpointMs: tEnd - tCkpt,
      totalMs: tEnd - t0,
    });
    progress.step({
      step: stepsDone,
      total: T,
      reward: phase.reward,
      labelAccuracy: phase.labelAccuracy,
      evalAccuracy: sealed ? [] : lastEval,
      stepMs: tEnd - t0,
    });
    if (stopped) {
      progress.note(`stopped after step ${stepsDone}; continue with: corl train --resume ${run.dir}`);
      break;
    }
  }
  if (T === 0 || state.nextStep >= T) state = await writers.checkpoints.finish(state);
  return {
    runDir: run.dir,
    steps: stopped ? state.nextStep : Math.max(state.nextStep, T),
    stopped,
    readsGroundTruth: ctx.loaded.readsGroundTruth,
    trainedOnLabels: ctx.loaded.trainedOnLabels,
    agents: outcomes(ctx, run),
  };
}

function outcomes(ctx: RunContext, run: RunDirectory): AgentOutcome[] {
  // a sealed run's evaluations open at its plan's looks, not in what the run returns
  const evals = run
    .readMetrics({ sealed: 'hide' })
    .filter((r) => r.phase === 'eval' && r.agent !== null && r.metrics['eval/accuracy'] !== undefined);
  return ctx.agents.map((a) => {
    const mine = evals.filter((r) => r.agent === a.index);
    const base = mine.find((r) => r.step === 0)?.metrics['eval/accuracy'];
    const last = mine[mine.length - 1];
    return {
      name: a.name,
      family: a.policy.describe().family,
      base,
      final: last?.metrics['eval/accuracy'],
      finalStep: last?.step,
    };
  });
}
