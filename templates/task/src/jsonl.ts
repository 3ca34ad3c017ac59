import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { CorlError, definePlugin, MapGroundTruth, type Problem, type Reference, type Task, type TaskData } from 'corl';

/** Options of the task: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const JSONL_TASK_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', minLength: 1, description: 'JSONL file, relative to the config' },
    promptField: { type: 'string', minLength: 1, default: 'question', description: 'field holding the prompt' },
    answerField: { type: 'string', minLength: 1, default: 'answer', description: 'field holding the reference answer' },
    idField: { type: 'string', minLength: 1, default: 'id', description: 'field holding the id (missing: line-<n>)' },
    template: { type: 'string', default: '{prompt}', description: 'prompt shown to the policy; {prompt} is the row\'s prompt' },
    answerMarker: { type: 'string', default: '', description: 'reference = text after the last marker (GSM8K: "####"); empty: the whole field' },
    heldOut: { type: 'integer', minimum: 0, default: 0, description: 'rows from the end of the file held out for evaluation' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type JsonlTaskOptions = FromSchema<typeof JSONL_TASK_OPTIONS_SCHEMA>;

/**
 * Problems from a JSONL file (e.g. GSM8K's `{"question": …, "answer": "… #### 72"}`). References go
 * into `groundTruth`, never onto the problem, so label-free rewards cannot see them. Every bad line
 * is a coded error naming the file and line.
 */
export const exampleTask = definePlugin({
  manifest: {
    name: 'example:task',
    kind: 'task',
    description: 'Problems from a JSONL file: a prompt field, a reference answer field, the last rows held out',
    corl: '^0.1.0',
    options: JSONL_TASK_OPTIONS_SCHEMA,
  },
  create(options: JsonlTaskOptions, ctx): Task {
    const file = path.resolve(ctx.baseDir, options.file);
    if (!fs.existsSync(file)) {
      throw new CorlError('CORL_ERR_TASK_DATA', `expected a JSONL file at ${file}, got nothing there`, { where: 'task.options.file', hint: 'the path is relative to the config file' });
    }
    return { load: async () => loadJsonl(file, options) };
  },
});

function loadJsonl(file: string, o: JsonlTaskOptions): TaskData {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const rows: { problem: Problem; reference?: Reference }[] = [];
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${file}:${i + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new CorlError('CORL_ERR_TASK_DATA', 'expected a JSON object, got invalid JSON', { where });
    }
    if (!row || typeof row !== 'object' || Array.isArray(row)) throw new CorlError('CORL_ERR_TASK_DATA', `expected a JSON object, got ${Array.isArray(row) ? 'an array' : typeof row}`, { where });
    const r = row as Record<string, unknown>;
    const prompt = r[o.promptField];
    if (typeof prompt !== 'string') throw new CorlError('CORL_ERR_TASK_DATA', `expected a string in field "${o.promptField}", got ${JSON.stringify(prompt) ?? 'nothing'}`, { where });
    const id = r[o.idField] === undefined ? `line-${i + 1}` : String(r[o.idField]);
    if (seen.has(id)) throw new CorlError('CORL_ERR_TASK_DATA', `expected unique ids, got "${id}" again`, { where });
    seen.add(id);
    const raw = r[o.answerField];
    let reference: Reference | undefined;
    if (raw !== undefined && raw !== null) {
      const text = String(raw);
      const at = o.answerMarker ? text.lastIndexOf(o.answerMarker) : -1;
      if (o.answerMarker && at < 0) throw new CorlError('CORL_ERR_TASK_DATA', `expected "${o.answerMarker}" in field "${o.answerField}", got ${JSON.stringify(text.slice(0, 60))}`, { where });
      reference = at >= 0 ? { answer: text.slice(at + o.answerMarker.length).trim(), solution: text } : { answer: text.trim() };
    }
    rows.push({ problem: { id, prompt: o.template.split('{prompt}').join(prompt) }, reference });
  });
  if (o.heldOut >= rows.length) {
    throw new CorlError('CORL_ERR_TASK_DATA', `expected fewer held-out rows than the ${rows.length} in the file, got heldOut = ${o.heldOut}`, { where: 'task.options.heldOut' });
  }
  const cut = rows.length - o.heldOut;
  const refs: [string, Reference][] = rows.filter((r) => r.reference).map((r) => [r.problem.id, r.reference!]);
  return { train: rows.slice(0, cut).map((r) => r.problem), heldOut: rows.slice(cut).map((r) => r.problem), groundTruth: new MapGroundTruth(refs) };
}
