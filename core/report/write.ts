import * as path from 'node:path';
import { writeFileAtomic } from '../util/fs';
import { renderReport } from './html';
import { readRun } from './runs';

/** Write `report.html` into a run directory and return its path. */
export async function writeRunReport(runDir: string): Promise<string> {
  const run = readRun(runDir);
  const file = path.join(run.dir, 'report.html');
  await writeFileAtomic(
    file,
    renderReport(
      `corl run: ${run.name} (seed ${run.seed})`,
      [{ name: run.name, runs: [run] }],
      [`Run directory: ${run.dir}`],
    ),
  );
  return file;
}
