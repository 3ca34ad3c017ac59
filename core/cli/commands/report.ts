import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { CorlError } from '../../errors';
import { reportCompare } from '../../report/compare';
import { writeRunReport } from '../../report/write';

/** `corl report`: rewrite the HTML report of a run directory or a comparison folder, running nothing. */
export function reportCommand(program: Command): void {
  program
    .command('report')
    .description('rewrite report.html of a run directory, or the table and report of a corl compare folder (finished runs only), without running anything')
    .argument('<dir>', 'a run directory (corl train --out) or a comparison folder (corl compare --out)')
    .addHelpText('after', '\nExamples:\n  corl report runs/co-rl-20261203-090000\n  corl report runs/cmp     # while another corl compare still fills it, or after upgrading corl\n')
    .action(async (dir: string) => {
      if (fs.existsSync(path.join(dir, 'compare.json'))) {
        const r = await reportCompare(dir);
        process.stdout.write(`${r.table}\n\nrows with GT = yes used ground truth in their reward (supervised)\n`);
        if (r.unfinished.length) process.stdout.write(`left out, unfinished: ${r.unfinished.join(', ')}\n`);
        process.stdout.write(`report: ${r.report}\n`);
        return;
      }
      if (fs.existsSync(path.join(dir, 'state.json'))) {
        process.stdout.write(`report: ${await writeRunReport(dir)}\n`);
        return;
      }
      throw new CorlError('CORL_ERR_RUN_NOT_FOUND', `expected a run directory (state.json) or a comparison folder (compare.json), got neither in ${dir}`, { where: dir, hint: 'pass the --out folder of corl train or corl compare' });
    });
}
