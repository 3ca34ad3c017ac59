// A comparison plan: what will be compared, on which split, by which metric and pairs, with which
// margin, error rate and seeds, and by which rule the seeds stop; written (and committed) before
// its runs. `corl compare --plan` runs it and records it by hash; reports show it and whether the
// runs followed it. The format is documented in docs/guide/statistics.md.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { findNodeAtLocation, parseTree, type ParseError } from 'jsonc-parser';
import { schemaIssues, type ConfigIssue } from '../config/validator';
import { CorlError, errorLine } from '../errors';
import { readUserFile } from '../util/files';
import { MAX_JSON_DEPTH, tooDeep } from '../util/json';
import { SPENDING } from '../stats/sequential';
import { PRIMARY_METRICS } from '../report/paired';
import type { Plan, PlanRecord } from '../report/design';
import { agentFamilies, CHECKPOINT_OPTION, MIN_POOL, poolDraws } from '../report/pools';

/**
 * The most seeds per config a comparison runs (a plan's last look, `--seeds`): far past any that a
 * laptop or a cluster finishes, and small enough that the seed lists stay small.
 */
export const MAX_SEEDS = 10_000;

export type { Plan } from '../report/design';

/** The JSON Schema of a plan file. */
export const PLAN_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'corl comparison plan',
  type: 'object',
  additionalProperties: false,
  required: ['plan', 'name', 'configs', 'split', 'primary', 'pairs', 'alpha', 'seeds', 'boundary', 'stop'],
  properties: {
    $schema: { type: 'string' },
    plan: { const: 1, description: 'plan format version' },
    name: { type: 'string', minLength: 1, description: 'name of the comparison' },
    question: { type: 'string', description: 'the question the comparison answers, in words' },
    written: { type: 'string', description: 'when the plan was written (a date)' },
    configs: {
      type: 'array',
      minItems: 2,
      description: 'the configs, in table order',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['file', 'name', 'sha256'],
        properties: {
          file: {
            type: 'string',
            minLength: 1,
            description: "path of the config, relative to the plan's project root",
          },
          name: { type: 'string', minLength: 1, description: 'the config\'s "name" (its folder in the comparison)' },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "sha256 of the file's bytes" },
        },
      },
    },
    split: { enum: ['held-out', 'validation'], description: 'the evaluation split the verdicts read' },
    primary: { enum: [...PRIMARY_METRICS], description: 'the primary metric: final or change (last − step 0)' },
    primaryText: { type: 'string', description: 'the primary metric in words' },
    pairs: {
      type: 'array',
      minItems: 1,
      description: 'the differences a − b to decide',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['a', 'b'],
        properties: {
          a: { type: 'string', minLength: 1 },
          b: { type: 'string', minLength: 1 },
          role: { enum: ['primary', 'secondary'] },
        },
      },
    },
    margin: { type: 'number', exclusiveMinimum: 0, description: 'equivalence margin in points (TOST)' },
    effect: {
      type: 'number',
      exclusiveMinimum: 0,
      description: 'effect in points whose seeds needed are reported (default: the margin)',
    },
    alpha: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.5, description: 'two-sided error rate' },
    seeds: {
      type: 'object',
      additionalProperties: false,
      required: ['first', 'looks'],
      properties: {
        first: { type: 'integer', minimum: 0, maximum: MAX_SEEDS * 100, description: 'index of the first seed' },
        looks: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: { type: 'integer', minimum: 2, maximum: MAX_SEEDS },
          description: 'seeds per config at each look, increasing; the last is the cap',
        },
      },
    },
    boundary: {
      enum: [...SPENDING, 'fixed'],
      description: 'α-spending function of the looks ("fixed": one look at level alpha)',
    },
    stop: {
      enum: ['all-resolved', 'last-look'],
      description: 'stop at the first look where every pair is resolved, or run every look',
    },
    method: { type: 'string', description: 'the method, in prose' },
    notes: { type: 'array', items: { type: 'string' } },
    heldOut: {
      type: 'object',
      additionalProperties: false,
      required: ['seed', 'size'],
      description: "the fresh held-out set every config evaluates on: its task's heldOutSeed and heldOut (corl:arith)",
      properties: {
        seed: { type: 'integer', minimum: 1, description: "the task's heldOutSeed (above 0: a fresh set)" },
        size: { type: 'integer', minimum: 1, description: "the task's heldOut: problems in the set" },
        why: { type: 'string', description: 'how the size was chosen, with the arithmetic' },
      },
    },
    checkpoints: {
      type: 'object',
      additionalProperties: false,
      required: ['pools'],
      description: "checkpoint pools per family: each seed's base checkpoints are drawn from them",
      properties: {
        pools: {
          type: 'object',
          minProperties: 1,
          description: 'family → its checkpoints (several pretraining seeds of one recipe)',
          additionalProperties: {
            type: 'array',
            minItems: MIN_POOL,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['path', 'sha256'],
              properties: {
                path: {
                  type: 'string',
                  minLength: 1,
                  description: "the checkpoint's folder, relative to the plan's project root",
                },
                sha256: {
                  type: 'object',
                  minProperties: 1,
                  description: 'file name in the folder → sha256 of its bytes',
                  additionalProperties: { type: 'string', pattern: '^[0-9a-f]{64}$' },
                },
              },
            },
          },
        },
        assignment: {
          const: 'rotate',
          description:
            'the k-th agent of family F at seed index i gets member (i + k) mod |pool F| (the only rule, and the default)',
        },
      },
    },
  },
} as const;

