import { registerAll } from '../../core/plugins/define';
import { jsonlSink } from './jsonl';

export { jsonlSink };

/** Registers the built-in metrics sinks. */
export const register = registerAll(jsonlSink);
