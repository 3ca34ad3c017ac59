import { registerAll } from '../../core/registry/define';
import { jsonlSink } from './jsonl';
import { tensorboardSink } from './tensorboard';

export { jsonlSink, tensorboardSink };

/** Registers the built-in metrics sinks. */
export const register = registerAll(jsonlSink, tensorboardSink);
