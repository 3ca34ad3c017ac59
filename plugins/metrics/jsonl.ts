import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { MetricsRecord, MetricsSink } from '../../core/contracts/metrics-sink';
import { PLUGIN_CONTEXT, PLUGIN_OPTIONS, type PluginContext } from '../../core/contracts/plugin';
import { definePlugin, fromClass } from '../../core/registry/define';

const JSONL_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['path'],
  properties: {
    path: { type: 'string', minLength: 1, description: 'file to append to, relative to the config file' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type JsonlOptions = FromSchema<typeof JSONL_OPTIONS_SCHEMA>;

/** The sink: its options and context are injected from the plugin's own container. */
@injectable()
export class JsonlSink implements MetricsSink {
  private readonly file: string;

  constructor(@inject(PLUGIN_OPTIONS) options: JsonlOptions, @inject(PLUGIN_CONTEXT) ctx: PluginContext) {
    this.file = path.resolve(ctx.baseDir, options.path);
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
  }

  write(record: MetricsRecord): void {
    fs.appendFileSync(this.file, JSON.stringify(record) + '\n');
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
  create: fromClass(JsonlSink),
});
