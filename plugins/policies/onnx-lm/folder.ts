// The model folder of `corl:onnx-lm`, as optimum writes it: the ONNX model (model.onnx or
// onnx/model.onnx), tokenizer.json and tokenizer_config.json, config.json and, when the model has
// one, generation_config.json. Everything is read at construction, so a bad folder fails before a run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveConfigPath } from '../../../core/util/paths';
import { Tokenizer } from '@huggingface/tokenizers';
import { CorlError } from '../../../core/errors';
import type { OnnxLmOptions } from './options';
import { NotARegularFile, readUserText } from '../../../core/util/files';

/** What the folder says about the model. */
export interface ModelFolder {
  readonly dir: string;
  readonly modelFile: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly tokenizer: Tokenizer;
  readonly eosTokenIds: readonly number[];
  readonly maxContext?: number;
}

function readJson(
  file: string,
  required: boolean,
  code: 'CORL_ERR_BACKEND_MODEL' | 'CORL_ERR_BACKEND_TOKENIZER',
  hint: string,
): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readUserText(file);
  } catch (e) {
    if (!required && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CorlError(
      code,
      `expected ${path.basename(file)} in the model folder, got ${e instanceof NotARegularFile ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)}`,
      { where: file, hint },
    );
  }
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      throw new Error(`a ${Array.isArray(v) ? 'list' : typeof v}`);
    return v as Record<string, unknown>;
  } catch (e) {
    throw new CorlError(code, `expected ${path.basename(file)} to hold a JSON object, got ${(e as Error).message}`, {
      where: file,
      hint,
    });
  }
}

/** Token ids from an `eos_token_id` field (a number or a list), or undefined. */
function idsOf(v: unknown): number[] | undefined {
  if (Number.isInteger(v) && (v as number) >= 0) return [v as number];
  if (Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0))
    return [...new Set(v as number[])];
  return undefined;
}

/** The text of a `*_token` field of tokenizer_config.json (a string or an AddedToken object). */
function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return undefined;
}

/** Read and check the folder named by `options.path` (resolved against `baseDir`). */
export function readModelFolder(options: OnnxLmOptions, baseDir: string): ModelFolder {
  const dir = resolveConfigPath(options.path, baseDir);
  const exportHint =
    'export the model with `optimum-cli export onnx --model <id> --task text-generation-with-past <folder>` and point `path` at that folder';
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new CorlError(
      'CORL_ERR_BACKEND_MODEL',
      `expected option path to name a model folder, got "${options.path}" (${dir}), which is not a folder`,
      { where: 'options.path', hint: exportHint },
    );
  }
  const candidates = options.file !== undefined ? [options.file] : ['model.onnx', path.join('onnx', 'model.onnx')];
  const modelFile = candidates.map((f) => path.join(dir, f)).find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
  if (!modelFile) {
    throw new CorlError(
      'CORL_ERR_BACKEND_MODEL',
      `expected an ONNX model in ${dir}, got none of ${candidates.join(', ')}`,
      {
        where: options.file !== undefined ? 'options.file' : 'options.path',
        hint:
          options.file !== undefined
            ? 'fix option file (relative to the folder)'
            : 'set option file to the model\'s file name (e.g. "decoder_model_merged.onnx")',
      },
    );
  }
  const config = readJson(path.join(dir, 'config.json'), false, 'CORL_ERR_BACKEND_MODEL', exportHint) ?? {};
  const generation =
    readJson(path.join(dir, 'generation_config.json'), false, 'CORL_ERR_BACKEND_MODEL', exportHint) ?? {};
  const tokHint =
    "copy tokenizer.json (and tokenizer_config.json) of the model into the folder; optimum's export writes them there";
  const tokenizerJson = readJson(path.join(dir, 'tokenizer.json'), true, 'CORL_ERR_BACKEND_TOKENIZER', tokHint)!;
  const tokenizerConfig =
    readJson(path.join(dir, 'tokenizer_config.json'), false, 'CORL_ERR_BACKEND_TOKENIZER', tokHint) ?? {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_BACKEND_TOKENIZER',
      `expected a tokenizer.json that @huggingface/tokenizers can load, got ${(e as Error).message}`,
      { where: path.join(dir, 'tokenizer.json'), hint: tokHint },
    );
  }
  let eosTokenIds = options.eosTokenIds
    ? [...options.eosTokenIds]
    : (idsOf(generation.eos_token_id) ?? idsOf(config.eos_token_id));
  if (!eosTokenIds) {
    const text = tokenText(tokenizerConfig.eos_token);
    const id = text !== undefined ? tokenizer.token_to_id(text) : undefined;
    if (id !== undefined) eosTokenIds = [id];
  }
  if (!eosTokenIds) {
    throw new CorlError(
      'CORL_ERR_BACKEND_TOKENIZER',
      `expected an end-of-sequence token id in generation_config.json or config.json (eos_token_id) or tokenizer_config.json (eos_token), got none in ${dir}`,
      {
        where: 'options.eosTokenIds',
        hint: 'set option eosTokenIds to the ids that end a completion ([] to stop on length and stop strings only)',
      },
    );
  }
  const limit =
    options.maxContext ??
    ([config.max_position_embeddings, config.n_positions].find((v) => Number.isInteger(v) && (v as number) >= 2) as
      number | undefined);
  return { dir, modelFile, config, tokenizer, eosTokenIds, ...(limit !== undefined ? { maxContext: limit } : {}) };
}
