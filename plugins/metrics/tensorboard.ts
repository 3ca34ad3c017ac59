import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { MetricsRecord, MetricsRun, MetricsSink } from '../../core/contracts/metrics-sink';
import { PLUGIN_CONTEXT, PLUGIN_OPTIONS, type PluginContext } from '../../core/contracts/plugin';
import { CorlError } from '../../core/errors';
import { definePlugin, fromClass } from '../../core/registry/define';
import { NotARegularFile, outputFolderProblem, readUserFile } from '../../core/util/files';
import { writeFileAtomicSync } from '../../core/util/fs';
import { eventStep, fileVersionEvent, frame, scalarsEvent, textEvent, unframe } from './tensorboard/records';

const TENSORBOARD_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    dir: {
      type: 'string',
      minLength: 1,
      description:
        'log folder shared by runs, relative to the config file: each run writes under <dir>/<run folder name>/. Default: tensorboard/ inside the run directory',
    },
    runFolders: {
      type: 'boolean',
      default: true,
      description:
        "with `dir`: write each run under <dir>/<run name>/<run folder name>/ (true), or the agents' folders straight under <dir> (false: one run, or one `corl serve`, per folder; what `corl serve --tensorboard DIR` writes)",
    },
    config: {
      type: 'boolean',
      default: true,
      description: "write the run's resolved config as a text summary (TensorBoard's Text tab, tag `config`)",
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema. */
type TensorboardOptions = FromSchema<typeof TENSORBOARD_OPTIONS_SCHEMA>;

/** Folder of the cohort-wide records (`agent: null`) and of the config text. */
export const COHORT = 'cohort';

/** A folder name made of the name's safe characters (letters, digits, `.`, `_`, `-`), or '' if none. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '');
}

/**
 * The folder of each agent under the log folder: its name, made safe for a path; `agent-<i>` when
 * that is empty, taken by an earlier agent, or the cohort's folder.
 */
export function agentFolders(names: readonly string[]): string[] {
  const taken = new Set([COHORT]);
  return names.map((n, i) => {
    let f = safeName(n);
    if (!f || taken.has(f)) f = `agent-${i}`;
    taken.add(f);
    return f;
  });
}

/** One open events file. */
interface EventsFile {
  readonly file: string;
}

/**
 * Writes TensorBoard event files: one folder per agent (`<log>/<agent name>/`) and one for the
 * cohort (`<log>/cohort/`), so that TensorBoard draws every agent's curve of a metric in one chart,
 * with the metric's own name as the tag. The record's step is the event's step.
 */
@injectable()
export class TensorboardSink implements MetricsSink {
  private readonly options: TensorboardOptions;
  private readonly baseDir: string;
  private log: string | undefined;
  private folders: string[] = [];
  private readonly files = new Map<string, EventsFile>();

  constructor(@inject(PLUGIN_OPTIONS) options: TensorboardOptions, @inject(PLUGIN_CONTEXT) ctx: PluginContext) {
    this.options = options;
    this.baseDir = ctx.baseDir;
    // Checked when the plugin is created, so `corl validate` refuses what `corl train` would.
    if (options.dir !== undefined) checkFolder(path.resolve(ctx.baseDir, options.dir), 'options.dir');
  }

  start(run: MetricsRun): void {
    const name = (run.config as { name?: unknown } | null)?.name;
    const dir = this.options.dir === undefined ? undefined : path.resolve(this.baseDir, this.options.dir);
    this.log =
      dir === undefined
        ? path.join(run.dir, 'tensorboard')
        : this.options.runFolders
          ? path.join(dir, safeName(String(name ?? '')) || 'run', path.basename(run.dir))
          : dir;
    checkFolder(this.log, this.options.dir !== undefined ? 'options.dir' : 'the run directory');
    this.folders = agentFolders(run.agents);
    if (run.resumeAt === null) this.checkUnused();
    else this.cutAfter(run.resumeAt);
    if ((run.resumeAt ?? 0) === 0 && this.options.config)
      this.append(COHORT, textEvent(Date.now() / 1000, 0, 'config', configText(run.config)));
  }

  write(record: MetricsRecord): void {
    const values = Object.entries(record.metrics).filter(([, v]) => Number.isFinite(v));
    if (values.length === 0) return;
    const folder = record.agent === null ? COHORT : (this.folders[record.agent] ?? `agent-${record.agent}`);
    this.append(folder, scalarsEvent(Date.now() / 1000, record.step, values));
  }

  /** The log folder: set by `start`; without it, `dir` (default `tensorboard`) relative to the config file. */
  get logDir(): string {
    return (this.log ??= path.resolve(this.baseDir, this.options.dir ?? 'tensorboard'));
  }

  /** A new run refuses a log folder that already holds event files: they would mix with its own. */
  private checkUnused(): void {
    const found = fs.existsSync(this.logDir)
      ? fs
          .readdirSync(this.logDir, { withFileTypes: true })
          .filter((e) => e.isDirectory() && eventFiles(path.join(this.logDir, e.name)).length > 0)
      : [];
    if (found.length)
      throw new CorlError(
        'CORL_ERR_RUN_EXISTS',
        `expected a TensorBoard folder of this run's own, got ${this.logDir} with event files already (${found.map((e) => e.name).join(', ')})`,
        { where: 'corl:tensorboard', hint: 'move that folder away, or give corl:tensorboard another "dir"' },
      );
  }

  private append(folder: string, event: Uint8Array): void {
    fs.appendFileSync(this.open(folder).file, frame(event));
  }

  /** The events file of a folder: the newest one there (a resumed run goes on in it), else a new one. */
  private open(folder: string): EventsFile {
    let f = this.files.get(folder);
    if (f) return f;
    const dir = path.join(this.logDir, folder);
    fs.mkdirSync(dir, { recursive: true });
    const existing = eventFiles(dir);
    const file = existing.at(-1) ?? path.join(dir, newFileName());
    if (!existing.length) fs.writeFileSync(file, frame(fileVersionEvent(Date.now() / 1000)));
    f = { file };
    this.files.set(folder, f);
    return f;
  }

  /**
   * A resume: keep, in every events file under the log folder, each file's version event and the
   * events up to the checkpoint's step; later ones come again. At step 0 (stopped before its first
   * checkpoint) everything comes again, the step-0 evaluation and the config included. Files are
   * rewritten atomically; a record torn by the stop is dropped with the rest.
   */
  private cutAfter(step: number): void {
    if (!fs.existsSync(this.logDir)) return;
    for (const entry of fs.readdirSync(this.logDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      for (const file of eventFiles(path.join(this.logDir, entry.name))) {
        const read = unframe(readEvents(file));
        if (read.problem && !read.torn)
          throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected intact TensorBoard records, got ${read.problem}`, {
            where: file,
            hint: 'move the file away (TensorBoard still reads the records before that byte) and resume again',
          });
        const kept = read.records.filter((r) => {
          const s = eventStep(r);
          return s === null || (step > 0 && s <= step);
        });
        if (kept.length === read.records.length && !read.problem) continue;
        writeFileAtomicSync(file, Buffer.concat(kept.map(frame)));
      }
    }
  }
}

/** A log folder the sink can write under: refused (coded, naming `where`) when it is a file, a device or a kernel file system's. */
function checkFolder(dir: string, where: string): void {
  const problem = outputFolderProblem(dir);
  if (problem)
    throw new CorlError(
      'CORL_ERR_PLUGIN_OPTIONS',
      `expected a folder for TensorBoard's event files, got ${problem} at ${dir}`,
      {
        where,
        hint: 'give a folder path (it is created), outside /proc, /sys and /dev',
      },
    );
}

/** An events file's bytes: a regular file only (a FIFO, a device or a folder under that name is refused, coded). */
function readEvents(file: string): Buffer {
  try {
    return readUserFile(file);
  } catch (e) {
    if (!(e instanceof NotARegularFile)) throw e;
    throw new CorlError('CORL_ERR_RUN_CORRUPT', `expected a TensorBoard events file, got ${e.message}`, {
      where: file,
      hint: 'move it away and resume again',
    });
  }
}

/** The events files of a folder, oldest first (their names start with the creation time). */
function eventFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((n) => n.startsWith('events.out.tfevents.') && !/\.tmp-\d+-\d+$/.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

let made = 0;

/** A name as TensorBoard's writers give: `events.out.tfevents.<10-digit seconds>.<host>.<pid>.<n>`. */
function newFileName(): string {
  const seconds = String(Math.floor(Date.now() / 1000)).padStart(10, '0');
  return `events.out.tfevents.${seconds}.${safeName(os.hostname()) || 'host'}.${process.pid}.${made++}`;
}

/** The config as Markdown: a code block (four-space indent) of its JSON. */
function configText(config: unknown): string {
  return JSON.stringify(config, null, 2)
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

/** Writes every metric as a TensorBoard scalar, per agent, and the config as text. */
export const tensorboardSink = definePlugin({
  manifest: {
    name: 'corl:tensorboard',
    kind: 'metrics',
    description: 'TensorBoard event files: every metric a scalar per agent (one folder each), the config as text',
    corl: '^0.1.0',
    options: TENSORBOARD_OPTIONS_SCHEMA,
  },
  create: fromClass(TensorboardSink),
});
