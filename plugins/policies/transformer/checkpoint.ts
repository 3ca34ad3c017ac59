// Checkpoints of the embedded transformer. A checkpoint directory holds
//   model.onnx       a standard ONNX inference model (input_ids int64 [batch, sequence] → logits
//                    [batch, sequence, vocab]) with the weights as initializers: it opens in any runtime;
//   optimizer.bin    AdamW's first and second moments (float32, little-endian, parameter order);
//   reference.bin    the frozen reference policy's weights, when a KL penalty has used one;
//   corl.json        the sidecar: tokenizer, architecture, training counters, file sizes and SHA-256s.
// Each file is written atomically and the sidecar last, so an interrupted save never passes for a
// complete one. Loading checks everything before changing anything: a corrupt or mismatched
// checkpoint is CORL_ERR_POLICY_CHECKPOINT, never a partial load.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../../../core/errors';
import { emitOnnx } from '../../../core/tensor/onnx/emit';
import { readModel } from '../../../core/tensor/onnx/read';
import { writeFileAtomic, writeJsonAtomic } from '../../../core/util/fs';
import { CORL_VERSION } from '../../../core/version';
import type { Architecture, ParamSpec } from './architecture';
import { buildInferenceGraph } from './graphs';
import { readUserFile, readUserText } from '../../../core/util/files';

/** Sidecar format name and version. */
export const CHECKPOINT_FORMAT = 'corl-transformer-checkpoint';
export const CHECKPOINT_VERSION = 1;

/** Training counters kept across save and load. */
export interface TrainingState {
  /** AdamW steps taken (bias correction). */
  readonly optimizerSteps: number;
  /** Calls of update. */
  readonly updates: number;
  /** Calls of pretrainStep. */
  readonly pretrainSteps: number;
}

/** What a checkpoint holds in memory. */
export interface CheckpointData {
  readonly family: string;
  readonly architecture: Architecture;
  readonly tokenizer: { alphabet: string; tokens: string[]; lowercase: boolean };
  readonly params: readonly Float32Array[];
  readonly m: readonly Float32Array[];
  readonly v: readonly Float32Array[];
  readonly reference?: readonly Float32Array[];
  readonly training: TrainingState;
}

interface FileEntry {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

interface Sidecar {
  format: string;
  version: number;
  corl: string;
  family: string;
  architecture: Architecture;
  tokenizer: CheckpointData['tokenizer'];
  parameters: { name: string; shape: number[] }[];
  training: TrainingState;
  files: { model: FileEntry; optimizer: FileEntry; reference?: FileEntry };
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function concat(arrays: readonly Float32Array[]): Uint8Array {
  const n = arrays.reduce((s, a) => s + a.length, 0);
  const out = new Float32Array(n);
  let o = 0;
  for (const a of arrays) {
    out.set(a, o);
    o += a.length;
  }
  return new Uint8Array(out.buffer);
}

function split(bytes: Uint8Array, specs: readonly ParamSpec[], copies: number, file: string): Float32Array[][] {
  const sizes = specs.map((s) => s.shape.reduce((a, b) => a * b, 1));
  const per = sizes.reduce((a, b) => a + b, 0);
  if (bytes.length !== per * copies * 4) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected ${per * copies * 4} bytes in ${path.basename(file)} (${copies} × ${per} float32), got ${bytes.length}`,
      { where: file },
    );
  }
  const all = new Float32Array(per * copies);
  new Uint8Array(all.buffer).set(bytes);
  const out: Float32Array[][] = [];
  let o = 0;
  for (let c = 0; c < copies; c++) {
    out.push(
      sizes.map((n) => {
        const a = all.slice(o, o + n);
        o += n;
        return a;
      }),
    );
  }
  return out;
}

/** Write a checkpoint into `dir` (created if missing). */
export async function saveCheckpoint(dir: string, specs: readonly ParamSpec[], d: CheckpointData): Promise<void> {
  await fsp.mkdir(dir, { recursive: true });
  const inference = buildInferenceGraph(d.architecture, specs);
  const model = emitOnnx(inference.graph, {
    outputs: inference.outputs,
    initializers: new Map(inference.params.map((t, i) => [t, d.params[i]!])),
    docString: `corl ${d.family}: input_ids (int64, ids of the corl:transformer tokenizer in corl.json, starting with the end token 0) → logits`,
    metadata: { 'corl.format': CHECKPOINT_FORMAT, 'corl.family': d.family },
  }).bytes;
  const optimizer = concat([...d.m, ...d.v]);
  const entry = (file: string, b: Uint8Array): FileEntry => ({ file, bytes: b.length, sha256: sha(b) });
  await writeFileAtomic(path.join(dir, 'model.onnx'), model);
  await writeFileAtomic(path.join(dir, 'optimizer.bin'), optimizer);
  let reference: FileEntry | undefined;
  if (d.reference) {
    const r = concat(d.reference);
    await writeFileAtomic(path.join(dir, 'reference.bin'), r);
    reference = entry('reference.bin', r);
  } else {
    await fsp.rm(path.join(dir, 'reference.bin'), { force: true });
  }
  const sidecar: Sidecar = {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    corl: CORL_VERSION,
    family: d.family,
    architecture: d.architecture,
    tokenizer: d.tokenizer,
    parameters: specs.map((s) => ({ name: s.name, shape: [...s.shape] })),
    training: d.training,
    files: {
      model: entry('model.onnx', model),
      optimizer: entry('optimizer.bin', optimizer),
      ...(reference ? { reference } : {}),
    },
  };
  await writeJsonAtomic(path.join(dir, 'corl.json'), sidecar);
}

async function readChecked(dir: string, e: FileEntry | undefined, what: string): Promise<Uint8Array> {
  if (!e || typeof e.file !== 'string' || path.basename(e.file) !== e.file)
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected corl.json to name the ${what} file, got ${JSON.stringify(e)}`,
      { where: path.join(dir, 'corl.json') },
    );
  const file = path.join(dir, e.file);
  let b: Uint8Array;
  try {
    // Never more than corl.json says it holds, and never a FIFO or a device (no hang, no endless read).
    b = readUserFile(file, typeof e.bytes === 'number' && e.bytes >= 0 ? e.bytes : undefined);
  } catch (err) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected a readable ${what} file, got ${(err as Error).message}`,
      { where: file },
    );
  }
  if (b.length !== e.bytes || sha(b) !== e.sha256) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected ${what} of ${e.bytes} bytes with the SHA-256 in corl.json, got ${b.length} bytes${b.length === e.bytes ? ' with another digest' : ''} (corrupt or from another save)`,
      { where: file },
    );
  }
  return b;
}