let compiled: ReturnType<Ajv2020['compile']> | undefined;

/** A plan read from its file: the plan, the file, the sha256 of its bytes, and the folder its config paths are relative to. */
export interface LoadedPlan {
  readonly plan: Plan;
  readonly file: string;
  readonly sha256: string;
  /** The nearest folder at or above the plan's in which every config path exists (the project root). */
  readonly root: string;
}

/** sha256 of a file's bytes, hex. */
export function fileSha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** The largest plan file read (a plan is a page of JSON). */
const MAX_PLAN_BYTES = 16 * 1024 * 1024;

/** Read and validate a plan file: every problem at once, in one CORL_ERR_PLAN_INVALID. */
export function loadPlan(file: string): LoadedPlan {
  const abs = path.resolve(file);
  let bytes: Buffer;
  try {
    // A regular file only: a FIFO or a device would block or never end.
    bytes = readUserFile(abs, MAX_PLAN_BYTES);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CorlError(
      'CORL_ERR_PLAN_INVALID',
      `expected a readable plan file, got ${code === 'ENOENT' ? 'no file' : code === 'EISDIR' ? 'a folder' : errorLine(e)} at ${abs}`,
      { where: file, hint: 'pass the plan.json of the comparison' },
    );
  }
  const text = bytes.toString('utf8');
  // The parser recurses: a plan nested thousands deep would overflow the stack.
  const deep = tooDeep(text);
  if (deep)
    throw new CorlError(
      'CORL_ERR_PLAN_INVALID',
      `expected JSON nested at most ${MAX_JSON_DEPTH} levels deep, got a deeper value at line ${deep.line}, column ${deep.column}`,
      {
        where: `${file}:${deep.line}:${deep.column}`,
        hint: 'no plan needs that depth: look for runaway brackets there',
      },
    );
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length || !tree) {
    const at = errors[0] ? lineColumn(text, errors[0].offset) : { line: 1, column: 1 };
    throw new CorlError(
      'CORL_ERR_PLAN_INVALID',
      `expected JSON, got a syntax error at line ${at.line}, column ${at.column}`,
      {
        where: `${file}:${at.line}:${at.column}`,
      },
    );
  }
  const data = JSON.parse(text) as unknown;
  compiled ??= new Ajv2020({ allErrors: true, strict: true, verbose: true }).compile(PLAN_SCHEMA);
  const issues: ConfigIssue[] = compiled(data)
    ? semanticIssues(data as Plan)
    : schemaIssues(compiled.errors ?? [], data);
  if (issues.length) {
    const lines = issues.map((i) => {
      const node = findNodeAtLocation(
        tree,
        i.pointer
          .split('/')
          .slice(1)
          .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~'))),
      );
      const at = node ? lineColumn(text, node.offset) : undefined;
      return `  ${file}${at ? `:${at.line}:${at.column}` : ''}  ${i.path || '(root)'}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`;
    });
    throw new CorlError(
      'CORL_ERR_PLAN_INVALID',
      `expected a valid plan, got ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n`,
      { where: file, hint: 'the plan format is in docs/guide/statistics.md', data: { issues } },
    );
  }
  const plan = data as Plan;
  return { plan, file: abs, sha256: createHash('sha256').update(bytes).digest('hex'), root: projectRoot(abs, plan) };
}

