// What the inputs and outputs of an optimum causal-LM export are, read from the loaded session:
// input_ids and attention_mask (int64), position_ids (some exports omit it), past_key_values.{i}.key
// and .value for i = 0..L−1 ([batch, kv_heads, past_length, head_dim]), use_cache_branch in merged
// decoders; outputs logits and present.{i}.key|value. Head counts and sizes come from the metadata
// shapes when they are fixed there, else from config.json.
import { CorlError } from '../../../core/errors';

/** One input's or output's name, element type and shape as onnxruntime reports them. */
export interface ValueInfo {
  readonly name: string;
  readonly type?: string;
  readonly shape?: readonly (number | string)[];
}

/** The detected layout. */
export interface Signature {
  readonly layers: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly positionIds: boolean;
  readonly useCacheBranch: boolean;
  /** Element type of input_ids / attention_mask / position_ids: int64 (optimum) or int32. */
  readonly idType: 'int64' | 'int32';
  readonly pastNames: readonly (readonly [string, string])[];
  readonly presentNames: readonly (readonly [string, string])[];
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;
const KNOWN = new Set(['input_ids', 'attention_mask', 'position_ids', 'use_cache_branch']);

const intOf = (v: unknown): number | undefined =>
  Number.isInteger(v) && (v as number) > 0 ? (v as number) : undefined;

/** Detect the layout; a missing or mismatched input or output is CORL_ERR_BACKEND_MODEL naming it. */
export function detectSignature(
  inputs: readonly ValueInfo[],
  outputs: readonly ValueInfo[],
  config: Readonly<Record<string, unknown>>,
  where: string,
): Signature {
  const bad = (
    what: string,
    hint = 'export with `optimum-cli export onnx --task text-generation-with-past` (the task with past key values)',
  ) => new CorlError('CORL_ERR_BACKEND_MODEL', what, { where, hint });
  const byName = new Map(inputs.map((v) => [v.name, v] as const));
  const outNames = new Set(outputs.map((v) => v.name));
  for (const name of ['input_ids', 'attention_mask']) {
    if (!byName.has(name)) throw bad(`expected an input "${name}", got inputs ${inputs.map((v) => v.name).join(', ')}`);
  }
  const idType = byName.get('input_ids')!.type;
  if (idType !== undefined && idType !== 'int64' && idType !== 'int32')
    throw bad(`expected input "input_ids" of type int64, got ${idType}`);
  if (!outNames.has('logits')) throw bad(`expected an output "logits", got outputs ${[...outNames].join(', ')}`);
  const layersSeen = new Map<number, Set<string>>();
  for (const v of inputs) {
    const m = PAST.exec(v.name);
    if (m) {
      const set = layersSeen.get(Number(m[1])) ?? new Set<string>();
      set.add(m[2]!);
      layersSeen.set(Number(m[1]), set);
    } else if (!KNOWN.has(v.name)) {
      throw bad(
        `expected only the inputs input_ids, attention_mask, position_ids, past_key_values.{i}.key|value and use_cache_branch, got "${v.name}" too`,
      );
    }
  }
  if (layersSeen.size === 0) {
    throw bad(
      `expected inputs past_key_values.{i}.key and past_key_values.{i}.value (a KV cache), got inputs ${inputs.map((v) => v.name).join(', ')}`,
    );
  }
  const L = layersSeen.size;
  const cfgLayers = intOf(config.num_hidden_layers) ?? intOf(config.n_layer);
  if (cfgLayers !== undefined && cfgLayers !== L)
    throw bad(`expected ${cfgLayers} layers of past_key_values (num_hidden_layers of config.json), got ${L}`);
  const pastNames: [string, string][] = [];
  const presentNames: [string, string][] = [];
  for (let i = 0; i < L; i++) {
    const kinds = layersSeen.get(i);
    for (const kv of ['key', 'value']) {
      if (!kinds?.has(kv))
        throw bad(`expected an input "past_key_values.${i}.${kv}" (layers are numbered 0..${L - 1}), got none`);
      if (!outNames.has(`present.${i}.${kv}`))
        throw bad(
          `expected an output "present.${i}.${kv}" for input past_key_values.${i}.${kv}, got outputs ${[...outNames].join(', ')}`,
        );
    }
    pastNames.push([`past_key_values.${i}.key`, `past_key_values.${i}.value`]);
    presentNames.push([`present.${i}.key`, `present.${i}.value`]);
  }
  // Head count and size: fixed metadata dimensions win; config.json fills in symbolic ones.
  const heads = intOf(config.num_attention_heads) ?? intOf(config.n_head);
  const cfgKv = intOf(config.num_key_value_heads) ?? heads;
  const hidden = intOf(config.hidden_size) ?? intOf(config.n_embd);
  const cfgDim =
    intOf(config.head_dim) ??
    (hidden !== undefined && heads !== undefined && hidden % heads === 0 ? hidden / heads : undefined);
  let { kvHeads, headDim } = cacheShape(pastNames, byName, bad);
  if (kvHeads !== undefined && cfgKv !== undefined && kvHeads !== cfgKv)
    throw bad(
      `expected ${cfgKv} key/value heads (num_key_value_heads of config.json), got ${kvHeads} in the shape of past_key_values.0.key`,
    );
  if (headDim !== undefined && cfgDim !== undefined && headDim !== cfgDim && config.head_dim === undefined) {
    throw bad(
      `expected head size ${cfgDim} (hidden_size / num_attention_heads of config.json), got ${headDim} in the shape of past_key_values.0.key`,
    );
  }
  kvHeads ??= cfgKv;
  headDim ??= cfgDim;
  if (kvHeads === undefined || headDim === undefined) {
    throw bad(
      `expected the number of key/value heads and the head size, from the shape of past_key_values.0.key or from config.json (num_key_value_heads / num_attention_heads, hidden_size or head_dim), got ${kvHeads ?? 'no head count'} and ${headDim ?? 'no head size'}`,
      "put the model's config.json in the folder",
    );
  }
  return {
    layers: L,
    kvHeads,
    headDim,
    positionIds: byName.has('position_ids'),
    useCacheBranch: byName.has('use_cache_branch'),
    idType: idType === 'int32' ? 'int32' : 'int64',
    pastNames,
    presentNames,
  };
}

/** Heads and head size that the past_key_values inputs' fixed dimensions give (undefined where symbolic), all alike. */
function cacheShape(
  pastNames: readonly (readonly [string, string])[],
  byName: ReadonlyMap<string, ValueInfo>,
  bad: (what: string, hint?: string) => CorlError,
): { kvHeads: number | undefined; headDim: number | undefined } {
  let kvHeads: number | undefined;
  let headDim: number | undefined;
  for (const [k, v] of pastNames) {
    for (const name of [k, v]) {
      const info = byName.get(name)!;
      if (info.type !== undefined && info.type !== 'float32') {
        throw bad(
          `expected input "${name}" of type float32, got ${info.type}`,
          'float16 KV caches are not supported: export in float32 (no --dtype fp16)',
        );
      }
      const shape = info.shape;
      if (shape && shape.length > 0) {
        if (shape.length !== 4)
          throw bad(
            `expected input "${name}" of rank 4 [batch, kv_heads, past_length, head_dim], got shape [${shape.join(', ')}]`,
            "architectures with another cache layout (e.g. Bloom's) are not supported",
          );
        const [, h, , d] = shape;
        if (typeof h === 'number') {
          if (kvHeads !== undefined && kvHeads !== h)
            throw bad(`expected every past_key_values input to have ${kvHeads} heads, got ${h} in "${name}"`);
          kvHeads = h;
        }
        if (typeof d === 'number') {
          if (headDim !== undefined && headDim !== d)
            throw bad(`expected every past_key_values input to have head size ${headDim}, got ${d} in "${name}"`);
          headDim = d;
        }
      }
    }
  }
  return { kvHeads, headDim };
}