/** Compare a saved value with the current one; throws naming the first differing field. */
function same(where: string, field: string, saved: unknown, current: unknown): void {
  if (JSON.stringify(saved) !== JSON.stringify(current)) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected ${field} ${JSON.stringify(current)} (this policy's options), got ${JSON.stringify(saved)} in the checkpoint`,
      {
        where,
        hint: 'load a checkpoint written by a model with the same architecture and tokenizer options; nothing was loaded',
      },
    );
  }
}

/**
 * Read and verify a checkpoint against the current architecture and tokenizer. Returns everything
 * in memory; the caller swaps it in only after this resolves.
 */
export async function loadCheckpoint(
  dir: string,
  specs: readonly ParamSpec[],
  expect: { architecture: Architecture; tokenizer: CheckpointData['tokenizer'] },
): Promise<CheckpointData> {
  const sideFile = path.join(dir, 'corl.json');
  let side: Sidecar;
  try {
    side = JSON.parse(readUserText(sideFile)) as Sidecar;
  } catch (e) {
    throw new CorlError('CORL_ERR_POLICY_CHECKPOINT', `expected a readable JSON sidecar, got ${(e as Error).message}`, {
      where: sideFile,
    });
  }
  if (side?.format !== CHECKPOINT_FORMAT || side.version !== CHECKPOINT_VERSION) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected format "${CHECKPOINT_FORMAT}" version ${CHECKPOINT_VERSION}, got ${JSON.stringify(side?.format)} version ${JSON.stringify(side?.version)}`,
      { where: sideFile },
    );
  }
  for (const k of Object.keys(expect.architecture) as (keyof Architecture)[])
    same(sideFile, `architecture.${k}`, side.architecture?.[k], expect.architecture[k]);
  for (const k of ['alphabet', 'tokens', 'lowercase'] as const)
    same(sideFile, `tokenizer.${k}`, side.tokenizer?.[k], expect.tokenizer[k]);
  same(
    sideFile,
    'parameters',
    side.parameters,
    specs.map((s) => ({ name: s.name, shape: [...s.shape] })),
  );
  const t = side.training;
  if (!t || ![t.optimizerSteps, t.updates, t.pretrainSteps].every((x) => Number.isInteger(x) && x >= 0)) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected training counters (non-negative integers), got ${JSON.stringify(t)}`,
      { where: sideFile },
    );
  }

  const modelFile = path.join(dir, 'model.onnx');
  const modelBytes = await readChecked(dir, side.files?.model, 'model');
  let model;
  try {
    model = readModel(modelBytes);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_POLICY_CHECKPOINT',
      `expected a well-formed ONNX model, got ${(e as Error).message}`,
      { where: modelFile },
    );
  }
  const params = specs.map((s) => {
    const init = model.initializers.get(s.name);
    if (!init || init.dtype !== 'float32' || JSON.stringify(init.dims) !== JSON.stringify(s.shape)) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected initializer "${s.name}" float32 [${s.shape.join(', ')}], got ${init ? `${init.dtype} [${init.dims.join(', ')}]` : 'none'}`,
        { where: modelFile },
      );
    }
    return init.data as Float32Array;
  });
  const optFile = path.join(dir, 'optimizer.bin');
  const [m, v] = split(await readChecked(dir, side.files.optimizer, 'optimizer'), specs, 2, optFile) as [
    Float32Array[],
    Float32Array[],
  ];
  let reference: Float32Array[] | undefined;
  if (side.files.reference)
    reference = split(
      await readChecked(dir, side.files.reference, 'reference'),
      specs,
      1,
      path.join(dir, 'reference.bin'),
    )[0];
  for (const [what, set] of [
    ['weights', params],
    ['optimizer state', [...m, ...v]],
    ['reference weights', reference ?? []],
  ] as const) {
    for (const a of set) {
      for (let i = 0; i < a.length; i++) {
        if (!Number.isFinite(a[i]))
          throw new CorlError('CORL_ERR_POLICY_CHECKPOINT', `expected finite ${what}, got ${a[i]}`, { where: dir });
      }
    }
  }
  return {
    family: side.family,
    architecture: side.architecture,
    tokenizer: side.tokenizer,
    params,
    m,
    v,
    reference,
    training: { optimizerSteps: t.optimizerSteps, updates: t.updates, pretrainSteps: t.pretrainSteps },
  };
}