/** What the schema cannot say: pairs name the plan's configs, names are distinct, looks increase, one primary pair. */
function semanticIssues(p: Plan): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const issue = (pointer: string, message: string, hint?: string): void => {
    const where = pointer
      .split('/')
      .slice(1)
      .map((x, i) => (/^\d+$/.test(x) ? `[${x}]` : `${i ? '.' : ''}${x}`))
      .join('');
    out.push({ pointer, path: where, message, ...(hint ? { hint } : {}) });
  };
  const names = p.configs.map((c) => c.name);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) issue(`/configs/${i}/name`, `expected distinct config names, got "${n}" twice`);
  });
  p.pairs.forEach((pair, i) => {
    for (const side of ['a', 'b'] as const)
      if (!names.includes(pair[side]))
        issue(
          `/pairs/${i}/${side}`,
          `expected the name of a config of the plan, got "${pair[side]}"`,
          `the configs are ${names.join(', ')}`,
        );
    if (pair.a === pair.b) issue(`/pairs/${i}/b`, `expected two different configs, got "${pair.a}" twice`);
  });
  if (p.pairs.filter((x) => x.role === 'primary').length > 1)
    issue(
      '/pairs',
      `expected at most one pair with role "primary", got ${p.pairs.filter((x) => x.role === 'primary').length}`,
    );
  p.seeds.looks.forEach((n, i) => {
    if (i > 0 && !(n > p.seeds.looks[i - 1]!))
      issue(`/seeds/looks/${i}`, `expected more seeds than the look before (${p.seeds.looks[i - 1]}), got ${n}`);
  });
  for (const [family, pool] of Object.entries(p.checkpoints?.pools ?? {})) {
    const paths = pool.map((m) => path.posix.normalize(m.path.replace(/\\/g, '/')).replace(/\/$/, ''));
    const digests = pool.map((m) => JSON.stringify(Object.entries(m.sha256).sort()));
    pool.forEach((m, i) => {
      if (path.isAbsolute(m.path))
        issue(
          `/checkpoints/pools/${ptr(family)}/${i}/path`,
          `expected a path relative to the project root, got "${m.path}"`,
        );
      else if (paths[i] === '..' || paths[i]!.startsWith('../'))
        issue(
          `/checkpoints/pools/${ptr(family)}/${i}/path`,
          `expected a path inside the project root, got "${m.path}"`,
          'the plan pins what the repository holds: keep checkpoints under the folder of its configs',
        );
      if (paths.indexOf(paths[i]!) !== i)
        issue(`/checkpoints/pools/${ptr(family)}/${i}/path`, `expected distinct checkpoints, got "${m.path}" twice`);
      else if (digests.indexOf(digests[i]!) !== i)
        issue(
          `/checkpoints/pools/${ptr(family)}/${i}/sha256`,
          `expected distinct checkpoints, got the same files as member ${digests.indexOf(digests[i]!)}`,
          'a pool covers checkpoint variation only with different pretraining seeds',
        );
    });
  }
  if (p.heldOut && p.split !== 'held-out')
    issue('/heldOut', `expected split "held-out" with a fresh held-out set, got "${p.split}"`);
  if (p.boundary === 'fixed' && p.seeds.looks.length > 1)
    issue(
      '/boundary',
      `expected an α-spending boundary for ${p.seeds.looks.length} looks, got "fixed"`,
      `use one of ${SPENDING.join(', ')}, or a single look`,
    );
  return out;
}

/** The nearest folder at or above the plan's where every config file exists (else the plan's own folder). */
function projectRoot(planFile: string, plan: Plan): string {
  for (let dir = path.dirname(planFile); ; dir = path.dirname(dir)) {
    if (plan.configs.every((c) => fs.existsSync(path.resolve(dir, c.file)))) return dir;
    if (path.dirname(dir) === dir) return path.dirname(planFile);
  }
}

/** A JSON pointer segment. */
const ptr = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** The plan's config files, checked against their recorded sha256: the absolute paths, in the plan's order. */
export function plannedConfigFiles(p: LoadedPlan): string[] {
  return p.plan.configs.map((c, i) => {
    const file = path.resolve(p.root, c.file);
    if (!fs.existsSync(file))
      throw new CorlError(
        'CORL_ERR_PLAN_CONFIG_CHANGED',
        `expected the config file ${c.file} the plan names, got no file at ${file}`,
        {
          where: `${p.file} configs[${i}]`,
        },
      );
    const sha = fileSha256(file);
    if (sha !== c.sha256)
      throw new CorlError(
        'CORL_ERR_PLAN_CONFIG_CHANGED',
        `expected ${c.file} with sha256 ${c.sha256} as planned, got ${sha}: the config changed after the plan was written`,
        { where: `${p.file} configs[${i}]`, hint: "restore it as it was at the plan's commit, or write a new plan" },
      );
    return file;
  });
}

/** What a comparison folder records of its plan (compare.json's "plan"). */
export function planRecord(p: LoadedPlan, relativeTo: string): PlanRecord {
  return { file: path.relative(relativeTo, p.file) || path.basename(p.file), sha256: p.sha256, plan: p.plan };
}

