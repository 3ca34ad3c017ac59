import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as path from 'node:path';
import type { MetricsRecord, MetricsRun, MetricsSink } from '../../core/contracts/metrics-sink';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { outputProblem } from '../../core/util/files';
import { RunAppendFile } from '../../core/util/run-append';

const JSONL_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['path'],
  properties: {
    path: {
      type: 'string',
      minLength: 1,
      description:
        "file to append to, relative to the config file; runs that follow one another may share it (each record of a run appears once, across a kill and a resume). A file holding anything but metrics records (the config, data) or one of the run directory's own files is refused",
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type JsonlOptions = FromSchema<typeof JSONL_OPTIONS_SCHEMA>;

/** The step of a line this sink wrote, or undefined for a line it cannot read. */
function stepOf(line: string): number | undefined {
  try {
    const step = (JSON.parse(line) as { step?: unknown }).step;
    return typeof step === 'number' ? step : undefined;
  } catch {
    return undefined;
  }
}

/** The sink: one JSON line per record, opened when the run starts (or at the first record outside a run). */
export class JsonlSink implements MetricsSink {
  private out?: RunAppendFile;

  constructor(private readonly file: string) {}

  start(run: MetricsRun): void {
    this.out?.close();
    this.out = RunAppendFile.open(this.file, run, stepOf);
  }

  write(record: MetricsRecord): void {
    this.out ??= RunAppendFile.open(this.file, undefined, stepOf);
    this.out.append(JSON.stringify(record) + '\n');
  }

  close(): void {
    this.out?.close();
  }
}

/** Appends every metrics record to an extra JSONL file (the run's own metrics.jsonl is always written). */
export const jsonlSink = definePlugin({
  manifest: {
    name: 'corl:jsonl',
    kind: 'metrics',
    description: 'Append metrics records to an extra JSONL file',
    corl: '^0.1.0',
    options: JSONL_OPTIONS_SCHEMA,
  },
  create(options: JsonlOptions, ctx): MetricsSink {
    const file = path.resolve(ctx.baseDir, options.path);
    // Checked when the plugin is created, so `corl validate` refuses what `corl train` would.
    const problem = outputProblem(file);
    if (problem) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_OPTIONS',
        `expected a file to append metrics to, got ${problem} at ${file}`,
        {
          where: 'options.path',
          hint: 'give a file path (its folder is created), outside /proc, /sys and /dev',
        },
      );
    }
    return new JsonlSink(file);
  },
});
