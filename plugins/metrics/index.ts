import { registerAll } from '../../core/registry/define';
import { jsonlSink } from './jsonl';

export { jsonlSink };

/** Registers the built-in metrics sinks. */
export const register = registerAll(jsonlSink);