/**
 * The plan's checkpoint pools, checked: each member's folder exists under the project root, every
 * file the plan lists has its recorded sha256, and a member whose corl.json names a family is of
 * its pool's family. Returns the absolute folder of each member, per family.
 */
export function plannedCheckpoints(p: LoadedPlan): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [family, pool] of Object.entries(p.plan.checkpoints?.pools ?? {}))
    out[family] = pool.map((m, i) => {
      const where = `${p.file} checkpoints.pools.${family}[${i}]`;
      const dir = path.resolve(p.root, m.path);
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
        throw new CorlError(
          'CORL_ERR_PLAN_CONFIG_CHANGED',
          `expected the checkpoint folder ${m.path} the plan names, got no folder at ${dir}`,
          {
            where,
            hint: 'pretrain it with its recipe, or restore it as it was when the plan was written',
          },
        );
      for (const [name, want] of Object.entries(m.sha256)) {
        const file = path.join(dir, name);
        if (name !== path.basename(name) || !fs.existsSync(file) || !fs.statSync(file).isFile())
          throw new CorlError(
            'CORL_ERR_PLAN_CONFIG_CHANGED',
            `expected the file ${name} in the checkpoint ${m.path}, got none at ${file}`,
            { where },
          );
        const sha = fileSha256(file);
        if (sha !== want)
          throw new CorlError(
            'CORL_ERR_PLAN_CONFIG_CHANGED',
            `expected ${m.path}/${name} with sha256 ${want} as planned, got ${sha}: the checkpoint changed after the plan was written`,
            { where, hint: "restore it as it was at the plan's commit, or write a new plan" },
          );
      }
      const meta = path.join(dir, 'corl.json');
      if (fs.existsSync(meta)) {
        let f: unknown;
        try {
          f = (JSON.parse(fs.readFileSync(meta, 'utf8')) as { family?: unknown }).family;
        } catch {
          f = undefined;
        }
        if (typeof f === 'string' && f !== family)
          throw new CorlError(
            'CORL_ERR_PLAN_MISMATCH',
            `expected a checkpoint of family "${family}" in its pool, got ${m.path} of family "${f}"`,
            { where, hint: 'move it to the pool of its family, in a new plan' },
          );
      }
      return dir;
    });
  return out;
}

/** A planned config as `corl compare` loaded it: what the plan's checks read. */
interface PlannedConfig {
  readonly file?: string;
  readonly config: {
    readonly name: string;
    readonly task: { readonly options: unknown };
    readonly agents: readonly unknown[];
  };
}

/**
 * What a plan requires of its loaded configs: every one evaluates on the plan's fresh held-out set
 * (its task's heldOutSeed and heldOut), and under checkpoint pools every agent is of a pooled
 * family, with no more agents of a family than its pool holds.
 */
export function checkPlannedConfigs(p: LoadedPlan, loaded: readonly PlannedConfig[]): void {
  const h = p.plan.heldOut;
  for (const l of loaded) {
    const file = l.file ?? l.config.name;
    if (h) {
      const o = (l.config.task.options ?? {}) as { heldOutSeed?: unknown; heldOut?: unknown };
      for (const [field, want] of [
        ['heldOutSeed', h.seed],
        ['heldOut', h.size],
      ] as const)
        if (o[field] !== want)
          throw new CorlError(
            'CORL_ERR_PLAN_MISMATCH',
            `expected task.options.${field} ${want} in ${file} as the plan's heldOut names it, got ${o[field] === undefined ? 'none (a task without a fresh held-out set)' : JSON.stringify(o[field])}`,
            {
              where: `${file} task.options.${field}`,
              hint: `every config of the plan evaluates on one fresh set: set "${field}": ${want} in a new config, in a new plan`,
            },
          );
    }
    if (!p.plan.checkpoints) continue;
    poolDraws(p.plan.checkpoints, agentFamilies({ agents: l.config.agents }), p.plan.seeds.first, file);
    l.config.agents.forEach((a, j) => {
      const o = (a as { policy?: { options?: Record<string, unknown> } }).policy?.options ?? {};
      if (typeof o[CHECKPOINT_OPTION] !== 'string')
        throw new CorlError(
          'CORL_ERR_PLAN_MISMATCH',
          `expected agents[${j}] of ${file} to load a checkpoint (policy option "${CHECKPOINT_OPTION}"), got none: the plan's pool replaces it seed by seed`,
          {
            where: `${file} agents[${j}].policy.options.${CHECKPOINT_OPTION}`,
            hint: "name one of its pool's checkpoints in the config (any member: the pool decides per seed)",
          },
        );
    });
  }
}
