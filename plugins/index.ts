import type { PluginRegistrar } from '../core/registry/define';
import * as advantages from './advantages';
import * as answers from './answers';
import * as diversity from './diversity';
import * as interactions from './interactions';
import * as judges from './judges';
import * as metrics from './metrics';
import * as policies from './policies';
import * as rewards from './rewards';
import * as tasks from './tasks';
import * as topologies from './topologies';

/**
 * Registers every built-in plugin, folder by folder, through the same registration API a
 * third-party plugin module's `register(plugins)` is handed.
 */
export async function register(plugins: PluginRegistrar): Promise<void> {
  for (const m of [tasks, answers, policies, rewards, topologies, diversity, advantages, metrics, judges, interactions])
    await m.register(plugins);
}
