import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { CorlError } from '../../errors';
import { readCompareMeta, reportCompare } from '../../report/compare';
import { attachPlan } from '../../compare/run';
import { loadPlan, plannedConfigFiles } from '../../compare/plan';
import { writeJsonAtomic } from '../../util/fs';
import { packCompare } from '../../report/pack';
import { ConfigValidator } from '../../config/validator';
import { createRunContainer } from '../../registry/container';
import { instantiate } from '../../registry/instantiate';
import { registryOf } from '../../registry/registry';
import type { Task } from '../../contracts/task';
import { writeRunReport } from '../../report/write';
import { readUserText } from '../../util/files';

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
      if (flags.plan) await attach(input, flags.plan);
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
          `${r.table}\n\nrows with GT = yes used ground truth in their reward (supervised)\n\n${r.summary}\n`,
        );
        if (r.unfinished.length) process.stdout.write(`left out, unfinished: ${r.unfinished.join(', ')}\n`);
        process.stdout.write(`report: ${r.report}\n`);
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

/**
 * Record a plan in a comparison folder made without one (`corl compare` before plans, or a plan's
 * runs started by another command): the plan's configs are checked against their sha256 and every
 * run already there against the planned configs; a folder with another plan is refused.
 */
async function attach(dir: string, planFile: string): Promise<void> {
  const plan = loadPlan(planFile);
  const meta = readCompareMeta(dir) as Record<string, unknown> & { plan?: { sha256?: string } };
  if (meta.plan && meta.plan.sha256 !== plan.sha256)
    throw new CorlError(
      'CORL_ERR_PLAN_MISMATCH',
      `expected no plan or this one in ${dir}, got another plan recorded there (sha256 ${String(meta.plan.sha256).slice(0, 12)}…)`,
      { where: path.join(dir, 'compare.json') },
    );
  if (meta.plan) return;
  const record = attachPlan(
    plan,
    plannedConfigFiles(plan),
    dir,
    'attached by corl report --plan to runs that corl compare made without --plan',
  );
  await writeJsonAtomic(path.join(dir, 'compare.json'), { ...meta, plan: record });
}

/**
 * Problem id → category (the task's `metadata.category`) of a run's held-out and validation
 * problems, regenerated from the task section of its config.json: eval rows written before rows
 * carried their category get it when packed. Undefined when the task cannot be rebuilt.
 */
async function categoriesOfRun(runDir: string): Promise<ReadonlyMap<string, string> | undefined> {
  try {
    const config = JSON.parse(readUserText(path.join(runDir, 'config.json'))) as {
      seed?: number;
      task?: { use?: string; options?: unknown };
    };
    if (typeof config.task?.use !== 'string') return undefined;
    const container = await createRunContainer();
    const registry = registryOf(container);
    const options = structuredClone(config.task.options ?? {}) as Record<string, unknown>;
    if (new ConfigValidator(registry, runDir).validateOptions('task', config.task.use, options).length)
      return undefined;
    const task = (await instantiate(
      'task',
      { use: config.task.use, options },
      { registry, seed: config.seed ?? 0, baseDir: runDir },
      'task',
    )) as Task;
    const data = await task.load();
    const out = new Map<string, string>();
    for (const p of [...data.heldOut, ...(data.validation ?? [])])
      if (typeof p.metadata?.category === 'string') out.set(p.id, p.metadata.category);
    return out;
  } catch {
    return undefined;
  }
}
