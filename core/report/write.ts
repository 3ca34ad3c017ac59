import * as path from 'node:path';
import { writeFileAtomic } from '../util/fs';
import { renderReport, type ReportStatus } from './html';
import { readRun, type RunSummary } from './runs';

/** The banner of a run's report: none for a finished run, 'partial' for one that stopped early (or is still running). */
export function runStatus(run: RunSummary, failure?: string): ReportStatus | undefined {
  const done = `${run.steps} of ${run.plannedSteps} training step(s) done`;
  if (failure !== undefined)
    return {
      level: 'failed',
      message: `the run stopped with an error after ${done}: ${failure}. The figures below are what it logged before; fix the cause and continue with npx corl train --resume <this folder>.`,
    };
  if (run.finished) return undefined;
  return {
    level: 'partial',
    message: `the run has not finished: ${done} (it was stopped, failed, or is still running). The figures below are what it logged so far; npx corl train --resume <this folder> continues it.`,
  };
}

/** The HTML report of a run directory; `failure`: the error that ended the run, for the banner at the top. */
export function renderRunReport(runDir: string, failure?: string): string {
  const run = readRun(runDir);
  const status = runStatus(run, failure);
  return renderReport(
    `corl run: ${run.name} (seed ${run.seed})`,
    [{ name: run.name, runs: [run] }],
    [`Run directory: the folder of this report (${path.basename(run.dir)}).`],
    status ? { status } : {},
  );
}

/**
 * Write `report.html` into a run directory and return its path. `failure`: the error that ended the
 * run, for the banner at the top.
 */
export async function writeRunReport(runDir: string, failure?: string): Promise<string> {
  const file = path.join(path.resolve(runDir), 'report.html');
  await writeFileAtomic(file, renderRunReport(runDir, failure));
  return file;
}
