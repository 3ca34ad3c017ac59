// Checkpoints of a run: every agent's policy saved into checkpoints/step-N (written to a temporary
// folder, then renamed), then state.json last, so a kill at any point leaves either the previous
// checkpoint or this one; old checkpoints are pruned only once the new state is on disk. Resuming
// loads the checkpoint state.json names.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isCorlError } from '../errors';
import { agentFailure, type RunContext } from './run-context';
import type { RunDirectory, RunState } from './run-dir';

/** Saves and restores a cohort's policies in the run directory. */
export class CheckpointWriter {
  constructor(
    private readonly ctx: RunContext,
    private readonly run: RunDirectory,
    /** How many checkpoints to keep. */
    private readonly keep: number,
  ) {}

  /** Load every agent's policy from the state's checkpoint (none: nothing to load). */
  async restore(state: RunState): Promise<void> {
    if (!state.checkpoint) return;
    for (const agent of this.ctx.agents) {
      try {
        await agent.policy.load(path.join(this.run.checkpointPath(state.checkpoint), `agent-${agent.index}`));
      } catch (e) {
        throw agentFailure(agent, 'loading the checkpoint', e);
      }
    }
  }

  /** Save every policy after `stepsDone` steps and make it the run's state. */
  async write(stepsDone: number, finished: boolean): Promise<RunState> {
    const { run } = this;
    const rel = run.checkpointDir(stepsDone);
    const final = run.resolve(rel);
    const tmp = `${final}.tmp`;
    await fsp.rm(tmp, { recursive: true, force: true });
    await fsp.mkdir(tmp, { recursive: true });
    await Promise.all(
      this.ctx.agents.map(async (a) => {
        try {
          await a.policy.save(path.join(tmp, `agent-${a.index}`));
        } catch (e) {
          throw isCorlError(e) ? e : agentFailure(a, `saving the checkpoint after step ${stepsDone}`, e);
        }
      }),
    );
    await fsp.rm(final, { recursive: true, force: true });
    await fsp.rename(tmp, final);
    const sizes = run.syncedSizes();
    const state: RunState = { version: 1, nextStep: stepsDone, ...sizes, checkpoint: rel, finished };
    await run.writeState(state);
    await this.prune(rel);
    return state;
  }

  /** Mark the run finished (when its last step left no checkpoint saying so). */
  async finish(state: RunState): Promise<RunState> {
    if (state.finished) return state;
    const next = { ...state, ...this.run.syncedSizes(), finished: true };
    await this.run.writeState(next);
    return next;
  }

  /** Remove all but the newest `keep` checkpoints, never the current one. */
  private async prune(current: string): Promise<void> {
    const dir = this.run.resolve('checkpoints');
    const all = (await fsp.readdir(dir)).filter((d) => /^step-\d+$/.test(d)).sort();
    for (const d of all.slice(0, Math.max(0, all.length - this.keep))) {
      if (path.join('checkpoints', d) !== current) await fsp.rm(path.join(dir, d), { recursive: true, force: true });
    }
  }
}
