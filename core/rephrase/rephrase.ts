// `corl rephrase`: row-aligned variants of every problem through a chat backend, meaning-checked,
// written to <out>.partial batch by batch (resumable) and renamed onto <out> only when complete.
import * as fs from 'node:fs';
import type { Policy } from '../contracts/policy';
import { CorlError } from '../errors';
import { writeSyncedSync } from '../util/fs';
import { mixSeed } from '../util/rng';
import { checkVariant, describeFailure } from './check';
import type { RephraseRow } from './input';
import { readUserText } from '../util/files';

/** The instruction sent for each problem; `{prompt}` is replaced by the problem text. */
export const DEFAULT_INSTRUCTION =
  'Rewrite the following problem in different words. Keep its meaning, every number and the question it asks exactly; do not solve it and do not add hints. Reply with the rewritten problem only.\n\nProblem:\n{prompt}';

/** One row of the variants file, as `corl:rephrase` (option `file`) reads it. */
export interface VariantRow {
  readonly id: string;
  readonly variants: readonly string[];
  readonly answer?: string;
}

/** How to run {@link rephrase}. */
export interface RephraseOptions {
  readonly policy: Policy;
  readonly rows: readonly RephraseRow[];
  readonly out: string;
  /** Rephrasings asked for per problem (those that fail the meaning check are dropped). */
  readonly variants: number;
  readonly instruction: string;
  readonly temperature: number;
  readonly topP: number;
  readonly maxTokens: number;
  readonly seed: number;
  /** Problems per sampling call. */
  readonly batch: number;
  /** Continue `<out>.partial` instead of refusing it. */
  readonly resume: boolean;
  /** Replace an existing `<out>` (only once the new file is complete). */
  readonly force: boolean;
  /** Progress and drop reports, one line each. */
  readonly log: (line: string) => void;
}

/** What a run did. */
export interface RephraseSummary {
  readonly problems: number;
  /** Problems already in the partial file when resuming. */
  readonly resumed: number;
  readonly kept: number;
  readonly dropped: number;
}

/** The reply with surrounding whitespace, one pair of wrapping quotes and a leading "Rewritten problem:" label removed. */
export function cleanReply(text: string): string {
  let s = text
    .trim()
    .replace(/^(?:rewritten|rephrased)?\s*problem\s*:\s*/i, '')
    .trim();
  if (s.length >= 2 && ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith('\u201c') && s.endsWith('\u201d'))))
    s = s.slice(1, -1).trim();
  return s;
}

/** Rows already written to a partial file that match the input's first rows; a torn last line is cut off. */
function resumeFrom(partial: string, rows: readonly RephraseRow[]): number {
  const text = readUserText(partial);
  const lines = text.split('\n');
  let good = 0;
  let bytes = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const complete = i < lines.length - 1; // the last piece has no newline after it: torn or empty
    if (!complete) break;
    let v: { id?: unknown; variants?: unknown };
    try {
      v = JSON.parse(line);
    } catch {
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected ${partial} to hold variant rows, got invalid JSON on line ${i + 1}`,
        { where: '--resume', hint: 'delete the partial file and start again' },
      );
    }
    const row = rows[good];
    if (!row || v.id !== row.id || !Array.isArray(v.variants)) {
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected line ${i + 1} of ${partial} to be problem "${row?.id ?? '(none)'}" of the input, got ${JSON.stringify(v.id)}`,
        { where: '--resume', hint: 'resume with the same --in and config, or delete the partial file' },
      );
    }
    good++;
    bytes += Buffer.byteLength(line) + 1;
  }
  if (bytes < Buffer.byteLength(text)) fs.truncateSync(partial, bytes);
  return good;
}

/**
 * Rephrase every row `variants` times, keep the variants that pass {@link checkVariant}, and write
 * one {@link VariantRow} per input row, in input order (rows whose every variant failed get an
 * empty list, so the file stays row-aligned).
 */
export async function rephrase(o: RephraseOptions): Promise<RephraseSummary> {
  if (!o.instruction.includes('{prompt}'))
    throw new CorlError('CORL_ERR_CLI_USAGE', 'expected the instruction to contain {prompt}, got none', {
      where: '--instruction',
    });
  if (fs.existsSync(o.out) && !o.force) {
    throw new CorlError('CORL_ERR_CLI_USAGE', `expected --out to name a new file, got an existing one: ${o.out}`, {
      where: '--out',
      hint: 'pass --force to replace it (the old file stays intact until the new one is complete)',
    });
  }
  const partial = `${o.out}.partial`;
  let start = 0;
  if (fs.existsSync(partial)) {
    if (!o.resume)
      throw new CorlError(
        'CORL_ERR_CLI_USAGE',
        `expected no unfinished output, got ${partial} from an interrupted run`,
        { where: '--out', hint: 'pass --resume to continue it, or delete it to start again' },
      );
    start = resumeFrom(partial, o.rows);
    o.log(`rephrase: resuming after ${start} problem(s) already in ${partial}`);
  } else {
    fs.writeFileSync(partial, '');
  }
  let kept = 0;
  let dropped = 0;
  for (let b = start; b < o.rows.length; b += o.batch) {
    const rows = o.rows.slice(b, b + o.batch);
    const requests = rows.map((r) => ({
      id: r.id,
      prompt: o.instruction.split('{prompt}').join(r.prompt),
      ...(r.images ? { images: r.images } : {}),
    }));
    const groups = await o.policy.sample(requests, {
      n: o.variants,
      temperature: o.temperature,
      topP: o.topP,
      maxTokens: o.maxTokens,
      seed: mixSeed(o.seed, 'rephrase', b),
    });
    let out = '';
    rows.forEach((r, i) => {
      const variants: string[] = [];
      (groups[i] ?? []).forEach((c, k) => {
        const text = cleanReply(c.text);
        const failure = checkVariant(r.prompt, text, r.answer);
        if (failure) {
          dropped++;
          o.log(`line ${r.line} id ${r.id}: variant ${k} dropped: ${describeFailure(failure)}`);
        } else {
          kept++;
          variants.push(text);
        }
      });
      const row: VariantRow = { id: r.id, variants, ...(r.answer !== undefined ? { answer: r.answer } : {}) };
      out += JSON.stringify(row) + '\n';
    });
    writeSyncedSync(partial, out, 'a');
    o.log(
      `rephrase: ${Math.min(b + o.batch, o.rows.length)}/${o.rows.length} problems, ${kept} variant(s) kept, ${dropped} dropped`,
    );
  }
  fs.renameSync(partial, o.out);
  return { problems: o.rows.length, resumed: start, kept, dropped };
}
