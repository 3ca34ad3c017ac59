import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunDirectory } from '../trainer/run-dir';
import { checkRunConfig } from '../trainer/run-files';
import { readCompareMeta } from './compare';
import { countRead } from './reads';
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
  // a planned run's evaluations are sealed: its own page shows its training only, never held-out results
  const run = readRun(runDir, { sealed: 'hide' });
  const status = runStatus(run, failure);
  return renderReport(
    `corl run: ${run.name} (seed ${run.seed})`,
    [{ name: run.name, runs: [run] }],
    [
      `Run directory: the folder of this report (${path.basename(run.dir)}).`,
      ...(run.sealedHidden
        ? [
            "This run belongs to a planned comparison: its evaluations are sealed and are shown only at the plan's looks, by the comparison's report (corl report <comparison folder>).",
          ]
        : []),
    ],
    status ? { status } : {},
  );
}

/**
 * Write `report.html` into a run directory and return its path. `failure`: the error that ended the
 * run, for the banner at the top.
 */
export async function writeRunReport(runDir: string, failure?: string): Promise<string> {
  const file = path.join(path.resolve(runDir), 'report.html');
  const html = renderRunReport(runDir, failure);
  await countRunRead(runDir, 'corl report (one run)');
  await writeFileAtomic(file, html);
  return file;
}

/**
 * A run of a comparison (`<comparison>/<config>/seed-<i>`) whose report shows held-out results (an
 * unplanned one: a planned run's page shows no evaluation) is a read of that comparison: counted in its reads.jsonl (a planned comparison's plan check then shows
 * it as a read off the plan's looks). Returns the read's number when it was a new one.
 */
export async function countRunRead(runDir: string, by: string): Promise<number | undefined> {
  const dir = path.resolve(runDir);
  const cmp = path.dirname(path.dirname(dir));
  if (!/^seed-\d+$/.test(path.basename(dir)) || !fs.existsSync(path.join(cmp, 'compare.json'))) return undefined;
  const config = checkRunConfig(RunDirectory.open(dir).config(), path.join(dir, 'config.json'));
  if (config.eval?.split === 'validation') return undefined;
  const meta = readCompareMeta(cmp) as { plan?: { sha256?: unknown } };
  const run = readRun(dir, { sealed: 'hide' });
  // a sealed run's page shows none of its evaluations: nothing was read
  if (run.sealedHidden) return undefined;
  const r = await countRead(
    cmp,
    [{ name: path.basename(path.dirname(dir)), runs: [run] }],
    by,
    typeof meta.plan?.sha256 === 'string' ? meta.plan.sha256 : undefined,
  );
  return r.counted ? r.reads.length : undefined;
}
