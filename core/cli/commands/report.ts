import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { CorlError } from '../../errors';
import { reportCompare } from '../../report/compare';
import { attachPlanFile } from '../../compare/run';
import { categoriesOfRun, packCompare } from '../../report/pack';
import { writeRunReport } from '../../report/write';

/** `corl report`: rewrite the HTML report of a run directory or a comparison folder, running nothing. */
export function reportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'rewrite report.html of a run directory, or the table and report of a corl compare folder (finished runs only), without running anything',
    )
    .argument('<dir>', 'a run directory (corl train --out) or a comparison folder (corl compare --out)')
    .option(
      '--pack <to>',
      'first write a compact copy of the comparison to <to> (configs, metrics and step-0 and final eval rows, gzip-compressed; no checkpoints), then render that copy',
    )
    .option(
      '--plan <file>',
      'attach a plan to a comparison folder whose runs were made without it (each run is checked against the planned configs), then render it under the plan',
    )
    .option(
      '--compact',
      'with --pack: a compact copy for many seeds (brotli, eval rows reduced to what is read, shared step-0 rows stored once, metrics no table reads rounded to 4 significant digits)',
    )
    .option(
      '--root <dir>',
      'with --pack: absolute paths under <dir> are written relative to it (default: the working directory)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  corl report runs/co-rl-20261203-090000\n  corl report runs/cmp     # while another corl compare still fills it, or after upgrading corl\n  corl report runs/cmp --pack docs/results/slips     # the committed, recomputable copy\n',
    )
    .action(async (input: string, flags: { pack?: string; root?: string; plan?: string; compact?: boolean }) => {
      let dir = input;
      if (flags.plan) await attachPlanFile(input, flags.plan);
      if (flags.pack) {
        const r = await packCompare({
          from: input,
          to: flags.pack,
          root: flags.root,
          categories: categoriesOfRun,
          compact: flags.compact === true,
        });
        process.stdout.write(
          `packed ${r.runs} run(s), ${(r.bytes / 1e6).toFixed(2)} MB, into ${flags.pack}${r.skipped.length ? `; left out, unfinished: ${r.skipped.join(', ')}` : ''}\n`,
        );
        dir = flags.pack;
      }
      if (fs.existsSync(path.join(dir, 'compare.json'))) {
        const r = await reportCompare(dir);
        process.stdout.write(
          `${r.table}\n\nrows with GT = yes read ground truth or were trained on labels (supervised)\n\n${r.summary}\n`,
        );
        if (r.unfinished.length) process.stdout.write(`left out, unfinished: ${r.unfinished.join(', ')}\n`);
        process.stdout.write(`report: ${r.report}\n`);
        // one seed decides nothing: say what the report page says, the committed result of the same configs
        if (r.oneLine && r.rows.some((x) => x.seeds < 2)) process.stdout.write(`\n${r.oneLine.line}\n`);
        return;
      }
      if (fs.existsSync(path.join(dir, 'state.json'))) {
        process.stdout.write(`report: ${await writeRunReport(dir)}\n`);
        return;
      }
      throw new CorlError(
        'CORL_ERR_RUN_NOT_FOUND',
        `expected a run directory (state.json) or a comparison folder (compare.json), got neither in ${dir}`,
        { where: dir, hint: 'pass the --out folder of corl train or corl compare' },
      );
    });
}
