import * as path from 'node:path';
import type { Command } from 'commander';
import type { Equivalence } from '../../contracts/equivalence';
import { loadConfig } from '../../config/load';
import { pickConfig } from '../config-arg';
import { CorlError } from '../../errors';
import { instantiate } from '../../registry/instantiate';
import { standalonePlugin, standaloneRegistry } from '../../config/standalone';
import { outputAgreement, readEvalOutput, selectAgent, type AgreementBasis } from '../../metrics/eval-output';
import { pct, table } from '../output';

interface AgreementFlags {
  use?: string;
  agentA?: string;
  agentB?: string;
  intersect?: boolean;
  config?: string;
  json?: boolean;
}

/** The equivalence that decides whether two wrong answers are the same: the config's, else corl:math with its defaults. */
async function openEquivalence(configFile: string | undefined): Promise<Equivalence> {
  if (configFile) {
    const loaded = await loadConfig(configFile);
    return instantiate(
      'equivalence',
      loaded.config.equivalence,
      { registry: loaded.registry, seed: loaded.config.seed, baseDir: loaded.baseDir },
      'equivalence',
    );
  }
  const baseDir = process.cwd();
  return standalonePlugin(
    await standaloneRegistry([], baseDir),
    'equivalence',
    { use: 'corl:math', options: {} },
    { baseDir, where: 'equivalence' },
  );
}

/** `corl agreement`: error decoupling (κ, c, w, u) between two models' `corl eval` outputs. */
export function agreementCommand(program: Command): void {
  program
    .command('agreement')
    .description(
      "error decoupling between two models' corl eval outputs, joined by problem id: Cohen's kappa, complementarity c, same-wrong w, coverage u",
    )
    .argument('<a>', 'per-agent output of corl eval (model A)')
    .argument('<b>', 'per-agent output of corl eval (model B)')
    .argument('[config]', 'the same as -c <file>')
    .option(
      '--use <first|majority|all>',
      "compare each model's first sample, its plurality answer, or every aligned pair of samples (sample j with sample j)",
      'first',
    )
    .option(
      '--agent-a <agent>',
      "take model A's rows of this agent (index or name) from a file holding several, such as a run directory's eval/step-*.jsonl",
    )
    .option('--agent-b <agent>', 'the same for model B')
    .option('--intersect', 'compare only the problems both files answer (default: differing ids are an error)')
    .option(
      '-c, --config <file>',
      'decide "the same wrong answer" with this config\'s equivalence plugin (default: corl:math with its defaults, as the trainer)',
    )
    .option('--json', 'print the figures as JSON')
    .addHelpText(
      'after',
      [
        '',
        "a = both right, b = only A right, c' = only B right, d = both wrong; N = a + b + c' + d.",
        'kappa = (p_o - p_e) / (1 - p_e) with p_o = (a + d)/N, p_e = p_A p_B + (1 - p_A)(1 - p_B);',
        "c = (b + c')/N; w = share both wrong with the same answer (equal keys, or equal under the equivalence); u = 1 - d/N.",
        '',
        'Example:',
        '  corl agreement eval/qwen/a.jsonl eval/llama/b.jsonl --json',
        '  corl agreement runs/x/eval/step-000000.jsonl runs/x/eval/step-000000.jsonl --agent-a 0 --agent-b 1 --use all',
        '',
      ].join('\n'),
    )
    .action(async (a: string, b: string, config: string | undefined, flags: AgreementFlags) => {
      flags.config = pickConfig(config, flags.config, 'corl agreement <a> <b>');
      const basis = flags.use ?? 'first';
      if (basis !== 'first' && basis !== 'majority' && basis !== 'all')
        throw new CorlError('CORL_ERR_CLI_USAGE', `expected --use to be first, majority or all, got "${basis}"`, {
          where: '--use',
        });
      const equivalence = await openEquivalence(flags.config);
      const fileA = path.resolve(a);
      const fileB = path.resolve(b);
      const rowsA = readEvalOutput(fileA);
      const rowsB = fileB === fileA ? rowsA : readEvalOutput(fileB);
      let r;
      try {
        r = await outputAgreement(
          flags.agentA !== undefined ? selectAgent(rowsA, flags.agentA, a) : rowsA,
          flags.agentB !== undefined ? selectAgent(rowsB, flags.agentB, b) : rowsB,
          { basis: basis as AgreementBasis, intersect: flags.intersect === true, fileA: a, fileB: b, equivalence },
        );
      } finally {
        await equivalence.close?.();
      }
      const s = r.agreement;
      const t = s.counts;
      if (flags.json) {
        process.stdout.write(
          JSON.stringify(
            {
              a: fileA,
              b: fileB,
              use: basis,
              n: s.n,
              counts: { a: t.a, b: t.b, c: t.c, d: t.d, dSame: t.dSame },
              kappa: s.kappa,
              complementarity: s.complementarity,
              sameWrong: s.sameWrong,
              coverage: s.coverage,
              accuracyA: s.accuracyA,
              accuracyB: s.accuracyB,
              onlyA: r.onlyA.length,
              onlyB: r.onlyB.length,
            },
            null,
            2,
          ) + '\n',
        );
        return;
      }
      const out = process.stdout;
      const what =
        basis === 'first'
          ? `${s.n} problem(s), first sample of each`
          : basis === 'majority'
            ? `${s.n} problem(s), plurality answer of each`
            : `${s.n} aligned sample pair(s) over ${r.ids.length} problem(s)`;
      out.write(
        `A: ${a}${flags.agentA !== undefined ? ` (agent ${flags.agentA})` : ''}\nB: ${b}${flags.agentB !== undefined ? ` (agent ${flags.agentB})` : ''}\n${what}${r.onlyA.length || r.onlyB.length ? ` (left out: ${r.onlyA.length} only in A, ${r.onlyB.length} only in B)` : ''}\n\n`,
      );
      out.write(
        table([
          ['', 'B right', 'B wrong'],
          ['A right', `a = ${t.a}`, `b = ${t.b}`],
          ['A wrong', `c' = ${t.c}`, `d = ${t.d} (same answer: ${t.dSame})`],
        ]) + '\n\n',
      );
      out.write(
        table([
          ['statistic', 'value'],
          ['kappa', s.kappa.toFixed(3)],
          ['complementarity c', pct(s.complementarity)],
          ['same wrong w', pct(s.sameWrong)],
          ['coverage u', pct(s.coverage)],
          ['accuracy A', pct(s.accuracyA)],
          ['accuracy B', pct(s.accuracyB)],
        ]) + '\n',
      );
    });
}
