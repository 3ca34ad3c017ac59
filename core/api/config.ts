// `loadConfig` of the public API: a config from a file, an object or an earlier load, validated,
// defaulted and frozen exactly as `corl train` loads it.
import * as path from 'node:path';
import { loadConfig as loadConfigFile, loadConfigValue, type LoadedConfig } from '../config/load';
import { API_USAGE, knownOptions, shown, usageError, type Usage } from './usage';

/** A config as the API takes it: the path of a config file, a config object, or what {@link loadConfig} returned. */
export type ConfigInput = string | Readonly<Record<string, unknown>> | LoadedConfig;

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /**
   * Changes applied before validation, as dotted path → value, e.g. `{ 'trainer.steps': 5 }` (what
   * `corl train --steps 5` does).
   */
  readonly overrides?: Readonly<Record<string, unknown>>;
  /**
   * Folder the relative paths of a config object resolve against (its `plugins`, data files and
   * checkpoints). Default: the current folder; a file's paths resolve against its own folder.
   */
  readonly baseDir?: string;
}

const LOAD_OPTIONS: readonly (keyof LoadConfigOptions)[] = ['overrides', 'baseDir'];

/** Whether a value is what {@link loadConfig} returned (rather than a config object). */
export function isLoaded(value: unknown): value is LoadedConfig {
  return (
    typeof value === 'object' &&
    value !== null &&
    'container' in value &&
    'registry' in value &&
    'config' in value &&
    'source' in value
  );
}

/**
 * Load a config: read (JSON with comments) and parse a file, or copy an object; apply `overrides`;
 * validate it against the schema and every plugin's options schema (one CORL_ERR_CONFIG_INVALID
 * listing every problem, with line and column for a file); apply defaults; freeze it. A config
 * already loaded is returned as it is, or loaded again from its source when `overrides` are given.
 */
export async function loadConfig(config: ConfigInput, options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  return loadWith(config, options, API_USAGE);
}

/** {@link loadConfig} for a caller with its own names for its inputs. */
export async function loadWith(config: ConfigInput, options: LoadConfigOptions, usage: Usage): Promise<LoadedConfig> {
  knownOptions(usage, options, LOAD_OPTIONS);
  const overrides = options.overrides;
  if (overrides !== undefined && (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)))
    throw usageError(
      usage,
      'overrides',
      `expected ${usage.name('overrides')} to be an object, got ${shown(overrides)}`,
    );
  if (options.baseDir !== undefined && typeof options.baseDir !== 'string')
    throw usageError(
      usage,
      'baseDir',
      `expected ${usage.name('baseDir')} to be a folder path, got ${shown(options.baseDir)}`,
    );
  if (typeof config === 'string') {
    if (options.baseDir !== undefined)
      throw usageError(
        usage,
        'baseDir',
        `expected ${usage.name('baseDir')} only with a config object, got it with the file ${config}`,
        "a file's relative paths resolve against its own folder",
      );
    return loadConfigFile(config, { ...(overrides ? { overrides } : {}) });
  }
  if (isLoaded(config)) {
    if (options.baseDir !== undefined)
      throw usageError(
        usage,
        'baseDir',
        `expected ${usage.name('baseDir')} only with a config object, got it with a loaded config`,
      );
    if (!overrides || Object.keys(overrides).length === 0) return config;
    return loadConfigValue(config.source, {
      baseDir: config.baseDir,
      overrides,
      ...(config.file ? { file: config.file } : {}),
      name: config.config.name,
    });
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw usageError(usage, 'config', `expected config to be a file path or a config object, got ${shown(config)}`);
  return loadConfigValue(config, {
    baseDir: path.resolve(options.baseDir ?? '.'),
    ...(overrides ? { overrides } : {}),
  });
}
