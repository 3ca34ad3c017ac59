import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import * as path from 'node:path';
import type { PluginContext } from '../../core/contracts/plugin';
import type { Topology } from '../../core/contracts/topology';
import { CorlError, errorLine } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { NotARegularFile, readUserText } from '../../core/util/files';
import { parseJson } from '../../core/util/json';

const topologyError = (message: string, where: string, hint?: string): CorlError =>
  new CorlError('CORL_ERR_CONFIG_TOPOLOGY', message, { where, ...(hint ? { hint } : {}) });

/** Read and check the shape of a matrix (square, non-negative integers); the agent count is checked in validate. */
export function readMatrix(options: AdjacencyOptions, baseDir: string): { matrix: number[][]; where: string } {
  let matrix: unknown = options.matrix;
  let where = 'topology.options.matrix';
  if (options.file) {
    if (options.matrix.length > 0)
      throw topologyError(
        'expected either topology.options.matrix or topology.options.file, got both',
        'topology.options',
      );
    const file = path.resolve(baseDir, options.file);
    where = file;
    let text: string;
    try {
      text = readUserText(file);
    } catch (e) {
      throw topologyError(
        `expected a readable JSON file with the adjacency matrix, got ${e instanceof NotARegularFile ? e.message : ((e as NodeJS.ErrnoException).code ?? errorLine(e))} at ${file}`,
        'topology.options.file',
      );
    }
    try {
      matrix = parseJson(text);
    } catch (e) {
      throw topologyError(`expected JSON in ${file}, got ${(e as Error).message}`, 'topology.options.file');
    }
    if (
      matrix &&
      typeof matrix === 'object' &&
      !Array.isArray(matrix) &&
      Array.isArray((matrix as { matrix?: unknown }).matrix)
    )
      matrix = (matrix as { matrix: unknown }).matrix;
  }
  if (!Array.isArray(matrix) || matrix.length === 0)
    throw topologyError(
      `expected a non-empty N×N matrix (a list of rows), got ${Array.isArray(matrix) ? 'an empty list' : typeof matrix}`,
      where,
    );
  const n = matrix.length;
  matrix.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== n) {
      throw topologyError(
        `expected row ${i} to have ${n} entries (the matrix must be square), got ${Array.isArray(row) ? row.length : typeof row}`,
        `${where}[${i}]`,
      );
    }
    row.forEach((v, j) => {
      const x = typeof v === 'boolean' ? Number(v) : v;
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0) {
        throw topologyError(
          `expected a non-negative integer (0 = no edge, k = supervises with priority k), got ${JSON.stringify(v)}`,
          `${where}[${i}][${j}]`,
        );
      }
      row[j] = x;
    });
  });
  return { matrix: matrix as number[][], where };
}

const ADJACENCY_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    matrix: {
      type: 'array',
      items: { type: 'array', items: { type: ['integer', 'boolean'] } },
      default: [],
      description:
        'rows = supervised agent, columns = supervisor; 0 = none, k > 0 = supervisor with priority k (1 = teacher)',
    },
    file: {
      type: 'string',
      default: '',
      description: 'JSON file with the matrix (a list of rows, or {"matrix": rows}), relative to the config',
    },
    allowUnsupervised: {
      type: 'boolean',
      default: false,
      description: 'allow agents without supervisors (they get no label, so zero rewards)',
    },
    allowSelf: {
      type: 'boolean',
      default: false,
      description: 'allow a non-zero diagonal (an agent supervising itself)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type AdjacencyOptions = FromSchema<typeof ADJACENCY_OPTIONS_SCHEMA>;

/**
 * Any supervision graph, as an N×N matrix: entry [n][m] > 0 means agent m supervises agent n, and
 * its value orders the supervisors (1 first: the teacher; ties by index). The released Co-RL code's three-agent
 * peer lists (A: B, C; B: C, A; C: A, B) are [[0,1,2],[2,0,1],[1,2,0]].
 */
export const adjacencyTopology = definePlugin({
  manifest: {
    name: 'corl:adjacency',
    kind: 'topology',
    description:
      'Custom supervision graph from an N x N matrix (inline or a JSON file): entry [n][m] > 0 means m supervises n, with that priority',
    corl: '^0.1.0',
    options: ADJACENCY_OPTIONS_SCHEMA,
  },
  create(options: AdjacencyOptions, ctx: PluginContext): Topology {
    const copy = { ...options, matrix: options.matrix.map((r) => [...r]) };
    const { matrix, where } = readMatrix(copy, ctx?.baseDir ?? process.cwd());
    const n = matrix.length;
    const lists = matrix.map((row) =>
      row
        .map((w, m) => ({ w, m }))
        .filter((e) => e.w > 0)
        .sort((a, b) => a.w - b.w || a.m - b.m)
        .map((e) => e.m),
    );
    const selfEdges = matrix.some((row, i) => row[i]! > 0);
    if (selfEdges && !options.allowSelf) {
      const i = matrix.findIndex((row, k) => row[k]! > 0);
      throw topologyError(
        `expected a zero diagonal (an agent never supervises itself under a peer topology), got ${matrix[i]![i]} for agent ${i}`,
        `${where}[${i}][${i}]`,
        'set the entry to 0, or set topology.options.allowSelf to true',
      );
    }
    if (!options.allowUnsupervised) {
      const i = lists.findIndex((l) => l.length === 0);
      if (i >= 0)
        throw topologyError(
          `expected every agent to have a supervisor, got none for agent ${i}`,
          `${where}[${i}]`,
          'add a non-zero entry to the row, or set topology.options.allowUnsupervised to true',
        );
    }
    const validate = (agents: number): void => {
      if (agents !== n)
        throw topologyError(
          `expected a ${agents}×${agents} matrix for ${agents} agents, got ${n}×${n}`,
          where,
          'give one row and one column per agent, in the order of `agents`',
        );
    };
    return {
      selfSupervised: selfEdges,
      validate,
      supervisors(agent, agents) {
        validate(agents);
        return lists[agent] ?? [];
      },
    };
  },
});
