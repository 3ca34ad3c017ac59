import { defineCodes } from './spec';

export const PLUGIN_CODES = defineCodes({
  CORL_ERR_PLUGIN_UNKNOWN: {
    cause: 'A config or a call names a plugin that is not registered for that kind.',
    fix: "use one of the names listed (run `corl list`), or add the module that provides it to the config's `plugins`",
  },
  CORL_ERR_PLUGIN_DUPLICATE: {
    cause: 'Two plugins were registered under the same name.',
    fix: "rename one of them (names are `scope:name`; only corl's own plugins use the `corl:` scope)",
  },
  CORL_ERR_PLUGIN_INVALID: {
    cause:
      'A plugin definition or module is malformed: no manifest, a manifest field that cannot be read (a throwing getter) or a question (`readsGroundTruth`, `trainedOnLabels`, `tokenStats`) that throws or answers something other than a boolean, a bad name, an unknown kind, an options schema that is not an object schema of plain data, a `corl:` name outside the built-ins, a module without `register(plugins)`, or a registration API used after `register` returned.',
    fix: 'export `register(plugins)` from the module and give each plugin a manifest as documented in docs/reference/contracts.md',
  },
  CORL_ERR_PLUGIN_VERSION: {
    cause: "A plugin's manifest.corl range does not include this corl version.",
    fix: 'install a plugin version built for this corl, or widen the range if it is compatible',
  },
  CORL_ERR_PLUGIN_LOAD: {
    cause:
      'A module listed in `plugins` (or named by a `use` path) cannot be found, or throws while loading or registering.',
    fix: 'check the path (relative to the config file) or install the package; the underlying error is shown',
  },
  CORL_ERR_PLUGIN_CREATE: {
    cause: "A plugin's factory threw while building an instance from its options.",
    fix: 'read the underlying error; it usually names an option or a missing file',
  },
  CORL_ERR_PLUGIN_CAPABILITY: {
    cause:
      "A plugin reached for something its manifest does not entitle it to: ground truth or the task (`GROUND_TRUTH`, `TASK`) declared in `inject` or `@inject`ed without declaring `readsGroundTruth`, a dependency the run does not hold for it (the plugin registry, a policy, a service created after it, a token of tsyringe's global container), or, through `ctx.create`, a task or a reward source that reads ground truth.",
    fix: 'inject only the tokens docs/reference/contracts.md lists (`PluginDefinition.inject`); a reward source that needs labels declares `readsGroundTruth` in its manifest (a function of its options when only some parts need it, as `corl:weighted` does); a `labelFree` config then refuses it and its runs are reported as supervised',
  },
  CORL_ERR_PLUGIN_OPTIONS: {
    cause:
      'A plugin was given options its schema rejects (when created outside a validated config, e.g. by a test kit or `corl serve`).',
    fix: "fix the listed option; `corl list` shows each plugin's options and defaults",
  },
});
